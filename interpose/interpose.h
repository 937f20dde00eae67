/*
** interpose.h: what the interposer's files share.
**
** The rows of hooks.def become an enum of ids (GS_ID_<abi>), a table of row
** descriptions (gs__rows) and a table of real driver pointers (gs__real), all
** indexed by id.  Every call to the real driver goes through gs__real, so tests
** can swap entries.  Trampolines (trampoline.S, slots.c) carry the entry points
** that have no typed wrapper.
*/
#ifndef GS_INTERPOSE_H
#define GS_INTERPOSE_H

#define __CUDA_API_VERSION_INTERNAL 1 /* every ABI variant by its own name */
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define GS_EXPORT __attribute__((visibility("default")))
#define GS_LIKELY(x) __builtin_expect(!!(x), 1)
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* What a call means to work the engine holds. */
enum gs_class {
    GS_LAUNCH,       /* kernel launch: an op */
    GS_COPY,         /* asynchronous memcpy: an op */
    GS_SET,          /* asynchronous memset: an op */
    GS_SYNC,         /* the host observes completion */
    GS_EVENT,        /* event record / wait: other streams order on it */
    GS_HOSTFN,       /* host code runs in stream order */
    GS_SYNCOP,       /* synchronous copy or memset */
    GS_ALLOC,        /* allocation or free of any kind */
    GS_STREAM,       /* stream destroy */
    GS_CTX,          /* context destroy or reset */
    GS_MODULE,       /* module or library unload: function handles may be reused */
    GS_ATTR,         /* limits and function attributes: graphs must be rebuilt */
    GS_CAPTURE,      /* the program's own capture or graph launch */
    GS_PROC,         /* entry-point lookup */
    GS_QUERY,        /* harmless: cannot observe or enqueue behind held work */
    GS_UNCLASSIFIED, /* not in hooks.def: resolve held work first */
    GS_NCLASSES
};

/* Row ids, one per hooks.def row. */
enum gs_id {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream) GS_ID_##abi,
#define GS_HAND(name, abi, ver, pt, cls) GS_ID_##abi,
#define GS_PASS(name, abi, ver, pt, cls) GS_ID_##abi,
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
    GS_NROWS
};

/* Number of GS_PASS rows: their trampolines are slots 0 .. GS_NPASS-1. */
enum {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream)
#define GS_HAND(name, abi, ver, pt, cls)
#define GS_PASS(name, abi, ver, pt, cls) GS_PASSNO_##abi,
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
    GS_NPASS
};

struct gs_row {
    const char *name;    /* base name, as cuGetProcAddress is asked */
    const char *abi;     /* exported symbol */
    int version;         /* CUDA version that introduced the variant */
    unsigned char pt;    /* per-thread-default-stream variant */
    unsigned char cls;   /* enum gs_class */
    void *wrapper;       /* what the program gets: typed wrapper or trampoline */
};

extern const struct gs_row gs__rows[GS_NROWS];
extern void *gs__real[GS_NROWS];

/* Streams: a call's stream, normalized; GS_NONE for calls without one. */
#define GS_NONE ((CUstream)(uintptr_t)-1)
static inline CUstream gs__norm_stream(CUstream s, int pt)
{
    if (s == 0)
        return pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    return s;
}

/* Initialization (init.c).  gs__ready is set once the real driver's table is
** resolved; gs__init() is idempotent and thread-safe. */
extern atomic_int gs__ready;
void gs__init(void);
static inline void gs__ensure_init(void)
{
    if (GS_UNLIKELY(!atomic_load_explicit(&gs__ready, memory_order_acquire)))
        gs__init();
}
/* Nonzero once the shim decided to pass everything through untouched (engine off
** by GRAPHSHIM=0, or a driver older than 12.4). */
extern int gs__passthrough;
/* The real dlsym and the driver's handle. */
extern void *(*gs__real_dlsym)(void *, const char *);
void gs__resolve_dlsym(void);                           /* finds gs__real_dlsym */
void *gs__dlsym_real(void *handle, const char *name);   /* the real dlsym's answer */
void *gs__dlsym(void *handle, const char *name);        /* the hook, but for RTLD_NEXT */
int gs__libcuda_loaded(void);
extern void *gs__libcuda;
/* Is p an address inside the loaded libcuda? */
int gs__in_libcuda(const void *p);

/* Thread state: depth > 0 while graphshim itself is calling the driver. */
struct gs_tls {
    int depth;
    int tid;
};
extern __thread struct gs_tls gs__tls __attribute__((tls_model("initial-exec")));
/* The calling thread's kernel thread id, cached. */
int gs__tid(void);

/* Lookup (lookup.c): what a program gets for a driver symbol it obtained
** through dlsym or cuGetProcAddress.  real is the driver's pointer. */
void *gs__wrap_symbol(const char *abi, void *real);
void *gs__wrap_proc(const char *name, void *real, int version, cuuint64_t flags);

/* Trampoline slots (slots.c). */
#include "nslots.h"
void *gs__slot_for(const char *name, void *real, int cls);
void gs__slots_init(void);

/* One intercepted call, as the guard layer (policy/guard.h) sees it. */
struct gs_call {
    int id;          /* row id, or -1 for a trampoline slot */
    int cls;         /* enum gs_class */
    const char *abi; /* entry point name */
    CUstream stream; /* normalized stream, or GS_NONE */
};

/* The typed real pointer of a row.  Returns CUDA_ERROR_NOT_FOUND from the
** enclosing function when the driver lacks the entry point. */
#define GS_REAL(abi) ((__typeof__(&abi))gs__real[GS_ID_##abi])

#endif
