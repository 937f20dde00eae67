/*
** streams.c: the engine's stream states: lookup by handle (and, for the default
** streams, by context), with per-thread caches (no global lock on the launch
** path), each thread's per-thread default streams in thread-local storage, what
** the engine learns of a stream before holding, and the contexts of its calls.
*/
#define _GNU_SOURCE
#define GS_OWNS_STREAMS /* this file writes its rooms (state.h, GS_ROOM) */
#include "stream.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../graph/graph_cache.h"
#include "segment.h"

/* --- Stream states ------------------------------------------------------- */

#define STREAM_HASH 1024

pthread_mutex_t gs__table_lock = PTHREAD_MUTEX_INITIALIZER;
struct gs_stream *gs__all_streams;
static struct gs_stream *by_handle[STREAM_HASH];
static int nstreams;

/* Captures of the program's own in progress, plus gs_pause() calls not yet
** resumed: while any, nothing is held. */
atomic_int gs__app_captures;

GS_TLS struct gs_stream *gs__tls_last;
GS_TLS CUstream gs__tls_last_handle;
/* The last legacy [0] and per-thread [1] stream states this thread used. */
GS_TLS struct gs_stream *gs__tls_default[2];
/* This thread's per-thread stream states, one per context (chained by hnext). */
static GS_TLS struct gs_stream *tls_ptds;

static unsigned handle_hash(CUstream h, CUcontext ctx)
{
    return (unsigned)((((uintptr_t)h ^ (uintptr_t)ctx) * 0x9E3779B97F4A7C15ull) >> 40) & (STREAM_HASH - 1);
}

struct gs_stream gs__nomem_stream;
static pthread_once_t nomem_once = PTHREAD_ONCE_INIT;

static void state_init(struct gs_stream *s, CUstream handle, CUcontext key, int kind)
{
    memset(s, 0, sizeof *s);
    s->handle_w = handle;
    s->key_w = key;
    s->kind_w = kind;
    s->ctx_id_w = -1;
    s->trie.drop = gs__graph_drop_node;
    s->trie.drop_arg = s;
    s->graphs.lock = &s->lock;
    gs__lock(&s->lock); /* no other thread sees s yet: for the segment's rule */
    gs__seg_rewind(s);
    gs__unlock(&s->lock);
}

/* The state of every stream whose own could not be allocated: ready, never
** usable (its ops pass through, unlearned), in no list (the report shows it
** not).  Its users issue every stream's held work first (stream.h). */
static void nomem_init(void)
{
    state_init(&gs__nomem_stream, CU_STREAM_LEGACY, NULL, GS_STREAM_LEGACY);
    gs__nomem_stream.ready_w = 1;
}

/* A new state, in the list of all; NULL without memory.  Called with
** gs__table_lock held. */
static struct gs_stream *stream_new(CUstream handle, CUcontext key, int kind)
{
    struct gs_stream *s = aligned_alloc(_Alignof(struct gs_stream), sizeof *s); /* its hot lines, whole */

    if (!s)
        return NULL;
    state_init(s, handle, key, kind);
    s->id_w = nstreams++;
    s->next_w = gs__all_streams;
    gs__all_streams = s;
    return s;
}

/* The shared state for a stream whose own could not be made (the lookup is
** made again at its next use). */
static struct gs_stream *no_memory(void)
{
    pthread_once(&nomem_once, nomem_init);
    return &gs__nomem_stream;
}

/* gs__stream_get() past its per-thread caches (stream.h).  ctx: the
** context of a default stream (gs__default_ctx()), NULL for a created one. */
struct gs_stream *gs__stream_lookup(CUstream handle, CUcontext ctx)
{
    struct gs_stream *s;
    unsigned h;

    if (handle == CU_STREAM_PER_THREAD) {
        /* The thread's own: no other thread adds to its list. */
        for (s = tls_ptds; s && s->key != ctx; s = s->hnext)
            ;
        if (!s) {
            int tid = gs__tid();
            pthread_mutex_lock(&gs__table_lock);
            if ((s = stream_new(handle, ctx, GS_STREAM_PTDS)) != NULL)
                s->owner_tid_w = tid;
            pthread_mutex_unlock(&gs__table_lock);
            if (!s)
                return no_memory();
            s->hnext_w = tls_ptds;
            tls_ptds = s;
        }
        gs__tls_default[1] = s;
        return s;
    }
    h = handle_hash(handle, ctx);
    pthread_mutex_lock(&gs__table_lock);
    for (s = by_handle[h]; s && (s->handle != handle || s->key != ctx); s = s->hnext)
        ;
    if (!s) {
        s = stream_new(handle, ctx, handle == CU_STREAM_LEGACY ? GS_STREAM_LEGACY : GS_STREAM_CREATED);
        if (!s) {
            pthread_mutex_unlock(&gs__table_lock);
            return no_memory();
        }
        s->hnext_w = by_handle[h];
        by_handle[h] = s;
    }
    pthread_mutex_unlock(&gs__table_lock);
    if (handle == CU_STREAM_LEGACY) {
        gs__tls_default[0] = s;
    } else {
        gs__tls_last = s;
        gs__tls_last_handle = handle;
    }
    return s;
}

/* --- Contexts ------------------------------------------------------------ */

/* The contexts the engine's streams belong to, in order of first use: the
** report names a stream's context by its index here.  A leaf lock: no other
** lock is taken while it is held. */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext *ctx_seen;
static int nctx_seen, ctx_seen_cap;

static int ctx_index(CUcontext c)
{
    int i;

    pthread_mutex_lock(&ctx_lock);
    for (i = 0; i < nctx_seen && ctx_seen[i] != c; i++)
        ;
    if (i == nctx_seen) {
        if (nctx_seen == ctx_seen_cap) {
            int cap = ctx_seen_cap ? 2 * ctx_seen_cap : 8;
            CUcontext *a = realloc(ctx_seen, (size_t)cap * sizeof *a);
            if (!a) {
                pthread_mutex_unlock(&ctx_lock);
                return -1;
            }
            ctx_seen = a;
            ctx_seen_cap = cap;
        }
        ctx_seen[nctx_seen++] = c;
    }
    pthread_mutex_unlock(&ctx_lock);
    return i;
}

/* Learns what the engine needs to know of a stream before holding its ops: its
** context and whether it synchronizes with the legacy stream.  A default
** stream's context is the one it was looked up for; a created stream's, the
** driver's answer.  A created stream whose flags are not known is taken for a
** blocking one: its ops, passing through, wait for what the legacy stream
** holds (a blocking stream taken for a non-blocking one ran before it).
** Called locked. */
void gs__stream_ready(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    unsigned flags = 0;

    s->ready_w = 1;
    s->usable_w = 0;
    s->blocking_w = s->kind != GS_STREAM_LEGACY;
    /* A default stream's state is keyed by its context (gs__stream_get gives
    ** one whose context is not known the shared state of no memory); without
    ** rule current by none, and the current context is read. */
    if (s->key)
        s->ctx_w = s->key;
    else if (!gs__real[GS_ID_cuCtxGetCurrent] || GS_REAL(cuCtxGetCurrent)(&s->ctx_w) != CUDA_SUCCESS || !s->ctx)
        return;
    if (s->kind == GS_STREAM_CREATED) {
        CUcontext c = NULL;
        if (!gs__real[GS_ID_cuStreamGetCtx] || !gs__real[GS_ID_cuStreamGetFlags] ||
            GS_REAL(cuStreamGetCtx)(s->handle, &c) != CUDA_SUCCESS ||
            GS_REAL(cuStreamGetFlags)(s->handle, &flags) != CUDA_SUCCESS)
            return;
        s->ctx_w = c;
        s->blocking_w = !(flags & CU_STREAM_NON_BLOCKING);
    } else {
        s->blocking_w = s->kind == GS_STREAM_PTDS;
    }
    s->ctx_id_w = ctx_index(s->ctx);
    s->graphs.ctx = s->ctx;
    s->usable_w = 1;
}

void gs__stream_make_ready(struct gs_stream *s)
{
    if (s->ready)
        return;
    gs__lock(&s->lock);
    if (!s->ready)
        gs__stream_ready(s);
    gs__unlock(&s->lock);
}

/* The stream the held ops of s are issued to from this thread.  Another thread
** cannot name s's per-thread stream; the legacy stream orders the same way (the
** per-thread stream synchronizes with it). */
CUstream gs__issue_stream(const struct gs_stream *s)
{
    if (s->kind == GS_STREAM_PTDS && s->owner_tid != gs__tid())
        return CU_STREAM_LEGACY;
    return s->handle;
}

/* A synchronize or query of a per-thread stream does not wait for work issued
** on the legacy stream after the stream's last op (measured on an H200,
** bench/ptds_legacy_probe.cu; an event recorded on it, or an op of it, does:
** an action of a blocking stream waits for the legacy stream's earlier work).
** So held work of a per-thread stream issued by another thread, on the legacy
** stream, is followed there by an event, and before the owner's synchronize
** or query of the stream reaches the driver, the stream waits for it
** (entry/boundary.c, once the stream holds nothing: then no other thread can
** issue work of it any more). */
void gs__issued_on(struct gs_stream *s, CUstream st)
{
    GS_ASSERT_LOCKED(s);
    if (s->kind != GS_STREAM_PTDS || st != CU_STREAM_LEGACY)
        return;
    if (!s->foreign_done && GS_REAL(cuEventCreate)(&s->foreign_done_w, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        s->foreign_done_w = NULL;
    if (s->foreign_done && GS_REAL(cuEventRecord)(s->foreign_done, CU_STREAM_LEGACY) == CUDA_SUCCESS)
        atomic_store_explicit(&s->foreign_pending_w, 1, memory_order_release);
    else if (GS_REAL(cuStreamSynchronize)(CU_STREAM_LEGACY) != CUDA_SUCCESS) /* no event: the work is done now */
        gs__warn("a per-thread stream's work issued by another thread could not be waited for "
                 "(cuStreamSynchronize of the legacy stream failed): its owner's next synchronize may not wait for it");
}

void gs__foreign_drop(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    if (s->foreign_done && !atomic_load(&s->foreign_pending)) {
        GS_IGNORE(GS_REAL(cuEventDestroy_v2)(s->foreign_done));
        s->foreign_done_w = NULL;
    }
}

void gs__stream_unready(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->ready_w = 0;
}

/* The owner's wait for the work of s another thread issued (gs__issued_on):
** its per-thread stream waits for the event, or, where it cannot (s's context
** cannot be made current, or the wait fails), the host does, until the work is
** done.  Where neither can, the work stays pending, to be waited for at the
** next synchronize or query of s.  0, or -1 where it stays pending. */
static int ptds_wait(struct gs_stream *s)
{
    CUcontext prev;
    CUresult rc = CUDA_ERROR_INVALID_CONTEXT;

    if (gs__enter_ctx(s, &prev) == 0) {
        rc = GS_REAL(cuStreamWaitEvent)(CU_STREAM_PER_THREAD, s->foreign_done, 0);
        gs__leave_ctx(s, prev);
    }
    if (rc != CUDA_SUCCESS && (rc = GS_REAL(cuEventSynchronize)(s->foreign_done)) != CUDA_SUCCESS)
        gs__debug("a per-thread stream cannot wait for its work issued on the legacy stream (error %d): "
                  "tried again at its next synchronize or query", (int)rc);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

void gs__ptds_catch_up(struct gs_stream *s)
{
    if (GS_LIKELY(!atomic_load_explicit(&s->foreign_pending, memory_order_acquire)))
        return;
    gs__lock(&s->lock);
    if (atomic_load_explicit(&s->foreign_pending, memory_order_relaxed) && s->owner_tid == gs__tid() &&
        ptds_wait(s) == 0)
        atomic_store_explicit(&s->foreign_pending_w, 0, memory_order_relaxed);
    gs__unlock(&s->lock);
}

/* A failed call of the engine's context switch, and what follows: the first
** one a warning, the others debug messages. */
static void ctx_failed(const char *call, CUresult rc, const char *then)
{
    static atomic_int warned;
    gs__log(atomic_exchange(&warned, 1) ? GS_LOG_DEBUG : GS_LOG_WARN, "%s failed (error %d): %s", call, (int)rc,
            then);
}

/* *prev of gs__enter_ctx where s's context was pushed over one that could
** not be read: gs__leave_ctx pops it, and what was current is again. */
static char ctx_pushed;
#define CTX_PUSHED ((CUcontext)(void *)&ctx_pushed)

/* Makes s's context current for the engine's own calls: 0, with the one to
** make current again in *prev for gs__leave_ctx; or -1 where s's cannot be
** made current, and nothing changed: the caller must not issue s's work (it
** would go to another context, or to none).  Where the current context cannot
** be read, s's is pushed (popped by gs__leave_ctx: the program's current
** context, whichever it was, comes back), or where that fails too, made
** current and left so (*prev is s's). */
int gs__enter_ctx(const struct gs_stream *s, CUcontext *prev)
{
    CUresult rc;

    *prev = NULL;
    rc = GS_REAL(cuCtxGetCurrent)(prev);
    if (GS_LIKELY(rc == CUDA_SUCCESS && *prev == s->ctx))
        return 0;
    if (rc != CUDA_SUCCESS) {
        if (GS_REAL(cuCtxPushCurrent_v2)(s->ctx) == CUDA_SUCCESS) {
            *prev = CTX_PUSHED;
            return 0;
        }
        ctx_failed("cuCtxGetCurrent", rc, "graphshim makes a stream's context current and leaves it so");
        *prev = s->ctx;
    }
    if ((rc = GS_REAL(cuCtxSetCurrent)(s->ctx)) == CUDA_SUCCESS)
        return 0;
    ctx_failed("cuCtxSetCurrent", rc,
               "a stream's held work does not go out from this thread, where another context (or none) is current");
    return -1;
}

/* Makes prev current again after gs__enter_ctx.  Where that fails, s's context
** stays current on this thread: the program's next call there would go to it,
** so that is an error, always shown. */
void gs__leave_ctx(const struct gs_stream *s, CUcontext prev)
{
    CUresult rc;
    CUcontext c;

    if (prev == CTX_PUSHED) {
        if ((rc = GS_REAL(cuCtxPopCurrent_v2)(&c)) != CUDA_SUCCESS)
            gs__error("the program's context could not be made current again after graphshim issued work of "
                      "another one (cuCtxPopCurrent failed, error %d)", (int)rc);
        return;
    }
    if (prev != s->ctx && (rc = GS_REAL(cuCtxSetCurrent)(prev)) != CUDA_SUCCESS)
        gs__error("the program's context could not be made current again after graphshim issued work of "
                  "another one (cuCtxSetCurrent failed, error %d)", (int)rc);
}

/* For the report: visits every stream state, under the table lock. */
void gs__each_stream(void (*fn)(struct gs_stream *, void *), void *arg)
{
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        gs__lock(&s->lock);
        fn(s, arg);
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
}
