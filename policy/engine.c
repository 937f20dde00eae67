/*
** engine.c: learn repeating op sequences per stream, hold them while they match,
** replay them as graphs (DESIGN.md section 3), and resolve held work at every
** boundary (section 4).
**
** The file is divided into:
**   - stream states: lookup by handle, with a per-thread cache (no global lock on
**     the launch path), and the per-thread default stream in thread-local storage;
**   - issuing held ops eagerly, in order ("flush"), and replaying a sequence;
**   - resolve: what a boundary does to one stream, and to all of them;
**   - ops: the hold-or-issue decision for each launch, copy and memset;
**   - boundaries: what each class of call resolves;
**   - the watchdog, exit and fork.
**
** Locking: a state's lock guards it.  The table lock guards the list of states;
** it may be taken before a state's lock, never after one.  Graph capture and the
** real driver calls of a stream's ops happen under that stream's lock.
*/
#define _GNU_SOURCE
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph_cache.h"
#include "guard.h"
#include "key.h"
#include "log.h"
#include "report.h"
#include "stream.h"

int gs__dropped_rule;

/* Watchdog firings at one node after which the engine never holds through it. */
#define GS_WATCHDOG_HITS 2

/* --- Stream states ------------------------------------------------------- */

#define STREAM_HASH 1024

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gs_stream *all_streams;
static struct gs_stream *by_handle[STREAM_HASH];
static int nstreams;

/* Streams that hold work, for the legacy-stream rule. */
static atomic_int blocking_holding, legacy_holding;
/* Captures of the program's own in progress, plus gs_pause() calls not yet
** resumed: while any, nothing is held. */
static atomic_int app_captures;

static __thread struct gs_stream *tls_last;
static __thread CUstream tls_last_handle;
static __thread struct gs_stream *tls_ptds;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static unsigned handle_hash(CUstream h)
{
    return (unsigned)(((uintptr_t)h * 0x9E3779B97F4A7C15ull) >> 40) & (STREAM_HASH - 1);
}

static struct gs_stream *stream_new(CUstream handle, int kind)
{
    struct gs_stream *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->handle = handle;
    s->kind = kind;
    s->clean = 1;
    s->trie.drop = gs__graph_drop_node;
    s->trie.drop_arg = s;
    s->cur = &s->trie.root;
    s->id = nstreams++;
    s->next = all_streams;
    all_streams = s;
    return s;
}

/* The state of a normalized stream handle; created on first use. */
static struct gs_stream *stream_get(CUstream handle)
{
    struct gs_stream *s;
    unsigned h;

    if (handle == CU_STREAM_PER_THREAD) {
        if (GS_UNLIKELY(!tls_ptds)) {
            pthread_mutex_lock(&table_lock);
            tls_ptds = stream_new(handle, GS_STREAM_PTDS);
            tls_ptds->owner_tid = gs__tid();
            pthread_mutex_unlock(&table_lock);
        }
        return tls_ptds;
    }
    if (GS_LIKELY(tls_last && tls_last_handle == handle))
        return tls_last;
    h = handle_hash(handle);
    pthread_mutex_lock(&table_lock);
    for (s = by_handle[h]; s && s->handle != handle; s = s->hnext)
        ;
    if (!s) {
        s = stream_new(handle, handle == CU_STREAM_LEGACY ? GS_STREAM_LEGACY : GS_STREAM_CREATED);
        s->hnext = by_handle[h];
        by_handle[h] = s;
    }
    pthread_mutex_unlock(&table_lock);
    tls_last = s;
    tls_last_handle = handle;
    return s;
}

/* Learns what the engine needs to know of a stream before holding its ops: its
** context and whether it synchronizes with the legacy stream.  Called locked. */
static void stream_ready(struct gs_stream *s)
{
    unsigned flags = 0;

    s->ready = 1;
    s->usable = 0;
    if (GS_REAL(cuCtxGetCurrent)(&s->ctx) != CUDA_SUCCESS || !s->ctx)
        return;
    if (s->kind == GS_STREAM_CREATED) {
        CUcontext c = NULL;
        if (!gs__real[GS_ID_cuStreamGetCtx] || GS_REAL(cuStreamGetCtx)(s->handle, &c) != CUDA_SUCCESS ||
            GS_REAL(cuStreamGetFlags)(s->handle, &flags) != CUDA_SUCCESS)
            return;
        s->ctx = c;
        s->blocking = !(flags & CU_STREAM_NON_BLOCKING);
    } else {
        s->blocking = s->kind == GS_STREAM_PTDS;
    }
    s->usable = 1;
}

/* The stream the held ops of s are issued to from this thread.  Another thread
** cannot name s's per-thread stream; the legacy stream orders the same way (the
** per-thread stream synchronizes with it). */
static CUstream issue_stream(const struct gs_stream *s)
{
    if (s->kind == GS_STREAM_PTDS && s->owner_tid != gs__tid())
        return CU_STREAM_LEGACY;
    return s->handle;
}

/* Makes s's context current for the engine's own calls; returns the previous one. */
static CUcontext enter_ctx(const struct gs_stream *s)
{
    CUcontext cur = NULL;
    GS_REAL(cuCtxGetCurrent)(&cur);
    if (cur != s->ctx)
        GS_REAL(cuCtxSetCurrent)(s->ctx);
    return cur;
}

static void leave_ctx(const struct gs_stream *s, CUcontext prev)
{
    if (prev != s->ctx)
        GS_REAL(cuCtxSetCurrent)(prev);
}

static void set_holding(struct gs_stream *s, int on)
{
    if (s->kind == GS_STREAM_LEGACY)
        atomic_fetch_add(&legacy_holding, on ? 1 : -1);
    else if (s->blocking)
        atomic_fetch_add(&blocking_holding, on ? 1 : -1);
    atomic_store_explicit(&s->held_since, on ? now_ns() : 0, memory_order_relaxed);
}

/* --- Issuing held ops ------------------------------------------------------ */

/* Records that the last issue on stream st read staging buffers of s. */
static void staging_issued(struct gs_stream *s, CUstream st)
{
    if (!s->staging_done && GS_REAL(cuEventCreate)(&s->staging_done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        s->staging_done = NULL;
        GS_REAL(cuStreamSynchronize)(st); /* no event: wait here instead */
        return;
    }
    GS_REAL(cuEventRecord)(s->staging_done, st);
    s->staging_pending = 1;
}

/* Before a staging buffer of s is overwritten: the GPU must be done reading it. */
static void staging_wait(struct gs_stream *s)
{
    if (s->staging_pending) {
        GS_REAL(cuEventSynchronize)(s->staging_done);
        s->staging_pending = 0;
    }
}

/* Issues the held ops of s up to node to (those past s->chunk_depth) eagerly, in
** order.  Called locked. */
static void issue_held(struct gs_stream *s, struct gs_node *to)
{
    struct gs_node *stack[64], **path = stack;
    unsigned n = to->depth;
    int staged = 0;
    CUstream st = issue_stream(s);
    CUcontext prev = enter_ctx(s);

    if (n > 64)
        path = malloc(n * sizeof *path);
    gs__trie_path(to, path);
    for (unsigned i = s->chunk_depth; i < n; i++) {
        if (gs__key_issue(&path[i]->key, st, path[i]->staging) != CUDA_SUCCESS)
            s->issue_errors++;
        staged |= path[i]->staging != NULL;
    }
    if (staged)
        staging_issued(s, st);
    leave_ctx(s, prev);
    if (path != stack)
        free(path);
    s->chunk_depth = n;
}

/* Issues the held ops eagerly and stops holding, counting why.  Called locked. */
static void flush(struct gs_stream *s, int reason)
{
    issue_held(s, s->cur);
    s->holding = 0;
    s->bails[reason]++;
    set_holding(s, 0);
}

/* Launches the held ops up to node t (those past s->chunk_depth) as one graph,
** capturing it first if needed.  Returns 0, or -1 if no graph could be made or
** launched, or GS_CAPTURE_BUSY if it could not be captured now (nothing was
** issued then).  Called locked. */
static int launch_graph(struct gs_stream *s, struct gs_node *t)
{
    CUstream st = issue_stream(s);
    CUcontext prev;
    int rc = 0, cap = 0;

    if (t->depth == s->chunk_depth)
        return 0; /* everything already went out in chunks */
    prev = enter_ctx(s);
    if (t->exec && t->exec_from != s->chunk_depth)
        gs__graph_drop_exec(t, s); /* a graph of another range ending here */
    if (!t->exec) {
        struct gs_node *stack[64], **path = t->depth > 64 ? malloc(t->depth * sizeof *path) : stack;
        gs__trie_path(t, path);
        cap = gs__graph_capture(s, t, path, s->chunk_depth);
        if (cap == 0)
            s->captures++;
        if (path != stack)
            free(path);
    }
    if (!t->exec || GS_REAL(cuGraphLaunch)(t->exec, st) != CUDA_SUCCESS) {
        rc = cap == GS_CAPTURE_BUSY ? GS_CAPTURE_BUSY : -1;
    } else {
        gs__graph_used(t);
        s->ops_replayed += t->depth - s->chunk_depth;
        s->chunk_depth = t->depth;
        if (t->reads_staging)
            staging_issued(s, st);
    }
    leave_ctx(s, prev);
    return rc;
}

/* Held work leaves the GPU idle while the host goes on issuing.  Early chunks
** shorten that wait: the ops held so far go out as a graph of their own and
** holding goes on after them.  Chunks end at the same places every time a
** sequence repeats, so their graphs are reused:
**   GRAPHSHIM_CHUNK_OPS=n  by count, at depths n, 2n, 4n, ... of the segment (each
**                          chunk as long as all before it), a handful of graph
**                          launches however long the sequence;
**   GRAPHSHIM_CHUNK_US=t   by time, where held ops have waited more than t twice
**                          at the same place.
** Called locked, after the op at s->cur was held. */
static int chunk_ends_here(struct gs_stream *s, struct gs_node *c, uint32_t held)
{
    if (gs__cfg.chunk_ops && held >= (uint32_t)gs__cfg.chunk_ops && held >= s->chunk_depth)
        return 1;
    if (!gs__cfg.chunk_us)
        return 0;
    if (c->chunk_votes >= 2)
        return 1;
    if (held & 3)
        return 0; /* the clock is read every fourth held op */
    return now_ns() - s->chunk_since >= (uint64_t)gs__cfg.chunk_us * 1000u && ++c->chunk_votes >= 2;
}

static void maybe_chunk(struct gs_stream *s)
{
    struct gs_node *c = s->cur;
    uint32_t held = c->depth - s->chunk_depth;

    if (held < 2 || c->chunk_failed || !chunk_ends_here(s, c, held))
        return;
    int rc = launch_graph(s, c);
    if (rc == 0) {
        s->chunks++;
    } else {
        c->chunk_failed = rc != GS_CAPTURE_BUSY;
        issue_held(s, c);
    }
    s->chunk_since = now_ns();
    atomic_store_explicit(&s->held_since, s->chunk_since, memory_order_relaxed);
}

/* --- Resolve --------------------------------------------------------------- */

#define GS_DORMANT_AFTER 64
#define GS_DORMANT_MAX 4096

/* Where the next segment of s starts: the root, or NULL (not learned) while
** learning rests.  Learning rests when the tree keeps dropping subtrees to make
** room and nothing replays: the stream's work does not repeat, and learning it
** would cost every op an allocation. */
static struct gs_node *segment_start(struct gs_stream *s)
{
    if (s->dormant) {
        s->dormant--;
        return NULL;
    }
    if (s->replays != s->replays_mark) {
        s->replays_mark = s->replays;
        s->evicted_mark = s->trie.evicted;
        s->dormant_len = 0;
    } else if (s->trie.evicted - s->evicted_mark >= GS_DORMANT_AFTER) {
        s->dormant_len = s->dormant_len ? (s->dormant_len < GS_DORMANT_MAX ? 2 * s->dormant_len : GS_DORMANT_MAX)
                                        : GS_DORMANT_AFTER;
        s->dormant = s->dormant_len;
        s->evicted_mark = s->trie.evicted;
        return NULL;
    }
    return &s->trie.root;
}

/* Ends the current segment of s: an exactly matched stable sequence is replayed
** as a graph; other held ops are issued eagerly, counted under reason (enum
** gs_bail); the sequence is counted for learning.  Called locked. */
static void resolve_locked(struct gs_stream *s, int reason)
{
    struct gs_node *t = s->cur;
    int replayed = 0, rc = -1;

    if (s->holding) {
        if (t->stable && (rc = launch_graph(s, t)) == 0) {
            replayed = 1;
            s->replays++;
            t->replays++;
            s->holding = 0;
            set_holding(s, 0);
        } else if (rc == GS_CAPTURE_BUSY) {
            flush(s, GS_BAIL_SYNC_BUSY); /* captured at a later replay */
        } else {
            if (t->stable) {
                gs__debug("graph of a %u-op sequence failed; it runs eagerly from now on", t->depth);
                gs__trie_unstable(t);
                flush(s, GS_BAIL_GRAPH_FAILED);
            } else {
                flush(s, reason);
            }
        }
    }
    if (t && s->clean)
        gs__trie_ended(t, gs__cfg.warmup, gs__cfg.min_ops);
    /* Timed for the gain check: a learned segment that a synchronize ended. */
    s->last_term = t && t->depth && s->clean && s->seg_start && reason == GS_BAIL_BOUNDARY + GS_SYNC ? t : NULL;
    s->last_start = s->seg_start;
    s->last_how = replayed ? 1 : s->seg_held ? -1 : 0;
    s->seg_held = 0;
    s->last_evicted = s->trie.evicted;
    s->seg_start = 0;
    s->cur = segment_start(s);
    s->clean = 1;
    s->chunk_depth = 0;
}

static void resolve(struct gs_stream *s, int reason)
{
    pthread_mutex_lock(&s->lock);
    resolve_locked(s, reason);
    pthread_mutex_unlock(&s->lock);
}

#define ALL 0
#define BLOCKING 1
#define LEGACY 2

/* Resolves every stream, or every blocking one, or the legacy stream(s), except
** one (NULL for none). */
static void resolve_some(int which, const struct gs_stream *except, int reason)
{
    pthread_mutex_lock(&table_lock);
    for (struct gs_stream *s = all_streams; s; s = s->next) {
        if (s == except || (which == BLOCKING && !(s->blocking && s->kind != GS_STREAM_LEGACY)) ||
            (which == LEGACY && s->kind != GS_STREAM_LEGACY))
            continue;
        resolve(s, reason);
    }
    pthread_mutex_unlock(&table_lock);
}

/* The legacy stream waits for the blocking streams' earlier work, and they wait
** for its: an op or boundary on one side issues what the other side holds. */
static void legacy_rule(const struct gs_stream *s)
{
    if (GS_DROPPED(GS_RULE_LEGACY))
        return;
    if (s->kind == GS_STREAM_LEGACY) {
        if (atomic_load_explicit(&blocking_holding, memory_order_relaxed))
            resolve_some(BLOCKING, s, GS_BAIL_OTHER_STREAM);
    } else if (s->blocking && atomic_load_explicit(&legacy_holding, memory_order_relaxed)) {
        resolve_some(LEGACY, s, GS_BAIL_OTHER_STREAM);
    }
}

/* --- Ops ------------------------------------------------------------------- */

int gs__engine_op_begin(struct gs_stream **out, CUstream stream, void *key, int len, const void *stage_src)
{
    struct gs_stream *s;
    struct gs_node *c;
    uint32_t cmp;

    *out = NULL;
    if (gs__passthrough)
        return GS_OP_PASS;
    s = stream_get(stream);
    if (GS_UNLIKELY(atomic_load_explicit(&app_captures, memory_order_relaxed))) {
        /* The program captures: nothing is held, and a new stream's state is not
        ** even completed (its queries could disturb the capture).  What a stream
        ** held before goes out first. */
        if (s->ready) {
            pthread_mutex_lock(&s->lock);
            if (s->holding)
                flush(s, GS_BAIL_APP_CAPTURE);
            s->cur = NULL;
            pthread_mutex_unlock(&s->lock);
        }
        return GS_OP_PASS;
    }
    if (GS_UNLIKELY(!s->ready)) {
        pthread_mutex_lock(&s->lock);
        if (!s->ready)
            stream_ready(s);
        pthread_mutex_unlock(&s->lock);
    }
    if (atomic_load_explicit(&legacy_holding, memory_order_relaxed) ||
        (s->kind == GS_STREAM_LEGACY && atomic_load_explicit(&blocking_holding, memory_order_relaxed)))
        legacy_rule(s);
    pthread_mutex_lock(&s->lock);
    if (GS_UNLIKELY(len < 0 || !s->usable || s->app_capturing ||
                    atomic_load_explicit(&app_captures, memory_order_relaxed))) {
        /* An op the engine cannot hold still goes after the ones it holds, and a
        ** segment with such an op is not learned. */
        if (s->holding)
            flush(s, len < 0 ? GS_BAIL_UNHOLDABLE : GS_BAIL_APP_CAPTURE);
        if (len < 0)
            s->cur = NULL;
        pthread_mutex_unlock(&s->lock);
        return GS_OP_PASS;
    }
    s->ops_seen++;
    *out = s;
    if (!s->seg_start && gs__cfg.gain_check)
        s->seg_start = now_ns();
    if (!s->cur)
        return GS_OP_ISSUE;
    /* Without the parameter rule (a test), only the fixed part of a key counts. */
    cmp = GS_DROPPED(GS_RULE_PARAMS) ? (uint32_t)sizeof(struct gs_key) : (uint32_t)len;
    c = gs__trie_child(s->cur, key, (uint32_t)len, cmp);
    if (c && c->stable_below && c->watchdog_hits < GS_WATCHDOG_HITS && (s->holding || s->cur->depth == 0)) {
        /* Hold: the call returns success, the op waits for its sequence's end. */
        if (((struct gs_key *)key)->kind == GS_OP_H2D_PAGEABLE) {
            if (!c->staging && GS_REAL(cuMemAllocHost_v2)(&c->staging, ((struct gs_key *)key)->size) != CUDA_SUCCESS)
                c->staging = NULL;
            if (!c->staging)
                goto issue;
            staging_wait(s);
            memcpy(c->staging, stage_src, ((struct gs_key *)key)->size);
        }
        if (!s->holding) {
            s->holding = 1;
            s->seg_held = 1;
            set_holding(s, 1);
            s->chunk_since = atomic_load_explicit(&s->held_since, memory_order_relaxed);
        }
        s->cur = c;
        s->ops_held++;
        if (gs__cfg.chunk_ops | gs__cfg.chunk_us)
            maybe_chunk(s);
        pthread_mutex_unlock(&s->lock);
        *out = NULL;
        return GS_OP_HELD;
    }
issue:
    if (s->holding)
        flush(s, GS_BAIL_MISMATCH);
    s->cur = c ? c : gs__trie_add(&s->trie, s->cur, key, (uint32_t)len);
    return GS_OP_ISSUE;
}

void gs__engine_op_end(struct gs_stream *s, CUresult rc)
{
    if (rc != CUDA_SUCCESS) {
        s->clean = 0;
        s->cur = NULL; /* a failed op is never part of a learned sequence */
    }
    pthread_mutex_unlock(&s->lock);
}

/* The calling thread's buffer for a launch key (up to 32 KiB of parameters: too
** much for the stack of every thread that launches).  NULL if out of memory. */
static pthread_key_t key_buffer_key;
static pthread_once_t key_buffer_once = PTHREAD_ONCE_INIT;
static __thread unsigned char *key_buf;

static void key_buffer_init(void)
{
    pthread_key_create(&key_buffer_key, free);
}

static unsigned char *key_buffer(void)
{
    if (GS_UNLIKELY(!key_buf)) {
        pthread_once(&key_buffer_once, key_buffer_init);
        key_buf = aligned_alloc(16, (GS_KEY_MAX + 15) & ~(size_t)15);
        pthread_setspecific(key_buffer_key, key_buf); /* freed when the thread exits */
    }
    return key_buf;
}

CUresult gs__engine_launch(int id, CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                           CUstream stream, CUstream app_stream, const CUlaunchConfig *cfg, void **params,
                           void **extra)
{
    unsigned char *key = key_buffer();
    struct gs_stream *s;
    CUresult rc;
    int len = !key || gs__passthrough || gs__engine_capturing()
                  ? -1
                  : gs__key_launch(key, f, grid, block, shmem, cfg, params, extra);

    if (gs__engine_op_begin(&s, stream, key, len, NULL) == GS_OP_HELD)
        return CUDA_SUCCESS;
    if (cfg)
        rc = ((__typeof__(&cuLaunchKernelEx))gs__real[id])(cfg, f, params, extra);
    else
        rc = ((__typeof__(&cuLaunchKernel))gs__real[id])(f, grid[0], grid[1], grid[2], block[0], block[1],
                                                          block[2], shmem, app_stream, params, extra);
    if (s)
        gs__engine_op_end(s, rc);
    return rc;
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
            gs__engine_capture_call(stream_get(c->stream), c->id);
        return;
    }
    switch (c->cls) {
    case GS_QUERY:
    case GS_PROC:
        return;
    case GS_SYNC:
    case GS_EVENT:
    case GS_HOSTFN:
    case GS_CAPTURE:
    case GS_STREAM:
        if (c->stream == GS_NONE)
            break; /* context or event synchronize: every stream */
        s = stream_get(c->stream);
        legacy_rule(s);
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
    resolve_some(ALL, NULL, GS_BAIL_BOUNDARY + c->cls);
    if (c->cls == GS_CTX || c->cls == GS_MODULE || c->cls == GS_ATTR)
        gs__engine_reset(c->cls);
}

/* After a synchronize returned: the segment of s that ended at it took from its
** first op until now.  Counted for the sequence, eager or replayed (the first
** replay, which built the graph, is not, nor a segment that held ops and then issued
** them eagerly, which is neither); a graph that is slower than eager is dropped,
** and the sequence runs eagerly for good.  Called locked. */
static void segment_timed(struct gs_stream *s)
{
    struct gs_node *t = s->last_term;
    uint64_t d;

    s->last_term = NULL;
    if (!t || s->last_evicted != s->trie.evicted)
        return;
    d = now_ns() - s->last_start;
    if (s->last_how == 0) {
        t->eager_ns = d;
    } else if (s->last_how == 1 && t->replays > 1 && t->eager_ns) {
        t->replay_slow += (uint32_t)gs__gain_slow(t->eager_ns, d);
        t->replay_n++;
        int v = gs__gain_verdict(t->replay_slow, t->replay_n);
        if (v == 0 && !t->gain_retimed) {
            /* The eager time may be stale (the program changed pace): measure it
            ** again, then judge a fresh window. */
            gs__debug("a %u-op sequence took more than 10%% longer than its %.1f us eagerly in %u of %u replays: "
                      "timing it eagerly again", t->depth, t->eager_ns / 1e3, t->replay_slow, t->replay_n);
            t->gain_retimed = 1;
            t->eager_ns = 0;
            gs__trie_relearn(t);
        } else if (v == 0) {
            gs__debug("a %u-op sequence took more than 10%% longer than its %.1f us eagerly in %u of %u replays, "
                      "again: it runs eagerly from now on", t->depth, t->eager_ns / 1e3, t->replay_slow, t->replay_n);
            gs__trie_unstable(t);
            gs__graph_drop_exec(t, s);
            s->bails[GS_BAIL_NO_GAIN]++;
        } else if (v == 1) {
            t->gain_retimed = 0;
        }
        if (t->replay_n >= GS_GAIN_REPLAYS)
            t->replay_n = 0, t->replay_slow = 0; /* a fresh window: the program may change pace */
    }
}

void gs__engine_synced(CUstream stream)
{
    struct gs_stream *s;

    if (gs__passthrough || !gs__cfg.gain_check)
        return;
    s = stream_get(stream);
    pthread_mutex_lock(&s->lock);
    segment_timed(s);
    pthread_mutex_unlock(&s->lock);
}

void gs__engine_ctx_synced(void)
{
    if (gs__passthrough || !gs__cfg.gain_check)
        return;
    pthread_mutex_lock(&table_lock);
    for (struct gs_stream *s = all_streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        segment_timed(s);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&table_lock);
}

int gs__engine_capturing(void)
{
    return atomic_load_explicit(&app_captures, memory_order_relaxed) != 0;
}

/* gs_pause() and gs_resume() (interpose/api.c): a pause counts like a capture of
** the program's own, without the driver calls that would disturb one. */
void gs__engine_pause(void)
{
    if (gs__passthrough)
        return;
    atomic_fetch_add(&app_captures, 1);
    resolve_some(ALL, NULL, GS_BAIL_APP_CAPTURE);
}

void gs__engine_resume(void)
{
    int n = atomic_load(&app_captures);
    while (n > 0 && !atomic_compare_exchange_weak(&app_captures, &n, n - 1))
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
        pthread_mutex_lock(&s->lock);
        if (!s->app_capturing) {
            s->app_capturing = 1;
            atomic_fetch_add(&app_captures, 1);
        }
        pthread_mutex_unlock(&s->lock);
        resolve_some(ALL, NULL, GS_BAIL_APP_CAPTURE);
    } else if (end) {
        pthread_mutex_lock(&s->lock);
        if (s->app_capturing) {
            s->app_capturing = 0;
            atomic_fetch_sub(&app_captures, 1);
        }
        pthread_mutex_unlock(&s->lock);
    }
}

/* Destroys the graphs kept for s; with learned, also forgets its sequences.
** Work that s holds goes out first: another thread may have begun holding since
** the boundary that led here resolved every stream.  Called locked. */
static void stream_empty(struct gs_stream *s, int learned, int reason)
{
    if (s->holding)
        flush(s, reason);
    staging_wait(s);
    s->last_term = NULL;
    if (learned) {
        gs__trie_clear(&s->trie);
        s->cur = &s->trie.root;
        s->clean = 1;
        s->chunk_depth = 0;
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
    pthread_mutex_lock(&s->lock);
    stream_empty(s, 1, GS_BAIL_BOUNDARY + GS_STREAM);
    s->ready = 0; /* a new stream may get the same handle */
    pthread_mutex_unlock(&s->lock);
}

/* After a call of class cls (held work already resolved): a context going away
** takes every graph, sequence and private stream with it; an unloaded module may
** hand its function handles to new functions, so learned sequences and parameter
** layouts go; changed attributes or limits only need the graphs rebuilt. */
void gs__engine_reset(int cls)
{
    pthread_mutex_lock(&table_lock);
    for (struct gs_stream *s = all_streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        stream_empty(s, cls != GS_ATTR, GS_BAIL_BOUNDARY + cls);
        if (cls == GS_CTX)
            s->ready = 0;
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&table_lock);
    if (cls == GS_CTX)
        gs__graph_reset();
    if (cls != GS_ATTR)
        gs__layouts_reset();
}

/* --- Watchdog, exit, fork ---------------------------------------------------- */

static pthread_t watchdog_thread;
static atomic_int watchdog_started;
static atomic_int watchdog_stop;

/* Issues work held longer than GRAPHSHIM_MAX_DEFER_US, so a host waiting for it
** without a CUDA call (polling mapped memory) never waits forever.  Where it fired
** GS_WATCHDOG_HITS times with no replay on the stream between, the engine stops
** holding there for good: that program point does not wait for a sync.  (A hit
** between replays is a descheduled thread, which a busy machine sees now and then.) */
static void *watchdog(void *arg)
{
    uint64_t limit = (uint64_t)gs__cfg.max_defer_us * 1000u;
    struct timespec nap = {0, (long)(limit / 4 > 50000 ? (limit / 4 < 10000000 ? limit / 4 : 10000000) : 50000)};

    (void)arg;
    gs__tls.depth++;
    while (!atomic_load(&watchdog_stop)) {
        uint64_t now;
        nanosleep(&nap, NULL);
        now = now_ns();
        pthread_mutex_lock(&table_lock);
        for (struct gs_stream *s = all_streams; s; s = s->next) {
            uint64_t since = atomic_load_explicit(&s->held_since, memory_order_relaxed);
            if (!since || now - since < limit)
                continue;
            pthread_mutex_lock(&s->lock);
            /* Again under the lock, with the clock read now: the held work may have
            ** gone out meanwhile and newer work be held since after `now`. */
            since = atomic_load_explicit(&s->held_since, memory_order_relaxed);
            if (s->holding && since && now_ns() - since >= limit) {
                struct gs_node *n = s->cur;
                if (n->watchdog_mark != (uint32_t)s->replays)
                    n->watchdog_hits = 0; /* the stream replayed since the last hit here */
                n->watchdog_mark = (uint32_t)s->replays;
                if (n->watchdog_hits < GS_WATCHDOG_HITS)
                    n->watchdog_hits++;
                flush(s, GS_BAIL_WATCHDOG);
            }
            pthread_mutex_unlock(&s->lock);
        }
        pthread_mutex_unlock(&table_lock);
    }
    return NULL;
}

static const char *const rule_names[] = {
    [GS_RULE_SYNC] = "sync", [GS_RULE_EVENT] = "event", [GS_RULE_HOSTFN] = "hostfn",
    [GS_RULE_ALLOC] = "alloc", [GS_RULE_SYNCOP] = "syncop", [GS_RULE_PAGEABLE_D2H] = "pageable-d2h",
    [GS_RULE_LEGACY] = "legacy", [GS_RULE_CAPTURE] = "capture", [GS_RULE_UNCLASSIFIED] = "unclassified",
    [GS_RULE_PARAMS] = "params", [GS_RULE_WATCHDOG] = "watchdog", [GS_RULE_STAGING] = "staging",
    [GS_RULE_STREAM_DESTROY] = "stream-destroy", [GS_RULE_MODULE] = "module",
    [GS_RULE_SYNC_CAPTURE] = "sync-capture",
};

void gs__engine_init(void)
{
    const char *drop = gs__cfg.path[GS_KNOB_drop_rule];

    if (gs__passthrough)
        return;
    for (int r = 1; drop[0] && r < (int)(sizeof rule_names / sizeof rule_names[0]); r++)
        if (strcmp(drop, rule_names[r]) == 0)
            gs__dropped_rule = r;
    if (drop[0] && !gs__dropped_rule)
        gs__warn("GRAPHSHIM_TEST_DROP_RULE=%s names no rule (%s); ignored", drop, GS_RULE_NAMES);
    else if (gs__dropped_rule)
        gs__warn("GRAPHSHIM_TEST_DROP_RULE=%s: this guard rule is OFF, results may be wrong", drop);
    if (GS_DROPPED(GS_RULE_WATCHDOG))
        return;
    if (pthread_create(&watchdog_thread, NULL, watchdog, NULL) == 0) {
        atomic_store(&watchdog_started, 1);
    } else {
        gs__warn("cannot start the watchdog thread: the engine is off");
        gs__passthrough = 1;
    }
}

void gs__engine_exit(void)
{
    if (!gs__passthrough) {
        gs__tls.depth++;
        resolve_some(ALL, NULL, GS_BAIL_EXIT);
        gs__tls.depth--;
    }
    gs__report_write();
}

void gs__engine_fork(int phase)
{
    if (phase == 0) {
        pthread_mutex_lock(&table_lock);
    } else {
        pthread_mutex_unlock(&table_lock);
        if (phase == 2 && atomic_load(&watchdog_started)) {
            /* The child has no watchdog thread: it must hold nothing. */
            gs__passthrough = 1;
        }
    }
}

/* For the report: visits every stream state, under the table lock. */
void gs__engine_each_stream(void (*fn)(struct gs_stream *, void *), void *arg)
{
    pthread_mutex_lock(&table_lock);
    for (struct gs_stream *s = all_streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        fn(s, arg);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&table_lock);
}
