/*
** resolve.c: what a boundary does to held work: to one stream, to all of them, to
** the legacy stream's partners; the program's own captures, resets after context,
** module and attribute changes, and the gain check's timing of synchronizes.
*/
#define _GNU_SOURCE
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "graph_cache.h"
#include "key.h"
#include "log.h"

/* --- Resolve --------------------------------------------------------------- */

#define GS_DORMANT_MAX 4096
#define GS_FPS 512
#define GS_FP_NEAR 32

/* New segments in a row after which learning rests: GRAPHSHIM_REST_AFTER, or a
** quarter of it (at least 1) where it rested before and nothing replayed since.
** A segment that comes back during a rest ends it (its fingerprint), so a
** learning run between two rests need not be long to catch work that repeats;
** what it costs, every op a node, is paid again each time a rest runs out
** (norepeat on the H100's host: a third of the engine's time was these runs). */
static uint32_t new_run(const struct gs_stream *s)
{
    uint32_t n = (uint32_t)gs__cfg.rest_after;

    return s->dormant_len ? (n + 3) / 4 : n;
}

/* Where the next segment of s starts: the root, or NULL (not learned) while
** learning rests.  Learning rests when GRAPHSHIM_REST_AFTER segments in a row
** came for the first time (fewer after a rest ran out: new_run), or the tree keeps dropping subtrees to make room and
** nothing replays: the stream's work does not repeat, and learning it costs every
** op a node (an allocation, and the caches it fills: 70400 of them in norepeat's
** 3520 segments).  It rests too where the capture budget found that nothing
** pays and warmup + GRAPHSHIM_REST_AFTER segments were learned without a replay:
** the work repeats, too rarely to be graphed, and learning it costs every op a
** walk of a tree that never replays (bench's rare: ~600 ns a launch on the H100's
** host).  While it rests an op costs a mix of its shape into the segment's
** fingerprint (shape_mix, hold.c), and a segment that comes back ends the rest
** (rested_segment). */
static struct gs_node *segment_start(struct gs_stream *s)
{
    s->resting = 0;
    if (s->dormant) {
        s->dormant--;
        s->segments_rested++;
        s->resting = s->fps != NULL;
        return NULL;
    }
    if (s->replays != s->replays_mark) {
        s->replays_mark = s->replays;
        s->evicted_mark = s->trie.evicted;
        s->dormant_len = 0;
        s->dry_segments = 0;
    } else if (gs__cfg.rest_after && (s->trie.evicted - s->evicted_mark >= (uint64_t)gs__cfg.rest_after ||
                                      s->new_segments >= new_run(s) ||
                                      (s->hopeless && !GS_DROPPED(GS_RULE_HOPELESS_REST) &&
                                       s->dry_segments >= gs__warmup(s) + gs__cfg.rest_after))) {
        s->dormant_len = s->dormant_len ? (s->dormant_len < GS_DORMANT_MAX ? 2 * s->dormant_len : GS_DORMANT_MAX)
                                        : (uint32_t)gs__cfg.rest_after;
        s->dormant = s->dormant_len;
        s->evicted_mark = s->trie.evicted;
        s->new_segments = 0;
        if (!s->fps)
            s->fps = calloc(GS_FPS, sizeof *s->fps);
        else
            memset(s->fps, 0, GS_FPS * sizeof *s->fps);
        s->resting = s->fps != NULL;
        s->segments_rested++;
        return NULL;
    }
    return &s->trie.root;
}

/* A segment that ended while learning rested: where its ops came as they did in
** one since the rest began (where the budget found nothing pays: within
** GS_FP_NEAR segments), the work repeats, and learning resumes.  An entry of fps
** holds a fingerprint's high 48 bits and, below them, the rested segment it was
** last seen at. */
static void rested_segment(struct gs_stream *s)
{
    uint64_t fp = (s->fp | 1ull << 16) & ~0xffffull; /* 0 marks an empty entry */
    uint64_t now = s->segments_rested & 0xffff;
    uint64_t *e = &s->fps[(fp >> 16) % GS_FPS];

    s->fp = 0;
    if ((*e & ~0xffffull) == fp && (!s->hopeless || ((now - *e) & 0xffff) <= GS_FP_NEAR)) {
        gs__debug("stream %d: a segment came back while learning rested: it learns again", s->id);
        s->dormant = s->dormant_len = 0;
        s->replays_mark = s->replays;
        s->dry_segments = 0;
    }
    *e = fp | now;
}

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

long gs__warmup(const struct gs_stream *s)
{
    return gs__cfg.warmup << s->warmup_shift;
}

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
        rested_segment(s); /* an empty segment (no op: fp 0) is no work that comes back */
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
    s->cur = segment_start(s);
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

/* The sequence ending at t runs eagerly again (GRAPHSHIM_WARMUP times), to be
** timed: its graph is kept for when it is stable again. */
static void time_eagerly_again(struct gs_node *t)
{
    t->eager_ns = 0;
    gs__trie_relearn(t);
}

/* The graph of t runs eagerly for good (no-gain). */
static void no_gain(struct gs_stream *s, struct gs_node *t)
{
    gs__debug("a %u-op sequence took more than 10%% longer replayed than eagerly in %u of %u trial pairs: "
              "it runs eagerly from now on", t->depth, t->replay_slow, t->replay_n);
    gs__trie_unstable(t);
    gs__graph_drop_exec(t, s);
    s->bails[GS_BAIL_NO_GAIN]++;
    gs__nvtx_mark(GS_NVTX_BAIL + GS_BAIL_NO_GAIN);
}

/* Counts a timed replay of t, d ns long, in its window or trial. */
static void replay_timed(struct gs_node *t, uint64_t d)
{
    t->replay_slow += (uint32_t)gs__gain_slow(t->eager_ns, d);
    t->replay_n++;
}

/* A window of replays found t's graph slow: the sequence runs eagerly and
** replayed in turn, and each replay is judged against the eager run just before
** it (trial_replay): a program that changes pace (a busy host for a while, a
** heap that grows) changes both alike, where a window of replays judged against
** one earlier eager time would see the change as the graph's. */
static void trial_start(struct gs_node *t)
{
    gs__debug("a %u-op sequence took more than 10%% longer than its %.1f us eagerly in 3 of 4 replays or more: "
              "a trial runs it eagerly and replayed in turn", t->depth, t->eager_ns / 1e3);
    t->gain_trial = 1;
    t->gain_paid = 0;
    t->gain_fresh = 0;
    gs__trie_eager_once(t);
}

/* Ends t's paired trial, whose pairs said v (gs__gain_verdict).  A graph found
** slow runs eagerly for good.  One kept lets 1, 3, 7, ... 63 windows pass
** before a slow one starts its next trial: a program whose pace keeps moving
** would otherwise run a third of its occurrences eagerly in trials.  Where too
** few pairs were timed (its eager runs were held, as a prefix of another stable
** sequence, and issued at the synchronize: not timed), the check rests for the
** sequence until an eager run is timed again. */
static void trial_end(struct gs_stream *s, struct gs_node *t, int v)
{
    if (v == 0) {
        no_gain(s, t);
    } else if (v == 1) {
        gs__debug("a %u-op sequence took more than 10%% longer replayed than eagerly in only %u of %u trial "
                  "pairs: its graph is kept", t->depth, t->replay_slow, t->replay_n);
        t->gain_paid = 1;
        if (t->gain_backoff < GS_GAIN_BACKOFF_MAX)
            t->gain_backoff++;
        t->gain_skip = (uint8_t)((1u << t->gain_backoff) - 1);
    } else {
        gs__debug("a %u-op sequence's trial timed %u pairs, too few to judge: its graph is kept, untimed",
                  t->depth, t->replay_n);
        t->eager_ns = 0;
    }
    t->gain_warm = 1; /* its eager time is fresh, or none */
    t->gain_trial = 0;
    t->replay_n = 0, t->replay_slow = 0;
}

/* A replay of t in its paired trial, d ns long, judged against the eager run
** before it where that was timed.  The trial ends after GS_GAIN_REPLAYS pairs,
** or once two of its eager runs went untimed. */
static void trial_replay(struct gs_stream *s, struct gs_node *t, uint64_t d)
{
    if (t->gain_fresh)
        replay_timed(t, d);
    else
        t->gain_trial++;
    t->gain_fresh = 0;
    if (t->replay_n < GS_GAIN_REPLAYS && t->gain_trial < 3)
        gs__trie_eager_once(t);
    else
        trial_end(s, t, gs__gain_verdict(t->replay_slow, t->replay_n));
}

/* After a synchronize returned: the segment of s that ended at it took from its
** first op until now.  Counted for the sequence, eager or replayed (the first
** replay, which built the graph, is not, nor a segment that held ops and then issued
** them eagerly, which is neither).  Replays are judged in windows of
** GS_GAIN_REPLAYS against the last eager time; a window that finds the graph slow
** starts a paired trial (trial_start), and a trial that finds it slow too drops
** the graph: the sequence runs eagerly for good.  Called locked. */
static void segment_timed(struct gs_stream *s)
{
    struct gs_node *t = s->last_term;
    uint64_t d;
    int v;

    s->last_term = NULL;
    if (!t || s->last_evicted != s->trie.evicted)
        return;
    d = gs__now_ns() - s->last_start;
    if (s->last_how == 0) {
        gs__debug("a %u-op sequence took %.1f us eagerly", t->depth, d / 1e3);
        t->eager_ns = d;
        t->gain_fresh = 1;
        return;
    }
    if (s->last_how != 1 || t->replays <= 1 || !t->eager_ns)
        return;
    gs__debug("a %u-op sequence took %.1f us replayed (%.1f us eagerly)", t->depth, d / 1e3, t->eager_ns / 1e3);
    if (t->gain_trial) {
        trial_replay(s, t, d);
        return;
    }
    replay_timed(t, d);
    v = gs__gain_verdict(t->replay_slow, t->replay_n);
    if (v == 1)
        t->gain_paid = 1;
    if (v < 0)
        return; /* the window goes on */
    t->replay_n = 0, t->replay_slow = 0; /* a fresh window: the program may change pace */
    if (v == 0 && !t->gain_skip) {
        trial_start(t);
        return;
    }
    if (t->gain_skip)
        t->gain_skip--;
    if (!t->gain_warm) {
        /* The eager time came from the program's first iterations, often slower
        ** than later ones (caches, allocators, a library's tuning), which makes
        ** any graph look fast: once, after the first window, it is timed again,
        ** warm. */
        t->gain_warm = 1;
        time_eagerly_again(t);
    }
}

void gs__engine_synced(CUstream stream)
{
    struct gs_stream *s;

    if (gs__passthrough || !gs__cfg.gain_check)
        return;
    s = gs__stream_get(stream);
    gs__lock(&s->lock);
    segment_timed(s);
    gs__unlock(&s->lock);
}

void gs__engine_ctx_synced(void)
{
    if (gs__passthrough || !gs__cfg.gain_check)
        return;
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        gs__lock(&s->lock);
        segment_timed(s);
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
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
