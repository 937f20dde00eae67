/*
** driver.h: the bottom floor.  The real driver's entry points and the state every
** floor above shares; it calls nothing above it.
**
** The rows of hooks.def become an enum of ids (GS_ID_<abi>) and a table of real
** driver pointers (gs__real) indexed by id.  Every call to the real driver, the
** interposer's and the engine's, goes through gs__real, so tests can swap
** entries.  Beside it: the class of each call, the normalized stream, the state
** of one intercepted call, and per-thread state.
*/
#ifndef GS_DRIVER_H
#define GS_DRIVER_H

#define __CUDA_API_VERSION_INTERNAL 1 /* every ABI variant by its own name */
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define GS_EXPORT __attribute__((visibility("default")))
#define GS_LIKELY(x) __builtin_expect(!!(x), 1)
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* What a call means to work the engine holds: the one list of classes, from
** which come enum gs_class (GS_<ID>, the class hooks.def rows name), the names
** of the trace and the report (gs__class_name), docs/names.md, and the guard
** rule each boundary class belongs to (its GS_RULES id in policy/base/names.h;
** NONE: none; the test build can turn a rule off, entry/boundary.c).
** X(ID, name, RULE, doc) */
#define GS_CLASSES(X)                                                                      \
    X(LAUNCH, "launch", NONE, "kernel launch: an op")                                      \
    X(COPY, "copy", NONE, "asynchronous memcpy: an op")                                    \
    X(SET, "set", NONE, "asynchronous memset: an op")                                      \
    X(SYNC, "sync", SYNC, "the host observes completion")                                 \
    X(EVENT, "event", EVENT, "event record / wait: other streams order on it")            \
    X(HOSTFN, "hostfn", HOSTFN, "host code runs in stream order")                          \
    X(SYNCOP, "syncop", SYNCOP, "synchronous copy or memset")                              \
    X(ALLOC, "alloc", ALLOC, "allocation or free of any kind")                             \
    X(STREAM, "stream", STREAM_DESTROY, "stream destroy")                                  \
    X(CTX, "ctx", NONE, "context destroy or reset")                                        \
    X(MODULE, "module", MODULE, "module or library unload: function handles may be reused") \
    X(ATTR, "attr", NONE, "limits and function attributes: graphs must be rebuilt")        \
    X(CAPTURE, "capture", CAPTURE, "the program's own capture or graph launch")            \
    X(CURRENT, "current", NONE, "the calling thread's current context changes")            \
    X(PROC, "proc", NONE, "entry-point lookup")                                            \
    X(QUERY, "query", NONE, "harmless: cannot observe or enqueue behind held work")       \
    X(UNCLASSIFIED, "unclassified", UNCLASSIFIED, "not in hooks.def: resolve held work first")

enum gs_class {
#define GS_CLASS_ENUM(id, name, rule, doc) GS_##id,
    GS_CLASSES(GS_CLASS_ENUM)
#undef GS_CLASS_ENUM
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

/* The real driver's pointer of each row (driver.c); NULL where the driver lacks
** the entry point. */
extern void *gs__real[GS_NROWS];

/* Driver calls graphshim made through GS_REAL: its own (graph launches, node
** sets, captures, queries) and the held ops it issued eagerly.  The report's
** headline nets them against the calls it saved. */
extern atomic_ulong gs__own_calls;

/* The typed real pointer of a row, for a call the program made (a shim's own
** call, interpose/): not counted. */
#define GS_APP(abi) ((__typeof__(&abi))gs__real[GS_ID_##abi])

/* The same, counted as a call of graphshim's own: GS_REAL is only ever called,
** never kept.  A relaxed add: a driver call costs microseconds.  Its result must
** be used: checked, or dropped out loud with GS_IGNORE (policy/base/log.h); GCC
** fails the build (-Werror=unused-result) on a GS_REAL call whose result is
** dropped, even through a cast to void.  Clang has no such attribute on a
** function's type, and builds without the check. */
#if defined(__GNUC__) && !defined(__clang__)
#define GS_REAL_TYPE(abi) __typeof__(abi) __attribute__((warn_unused_result))
#else
#define GS_REAL_TYPE(abi) __typeof__(abi)
#endif
#ifndef GS_TEST
#define GS_REAL(abi) \
    (atomic_fetch_add_explicit(&gs__own_calls, 1, memory_order_relaxed), (GS_REAL_TYPE(abi) *)gs__real[GS_ID_##abi])
#else
/* The test build's own calls go through gs__test_own (interpose/test_own.c):
** counted per row, and failed where GRAPHSHIM_TEST_OWN_FAIL says (the row's
** pointer, or a stub that returns the failure without calling the driver). */
void *gs__test_own(int id);
#define GS_REAL(abi) \
    (atomic_fetch_add_explicit(&gs__own_calls, 1, memory_order_relaxed), (GS_REAL_TYPE(abi) *)gs__test_own(GS_ID_##abi))
#endif

/* Streams: a call's stream, normalized; GS_NONE for calls without one. */
#define GS_NONE ((CUstream)(uintptr_t)-1)
static inline CUstream gs__norm_stream(CUstream s, int pt)
{
    if (s == 0)
        return pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    return s;
}

/* Set once the real driver's table is resolved (interpose/init.c). */
extern atomic_int gs__ready;
/* Nonzero once the shim decided to pass everything through untouched (engine off
** by GRAPHSHIM=0, or a driver older than 12.4). */
extern int gs__passthrough;

/* Thread state: depth > 0 while graphshim itself is calling the driver. */
struct gs_tls {
    int depth;
    int tid;
    unsigned ctx_epoch;  /* gs__ctx_epoch when ctx was read */
    CUcontext ctx;       /* the thread's current context, as last read */
    int ctx_moved;       /* a call of this thread may have changed it since */
};
/* Thread-local variables of graphshim: initial-exec, an offset from the thread
** pointer (the default model in a shared library makes each access a call of
** __tls_get_addr, a few on every launch).  Preloaded or loaded by a program, the
** library's few hundred bytes fit the static TLS that glibc keeps for that. */
#define GS_TLS __thread __attribute__((tls_model("initial-exec")))
extern GS_TLS struct gs_tls gs__tls;
/* Raised by every call that may change a thread's current context (class
** CURRENT, CTX or UNCLASSIFIED): a thread whose gs__tls.ctx_epoch differs reads
** its current context again.  Starts at 1, so that every thread reads it once. */
extern atomic_uint gs__ctx_epoch;

/* The calling thread's kernel thread id, cached. */
int gs__tid(void);

/* One intercepted call, as the guard layer (policy/guard.h) sees it. */
struct gs_call {
    int id;          /* row id, or -1 for a trampoline slot */
    int cls;         /* enum gs_class */
    const char *abi; /* entry point name */
    CUstream stream; /* normalized stream, or GS_NONE */
    int keep_graphs; /* ATTR: held work is resolved but graphs stay (interpose/attr.c) */
};

#endif
