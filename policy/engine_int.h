/*
** engine_int.h: what the engine's rooms share, and nothing outside the engine.
**
**   streams.c   stream states: lookup, readiness, the contexts of engine calls
**   hold.c      ops: hold or issue; early chunks
**   issue.c     held work out: eagerly, or as a graph (nodes set in place first)
**   patch.c     launches with arguments of their own: patches, the keys held ops go out with
**   resolve.c   boundaries: what each call resolves; captures, resets, the budget
**   rest.c      learning rests where work does not repeat
**   gain.c      the gain check at synchronizes
**   body.c      loop bodies inside a segment: found, held, sent out as graphs
**   watchdog.c  work held too long; engine start, exit and fork
**
** Locking: a state's lock guards it.  The table lock guards the list of states; it
** may be taken before a state's lock, never after one.  The graph cache's lock
** (graph_cache.c) may be taken with a state's lock held.  Graph capture and the real
** driver calls of a stream's ops happen under that stream's lock.
*/
#ifndef GS_ENGINE_INT_H
#define GS_ENGINE_INT_H

#include <time.h>

#include "config.h"
#include "engine.h"
#include "nvtx.h"
#include "stream.h"

/* Watchdog firings in a row at one node after which it is a cut: held work goes
** out as soon as it reaches the node (watchdog.c).  Its hits never change after:
** no work stays held there for the watchdog to find. */
#define GS_WATCHDOG_HITS 2
#define GS_WATCHDOG_CUT(n) ((n)->watchdog_hits >= GS_WATCHDOG_HITS)

static inline uint64_t gs__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Times a sequence of s must be seen before it is graphed: GRAPHSHIM_WARMUP, or
** more where its graphs did not pay for their capture (the capture budget,
** resolve.c, raises warmup_shift).  s locked. */
static inline long gs__warmup(const struct gs_stream *s)
{
    return gs__cfg.warmup << s->warmup_shift;
}

/* --- streams.c --- */
extern pthread_mutex_t gs__table_lock;   /* guards the list below */
extern struct gs_stream *gs__all_streams; /* every state, newest first */
/* Streams that hold work, for the legacy-stream rule. */
extern atomic_int gs__blocking_holding, gs__legacy_holding;
/* Captures of the program's own in progress, plus gs_pause() calls not yet
** resumed: while any, nothing is held. */
extern atomic_int gs__app_captures;

/* The calling thread's current context, read again only after a call that may
** have changed it (gs__ctx_epoch). */
static inline CUcontext gs__current_ctx(void)
{
    unsigned e = atomic_load_explicit(&gs__ctx_epoch, memory_order_relaxed);
    if (GS_UNLIKELY(gs__tls.ctx_epoch != e)) {
        CUcontext c = NULL;
        if (!gs__real[GS_ID_cuCtxGetCurrent] || GS_REAL(cuCtxGetCurrent)(&c) != CUDA_SUCCESS)
            c = NULL;
        gs__tls.ctx = c;
        gs__tls.ctx_epoch = e;
    }
    return gs__tls.ctx;
}

/* The context whose default stream a CU_STREAM_LEGACY or CU_STREAM_PER_THREAD
** names: the calling thread's current one.  Each context has its own legacy
** stream, and each thread its own per-thread stream in each context, so their
** states are kept per context (GS_RULE_CURRENT: a test that drops the rule gets
** NULL, one state for all contexts). */
static inline CUcontext gs__default_ctx(void)
{
    return GS_DROPPED(GS_RULE_CURRENT) ? NULL : gs__current_ctx();
}

/* The state of a normalized stream handle; created on first use.  Inline: it is
** on every op's path, and its answer is almost always in a per-thread cache: the
** last created stream, and the last legacy and per-thread stream states, each
** checked with one compare (the handle, or the context of a default stream). */
extern GS_TLS struct gs_stream *gs__tls_last, *gs__tls_default[2];
extern GS_TLS CUstream gs__tls_last_handle;
struct gs_stream *gs__stream_lookup(CUstream handle, CUcontext ctx);
static inline struct gs_stream *gs__stream_get(CUstream handle)
{
    if (handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
        CUcontext c = gs__default_ctx();
        struct gs_stream *s = gs__tls_default[handle == CU_STREAM_PER_THREAD];
        return GS_LIKELY(s && s->key == c) ? s : gs__stream_lookup(handle, c);
    }
    if (GS_LIKELY(gs__tls_last && gs__tls_last_handle == handle))
        return gs__tls_last;
    return gs__stream_lookup(handle, NULL);
}

/* The watchdog sleeps until woken while no stream holds work (watchdog.c). */
extern atomic_int gs__watchdog_idle;
void gs__watchdog_wake(void);

/* s holds work from time t on, for the watchdog (held_since), and wakes the
** watchdog where it sleeps.  The store, then the load, in that order: the
** watchdog's barrier makes one of them see the other (watchdog.c). */
static inline void gs__held_from(struct gs_stream *s, uint64_t t)
{
    atomic_store_explicit(&s->held_since, t, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (GS_UNLIKELY(atomic_load_explicit(&gs__watchdog_idle, memory_order_relaxed)))
        gs__watchdog_wake();
}

/* Learns the stream's context and flags; called locked. */
void gs__stream_ready(struct gs_stream *s);
/* The stream held ops of s are issued to from this thread. */
CUstream gs__issue_stream(const struct gs_stream *s);
/* Makes s's context current for the engine's own calls; returns the previous one. */
CUcontext gs__enter_ctx(const struct gs_stream *s);
void gs__leave_ctx(const struct gs_stream *s, CUcontext prev);
/* s begins or stops holding work. */
void gs__set_holding(struct gs_stream *s, int on);

/* --- issue.c (each called locked) --- */
/* Before a staging buffer of s is overwritten: waits for the GPU to read it. */
void gs__staging_wait(struct gs_stream *s);
/* Issues the held ops eagerly and stops holding, counting why. */
void gs__flush(struct gs_stream *s, int reason);
/* Issues the held ops of s up to node to (those past s->chunk_depth) eagerly, in
** order; holding goes on after them. */
void gs__issue_held(struct gs_stream *s, struct gs_node *to);

/* Launches the held ops up to t as one graph: 0, -1, or GS_CAPTURE_BUSY.  what:
** GS_NVTX_REPLAY or GS_NVTX_CHUNK, the launch's NVTX range. */
int gs__launch_graph(struct gs_stream *s, struct gs_node *t, int what);

/* --- hold.c (called locked) --- */
/* The segment ended: its early chunks are forgotten.  end: where the segment was
** replayed up to that node (NULL otherwise), the place of the last chunk learns
** how far it was from the end, in ops and in the host's time up to end_ns, when
** the boundary came. */
void gs__chunks_end(struct gs_stream *s, struct gs_node *end, uint64_t end_ns);

/* --- patch.c (each called locked) --- */
/* Keeps the key (len bytes) of the launch held at depth, whose parameter bytes
** differ from its node's.  Returns 0, or -1 (no memory: the op is not held). */
int gs__patch_add(struct gs_stream *s, uint32_t depth, const void *key, uint32_t len);
/* The held ops before depth went out: so did their patches. */
void gs__patches_done(struct gs_stream *s, uint32_t depth);
/* Forgets the patches of held launches (all held work went out). */
void gs__patches_reset(struct gs_stream *s);
/* path[0 .. to->depth-1] and keys[] for them, on the stack or, for long
** sequences, the heap (gs__held_get: path and keys, npatches of them patches);
** released by gs__held_free. */
struct gs_held {
    struct gs_node *path_stack[64], **path;
    const struct gs_key *key_stack[64], **keys;
    uint32_t npatches;
};
int gs__held_get(struct gs_stream *s, struct gs_node *to, struct gs_held *h);
void gs__held_free(struct gs_held *h);
/* --- body.c (each called locked) --- */
/* An op the prefix tree does not hold: 1 if the body holds it, 0 if the caller
** issues it (it is remembered for finding bodies). */
int gs__body_op(struct gs_stream *s, const void *key, uint32_t len);
/* A launch the search for bodies would pass over without its key (no body
** active, the search rests): counts it as gs__body_op() would, 1; else 0. */
int gs__body_pass(struct gs_stream *s);
/* The op just issued failed: it is no part of a body. */
void gs__body_failed(struct gs_stream *s);
/* Issues the held body ops (whole bodies as graphs) and stops holding. */
void gs__body_flush(struct gs_stream *s);
/* At a boundary: issues what is held; the next segment is searched anew, and
** may go on with the body it had. */
void gs__body_segment_end(struct gs_stream *s);
/* The watchdog issued a body's ops held too long: the body is set aside; after
** GS_WATCHDOG_HITS times the stream looks for no more bodies. */
void gs__body_watchdog(struct gs_stream *s);
/* Issues what is held and drops the body's graphs; with learned, forgets the
** body too (its functions may be gone). */
void gs__body_forget(struct gs_stream *s, int learned);

/* --- rest.c (each called locked) --- */
/* Where the next segment of s starts: the tree's root, or NULL while learning
** rests (its ops then only mix their shapes into s->fp). */
struct gs_node *gs__segment_start(struct gs_stream *s);
/* A segment that ended while learning rested: where it came back, learning
** resumes. */
void gs__rested_segment(struct gs_stream *s);

/* --- resolve.c --- */
enum { GS_RESOLVE_ALL, GS_RESOLVE_BLOCKING, GS_RESOLVE_LEGACY };
/* Resolves every stream, or every blocking one, or the legacy stream(s), except
** one (NULL for none). */
void gs__resolve_some(int which, const struct gs_stream *except, int reason);
/* The legacy stream's implicit synchronization with blocking streams. */
void gs__legacy_rule(const struct gs_stream *s);

#endif
