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

#include "body.h"
#include "learner.h"
#include "lock.h"

enum gs_stream_kind { GS_STREAM_CREATED, GS_STREAM_LEGACY, GS_STREAM_PTDS };

/* Why held ops were issued eagerly instead of as a graph. */
enum gs_bail {
    GS_BAIL_MISMATCH,      /* the next op differed from every stable sequence */
    GS_BAIL_WATCHDOG,      /* held longer than GRAPHSHIM_MAX_DEFER_US */
    GS_BAIL_GRAPH_FAILED,  /* capture, instantiate or launch of the graph failed */
    GS_BAIL_OTHER_STREAM,  /* legacy-stream ordering with another stream */
    GS_BAIL_APP_CAPTURE,   /* the program began a capture of its own */
    GS_BAIL_UNHOLDABLE,    /* an op the engine cannot hold (unknown attribute, memory kind) */
    GS_BAIL_NO_GAIN,       /* the sequence ran slower as a graph than eagerly: eager for good */
    GS_BAIL_EXIT,          /* the process exits */
    GS_BAIL_SYNC_BUSY,     /* no capture while another thread synchronizes the context */
    GS_BAIL_BODY_END,      /* an op that did not follow the loop body held (body.h) */
    GS_BAIL_BOUNDARY,      /* a boundary in the middle of a sequence: + class */
    GS_NBAIL = GS_BAIL_BOUNDARY + GS_NCLASSES
};

/* A sequence the report still lists after its tree was cleared: the stream was
** destroyed, or a context or module went away (a runtime's teardown at exit does
** that before the report is written). */
struct gs_seq_row {
    uint32_t ops, seen;
    uint64_t replays, patched;
};
#define GS_RETIRED_MAX 32

enum { GS_HOLD_NONE, GS_HOLD_TRIE, GS_HOLD_BODY };

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
                              ** GS_HOLD_BODY: body.held ops of the loop body are */
    int resting;              /* learning rests (below) */
    struct gs_node *cur;      /* the segment's path so far; NULL: not learned */
    uint64_t fp;              /* the resting segment's fingerprint (below) */
    CUfunction rest_f; /* the function of the last launch resting_launch() took (its layout known) */
    uint64_t ops_seen, ops_held; /* for the report */
    uint64_t chunk_since;     /* monotonic ns when the ops held now began to wait */
    uint32_t chunk_depth;     /* ops of the segment up to this depth are issued (chunks) */
    int chunks_off;           /* the segment passed a place of chunk_idle: no more chunks by count */
    int seg_held;             /* the segment open now held an op (its start: seg_start, below) */
    struct gs_body body __attribute__((aligned(64))); /* loop bodies inside a segment (body.h) */

    CUstream handle;          /* normalized: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or created */
    CUcontext key;            /* default streams: the context whose stream this is (streams.c) */
    CUcontext ctx;
    int ctx_id;               /* ctx's index in order of first use, for the report; -1: none */
    int blocking;             /* synchronizes with the legacy stream */
    int owner_tid;            /* per-thread stream: its thread */
    int id;                   /* order of first use: the report names streams by it */

    struct gs_trie trie;
    uint32_t last_chunk;      /* depth where the segment's last early chunk ended; 0: none */
    uint32_t tail_at;         /* depth where a chunk ends to keep the last graph short; 0: none */
    uint64_t last_chunk_ns;   /* monotonic ns when that chunk went out */
    int clean;                /* every op of the segment issued so far succeeded */
    _Atomic uint64_t held_since; /* monotonic ns of the first held op; 0: none */

    /* Timing of segments that end in a synchronize, for the gain check: when the
    ** segment now open began, and the one that ended last. */
    uint64_t seg_start;
    struct gs_node *last_term;
    uint64_t last_start, last_evicted;
    int last_how;             /* the last one ran: 0 eagerly, 1 as graphs, -1 partly each */

    /* Work that never repeats: after GRAPHSHIM_REST_AFTER segments in a row that
    ** were new, or as many dropped subtrees with no replay, learning rests for
    ** `dormant` segments (doubling each time).  While it rests (`resting`, at
    ** the top), each segment's ops are summed into `fp` (their shapes: what the
    ** tree compares but parameter bytes), and a segment whose fingerprint is in `fps` (those
    ** of the segments since learning began to rest) ends the rest.  Where the
    ** capture budget found that nothing pays (`hopeless`: sequences that come
    ** back, but too rarely to keep their graphs), learning also rests after
    ** warmup + GRAPHSHIM_REST_AFTER learned segments without a replay
    ** (`dry_segments`), and only a segment back within GS_FP_NEAR segments ends
    ** that rest: work that repeats often enough to be graphed. */
    uint64_t evicted_mark, replays_mark;
    uint32_t dormant, dormant_len, new_segments, dry_segments;
    int hopeless;
    uint64_t segments_rested; /* for the report */
    uint64_t *fps; /* GS_FPS entries, allocated when learning first rests */

    /* The capture budget (resolve.c): sequences must be seen GRAPHSHIM_WARMUP <<
    ** warmup_shift times before they are graphed; segments since the budget's
    ** span began, and builds and graph launches then. */
    uint32_t warmup_shift, budget_segments;
    uint32_t warmup_peak; /* the highest warmup_shift, for the report (a reset keeps it) */
    uint64_t builds_mark, launches_mark, instantiated_mark;

    /* Held launches whose parameter bytes differ from their node's (the tree
    ** matches launches by everything else): their own keys, packed in pbuf, in
    ** depth order; those before patch_first have gone out. */
    struct gs_patch {
        uint32_t depth, off;
    } *patches;
    uint32_t npatches, patch_first, patch_cap;
    unsigned char *pbuf;
    size_t pused, pcap;


    CUevent staging_done;     /* recorded after the last issue that read staging */
    int staging_pending;

    /* Counters for the report. */
    uint64_t ops_replayed, replays, chunks, issue_errors;
    uint64_t builds;          /* executables instantiated or updated for this stream (graph_cache.c) */
    uint64_t instantiated;    /* of those, new executables (graph_cache.c) */
    uint64_t patched_launches, nodes_patched; /* graph launches with held launches' own parameters; nodes set
                                               ** in place for them (graph_cache.c's gs__exec_for) */
    uint64_t recaptures;      /* graphs built again for a sequence that had one (graph_cache.h) */
    uint64_t capture_ns, instantiate_ns, update_ns; /* host time capturing, instantiating, setting nodes */
    uint64_t bails[GS_NBAIL];
    struct gs_seq_row retired[GS_RETIRED_MAX];
    uint32_t nretired;

    struct gs_stream *next;   /* every state */
    struct gs_stream *hnext;  /* hash chain; a per-thread stream: its thread's other ones */
};

/* The fields every op reads fit the first two cache lines (above). */
_Static_assert(offsetof(struct gs_stream, body) == 128, "struct gs_stream: hot fields past line 1");

#endif
