/*
** copy.c: the engine's door for asynchronous copies and memsets, beside
** gs__engine_launch (hold.c): the op's key, the hold-or-issue decision, and the
** real call where the engine issues it, with the stream locked from the
** decision to the call's result (the one lock rule: docs/internals.md).
**
** A copy's key depends on the kind of host memory it touches, asked of the driver
** (cuPointerGetAttribute): a pinned source or destination is read or written when
** the copy runs, as in CUDA; a pageable source is snapshotted into pinned staging
** if the copy is held; a pageable destination makes the copy complete before the
** call returns, so it is a boundary of its stream and passes through.
*/
#include "engine.h"

#include "../base/lock.h"
#include "../graph/key.h"
#include "../stream/stream.h"
#include "guard.h"

/* Host memory kinds of a copy's pointers. */
enum mem { MEM_DEVICE, MEM_PINNED, MEM_PAGEABLE, MEM_OTHER };

static enum mem mem_of(uint64_t p)
{
    unsigned type = 0;

    if (GS_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) != CUDA_SUCCESS)
        return MEM_PAGEABLE;
    if (type == CU_MEMORYTYPE_DEVICE)
        return MEM_DEVICE;
    if (type == CU_MEMORYTYPE_HOST)
        return MEM_PINNED;
    return MEM_OTHER;
}

/* The kind of op a copy from src to dst is, or -1 if it cannot be held. */
static int copy_kind(enum mem dst, enum mem src)
{
    if (dst == MEM_DEVICE && src == MEM_DEVICE)
        return GS_OP_D2D;
    if (dst == MEM_DEVICE && src == MEM_PINNED)
        return GS_OP_H2D;
    if (dst == MEM_DEVICE && src == MEM_PAGEABLE)
        return GS_DROPPED(GS_RULE_STAGING) ? GS_OP_H2D : GS_OP_H2D_PAGEABLE;
    if (dst == MEM_PINNED && src == MEM_DEVICE)
        return GS_OP_D2H;
    return -1;
}

/* Key of a copy between memory of kinds dm and sm: -1 if it cannot be held, -2
** if it is a boundary. */
static int copy_key(void *key, const struct gs_copy *op, enum mem dm, enum mem sm)
{
    int kind = copy_kind(dm, sm);
    if (kind < 0)
        return dm == MEM_PAGEABLE ? -2 : -1;
    return gs__key_copy(key, kind, op->dst, op->src, op->n);
}

/* The key of op into key, as copy_key says; a memset's is always holdable. */
static int op_key(void *key, const struct gs_copy *op)
{
    switch (op->form) {
    case GS_COPY_HTOD:
        return copy_key(key, op, MEM_DEVICE, mem_of(op->src));
    case GS_COPY_DTOH:
        return copy_key(key, op, mem_of(op->dst), MEM_DEVICE);
    case GS_COPY_DTOD:
        return copy_key(key, op, MEM_DEVICE, MEM_DEVICE);
    case GS_COPY_ANY:
        return copy_key(key, op, mem_of(op->dst), mem_of(op->src));
    default:
        return gs__key_set(key, op->dst, op->value, gs__set_elem(op->form), op->n);
    }
}

CUresult gs__engine_copy(const struct gs_call *c, const struct gs_copy *op)
{
    _Alignas(16) unsigned char key[sizeof(struct gs_key)];
    const void *stage_src = op->form == GS_COPY_HTOD || op->form == GS_COPY_ANY ? (const void *)(uintptr_t)op->src
                                                                                 : NULL;
    struct gs_stream *s = NULL;
    CUresult rc;
    /* No key while the program captures: no driver call of ours then. */
    int len = gs__passthrough || atomic_load_explicit(&gs__app_captures, memory_order_relaxed) ? -1 : op_key(key, op);

    if (len == -2 && GS_DROPPED(GS_RULE_PAGEABLE_D2H)) {
        /* A test without the rule: the copy goes straight to the driver. */
        rc = gs__copy_real(c->id, op);
        gs__guard_after(c, rc);
        return rc;
    }
    if (len == -2) {
        /* Completes before returning: a boundary of its stream. */
        struct gs_call b = *c;
        b.cls = GS_SYNC;
        gs__engine_boundary(&b);
        len = -1;
    }
    if (gs__engine_op_begin(&s, c->stream, key, len, stage_src) == GS_OP_HELD) {
        rc = CUDA_SUCCESS;
    } else {
        rc = gs__copy_real(c->id, op);
        if (s)
            gs__engine_op_end(s, rc);
    }
    GS_ASSERT_NO_LOCK();
    gs__guard_after(c, rc);
    return rc;
}
