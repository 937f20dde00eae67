/*
** resolve.c: what a boundary does to held work: to one stream, to all of them, to
** the legacy stream's partners; the program's own captures, resets after context,
** module and attribute changes.  (The gain check, at synchronizes: gain.c.)
*/
#define _GNU_SOURCE
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "graph_cache.h"
#include "key.h"
#include "log.h"

/* --- Resolve --------------------------------------------------------------- */

/* A graph costs its capture and instantiation, tens of microseconds, and saves a
** few per launch; a launch that must first update its graph (new parameters
** that no kept graph has) costs a capture and an update, about as much again.
** The budget judges a stream's graphs every GS_BUDGET_SEGMENTS segments: where
** it built GS_BUDGET_CAPTURES graphs or more in that time (instantiated or
** updated, s->builds) and launched fewer than GS_BUDGET_LAUNCHES times as many
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
static void budget_span_start(struct gs_stream *s)
{
    s->budget_segments = 0;
    s->builds_mark = s->builds;
    s->launches_mark = s->replays + s->chunks;
    s->instantiated_mark = s->instantiated;
}

static void capture_budget(struct gs_stream *s)
{
    uint64_t builds = s->builds - s->builds_mark, launches = s->replays + s->chunks - s->launches_mark;
    uint64_t made = s->instantiated - s->instantiated_mark;
    int hopeless = made >= GS_BUDGET_CAPTURES && launches < made * GS_BUDGET_HOPELESS;

    if (GS_DROPPED(GS_RULE_BUDGET) ||
        (++s->budget_segments < GS_BUDGET_SEGMENTS && !(hopeless && s->budget_segments % GS_BUDGET_EARLY == 0)))
        return;
    s->hopeless |= hopeless; /* also where the warmup was at its most already */
    if (builds >= GS_BUDGET_CAPTURES && launches < builds * GS_BUDGET_LAUNCHES &&
        gs__warmup(s) * 2 <= GS_WARMUP_MAX) {
        s->warmup_shift++;
        while (hopeless && gs__warmup(s) * 2 <= GS_WARMUP_MAX)
            s->warmup_shift++;
        if (s->warmup_shift > s->warmup_peak)
            s->warmup_peak = s->warmup_shift;
        gs__trie_restrain(&s->trie.root, gs__warmup(s));
        gs__debug("stream %d: graphs launched %.1f times per build in %u segments: sequences graphed after %ld times",
                  s->id, (double)launches / (double)builds, s->budget_segments, gs__warmup(s));
    } else if (builds && launches >= builds * 4 * GS_BUDGET_LAUNCHES && s->warmup_shift) {
        s->warmup_shift--;
        s->hopeless = 0;
    }
    budget_span_start(s);
}

/* Ends the current segment of s: an exactly matched stable sequence is replayed
** as a graph; other held ops are issued eagerly, counted under reason (enum
** gs_bail); the sequence is counted for learning.  Called locked. */
static void resolve_locked(struct gs_stream *s, int reason)
{
    struct gs_node *t = s->cur;
    int replayed = 0, rc = -1;
    uint64_t end_ns = 0;

    gs__body_segment_end(s); /* a loop's held bodies go out: its end, not a bail */
    if (s->holding) {
        if (s->last_chunk)
            end_ns = gs__now_ns(); /* before the last graph's capture */
        if (t->stable && (rc = gs__launch_graph(s, t, GS_NVTX_REPLAY)) == 0) {
            replayed = 1;
            s->replays++;
            t->replays++;
            s->holding = 0;
            gs__set_holding(s, 0);
        } else if (rc == GS_CAPTURE_BUSY) {
            gs__flush(s, GS_BAIL_SYNC_BUSY); /* captured at a later replay */
        } else {
            if (t->stable) {
                gs__debug("graph of a %u-op sequence failed; it runs eagerly from now on", t->depth);
                gs__trie_unstable(t);
                gs__flush(s, GS_BAIL_GRAPH_FAILED);
            } else {
                gs__flush(s, reason);
            }
        }
    }
    if (t && s->clean) {
        gs__trie_ended(t, gs__warmup(s), gs__cfg.min_ops);
        if (t->depth) {
            s->new_segments = t->seen == 1 ? s->new_segments + 1 : 0;
            s->dry_segments += !replayed;
        }
    }
    if (s->resting && s->fp)
        gs__rested_segment(s); /* an empty segment (no op: fp 0) is no work that comes back */
    if (t && t->depth)
        capture_budget(s); /* a span counts learned segments, not empty ones */
    /* Timed for the gain check: a learned segment that a synchronize ended, long
    ** enough to be graphed (a shorter one is not worth the clock read). */
    s->last_term = t && t->depth >= (uint32_t)gs__cfg.min_ops && s->clean && s->seg_start &&
                           reason == GS_BAIL_BOUNDARY + GS_SYNC
                       ? t
                       : NULL;
    s->last_start = s->seg_start;
    s->last_how = replayed ? 1 : s->seg_held ? -1 : 0;
    s->seg_held = 0;
    s->last_evicted = s->trie.evicted;
    s->seg_start = 0;
    gs__chunks_end(s, replayed ? t : NULL, end_ns);
    s->cur = gs__segment_start(s);
    s->clean = 1;
    gs__patches_reset(s);
}

static void resolve(struct gs_stream *s, int reason)
{
    gs__lock(&s->lock);
    resolve_locked(s, reason);
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
        resolve(s, reason);
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

/* --- Boundaries -------------------------------------------------------------- */

/* The rule a class of boundary belongs to, for GRAPHSHIM_TEST_DROP_RULE. */
static int rule_of(int cls)
{
    switch (cls) {
    case GS_SYNC: return GS_RULE_SYNC;
    case GS_EVENT: return GS_RULE_EVENT;
    case GS_HOSTFN: return GS_RULE_HOSTFN;
    case GS_ALLOC: return GS_RULE_ALLOC;
    case GS_SYNCOP: return GS_RULE_SYNCOP;
    case GS_CAPTURE: return GS_RULE_CAPTURE;
    case GS_UNCLASSIFIED: return GS_RULE_UNCLASSIFIED;
    case GS_STREAM: return GS_RULE_STREAM_DESTROY;
    case GS_MODULE: return GS_RULE_MODULE;
    default: return -1;
    }
}

void gs__engine_boundary(const struct gs_call *c)
{
    struct gs_stream *s;

    if (gs__passthrough)
        return;
    if (GS_DROPPED(rule_of(c->cls))) {
        if (c->cls == GS_CAPTURE && c->stream != GS_NONE)
            gs__engine_capture_call(gs__stream_get(c->stream), c->id);
        return;
    }
    switch (c->cls) {
    case GS_QUERY:
    case GS_PROC:
    case GS_CURRENT: /* held work stays with its own context's streams */
        return;
    case GS_SYNC:
    case GS_EVENT:
    case GS_HOSTFN:
    case GS_CAPTURE:
    case GS_STREAM:
        if (c->stream == GS_NONE)
            break; /* context or event synchronize: every stream */
        s = gs__stream_get(c->stream);
        gs__legacy_rule(s);
        resolve(s, GS_BAIL_BOUNDARY + c->cls);
        if (c->cls == GS_CAPTURE)
            gs__engine_capture_call(s, c->id);
        if (c->cls == GS_STREAM)
            gs__engine_stream_destroyed(s);
        return;
    default:
        break;
    }
    /* Allocation, synchronous copies, context changes, and anything unclassified:
    ** every stream. */
    gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_BOUNDARY + c->cls);
    if (c->cls == GS_CTX || c->cls == GS_MODULE || (c->cls == GS_ATTR && !c->keep_graphs))
        gs__engine_reset(c->cls);
}

int gs__engine_capturing(void)
{
    return atomic_load_explicit(&gs__app_captures, memory_order_relaxed) != 0;
}

/* gs_pause() and gs_resume() (interpose/api.c): a pause counts like a capture of
** the program's own, without the driver calls that would disturb one. */
void gs__engine_pause(void)
{
    if (gs__passthrough)
        return;
    atomic_fetch_add(&gs__app_captures, 1);
    gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_APP_CAPTURE);
}

void gs__engine_resume(void)
{
    int n = atomic_load(&gs__app_captures);
    while (n > 0 && !atomic_compare_exchange_weak(&gs__app_captures, &n, n - 1))
        ;
}

/* The program's own capture: nothing is held anywhere while one is open. */
void gs__engine_capture_call(struct gs_stream *s, int id)
{
    int begin = id == GS_ID_cuStreamBeginCapture || id == GS_ID_cuStreamBeginCapture_ptsz ||
                id == GS_ID_cuStreamBeginCapture_v2 || id == GS_ID_cuStreamBeginCapture_v2_ptsz ||
                id == GS_ID_cuStreamBeginCaptureToGraph || id == GS_ID_cuStreamBeginCaptureToGraph_ptsz;
    int end = id == GS_ID_cuStreamEndCapture || id == GS_ID_cuStreamEndCapture_ptsz;

    if (begin) {
        /* Counted first: from here on no op is held, then what is held goes out. */
        gs__lock(&s->lock);
        if (!s->app_capturing) {
            s->app_capturing = 1;
            atomic_fetch_add(&gs__app_captures, 1);
        }
        gs__unlock(&s->lock);
        gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_APP_CAPTURE);
    } else if (end) {
        gs__lock(&s->lock);
        if (s->app_capturing) {
            s->app_capturing = 0;
            atomic_fetch_sub(&gs__app_captures, 1);
        }
        gs__unlock(&s->lock);
    }
}

/* Keeps a row of the sequence ending at n for the report (walk callback). */
static void retire_row(struct gs_node *n, void *arg)
{
    struct gs_stream *s = arg;
    if (gs__trie_reported(n) && s->nretired < GS_RETIRED_MAX)
        s->retired[s->nretired++] = (struct gs_seq_row){n->depth, n->seen, n->replays, n->patched};
}

/* Destroys the graphs kept for s; with learned, also forgets its sequences, whose
** rows the report keeps.  Work that s holds goes out first: another thread may
** have begun holding since the boundary that led here resolved every stream.
** Called locked. */
static void stream_empty(struct gs_stream *s, int learned, int reason)
{
    if (s->holding)
        gs__flush(s, reason);
    gs__body_forget(s, learned);
    gs__staging_wait(s);
    s->last_term = NULL;
    if (learned) {
        gs__trie_walk(&s->trie.root, retire_row, s);
        gs__trie_clear(&s->trie);
        s->cur = &s->trie.root;
        s->clean = 1;
        gs__chunks_end(s, NULL, 0);
        s->warmup_shift = 0; /* a new stream's budget, and learning */
        s->dormant = s->dormant_len = s->new_segments = s->dry_segments = 0;
        s->resting = 0;
        s->hopeless = 0;
        s->rest_f = NULL; /* its handle may name another function now */
        budget_span_start(s);
    } else {
        gs__trie_walk(&s->trie.root, gs__graph_drop_exec, s);
    }
    if (learned && s->staging_done) {
        GS_REAL(cuEventDestroy_v2)(s->staging_done);
        s->staging_done = NULL;
        s->staging_pending = 0;
    }
}

void gs__engine_stream_destroyed(struct gs_stream *s)
{
    if (s->kind != GS_STREAM_CREATED)
        return;
    gs__lock(&s->lock);
    stream_empty(s, 1, GS_BAIL_BOUNDARY + GS_STREAM);
    s->ready = 0; /* a new stream may get the same handle */
    gs__unlock(&s->lock);
}

/* After a call of class cls (held work already resolved): a context going away
** takes every graph, sequence and private stream with it; an unloaded module may
** hand its function handles to new functions, so learned sequences and parameter
** layouts go; changed attributes or limits only need the graphs rebuilt. */
void gs__engine_reset(int cls)
{
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        gs__lock(&s->lock);
        stream_empty(s, cls != GS_ATTR, GS_BAIL_BOUNDARY + cls);
        if (cls == GS_CTX)
            s->ready = 0;
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
    if (cls == GS_CTX)
        gs__graph_reset();
    if (cls != GS_ATTR)
        gs__layouts_reset();
}
