/*
** stream.h: the engine's state of one stream (state.h: struct gs_stream and its
** rooms; segment.h: the segment's, whose functions write them), and the states
** of all streams (streams.c).
**
** A state exists for every stream the program issued an op to: created streams by
** handle, each context's legacy stream, and each thread's per-thread default
** stream in each context.  States
** are never freed: a destroyed stream's state is emptied and reused if the handle
** comes back, so a pointer cached by any thread stays valid.  Everything in a
** state is guarded by its lock, except held_since (read by the watchdog).
*/
#ifndef GS_STREAM_H
#define GS_STREAM_H

#include "state.h"
#include "segment.h"

/* --- The states (streams.c) ------------------------------------------------ */

/* Watchdog firings in a row at one node after which it is a cut: held work goes
** out as soon as it reaches the node (rules/watchdog.c).  Its hits never change after:
** no work stays held there for the watchdog to find. */
#define GS_WATCHDOG_HITS 2
#define GS_WATCHDOG_CUT(n) ((n)->watchdog.watchdog_hits >= GS_WATCHDOG_HITS)

/* Times a sequence of s must be seen before it is graphed: GRAPHSHIM_WARMUP, or
** more where its graphs did not pay for their capture (the capture budget,
** resolve.c, raises warmup_shift).  s locked. */
static inline long gs__warmup(const struct gs_stream *s)
{
    return gs__cfg.warmup << s->budget.warmup_shift;
}

extern pthread_mutex_t gs__table_lock;   /* guards the list below */
extern struct gs_stream *gs__all_streams; /* every state, newest first */
/* Captures of the program's own in progress, plus gs_pause() calls not yet
** resumed: while any, nothing is held. */
extern atomic_int gs__app_captures;

/* The calling thread's current context, read again only after a call that may
** have changed it (gs__ctx_epoch).  Where the read fails but only other threads'
** calls raised the epoch, what this thread read last stands and the read is
** tried again at its next call: a NULL would give its default streams a second
** state, whose ops could pass those held in the first.  Where its own call may
** have moved it, NULL (not known). */
static inline CUcontext gs__current_ctx(void)
{
    unsigned e = atomic_load_explicit(&gs__ctx_epoch, memory_order_relaxed);
    if (GS_UNLIKELY(gs__tls.ctx_epoch != e)) {
        CUcontext c = NULL;
        if (gs__real[GS_ID_cuCtxGetCurrent] && GS_REAL(cuCtxGetCurrent)(&c) != CUDA_SUCCESS) {
            if (!gs__tls.ctx_moved)
                return gs__tls.ctx;
            c = NULL;
        }
        gs__tls.ctx = c;
        gs__tls.ctx_epoch = e;
        gs__tls.ctx_moved = 0;
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
/* Where graphshim has no memory for a stream's state, or a default stream's
** context cannot be read, gs__stream_get gives this one, shared, whose ops
** pass through: who meets it issues every stream's held work first (bail
** no-memory), and a capture begun on it stops holding for good (hold.c,
** boundary.c). */
extern struct gs_stream gs__nomem_stream;
static inline struct gs_stream *gs__stream_get(CUstream handle)
{
    if (handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
        CUcontext c = gs__default_ctx();
        /* Its context could not be read (gs__current_ctx's NULL): no state of
        ** its own, as without memory, so that its ops pass only after every
        ** stream's held work, which may be that context's (rule current). */
        if (GS_UNLIKELY(!c) && !GS_DROPPED(GS_RULE_CURRENT))
            return &gs__nomem_stream;
        struct gs_stream *s = gs__tls_default[handle == CU_STREAM_PER_THREAD];
        return GS_LIKELY(s && s->key == c) ? s : gs__stream_lookup(handle, c);
    }
    if (GS_LIKELY(gs__tls_last && gs__tls_last_handle == handle))
        return gs__tls_last;
    return gs__stream_lookup(handle, NULL);
}

/* Learns the stream's context and flags; called locked. */
void gs__stream_ready(struct gs_stream *s);
/* s, unlocked, ready: learned once, by whichever of its first op or first
** boundary comes first (a stream that only records events and waits is
** blocking or not all the same, for the legacy rule). */
void gs__stream_make_ready(struct gs_stream *s);
/* The stream held ops of s are issued to from this thread. */
CUstream gs__issue_stream(const struct gs_stream *s);
/* Held ops of s went out on st (gs__issue_stream's): where that is the legacy
** stream for another thread's per-thread stream, an event there marks them.
** Called locked. */
void gs__issued_on(struct gs_stream *s, CUstream st);
/* Before a synchronize or query of s by its owner, where s holds nothing: s
** waits for the work of its that another thread issued (gs__issued_on). */
void gs__ptds_catch_up(struct gs_stream *s);
/* The stream's learning is forgotten: its event for work another thread issued
** goes, where none is pending (an event not destroyed leaks).  Called locked. */
void gs__foreign_drop(struct gs_stream *s);
/* The stream's context and flags are to be learned again (gs__stream_ready): it
** was destroyed (a new stream may get its handle) or its context went away.
** Called locked. */
void gs__stream_unready(struct gs_stream *s);
/* Makes s's context current for the engine's own calls: 0 (the previous one in
** *prev), or -1 where it cannot, and then s's work must not be issued from
** this thread.  gs__leave_ctx makes prev current again. */
int gs__enter_ctx(const struct gs_stream *s, CUcontext *prev);
void gs__leave_ctx(const struct gs_stream *s, CUcontext prev);
/* Visits every stream state, under the table lock and the state's lock. */
void gs__each_stream(void (*fn)(struct gs_stream *, void *), void *arg);

#endif
