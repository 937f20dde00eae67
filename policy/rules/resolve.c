/*
** resolve.c: the end of a segment, what a boundary does to held work: to one
** stream, to all of them, to the legacy stream's partners; and the capture
** budget.  (Which boundary resolves what: entry/boundary.c.  The gain check, at
** synchronizes: gain.c.)
*/
#define GS_OWNS_RESOLVE /* this file writes its rooms (state.h, GS_ROOM) */
#define _GNU_SOURCE
#include "resolve.h"

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../base/log.h"
#include "../graph/graph_cache.h"
#include "../graph/learner.h"
#include "../stream/body.h"
#include "../stream/issue.h"
#include "../stream/patch.h"
#include "../stream/segment.h"
#include "../stream/xs.h"
#include "capture.h"
#include "chunk.h"
#include "gain.h"
#include "rest.h"
#include "step.h"

/* --- Resolve --------------------------------------------------------------- */

/* A graph costs its capture and instantiation, tens of microseconds, and saves a
** few per launch; a launch that must first update its graph (new parameters
** that no kept graph has) costs a capture and an update, about as much again.
** The budget judges a stream's graphs every GS_BUDGET_SEGMENTS segments: where
** it built GS_BUDGET_CAPTURES graphs or more in that time (instantiated or
** updated, s->graphs.builds) and launched fewer than GS_BUDGET_LAUNCHES times as many
** (sequences that come back too rarely to pay, or whose parameters never come
** back), its sequences must be seen twice as often before they are graphed, up
** to GS_WARMUP_MAX times, and wait that long again where they are stable but
** have no graph yet, or their graph had to be built for its last launch and the
** gain check has not found it paying (gs__trie_restrain); where its graphs were
** launched 4 * GS_BUDGET_LAUNCHES times as often as it built them, half as
** often again, down to GRAPHSHIM_WARMUP.  Where it made GS_BUDGET_CAPTURES new
** executables or more and launched its graphs fewer than GS_BUDGET_HOPELESS
** times per new executable (a graph instantiated for nearly every launch:
** sequences back too rarely to keep their graphs), nothing pays: that is
** judged every GS_BUDGET_EARLY segments already, and the warmup goes to
** GS_WARMUP_MAX at once.  Updates in place do not count there: a sequence
** whose arguments change every time (a model's inputs, an optimizer's step)
** updates its one graph before each launch, and its replays pay (resnet18 fell
** from 90 % to 40 % replayed when they counted).  A span of segments, not of builds:
** the graphs a program makes when its loop starts are judged with the launches
** that follow (a short run is not judged at all), while the gain check times
** each sequence that replays often enough.  Called locked. */
#define GS_BUDGET_SEGMENTS 1024
#define GS_BUDGET_CAPTURES 32
#define GS_BUDGET_LAUNCHES 4
#define GS_BUDGET_HOPELESS 2
#define GS_BUDGET_EARLY 256
#define GS_WARMUP_MAX 64

/* A new span of the budget begins now. */
/* A new span of the capture budget begins now.  Called locked. */
static void budget_span_start(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->budget_w.budget_segments = 0;
    s->budget_w.builds_mark = s->graphs.builds;
    s->budget_w.launches_mark = s->replays + s->chunks;
    s->budget_w.instantiated_mark = s->graphs.instantiated;
}

void gs__budget_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->budget_w.warmup_shift = 0;
    s->budget_w.hopeless = 0;
    budget_span_start(s);
}

static void capture_budget(struct gs_stream *s)
{
    uint64_t builds = s->graphs.builds - s->budget_w.builds_mark, launches = s->replays + s->chunks - s->budget_w.launches_mark;
    uint64_t made = s->graphs.instantiated - s->budget_w.instantiated_mark;
    int hopeless = made >= GS_BUDGET_CAPTURES && launches < made * GS_BUDGET_HOPELESS;

    if (GS_DROPPED(GS_RULE_BUDGET) ||
        (++s->budget_w.budget_segments < GS_BUDGET_SEGMENTS && !(hopeless && s->budget_w.budget_segments % GS_BUDGET_EARLY == 0)))
        return;
    s->budget_w.hopeless |= hopeless; /* also where the warmup was at its most already */
    if (builds >= GS_BUDGET_CAPTURES && launches < builds * GS_BUDGET_LAUNCHES &&
        gs__warmup(s) * 2 <= GS_WARMUP_MAX) {
        s->budget_w.warmup_shift++;
        while (hopeless && gs__warmup(s) * 2 <= GS_WARMUP_MAX)
            s->budget_w.warmup_shift++;
        if (s->budget_w.warmup_shift > s->budget_w.warmup_peak)
            s->budget_w.warmup_peak = s->budget_w.warmup_shift;
        gs__trie_restrain(&s->trie.root, gs__warmup(s));
        gs__debug("stream %d: graphs launched %.1f times per build in %u segments: sequences graphed after %ld times",
                  s->id, (double)launches / (double)builds, s->budget_w.budget_segments, gs__warmup(s));
    } else if (builds && launches >= builds * 4 * GS_BUDGET_LAUNCHES && s->budget_w.warmup_shift) {
        s->budget_w.warmup_shift--;
        s->budget_w.hopeless = 0;
    }
    budget_span_start(s);
}

/* What the rooms hear of a segment's end (the table below). */
struct gs_seg_end {
    struct gs_node *t; /* the segment's path: its sequence; NULL where nothing was learned */
    int reason;        /* enum gs_bail: why it ended */
    int replayed;      /* t's graph went out (set by the replay's room) */
    int busy;          /* the GPU still ran the last early chunk; -1: not asked */
    uint64_t end_ns;   /* a segment of early chunks: when it ended, before its last graph's capture */
};

static void body_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    (void)e;
    gs__body_segment_end(s); /* a loop's held bodies go out: its end, not a bail */
}

/* The held work out: an exactly matched stable sequence replayed as a graph,
** other held ops issued eagerly, counted under the end's reason. */
static void replay_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    struct gs_node *t = e->t;

    if (!s->holding)
        return;
    if (s->chunk.last_chunk) {
        e->end_ns = gs__now_ns(); /* before the last graph's capture */
        if (t->stable)
            e->busy = gs__chunks_gpu_busy(s, e->reason);
    }
    int chunked = t->depth == s->chunk_depth; /* nothing left to launch at the boundary */
    switch (t->stable ? gs__launch_graph(s, t, GS_NVTX_REPLAY) : GS_REPLAY_FAILED) {
    case GS_REPLAYED:
        e->replayed = 1;
        s->replays_w++;
        s->replays_chunked_w += chunked;
        s->whole_replays_w += !s->seg.seg_resumed;
        t->runs.replays++;
        gs__seg_held_out(s);
        break;
    case GS_REPLAY_BUSY:
        gs__flush(s, GS_BAIL_SYNC_BUSY); /* captured at a later replay */
        break;
    case GS_REPLAY_NOT_KEPT:
        gs__issue_held(s, t); /* a segment held again after a stall: eagerly, no bail */
        gs__seg_held_out(s);
        break;
    case GS_REPLAY_FAILED: /* no stable sequence was held, or its graph failed */
        if (!t->stable) {
            gs__flush(s, e->reason);
            break;
        }
        gs__capture_failed(s, t); /* t is no longer stable */
        gs__flush(s, GS_BAIL_GRAPH_FAILED);
        break;
    }
}

static void drain_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    gs__chunks_drain_start(s, e->replayed ? e->busy : -1);
}

static void capture_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    if (e->t && s->seg.clean)
        gs__capture_counted(s, e->t, e->reason); /* the sequence counted for learning */
}

static void rest_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    if (e->t && s->seg.clean && e->t->depth)
        gs__rest_learned(s, e->t->seen == 1, e->replayed);
    if (s->resting && s->fp)
        gs__rested_segment(s); /* an empty segment (no op: fp 0) is no work that comes back */
}

static void budget_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    if (e->t && e->t->depth)
        capture_budget(s); /* a span counts learned segments, not empty ones */
}

static void gain_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    gs__gain_segment_ended(s, e->t, e->reason, e->replayed);
}

static void step_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    gs__step_segment_ended(s, e->t, e->reason); /* where the next segment ends: a step's end */
}

static void chunk_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    gs__chunks_end(s, e->replayed ? e->t : NULL, e->end_ns);
}

static void xs_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    (void)e;
    gs__xs_segment_end(s); /* a group across streams closes with its segment */
}
static void xs_forget(struct gs_stream *s, int learned) { gs__xs_forget(s, learned); }

static void seg_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    /* rest.c: the root, or NULL while learning rests; the segment's cost to t where it replayed t */
    gs__seg_begin(s, gs__segment_start(s), e->replayed ? e->t : NULL);
}

static void patch_ended(struct gs_stream *s, struct gs_seg_end *e)
{
    (void)e;
    gs__patches_reset(s);
}

/* Keeps a row of the sequence ending at n for the report (walk callback). */
static void retire_row(struct gs_node *n, void *arg)
{
    struct gs_stream *s = arg;
    if (gs__trie_reported(n) && s->nretired < GS_RETIRED_MAX)
        s->retire_w.retired[s->retire_w.nretired++] = gs__seq_row(n);
}

/* The learned sequences go (their rows kept for the report), or only their graphs. */
static void trie_forget(struct gs_stream *s, int learned)
{
    if (!learned) {
        gs__trie_walk(&s->trie.root, gs__graph_drop_exec, s);
        return;
    }
    gs__trie_walk(&s->trie.root, retire_row, s);
    gs__trie_clear(&s->trie);
}

static void body_forget(struct gs_stream *s, int learned) { gs__body_forget(s, learned); }

/* The staging buffers' reads are waited for before any graph that reads them goes. */
static void staging_forget(struct gs_stream *s, int learned)
{
    (void)learned;
    if (gs__staging_wait(s) != 0) /* the stream failed: its error is the program's at its next synchronize */
        gs__debug("a stream's staging buffers are freed unwaited for");
}
static void gain_forget(struct gs_stream *s, int learned) { (void)learned; gs__gain_forget(s); }
static void capture_forget(struct gs_stream *s, int learned) { if (learned) gs__capture_forget(s); }
static void rest_forget(struct gs_stream *s, int learned) { if (learned) gs__rest_forget(s); } /* a new stream's learning */
static void budget_forget(struct gs_stream *s, int learned) { if (learned) gs__budget_forget(s); }
static void step_forget(struct gs_stream *s, int learned) { if (learned) gs__step_forget(s); }
static void seg_forget(struct gs_stream *s, int learned) { if (learned) gs__seg_rewind(s); }
static void body_failed(struct gs_stream *s) { gs__body_failed(s); } /* nor of a body */
static void seg_failed(struct gs_stream *s) { gs__seg_failed(s); } /* a failed op is never part of a learned sequence */

static void chunk_forget(struct gs_stream *s, int learned)
{
    if (!learned)
        return;
    gs__chunks_end(s, NULL, 0);
    gs__chunks_forget(s);
}

/* The rooms that keep a stream's state from one segment to the next, declared
** once, in the order they hear of it: a segment's end (ended: its held work out
** first, in the replay's room, then each rule told how it ended), the stream's
** learning forgotten (forget: learned, or only its graphs dropped; at a
** stream's destroy, a context's or a module's end, an attribute change) and an
** op that failed (failed).  NULL: nothing to do then.  A new rule with state of
** its own joins here (docs/internals.md, "Adding a rule"). */
static const struct gs_room {
    const char *name;
    void (*ended)(struct gs_stream *s, struct gs_seg_end *e);
    void (*forget)(struct gs_stream *s, int learned);
    void (*failed)(struct gs_stream *s);
} rooms[] = {
    {"body", body_ended, body_forget, body_failed},    /* loop bodies (stream/body.c) */
    {"staging", NULL, staging_forget, NULL},           /* host copies' staging (stream/issue.c) */
    {"replay", replay_ended, trie_forget, NULL},       /* held work out; the learned tree */
    {"drain", drain_ended, NULL, NULL},                /* rule drain (rules/chunk.c) */
    {"capture", capture_ended, capture_forget, NULL},  /* when sequences are graphed */
    {"rest", rest_ended, rest_forget, NULL},           /* learning rests */
    {"budget", budget_ended, budget_forget, NULL},     /* the capture budget (above) */
    {"gain", gain_ended, gain_forget, NULL},           /* the gain check */
    {"step", step_ended, step_forget, NULL},           /* steps between synchronizes */
    {"chunk", chunk_ended, chunk_forget, NULL},        /* early chunks */
    {"xs", xs_ended, xs_forget, NULL},                 /* a group across streams (stream/xs.c) */
    {"segment", seg_ended, seg_forget, seg_failed},    /* the next segment's records */
    {"patch", patch_ended, NULL, NULL},                /* changed arguments */
};
#define GS_NROOMS (sizeof rooms / sizeof rooms[0])

/* Ends the current segment of s, counted under reason (enum gs_bail): each room
** in turn.  Called locked. */
void gs__resolve_locked(struct gs_stream *s, int reason)
{
    GS_ASSERT_LOCKED(s);
    struct gs_seg_end e = {.t = s->cur, .reason = reason, .busy = -1};

    for (size_t i = 0; i < GS_NROOMS; i++)
        if (rooms[i].ended)
            rooms[i].ended(s, &e);
}

void gs__rooms_forget(struct gs_stream *s, int learned)
{
    GS_ASSERT_LOCKED(s);
    for (size_t i = 0; i < GS_NROOMS; i++)
        if (rooms[i].forget)
            rooms[i].forget(s, learned);
}

void gs__rooms_failed(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    for (size_t i = 0; i < GS_NROOMS; i++)
        if (rooms[i].failed)
            rooms[i].failed(s);
}

void gs__resolve(struct gs_stream *s, int reason)
{
    gs__lock(&s->lock);
    gs__resolve_locked(s, reason);
    gs__unlock(&s->lock);
}

/* Resolves every stream, or every blocking one, or the legacy stream(s), except
** one (NULL for none). */
void gs__resolve_some(int which, const struct gs_stream *except, int reason)
{
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        if (s == except || (which == GS_RESOLVE_BLOCKING && !(s->blocking && s->kind != GS_STREAM_LEGACY)) ||
            (which == GS_RESOLVE_LEGACY && s->kind != GS_STREAM_LEGACY))
            continue;
        gs__resolve(s, reason);
    }
    pthread_mutex_unlock(&gs__table_lock);
}

/* The legacy stream waits for the blocking streams' earlier work, and they wait
** for its: an op or boundary on one side issues what the other side holds. */
void gs__legacy_rule(const struct gs_stream *s)
{
    if (GS_DROPPED(GS_RULE_LEGACY))
        return;
    if (s->kind == GS_STREAM_LEGACY) {
        if (atomic_load_explicit(&gs__blocking_holding, memory_order_relaxed))
            gs__resolve_some(GS_RESOLVE_BLOCKING, s, GS_BAIL_OTHER_STREAM);
    } else if (s->blocking && atomic_load_explicit(&gs__legacy_holding, memory_order_relaxed)) {
        gs__resolve_some(GS_RESOLVE_LEGACY, s, GS_BAIL_OTHER_STREAM);
    }
}

