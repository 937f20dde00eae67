/*
** key.h: op keys.
**
** An op is one stream-ordered operation the engine can hold: a kernel launch, an
** asynchronous copy or memset.  Its key is its complete content, packed into one
** byte string: what it is, where it goes, and for a launch the function, grid,
** block, shared memory, launch attributes and the parameter bytes (deep-copied:
** the caller's kernelParams point at its stack).  Two ops with equal keys do the
** same thing when issued at the same place in a stream.
*/
#ifndef GS_KEY_H
#define GS_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "../../driver/driver.h"
#include "../../driver/ops.h"
#include "layout.h"

enum gs_op_kind {
    GS_OP_LAUNCH,  /* cuLaunchKernel or cuLaunchKernelEx */
    GS_OP_H2D,     /* pinned host to device */
    GS_OP_H2D_PAGEABLE, /* pageable host to device: the source is staged at call time */
    GS_OP_D2H,     /* device to pinned host */
    GS_OP_D2D,     /* device to device */
    GS_OP_SET,     /* memset of 1, 2 or 4-byte elements */
    GS_OP_RECORD,  /* an event record of a group across streams (dst: the event, elem: its slot + 1) */
    GS_OP_WAIT,    /* a stream's wait on an event, in such a group (the same, size: flags) */
};

/* The fixed part of a key; variable bytes follow it. */
struct gs_key {
    uint16_t kind;        /* enum gs_op_kind */
    uint16_t member;      /* the stream of a group across streams it goes to (0: the stream's own) */
    uint32_t nattrs;      /* launch attributes that follow (CUlaunchAttribute each) */
    uint32_t nparams;     /* launch parameter bytes that follow the attributes */
    uint32_t shmem;
    CUfunction f;
    unsigned grid[3], block[3];
    union {
        struct {
            uint32_t elem; /* a memset's element size */
            uint32_t pad;
        };
        const struct gs_layout *layout; /* a launch's: f's (the same in every key of f) */
    };
    /* Last: a copy's or memset's arguments (gs__key_cmp), or its host side. */
    uint64_t dst;         /* copies and memsets */
    uint64_t size;        /* bytes copied, or elements set */
    uint64_t src;         /* copies; a memset's value */
};


#define GS_KEY_MAX (sizeof(struct gs_key) + 8 * sizeof(CUlaunchAttribute) + GS_PARAM_BYTES_MAX)

/* Launch attributes an op may carry and still be held; any other makes the
** launch pass through. */
int gs__attr_supported(CUlaunchAttributeID id);

/* Builds the key of launch a into buf (GS_KEY_MAX bytes).  Returns its length, or
** -1 if the launch cannot be held (unknown parameter layout, unsupported `extra`
** or attribute): then it passes through. */
int gs__key_launch(void *buf, const struct gs_launch *a);


/* Builds the key of a copy or memset.  Returns its length. */
int gs__key_copy(void *buf, int kind, uint64_t dst, uint64_t src, uint64_t size);
int gs__key_set(void *buf, uint64_t dst, uint32_t value, uint32_t elem, uint64_t n);
/* Builds the key of an event record (GS_OP_RECORD) or wait (GS_OP_WAIT, flags) on
** stream st, of the event in its group's slot: matched by the slot (elem), the
** event, its stream and flags its arguments (gs__key_cmp).  Returns its length. */
int gs__key_event(void *buf, int kind, CUevent e, CUstream st, unsigned flags, uint32_t slot);

/* An op without a graph node of its own (a group's event record or wait): its
** arguments are never set into a graph. */
static inline int gs__key_no_node(const struct gs_key *k) { return k->kind >= GS_OP_RECORD; }

/* The parameter bytes and attributes that follow a key. */
static inline CUlaunchAttribute *gs__key_attrs(const struct gs_key *k)
{
    return (CUlaunchAttribute *)(k + 1);
}
static inline unsigned char *gs__key_params(const struct gs_key *k)
{
    return (unsigned char *)(gs__key_attrs(k) + k->nattrs);
}

/* A launch's arguments, in the sense of what its graph node can take in place
** (cuGraphExecKernelNodeSetParams, for the same function, block and shared
** memory): its grid and its parameter bytes.  Where the engine patches (a
** lookup compares cmp < len bytes, all but the parameter bytes), the prefix tree
** matches a launch by all but these (its grid too where it has no attributes,
** gs__key_grid_is_arg): a generation loop's kernels whose grids
** grow with the KV cache are the same sequence every token.  Two keys of one
** node (one layout): do their arguments differ? */
static inline int gs__key_args_differ(const struct gs_key *a, const struct gs_key *b)
{
    if (a->kind != GS_OP_LAUNCH)
        return ((a->dst ^ b->dst) | (a->src ^ b->src) | (a->size ^ b->size)) != 0;
    return ((a->grid[0] ^ b->grid[0]) | (a->grid[1] ^ b->grid[1]) | (a->grid[2] ^ b->grid[2])) != 0 ||
           __builtin_memcmp(gs__key_params(a), gs__key_params(b), a->nparams) != 0;
}

/* A hash of a key's arguments (those gs__key_args_differ compares). */
uint64_t gs__key_args_hash(const struct gs_key *k);

/* Where a key's arguments begin, with patching on (GRAPHSHIM_PATCH): the bytes
** of the key a lookup compares (cmp), all before them; cmp == len where the op
** has no arguments of its own and is matched whole.
**   - a launch: its parameter bytes, last in the key (and its grid,
**     gs__key_grid_is_arg);
**   - a device-to-device copy: its addresses and size; a memset: its address,
**     value and count, last in the fixed part.  Their graph nodes take these in
**     place (cuGraphExecMemcpyNodeSetParams / MemsetNodeSetParams, measured on
**     the H100: bench/copy_node_probe.cu; a copy moved between memory of
**     another kind is refused, and the graph is built anew).  Never for a
**     zero-length op, which the driver cannot set;
**   - a copy between device memory and pinned host memory: its device side
**     alone, which a framework takes from its caching allocator (a token or a
**     loss read back, a batch uploaded).  Its node binds the host and the
**     device allocation it was made with (graph_exec.h); setting it again
**     binds anew, which is safe where both are live: a graph with a host copy
**     is built anew after any allocation call (gs__exec_stale), so a node is
**     set only where no memory came or went since its capture; and its host
**     side and size stay part of its shape (gs__key_host_side_eq), never moved
**     (setting a node onto pageable memory crashed the driver: measured);
**   - a copy from pageable memory (staged): none, matched whole;
**   - a group's event record or wait: its event (and stream), matched by its
**     slot in the group (gs__key_event): an event made and destroyed every step
**     (PyTorch's Stream.wait_stream) is the same op every step; no node takes
**     it (gs__key_no_node): issued eagerly with it, or standing for graphshim's
**     own event in a capture. */
static inline uint32_t gs__key_cmp(const struct gs_key *k, uint32_t len, int patch)
{
    if (!patch)
        return len;
    if (k->kind == GS_OP_LAUNCH)
        return len - k->nparams;
    if (k->kind != GS_OP_H2D_PAGEABLE && (k->kind >= GS_OP_RECORD || k->size))
        return (uint32_t)offsetof(struct gs_key, dst);
    return len;
}

/* Device allocations found by gs__key_moves_ok, valid for one memory epoch (no
** allocation or free since: each bumps it). */
#define GS_RANGES 8
struct gs_ranges {
    unsigned epoch, next;
    uint64_t lo[GS_RANGES], hi[GS_RANGES];
};

/* May copy or memset k, whose arguments differ from have's (its node's), be held
** and set in place?  The driver checks a copy's and a memset's addresses when
** it is called, not as a launch's parameters: each device side that moved (or
** whose size changed) must lie inside one device allocation, and a memset's
** address be aligned to its elements.  An op that fails is not held: it goes
** out at its call, where the driver answers.  r caches allocations for memory
** epoch epoch.  1 for a launch. */
int gs__key_moves_ok(const struct gs_key *k, const struct gs_key *have, struct gs_ranges *r, unsigned epoch);

/* A copy to or from pinned host memory whose arguments are its device side:
** are a's and b's host side and size the same?  (1 for any other op.) */
static inline int gs__key_host_side_eq(const struct gs_key *a, const struct gs_key *b)
{
    if (a->kind == GS_OP_H2D)
        return a->src == b->src && a->size == b->size;
    if (a->kind == GS_OP_D2H)
        return a->dst == b->dst && a->size == b->size;
    return 1;
}

/* Where a key's grid lies: a lookup that compares cmp < len bytes leaves it out
** (gs__key_shape_eq, gs__key_shape_hash). */
#define GS_KEY_GRID_AT offsetof(struct gs_key, grid)
#define GS_KEY_GRID_END (offsetof(struct gs_key, grid) + 3 * sizeof(unsigned))

/* Is the grid of a key compared in cmp bytes an argument?  Where the engine
** patches (cmp < len), and the launch has no attributes: a cooperative launch's
** grid must fit the device at once, a cluster launch's must be a multiple of
** its cluster, and the driver would refuse a replay that a held launch had
** answered with success.  (A copy's grid, all zeros, is skipped alike.) */
static inline int gs__key_grid_is_arg(const void *key, uint32_t len, uint32_t cmp)
{
    return cmp < len && ((const struct gs_key *)key)->nattrs == 0;
}

/* Are keys a and b (len bytes each) the same op in their first cmp bytes, but
** for the grid where it is an argument, and, for a host copy, on the same host
** side? */
static inline int gs__key_shape_eq(const void *a, const void *b, uint32_t len, uint32_t cmp)
{
    const unsigned char *x = a, *y = b;
    if (!gs__key_grid_is_arg(x, len, cmp))
        return __builtin_memcmp(x, y, cmp) == 0;
    return __builtin_memcmp(x, y, GS_KEY_GRID_AT) == 0 &&
           __builtin_memcmp(x + GS_KEY_GRID_END, y + GS_KEY_GRID_END, cmp - GS_KEY_GRID_END) == 0 &&
           gs__key_host_side_eq(a, b);
}

/* The hash of what gs__key_shape_eq compares. */
uint64_t gs__key_shape_hash(const void *key, uint32_t len, uint32_t cmp);

/* How the op of key k differs from e, the op expected (NULL: none), in words,
** for a debug message: the first of kind, function, block, shared memory,
** attributes, or else its arguments. */
const char *gs__key_differs(const struct gs_key *e, const struct gs_key *k);

/* How a launch compares with a key (gs__key_launch_is). */
enum { GS_KEY_OTHER, GS_KEY_SHAPE, GS_KEY_SAME };

/* Compares plain launch a with key k in place, without building a's key:
** GS_KEY_SAME if a's key would equal k, GS_KEY_SHAPE if it would differ in its
** arguments alone (grid or parameter bytes; a kernel without parameters is
** compared whole), GS_KEY_OTHER otherwise.  One load finds the layout: k's. */
static inline int gs__key_launch_is(const struct gs_key *k, const struct gs_launch *a)
{
    const struct gs_layout *l = k->layout;
    const unsigned char *p = gs__key_params(k);
    const uint32_t *off, *size;

    if (((uint64_t)(uintptr_t)k->f ^ (uint64_t)(uintptr_t)a->f) | (k->block[0] ^ a->block[0]) |
        (k->block[1] ^ a->block[1]) | (k->block[2] ^ a->block[2]) | (k->kind ^ GS_OP_LAUNCH) | k->member | k->nattrs |
        (k->shmem ^ a->shmem))
        return GS_KEY_OTHER;
    if (k->nparams != l->size || (!a->params && l->n))
        return GS_KEY_OTHER;
    if ((k->grid[0] ^ a->grid[0]) | (k->grid[1] ^ a->grid[1]) | (k->grid[2] ^ a->grid[2]))
        return k->nparams ? GS_KEY_SHAPE : GS_KEY_OTHER;
    off = l->off, size = l->off + l->n;
    for (int i = 0; i < l->n; i++) {
        const void *q = a->params[i];
        /* Most parameters are pointers or 4-byte scalars: compared inline. */
        if (size[i] == 8) {
            uint64_t x, y;
            __builtin_memcpy(&x, q, 8);
            __builtin_memcpy(&y, p + off[i], 8);
            if (x != y)
                return GS_KEY_SHAPE;
        } else if (size[i] == 4) {
            uint32_t x, y;
            __builtin_memcpy(&x, q, 4);
            __builtin_memcpy(&y, p + off[i], 4);
            if (x != y)
                return GS_KEY_SHAPE;
        } else if (__builtin_memcmp(q, p + off[i], size[i]) != 0) {
            return GS_KEY_SHAPE;
        }
    }
    return GS_KEY_SAME;
}

/* Issues the op a key describes on stream s, through the real driver.  src_override,
** if not NULL, replaces a host source (the staged copy of a pageable source).
** Returns the driver's result. */
/* Does the op of k copy to or from host memory?  (Its graph node binds the
** allocations it touches: graph_exec.h.) */
static inline int gs__key_host_copy(const struct gs_key *k)
{
    return k->kind == GS_OP_H2D || k->kind == GS_OP_H2D_PAGEABLE || k->kind == GS_OP_D2H;
}

/* A launch key's kernelParams: one pointer per parameter into its packed bytes,
** in stack (64 entries) or, for more parameters, on the heap; *out is NULL for a
** kernel without parameters.  CUDA_ERROR_INVALID_HANDLE where the layout that
** made the key is gone.  Released with gs__key_param_ptrs_free(). */
CUresult gs__key_param_ptrs(const struct gs_key *k, void *stack[64], void ***out);
void gs__key_param_ptrs_free(void **params, void *stack[64]);

CUresult gs__key_issue(const struct gs_key *k, CUstream s, const void *src_override);

/* The calling thread's buffer for a launch key (up to 32 KiB of parameters: too
** much for the stack of every thread that launches), made at its first use by
** gs__key_buffer_new.  NULL if out of memory. */
extern GS_TLS unsigned char *gs__key_buf;
unsigned char *gs__key_buffer_new(void);
static inline unsigned char *gs__key_buffer(void)
{
    return GS_LIKELY(gs__key_buf != NULL) ? gs__key_buf : gs__key_buffer_new();
}

/* A 64-bit hash of n bytes (keys, for quick inequality; equal hashes are
** checked byte by byte). */
uint64_t gs__bytes_hash(const void *bytes, size_t n);


#endif
