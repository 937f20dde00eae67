/*
** copy.c: the shims of asynchronous copies and memsets (ops the engine may hold).
**
** A copy's key depends on the kind of host memory it touches, asked of the driver
** (cuPointerGetAttribute): a pinned source or destination is read or written when
** the copy runs, as in CUDA; a pageable source is snapshotted into pinned staging
** if the copy is held; a pageable destination makes the copy complete before the
** call returns, so it is a boundary of its stream and passes through.
*/
#include "interpose.h"
#include "../policy/entry/engine.h"
#include "../policy/entry/guard.h"
#include "../policy/graph/key.h"
#include "../policy/base/trace.h"

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

/* Runs one copy or memset op: the engine holds it, or the real call runs.  The
** REAL_CALL argument is the real call with the program's own arguments. */
#define OP_BODY(id, pt, hStream, build_key, stage_src, REAL_CALL)                        \
    do {                                                                                \
        _Alignas(16) unsigned char key_[sizeof(struct gs_key)];                         \
        struct gs_call c_ = {id, gs__rows[id].cls, gs__rows[id].abi, gs__norm_stream(hStream, pt), 0}; \
        struct gs_stream *s_ = NULL;                                                    \
        CUresult rc_;                                                                   \
        int len_;                                                                       \
        gs__ensure_init();                                                              \
        if (GS_UNLIKELY(!gs__real[id]))                                                 \
            return CUDA_ERROR_NOT_FOUND;                                                \
        if (gs__tls.depth || (gs__passthrough && !gs__trace_on))                        \
            return REAL_CALL;                                                           \
        len_ = gs__passthrough || gs__engine_capturing() ? -1 : (build_key);            \
        if (len_ == -2 && GS_DROPPED(GS_RULE_PAGEABLE_D2H)) {                           \
            /* A test without the rule: the copy goes straight to the driver. */       \
            rc_ = REAL_CALL;                                                            \
            gs__guard_after(&c_, rc_);                                                  \
            return rc_;                                                                 \
        }                                                                               \
        if (len_ == -2) {                                                               \
            /* Completes before returning: a boundary of its stream. */                \
            struct gs_call b_ = c_;                                                     \
            b_.cls = GS_SYNC;                                                           \
            gs__engine_boundary(&b_);                                                   \
            len_ = -1;                                                                  \
        }                                                                               \
        if (gs__engine_op_begin(&s_, c_.stream, key_, len_, stage_src) == GS_OP_HELD) { \
            rc_ = CUDA_SUCCESS;                                                         \
        } else {                                                                        \
            rc_ = REAL_CALL;                                                            \
            if (s_)                                                                     \
                gs__engine_op_end(s_, rc_);                                             \
        }                                                                               \
        gs__guard_after(&c_, rc_);                                                      \
        return rc_;                                                                     \
    } while (0)

/* Key of a copy: -1 if it cannot be held, -2 if it is a boundary. */
static int copy_key(void *key, uint64_t dst, uint64_t src, size_t n, enum mem dm, enum mem sm)
{
    int kind = copy_kind(dm, sm);
    if (kind < 0)
        return dm == MEM_PAGEABLE ? -2 : -1;
    return gs__key_copy(key, kind, dst, src, n);
}

static inline CUresult h2d(int id, int pt, CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    OP_BODY(id, pt, h, copy_key(key_, dst, (uintptr_t)src, n, MEM_DEVICE, mem_of((uintptr_t)src)), src,
            ((__typeof__(&cuMemcpyHtoDAsync_v2))gs__real[id])(dst, src, n, h));
}

static inline CUresult d2h(int id, int pt, void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    OP_BODY(id, pt, h, copy_key(key_, (uintptr_t)dst, src, n, mem_of((uintptr_t)dst), MEM_DEVICE), NULL,
            ((__typeof__(&cuMemcpyDtoHAsync_v2))gs__real[id])(dst, src, n, h));
}

static inline CUresult d2d(int id, int pt, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    OP_BODY(id, pt, h, copy_key(key_, dst, src, n, MEM_DEVICE, MEM_DEVICE), NULL,
            ((__typeof__(&cuMemcpyDtoDAsync_v2))gs__real[id])(dst, src, n, h));
}

/* cuMemcpyAsync infers the direction from the pointers (unified addressing). */
static inline CUresult any(int id, int pt, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    OP_BODY(id, pt, h, copy_key(key_, dst, src, n, mem_of(dst), mem_of(src)), (const void *)(uintptr_t)src,
            ((__typeof__(&cuMemcpyAsync))gs__real[id])(dst, src, n, h));
}

#define MEMSET(id, pt, elem, dst, v, n, h)                                                  \
    OP_BODY(id, pt, h, gs__key_set(key_, dst, v, elem, n), NULL,                          \
            ((CUresult(*)(CUdeviceptr, __typeof__(v), size_t, CUstream))gs__real[id])(dst, v, n, h))

GS_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    return h2d(GS_ID_cuMemcpyHtoDAsync_v2, 0, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    return h2d(GS_ID_cuMemcpyHtoDAsync_v2_ptsz, 1, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    return d2h(GS_ID_cuMemcpyDtoHAsync_v2, 0, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    return d2h(GS_ID_cuMemcpyDtoHAsync_v2_ptsz, 1, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return d2d(GS_ID_cuMemcpyDtoDAsync_v2, 0, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return d2d(GS_ID_cuMemcpyDtoDAsync_v2_ptsz, 1, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return any(GS_ID_cuMemcpyAsync, 0, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return any(GS_ID_cuMemcpyAsync_ptsz, 1, dst, src, n, h);
}
GS_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD8Async, 0, 1, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD8Async_ptsz, 1, 1, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD16Async, 0, 2, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD16Async_ptsz, 1, 2, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD32Async, 0, 4, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD32Async_ptsz, 1, 4, dst, v, n, h);
}
