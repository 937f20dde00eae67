/*
** stream.h: the engine's state of one stream.
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

#include <stddef.h>
#include <stdint.h>

#include "../base/clock.h"
#include "../base/config.h"
#include "../base/lock.h"
#include "../base/names.h"
#include "../graph/graph_exec.h"
#include "../graph/learner.h"
#include "body_find.h"

enum gs_stream_kind { GS_STREAM_CREATED, GS_STREAM_LEGACY, GS_STREAM_PTDS };


/* A sequence the report still lists after its tree was cleared: the stream was
** destroyed, or a context or module went away (a runtime's teardown at exit does
** that before the report is written). */
struct gs_seq_row {
    uint32_t ops, seen;
    uint64_t replays, patched;
    struct gs_node_cost cost;
    uint64_t eager_ns;        /* its last eager time; 0: none measured */
    uint64_t timed_sum_ns, timed_replays;
    uint8_t ended, verdict;   /* what ended its last segment, the gain check's word (gs_node_gain) */
};

/* The report's row of the sequence ending at n. */
static inline struct gs_seq_row gs__seq_row(const struct gs_node *n)
{
    return (struct gs_seq_row){n->depth, n->seen, n->runs.replays, n->runs.patched, n->cost,
                               n->gain.eager_last_ns, n->gain.timed_sum_ns, n->gain.timed_replays,
                               n->gain.gain_end, n->gain.gain_verdict};
}

/* The mean of a row's timed replays, in us (timed_replays not 0). */
static inline double gs__seq_replay_us(const struct gs_seq_row *r)
{
    return (double)r->timed_sum_ns / 1e3 / (double)r->timed_replays;
}

/* What its replays saved, in us: an estimate from its last eager time and its
** replays' mean, both measured (eager_ns and timed_replays not 0); negative
** where the replays took longer. */
static inline double gs__seq_saved_us(const struct gs_seq_row *r)
{
    return (double)r->replays * ((double)r->eager_ns / 1e3 - gs__seq_replay_us(r));
}
#define GS_RETIRED_MAX 32

enum { GS_HOLD_NONE, GS_HOLD_TRIE, GS_HOLD_BODY };

#define GS_FAILED_KEYS 64

/* A stream's state by owner: each sub-struct below is written by its room
** alone (scripts/owners names it), the fields every op reads stay at the top
** of struct gs_stream, in its first two cache lines. */

/* The segment's records (stream/segment.h, segment.c): whether every op of it
** succeeded, whether it held again after held ops went out before its end, when
** it began to be timed, the watchdog's clock, and the graphs' build time when
** it began. */
struct gs_seg {
    int clean;                /* every op of the segment issued so far succeeded */
    int seg_resumed;          /* it held ops again after held ones went out before its end */
    uint64_t seg_start;       /* monotonic ns of its first op, where the gain check times it; 0: none */
    _Atomic uint64_t held_since; /* monotonic ns of the first op held now; 0: none (read by the watchdog) */
    uint64_t seg_built_mark;  /* graphs.capture_ns + instantiate_ns when the segment began */
};

/* What the open segment's graph launches cost so far: launches, nodes set
** before them, host ns in the driver for both (stream/issue.c adds; segment.h's
** gs__seg_cost_settle gives it to the sequence the segment replayed, or drops
** it, where the segment ends). */
struct gs_seg_cost {
    uint64_t seg_launches, seg_nodes_set, seg_driver_ns;
};

/* Early chunks (rules/chunk.c), beside the hot chunk_depth and chunks_off. */
struct gs_chunks {
    uint32_t last_chunk;      /* depth where the segment's last early chunk ended; 0: none */
    uint32_t tail_at;         /* depth where a chunk ends to keep the last graph short; 0: none */
    uint64_t last_chunk_ns;   /* monotonic ns when that chunk went out; 0: not timed */
    uint64_t chunk_cost_ns;   /* host ns of a chunk's graph launch, a running mean (rule drain) */
    uint64_t drain_from;      /* the segment's last graph went out then, at a boundary of class
                              ** GS_SYNC; 0: none, or the segment resolved since */
    uint8_t drain_busy;       /* the GPU was still running the chunks before it */
    uint8_t chunk_slow;       /* a chunk of this segment ended by the slow host's length */
    uint8_t chunk_shift;      /* a slow host's chunks are GRAPHSHIM_CHUNK_MAX >> chunk_shift ops */
    uint8_t drain_votes;      /* synchronizes in a row that found the GPU busy (rule drain) */
};

/* The gain check's record of the segment that ended last (rules/gain.c). */
struct gs_gain_seg {
    struct gs_node *last_term;
    uint64_t last_start, last_evicted;
    uint64_t last_issued;     /* when the call that ended it was made */
    int last_how;             /* it ran: 0 eagerly, 1 as graphs, -1 partly each */
    int last_open;            /* an event record or a host function ended it: timed at the
                              ** stream's next op, or a synchronize's return */
    uint32_t timing_eager;    /* segments still to end whose ops no loop body may hold: a
                              ** sequence runs eagerly to be timed */
};

/* One-op sequences whose graph failed, by key (rules/capture.c): learned anew
** after their node was dropped, they are not captured again. */
struct gs_capture_rec {
    uint64_t failed_keys[GS_FAILED_KEYS];
    uint32_t nfailed;
};

/* Work that never repeats (rules/rest.c): after GRAPHSHIM_REST_AFTER segments in
** a row that were new, or as many dropped subtrees with no replay, learning
** rests for `dormant` segments (doubling each time).  While it rests
** (`resting`, at the top of struct gs_stream), each segment's ops are summed
** into `fp` (their shapes: a launch's all but its parameter bytes, a copy's or
** memset's all but its arguments), and a segment whose fingerprint is in `fps`
** (those of the segments since learning began to rest) ends the rest.  Where
** the capture budget found that nothing pays (`hopeless`: sequences that come
** back, but too rarely to keep their graphs), learning also rests after warmup
** + GRAPHSHIM_REST_AFTER learned segments without a replay (`dry_segments`),
** and only a segment back within GS_FP_NEAR segments ends that rest: work that
** repeats often enough to be graphed. */
struct gs_rest {
    uint64_t evicted_mark, replays_mark;
    uint32_t dormant, dormant_len, new_segments, dry_segments;
    uint64_t segments_rested; /* for the report */
    uint64_t *fps;            /* GS_FPS entries, allocated when learning first rests */
};

/* The capture budget (rules/resolve.c): sequences must be seen GRAPHSHIM_WARMUP <<
** warmup_shift times before they are graphed; segments since the budget's
** span began, and builds and graph launches then. */
struct gs_budget {
    uint32_t warmup_shift, budget_segments;
    uint32_t warmup_peak;     /* the highest warmup_shift, for the report (a reset keeps it) */
    int hopeless;             /* nothing pays: learning rests sooner (rules/rest.c) */
    uint64_t builds_mark, launches_mark, instantiated_mark;
};

/* A room's state in struct gs_stream, written by its file alone, checked by the
** compiler: every file reads it as const (s->NAME); the owner, which defines
** GS_OWNS_<NAME> before its first include, writes it as NAME_w (the same bytes).
** Elsewhere NAME_w is poisoned below: a write from another file does not
** compile, whatever local pointer it goes through (a const one only reads). */
#define GS_ROOM(type, name) \
    union {                 \
        const type name;    \
        type name##_w;      \
    }

/* The step (rules/step.c): segments end every `unit` ops (after a head of
** `off` ops where off is not 0) while the stream has one; the sequences
** searched that had one (found), so that a sequence back whole brings its
** steps back. */
#define GS_STEP_FOUND 4
struct gs_step_found {
    const struct gs_node *node; /* compared, never read: it may be gone */
    uint32_t depth, unit, off;
};
struct gs_step {
    uint32_t unit, off;         /* 0: no step */
    int head;                   /* the open segment is the head, ended after off ops */
    const struct gs_node *unit_node; /* where the first unit since the steps began ended; NULL: none yet */
    uint32_t misses;            /* units in a row since that ended elsewhere */
    uint64_t body_mark;         /* the loop bodies' clock (bodies found) where the last segment ended */
    struct gs_step_found found[GS_STEP_FOUND];
    uint32_t nfound;
};

struct gs_stream {
    /* What every op reads, first: two cache lines, then the loop bodies' state,
    ** whose first line is what an op reads of it.  A real launch's work in the
    ** driver evicts the engine's data between two ops, and each line the next
    ** one reads is a miss (work that never repeats: lines 0-2 alone). */
    struct gs_lock lock;
    int kind;                 /* enum gs_stream_kind */
    int ready;                /* ctx and flags are known */
    int usable;               /* the engine may hold its ops */
    int app_capturing;        /* the program captures this stream */
    int holding;              /* GS_HOLD_TRIE: the ops on cur's path past chunk_depth are held;
                              ** GS_HOLD_BODY: body.held ops of the loop body are (segment.h) */
    int resting;              /* learning rests (rules/rest.c, struct gs_rest) */
    struct gs_node *cur;      /* the segment's path so far; NULL: not learned (segment.h) */
    uint64_t fp;              /* the resting segment's fingerprint (struct gs_rest) */
    CUfunction rest_f; /* the function of the last launch resting_launch() took (its layout known) */
    uint64_t ops_seen, ops_held; /* for the report */
    uint64_t chunk_since;     /* monotonic ns when the ops held now began to wait; 0: none */
    uint32_t chunk_depth;     /* ops of the segment up to this depth are issued (chunks) */
    int chunks_off;           /* the segment passed a place of chunk_idle: no more chunks by count */
    int seg_held;             /* the segment open now held an op (its records: seg, below) */
    uint32_t step_at;         /* the segment ends before an op at this depth: a step's end (rules/step.c,
                              ** struct gs_step); 0: none */
    struct gs_body body __attribute__((aligned(64))); /* loop bodies inside a segment (body.h) */

    CUstream handle;          /* normalized: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or created */
    CUcontext key;            /* default streams: the context whose stream this is (streams.c) */
    CUcontext ctx;
    int ctx_id;               /* ctx's index in order of first use, for the report; -1: none */
    int blocking;             /* synchronizes with the legacy stream */
    int owner_tid;            /* per-thread stream: its thread */
    int id;                   /* order of first use: the report names streams by it */

    struct gs_trie trie;
    struct gs_seg seg;        /* the segment's records (segment.h) */
    GS_ROOM(struct gs_chunks, chunk);   /* early chunks (rules/chunk.c) */
    GS_ROOM(struct gs_gain_seg, gain);  /* the gain check's record of the last segment (rules/gain.c) */
    uint64_t whole_replays;   /* replays of segments held from start to end (watchdog.c) */
    GS_ROOM(struct gs_capture_rec, capture); /* when sequences are graphed (rules/capture.c) */
    GS_ROOM(struct gs_rest, rests);     /* learning rests (rules/rest.c) */
    GS_ROOM(struct gs_budget, budget);  /* the capture budget (rules/resolve.c) */
    GS_ROOM(struct gs_step, step);      /* the step, where segments end between synchronizes (rules/step.c) */

    /* Held ops whose arguments differ from their node's (the tree matches ops
    ** by everything else, gs__key_cmp): their own keys, packed in pbuf, in
    ** depth order; those before patch_first have gone out. */
    struct gs_patch {
        uint32_t depth, off;
    } *patches;
    uint32_t npatches, patch_first, patch_cap;
    unsigned char *pbuf;
    size_t pused, pcap;


    CUevent staging_done;     /* recorded after the last issue that read staging */
    int staging_pending;
    /* A per-thread stream's held work that another thread issued, on the legacy
    ** stream: recorded there after it, waited for by the stream before its
    ** owner's next synchronize or query of it (streams.c, gs__ptds_catch_up). */
    CUevent foreign_done;
    atomic_int foreign_pending;

    /* Counters for the report. */
    uint64_t ops_replayed, replays, chunks, issue_errors;
    uint64_t replays_chunked; /* replays whose ops had all gone out in early chunks: no graph at the boundary */
    struct gs_graphs graphs;  /* its graphs' lock, context and counters (graph_exec.h) */
    struct gs_ranges ranges;  /* device allocations its copies moved into (gs__key_moves_ok) */
    uint64_t patched_launches, nodes_patched; /* graph launches with held launches' own parameters; nodes set
                                               ** in place for them (graph_cache.c's gs__exec_for) */
    struct gs_seg_cost seg_cost; /* what the open segment's graph launches cost so far */
    uint64_t recaptures;      /* graphs built again for a sequence that had one (graph_cache.h) */
    uint64_t resumes;         /* segments held again after held ops went out before their end */
    uint64_t bails[GS_NBAIL];
    struct gs_seq_row retired[GS_RETIRED_MAX];
    uint32_t nretired;

    struct gs_stream *next;   /* every state */
    struct gs_stream *hnext;  /* hash chain; a per-thread stream: its thread's other ones */
};

/* The rooms' writable names, poisoned outside their owners (GS_ROOM). */
#ifndef GS_OWNS_CHUNK /* rules/chunk.c */
#pragma GCC poison chunk_w
#endif
#ifndef GS_OWNS_GAIN /* rules/gain.c */
#pragma GCC poison gain_w
#endif
#ifndef GS_OWNS_CAPTURE /* rules/capture.c */
#pragma GCC poison capture_w
#endif
#ifndef GS_OWNS_RESTS /* rules/rest.c */
#pragma GCC poison rests_w
#endif
#ifndef GS_OWNS_BUDGET /* rules/resolve.c */
#pragma GCC poison budget_w
#endif
#ifndef GS_OWNS_STEP /* rules/step.c */
#pragma GCC poison step_w
#endif

/* The fields every op reads fit the first two cache lines (above). */
_Static_assert(offsetof(struct gs_stream, body) == 128, "struct gs_stream: hot fields past line 1");

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

/* The watchdog sleeps on gs__watchdog_idle until woken while no stream holds
** work (rules/watchdog.c). */
extern atomic_int gs__watchdog_idle;
void gs__watchdog_wake(void);

/* Learns the stream's context and flags; called locked. */
void gs__stream_ready(struct gs_stream *s);
/* The stream held ops of s are issued to from this thread. */
CUstream gs__issue_stream(const struct gs_stream *s);
/* Held ops of s went out on st (gs__issue_stream's): where that is the legacy
** stream for another thread's per-thread stream, an event there marks them.
** Called locked. */
void gs__issued_on(struct gs_stream *s, CUstream st);
/* Before a synchronize or query of s by its owner, where s holds nothing: s
** waits for the work of its that another thread issued (gs__issued_on). */
void gs__ptds_catch_up(struct gs_stream *s);
/* Makes s's context current for the engine's own calls: 0 (the previous one in
** *prev), or -1 where it cannot, and then s's work must not be issued from
** this thread.  gs__leave_ctx makes prev current again. */
int gs__enter_ctx(const struct gs_stream *s, CUcontext *prev);
void gs__leave_ctx(const struct gs_stream *s, CUcontext prev);
/* Visits every stream state, under the table lock and the state's lock. */
void gs__each_stream(void (*fn)(struct gs_stream *, void *), void *arg);

#endif
