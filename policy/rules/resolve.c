/*
** resolve.c: the end of a segment, what a boundary does to held work: to one
** stream, to all of them, to the legacy stream's partners; and the capture
** budget.  (Which boundary resolves what: entry/boundary.c.  The gain check, at
** synchronizes: gain.c.)
*/
#define _GNU_SOURCE
#include "resolve.h"

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../base/log.h"
#include "../graph/graph_cache.h"
#include "../stream/body.h"
#include "../stream/issue.h"
#include "../stream/patch.h"
#include "../stream/segment.h"
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
    s->budget.budget_segments = 0;
    s->budget.builds_mark = s->graphs.builds;
    s->budget.launches_mark = s->replays + s->chunks;
    s->budget.instantiated_mark = s->graphs.instantiated;
}

void gs__budget_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->budget.warmup_shift = 0;
    s->budget.hopeless = 0;
    budget_span_start(s);
}

static void capture_budget(struct gs_stream *s)
{
    uint64_t builds = s->graphs.builds - s->budget.builds_mark, launches = s->replays + s->chunks - s->budget.launches_mark;
    uint64_t made = s->graphs.instantiated - s->budget.instantiated_mark;
    int hopeless = made >= GS_BUDGET_CAPTURES && launches < made * GS_BUDGET_HOPELESS;

    if (GS_DROPPED(GS_RULE_BUDGET) ||
        (++s->budget.budget_segments < GS_BUDGET_SEGMENTS && !(hopeless && s->budget.budget_segments % GS_BUDGET_EARLY == 0)))
        return;
    s->budget.hopeless |= hopeless; /* also where the warmup was at its most already */
    if (builds >= GS_BUDGET_CAPTURES && launches < builds * GS_BUDGET_LAUNCHES &&
        gs__warmup(s) * 2 <= GS_WARMUP_MAX) {
        s->budget.warmup_shift++;
        while (hopeless && gs__warmup(s) * 2 <= GS_WARMUP_MAX)
            s->budget.warmup_shift++;
        if (s->budget.warmup_shift > s->budget.warmup_peak)
            s->budget.warmup_peak = s->budget.warmup_shift;
        gs__trie_restrain(&s->trie.root, gs__warmup(s));
        gs__debug("stream %d: graphs launched %.1f times per build in %u segments: sequences graphed after %ld times",
                  s->id, (double)launches / (double)builds, s->budget.budget_segments, gs__warmup(s));
    } else if (builds && launches >= builds * 4 * GS_BUDGET_LAUNCHES && s->budget.warmup_shift) {
        s->budget.warmup_shift--;
        s->budget.hopeless = 0;
    }
    budget_span_start(s);
}

/* Ends the current segment of s: an exactly matched stable sequence is replayed
** as a graph; other held ops are issued eagerly, counted under reason (enum
** gs_bail); the sequence is counted for learning; each rule is told how the
** segment ended (chunks, rests, the budget, the gain check), and the segment's
** records begin anew where rest.c says (stream/segment.c).  Called locked. */
void gs__resolve_locked(struct gs_stream *s, int reason)
{
    GS_ASSERT_LOCKED(s);
    struct gs_node *t = s->cur;
    int replayed = 0, busy = -1;
    uint64_t end_ns = 0;

    gs__body_segment_end(s); /* a loop's held bodies go out: its end, not a bail */
    if (s->holding) {
        if (s->chunk.last_chunk) {
            end_ns = gs__now_ns(); /* before the last graph's capture */
            if (t->stable)
                busy = gs__chunks_gpu_busy(s, reason);
        }
        int chunked = t->depth == s->chunk_depth; /* nothing left to launch at the boundary */
        switch (t->stable ? gs__launch_graph(s, t, GS_NVTX_REPLAY) : GS_REPLAY_FAILED) {
        case GS_REPLAYED:
            replayed = 1;
            s->replays++;
            s->replays_chunked += chunked;
            s->whole_replays += !s->seg.seg_resumed;
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
                gs__flush(s, reason);
                break;
            }
            gs__capture_failed(s, t); /* t is no longer stable */
            gs__flush(s, GS_BAIL_GRAPH_FAILED);
            break;
        }
    }
    gs__chunks_drain_start(s, replayed ? busy : -1);
    if (t && s->seg.clean) {
        gs__capture_counted(s, t, reason);
        if (t->depth)
            gs__rest_learned(s, t->seen == 1, replayed);
    }
    if (s->resting && s->fp)
        gs__rested_segment(s); /* an empty segment (no op: fp 0) is no work that comes back */
    if (t && t->depth)
        capture_budget(s); /* a span counts learned segments, not empty ones */
    gs__gain_segment_ended(s, t, reason, replayed);
    gs__step_segment_ended(s, t, reason); /* where the next segment ends: a step's end */
    gs__chunks_end(s, replayed ? t : NULL, end_ns);
    /* rest.c: the root, or NULL while learning rests; the segment's cost to t where it replayed t */
    gs__seg_begin(s, gs__segment_start(s), replayed ? t : NULL);
    gs__patches_reset(s);
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

