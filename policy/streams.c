/*
** streams.c: the engine's stream states: lookup by handle, with a per-thread cache
** (no global lock on the launch path), the per-thread default stream in
** thread-local storage, and what the engine learns of a stream before holding.
*/
#define _GNU_SOURCE
#include "engine_int.h"

#include <stdlib.h>

#include "graph_cache.h"

/* --- Stream states ------------------------------------------------------- */

#define STREAM_HASH 1024

pthread_mutex_t gs__table_lock = PTHREAD_MUTEX_INITIALIZER;
struct gs_stream *gs__all_streams;
static struct gs_stream *by_handle[STREAM_HASH];
static int nstreams;

/* Streams that hold work, for the legacy-stream rule. */
atomic_int gs__blocking_holding, gs__legacy_holding;
/* Captures of the program's own in progress, plus gs_pause() calls not yet
** resumed: while any, nothing is held. */
atomic_int gs__app_captures;

__thread struct gs_stream *gs__tls_last;
__thread CUstream gs__tls_last_handle;
__thread struct gs_stream *gs__tls_ptds;

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
    s->next = gs__all_streams;
    gs__all_streams = s;
    return s;
}

/* gs__stream_get() past its per-thread caches (engine_int.h). */
struct gs_stream *gs__stream_lookup(CUstream handle)
{
    struct gs_stream *s;
    unsigned h;

    if (handle == CU_STREAM_PER_THREAD) {
        pthread_mutex_lock(&gs__table_lock);
        gs__tls_ptds = stream_new(handle, GS_STREAM_PTDS);
        gs__tls_ptds->owner_tid = gs__tid();
        pthread_mutex_unlock(&gs__table_lock);
        return gs__tls_ptds;
    }
    h = handle_hash(handle);
    pthread_mutex_lock(&gs__table_lock);
    for (s = by_handle[h]; s && s->handle != handle; s = s->hnext)
        ;
    if (!s) {
        s = stream_new(handle, handle == CU_STREAM_LEGACY ? GS_STREAM_LEGACY : GS_STREAM_CREATED);
        s->hnext = by_handle[h];
        by_handle[h] = s;
    }
    pthread_mutex_unlock(&gs__table_lock);
    gs__tls_last = s;
    gs__tls_last_handle = handle;
    return s;
}

/* Learns what the engine needs to know of a stream before holding its ops: its
** context and whether it synchronizes with the legacy stream.  Called locked. */
void gs__stream_ready(struct gs_stream *s)
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
CUstream gs__issue_stream(const struct gs_stream *s)
{
    if (s->kind == GS_STREAM_PTDS && s->owner_tid != gs__tid())
        return CU_STREAM_LEGACY;
    return s->handle;
}

/* Makes s's context current for the engine's own calls; returns the previous one. */
CUcontext gs__enter_ctx(const struct gs_stream *s)
{
    CUcontext cur = NULL;
    GS_REAL(cuCtxGetCurrent)(&cur);
    if (cur != s->ctx)
        GS_REAL(cuCtxSetCurrent)(s->ctx);
    return cur;
}

void gs__leave_ctx(const struct gs_stream *s, CUcontext prev)
{
    if (prev != s->ctx)
        GS_REAL(cuCtxSetCurrent)(prev);
}

void gs__set_holding(struct gs_stream *s, int on)
{
    if (s->kind == GS_STREAM_LEGACY)
        atomic_fetch_add(&gs__legacy_holding, on ? 1 : -1);
    else if (s->blocking)
        atomic_fetch_add(&gs__blocking_holding, on ? 1 : -1);
    atomic_store_explicit(&s->held_since, on ? gs__now_ns() : 0, memory_order_relaxed);
}

/* For the report: visits every stream state, under the table lock. */
void gs__engine_each_stream(void (*fn)(struct gs_stream *, void *), void *arg)
{
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        fn(s, arg);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
}
