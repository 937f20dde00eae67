/*
** state.h: the engine's state of one stream, struct gs_stream, and its rooms.
** Included by stream.h and segment.h alone: segment.h's functions write the
** segment's rooms, and close them after (their writable names poisoned), so
** that every file that sees a stream's state sees them closed.
*/
#ifndef GS_STATE_H
#define GS_STATE_H

#if !defined GS_STREAM_H && !defined GS_SEGMENT_H
#error "state.h is included through stream.h or segment.h"
#endif

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

/* A stream's state by owner: each room below (a sub-struct, a group of fields
** or one field) is written by its owner file alone, the compiler checks it
** (GS_ROOM, below); the fields every op reads stay at the top of struct
** gs_stream, in its first two cache lines.  A few are shared, each says why
** (scripts/owners names their writers). */

/* The segment's records (stream/segment.h, segment.c, GS_OWNS_SEG): whether every op of it
** succeeded, whether it held again after held ops went out before its end, when
** it began to be timed, the watchdog's clock, and the graphs' build time when it began. */
struct gs_seg {
    int clean;                /* every op of the segment issued so far succeeded */
    int seg_resumed;          /* it held ops again after held ones went out before its end */
    uint64_t seg_start;       /* monotonic ns of its first op, where the gain check times it; 0: none */
    uint64_t seg_start_driver; int seg_start_tid; /* then, that op's thread and its gs__thread_driver_ns */
    _Atomic uint64_t held_since; /* monotonic ns of the first op held now; 0: none (read by the watchdog) */
    uint64_t seg_built_mark;  /* graphs.capture_ns + instantiate_ns when the segment began */
};

/* What the open segment's graph launches cost so far: launches, nodes set
** before them, host ns in the driver for both (stream/issue.c and replay.c add
** through segment.h's gs__seg_cost_add; gs__seg_cost_settle gives it to the
** sequence the segment replayed, or drops it, where the segment ends). */
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
    int last_how;             /* it ran: 0 eagerly, 1 as graphs, -1 held, then eagerly, -2 partly as graphs */
    int last_open;            /* an event record or a host function ended it: timed at the next op */
    uint32_t timing_eager;    /* segments still to end whose ops no loop body may hold (run eagerly, timed) */
    uint64_t last_own; int last_tid; /* its first op's thread; that thread's gs__thread_driver_ns
                                     ** then, plus the segment's own driver ns (rule gain-own-time) */
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
** GS_OWNS_<FILE> before its first include, writes it as NAME_w (the same bytes).
** Elsewhere NAME_w is poisoned below: a write from another file does not
** compile, whatever local pointer it goes through (a const one only reads).
** What a room's pointer points to is not the room's (s->body.active->failed
** compiles): the owner's alone by convention.  A type that is a pointer is
** named by a typedef (CUevent) or goes in a GS_ROOM_FLAT (const then applies
** to the pointer, not what it points to).  gcc takes an atomic store to a
** const _Atomic field: those stores are scripts/owners'. */
#define GS_ROOM(type, name) \
    union {                 \
        const type name;    \
        type name##_w;      \
    }

/* A room whose fields keep their own names at the top of struct gs_stream
** (s->npatches): FIELDS(q) lists them, q before each name; every file reads them
** const, the owner writes NAME_w.FIELD (the same bytes). */
#define GS_ROOM_FLAT(fields, name) \
    union {                        \
        struct {                   \
            fields(const)          \
        };                         \
        struct {                   \
            fields()               \
        } name##_w;                \
    }

/* A room of one pointer: const, the pointer (not what it points to). */
#define GS_ROOM_PTR(type, name) \
    union {                     \
        type *const name;       \
        type *name##_w;         \
    }

/* Held ops whose arguments differ from their node's (the tree matches ops
** by everything else, gs__key_cmp): their own keys, packed in pbuf, in
** depth order; those before patch_first have gone out (stream/patch.c). */
struct gs_patch {
    uint32_t depth, off;
};
#define GS_PATCH_FIELDS(q)     \
    struct gs_patch *q patches; \
    uint32_t q npatches;       \
    uint32_t q patch_first;    \
    uint32_t q patch_cap;      \
    unsigned char *q pbuf;     \
    size_t q pused;            \
    size_t q pcap;

/* Sequences the report still lists after their tree was cleared (rules/resolve.c). */
#define GS_RETIRED_FIELDS(q)                  \
    struct gs_seq_row q retired[GS_RETIRED_MAX]; \
    uint32_t q nretired;


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

/* A group across streams (stream/xs.c, GS_OWNS_XS; stream/xs.h).  As its
** origin: open, members, each member's ops and those the origin waited for, the
** events recorded in it, fork events, bridge events, report counts.  As a
** member: its origin (stored atomically), the origin's thread, its index. */
#define GS_XS_MEMBERS 4
#define GS_XS_EVENTS 8
#define GS_XS_FORKS 8
struct gs_xs {
    int open, tid;
    uint32_t nmembers;
    struct gs_stream *mem[GS_XS_MEMBERS + 1];
    uint32_t mops[GS_XS_MEMBERS + 1], joined[GS_XS_MEMBERS + 1];
    uint32_t nev;
    CUevent ev[GS_XS_EVENTS];
    uint32_t ev_by[GS_XS_EVENTS], ev_mops[GS_XS_EVENTS];
    CUevent forks[GS_XS_FORKS];
    uint8_t refused[GS_XS_FORKS];
    uint32_t nforks;
    int fresh_fork, fresh_refused, fresh_open; /* forks by events made for them (xs.h) */
    CUevent *dying; uint32_t ndying, dying_cap; /* destroyed while the group held their records */
    CUevent bridge[GS_XS_MEMBERS + 1];
    uint64_t groups, streams_max;
    struct gs_stream *origin;
    int origin_tid;
    uint32_t idx;
};

struct gs_stream {
    /* What every op reads, first: two cache lines, then the loop bodies' state,
    ** whose first line is what an op reads of it.  A real launch's work in the
    ** driver evicts the engine's data between two ops, and each line the next
    ** one reads is a miss (work that never repeats: lines 0-2 alone). */
    struct gs_lock lock;
    GS_ROOM(int, kind);       /* enum gs_stream_kind (streams.c) */
    GS_ROOM(int, ready);      /* ctx and flags are known (streams.c) */
    GS_ROOM(int, usable);     /* the engine may hold its ops (streams.c) */
    GS_ROOM(int, app_capturing); /* the program captures this stream (entry/boundary.c) */
    GS_ROOM(int, holding);    /* GS_HOLD_TRIE: the ops on cur's path past chunk_depth are held;
                              ** GS_HOLD_BODY: body.held ops of the loop body are (segment.h) */
    GS_ROOM(int, resting);    /* learning rests (rules/rest.c, struct gs_rest) */
    GS_ROOM_PTR(struct gs_node, cur); /* the segment's path so far; NULL: not learned (segment.h) */
    /* Shared: each op of a resting segment mixes its shape in (entry/hold.c),
    ** the rest reads and clears it where the segment ends (rules/rest.c). */
    uint64_t fp;              /* the resting segment's fingerprint (struct gs_rest) */
    CUfunction rest_f; /* the function of the last launch resting_launch() took (its layout known) */
    GS_ROOM(uint64_t, ops_seen); /* for the report (entry/hold.c) */
    uint64_t ops_held;        /* for the report: counted where an op is held (hold.c, a loop body's body.c) */
    GS_ROOM(uint64_t, chunk_since); /* monotonic ns when the ops held now began to wait; 0: none (segment.h) */
    GS_ROOM(uint32_t, chunk_depth); /* ops of the segment up to this depth are issued (segment.h,
                                    ** gs__seg_issued_to: chunks, issue.c) */
    GS_ROOM(int, chunks_off); /* the segment passed a place of chunk_idle: no more chunks by count (chunk.c) */
    GS_ROOM(int, seg_held);   /* the segment open now held an op (its records: seg; segment.h) */
    GS_ROOM(uint32_t, step_at); /* the segment ends before an op at this depth: a step's end (rules/step.c,
                              ** struct gs_step); 0: none */
    /* Loop bodies inside a segment (body.h; written by body.c, GS_OWNS_BODY),
    ** from the third cache line on: the line is aligned by the empty mark, not
    ** the room, whose size would then round up to whole lines. */
    _Alignas(64) char body_line[0];
    GS_ROOM(struct gs_body, body);

    /* Who the stream is (streams.c). */
    GS_ROOM(CUstream, handle); /* normalized: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or created */
    GS_ROOM(CUcontext, key);  /* default streams: the context whose stream this is */
    GS_ROOM(CUcontext, ctx);
    GS_ROOM(int, ctx_id);     /* ctx's index in order of first use, for the report; -1: none */
    GS_ROOM(int, blocking);   /* synchronizes with the legacy stream */
    GS_ROOM(int, owner_tid);  /* per-thread stream: its thread */
    GS_ROOM(int, id);         /* order of first use: the report names streams by it */

    /* Shared: the learner's functions write it (graph/learner.c), called by the
    ** rooms that learn, drop and walk sequences. */
    struct gs_trie trie;
    GS_ROOM(struct gs_seg, seg);        /* the segment's records (segment.h) */
    GS_ROOM(struct gs_chunks, chunk);   /* early chunks (rules/chunk.c) */
    GS_ROOM(struct gs_gain_seg, gain);  /* the gain check's record of the last segment (rules/gain.c) */
    GS_ROOM(uint64_t, whole_replays); /* replays of segments held from start to end (resolve.c; watchdog.c reads) */
    GS_ROOM(struct gs_capture_rec, capture); /* when sequences are graphed (rules/capture.c) */
    GS_ROOM(struct gs_rest, rests);     /* learning rests (rules/rest.c) */
    GS_ROOM(struct gs_budget, budget);  /* the capture budget (rules/resolve.c) */
    GS_ROOM(struct gs_step, step);      /* the step, where segments end between synchronizes (rules/step.c) */

    GS_ROOM_FLAT(GS_PATCH_FIELDS, patch); /* held ops' own arguments (stream/patch.c) */

    /* Staging (stream/issue.c): recorded after the last issue that read staging. */
    GS_ROOM(CUevent, staging_done);
    GS_ROOM(int, staging_pending);
    /* A per-thread stream's held work that another thread issued, on the legacy
    ** stream: recorded there after it, waited for by the stream before its
    ** owner's next synchronize or query of it (streams.c, gs__ptds_catch_up). */
    GS_ROOM(CUevent, foreign_done);
    GS_ROOM(atomic_int, foreign_pending);

    /* Counters for the report: each by its room, but those counted where the
    ** thing counted happens, in several files (shared: issue_errors,
    ** recaptures: issue.c, body.c; bails: where a bail is decided). */
    GS_ROOM(uint64_t, ops_replayed); /* stream/replay.c */
    GS_ROOM(uint64_t, replays); /* resolve.c */
    GS_ROOM(uint64_t, chunks);  /* rules/chunk.c */
    uint64_t issue_errors;
    GS_ROOM(uint64_t, replays_chunked); /* replays whose ops had all gone out in early chunks: no
                                         ** graph at the boundary (resolve.c) */
    /* Shared: its graphs' lock, context and counters (graph_exec.h), written by
    ** the graph cache's functions, called where graphs are built and launched. */
    struct gs_graphs graphs;
    GS_ROOM(struct gs_ranges, ranges); /* device allocations its copies moved into (gs__key_moves_ok; entry/hold.c) */
    GS_ROOM(uint64_t, patched_launches); /* graph launches with held launches' own parameters (issue.c) */
    GS_ROOM(uint64_t, nodes_patched); /* nodes set in place for them (graph_cache.c's gs__exec_for; issue.c) */
    GS_ROOM(struct gs_seg_cost, seg_cost); /* what the open segment's graph launches cost so far (segment.h) */
    uint64_t recaptures;      /* graphs built again for a sequence that had one (graph_cache.h) */
    GS_ROOM(uint64_t, resumes); /* segments held again after held ops went out before their end (segment.c) */
    uint64_t bails[GS_NBAIL];
    GS_ROOM_FLAT(GS_RETIRED_FIELDS, retire); /* retired, nretired (rules/resolve.c) */
    GS_ROOM(struct gs_xs, xs); /* a group across streams (stream/xs.c) */

    GS_ROOM_PTR(struct gs_stream, next);  /* every state (streams.c) */
    GS_ROOM_PTR(struct gs_stream, hnext); /* hash chain; a per-thread stream: its thread's other ones */
};

/* The rooms' writable names, poisoned outside their owners (GS_ROOM): each
** owner file defines GS_OWNS_<FILE> before its first include.  The segment's
** (cur_w, holding_w, seg_held_w, chunk_since_w, chunk_depth_w, seg_w,
** seg_cost_w, resumes_w) at the end of segment.h, after its functions that
** write them. */
#ifndef GS_OWNS_CHUNK /* rules/chunk.c */
#pragma GCC poison chunk_w chunks_off_w chunks_w
#endif
#ifndef GS_OWNS_GAIN /* rules/gain.c */
#pragma GCC poison gain_w
#endif
#ifndef GS_OWNS_CAPTURE /* rules/capture.c */
#pragma GCC poison capture_w
#endif
#ifndef GS_OWNS_REST /* rules/rest.c */
#pragma GCC poison rests_w resting_w
#endif
#ifndef GS_OWNS_RESOLVE /* rules/resolve.c */
#pragma GCC poison budget_w whole_replays_w replays_w replays_chunked_w retire_w
#endif
#ifndef GS_OWNS_STEP /* rules/step.c */
#pragma GCC poison step_w step_at_w
#endif
#ifndef GS_OWNS_BODY /* stream/body.c */
#pragma GCC poison body_w
#endif
#ifndef GS_OWNS_PATCH /* stream/patch.c */
#pragma GCC poison patch_w
#endif
#ifndef GS_OWNS_REPLAY /* stream/replay.c */
#pragma GCC poison ops_replayed_w
#endif
#ifndef GS_OWNS_ISSUE /* stream/issue.c */
#pragma GCC poison staging_done_w staging_pending_w patched_launches_w nodes_patched_w
#endif
#ifndef GS_OWNS_STREAMS /* stream/streams.c */
#pragma GCC poison kind_w ready_w usable_w handle_w key_w ctx_w ctx_id_w blocking_w owner_tid_w id_w
#pragma GCC poison foreign_done_w foreign_pending_w next_w hnext_w
#endif
#ifndef GS_OWNS_XS /* stream/xs.c */
#pragma GCC poison xs_w
#endif
#ifndef GS_OWNS_HOLD /* entry/hold.c */
#pragma GCC poison ops_seen_w ranges_w
#endif
#ifndef GS_OWNS_BOUNDARY /* entry/boundary.c */
#pragma GCC poison app_capturing_w
#endif

/* The fields every op reads fit the first two cache lines (above). */
_Static_assert(offsetof(struct gs_stream, body) == 128, "struct gs_stream: hot fields past line 1");

#endif
