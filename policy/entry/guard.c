/*
** guard.c: the guard layer (see guard.h).
**
** Before a call it counts the call by class and hands it to the engine, which
** resolves the held work the call could observe (gs__engine_boundary); a
** context synchronize also waits for the engine's captures in progress, which
** would make it fail.  After it, it writes the trace and tells the engine a
** stream or context synchronize returned (the gain check).
*/
#include "guard.h"

#include "engine.h"

#include "../base/names.h"
#include "../base/prof.h"
#include "../base/trace.h"
#include "../graph/graph_cache.h"
#include "../rules/chunk.h"
#include "../rules/gain.h"
#include "../stream/release.h"
#include "../stream/stream.h"

static int is_ctx_sync(const struct gs_call *c)
{
    return c->id == GS_ID_cuCtxSynchronize || c->id == GS_ID_cuCtxSynchronize_v2;
}

/* An event's synchronize: it ends every stream's segment (a synchronize of
** no stream), and its return times them (rule gain-event-sync). */
static int is_event_sync(const struct gs_call *c)
{
    return c->id == GS_ID_cuEventSynchronize && !GS_DROPPED(GS_RULE_GAIN_EVENT_SYNC);
}

/* A synchronize of one stream. */
static int is_stream_sync(const struct gs_call *c)
{
    return c->id == GS_ID_cuStreamSynchronize || c->id == GS_ID_cuStreamSynchronize_ptsz;
}

/* A stream query (that found the stream idle where it succeeded): a host that
** polls sees its step end there, as at a synchronize's return (rule
** gain-query). */
static int is_idle_query(const struct gs_call *c)
{
    return (c->id == GS_ID_cuStreamQuery || c->id == GS_ID_cuStreamQuery_ptsz) && !GS_DROPPED(GS_RULE_GAIN_QUERY);
}

/* A context synchronize that must wait for the engine's captures. */
static int gates_captures(const struct gs_call *c)
{
    return is_ctx_sync(c) && !gs__passthrough && !GS_DROPPED(GS_RULE_SYNC_CAPTURE);
}

void gs__guard_before(const struct gs_call *c)
{
    atomic_fetch_add_explicit(&gs__calls_by_class[c->cls], 1, memory_order_relaxed);
    if (c->cls == GS_CURRENT || c->cls == GS_CTX || c->cls == GS_UNCLASSIFIED) {
        gs__tls.ctx_moved = 1;
        atomic_fetch_add_explicit(&gs__ctx_epoch, 1, memory_order_relaxed);
    }
    /* Memory is allocated or freed: graphs whose copy nodes bound host or device
    ** allocations may name freed ones after it (graph_cache.h).  Counted before
    ** the call, which is the one place every allocation call passes (a
    ** trampoline reports back only while tracing); a graph captured after this,
    ** by another thread, while the free runs, would copy memory being freed: a
    ** race of the program's own. */
    if (c->cls == GS_ALLOC && !GS_DROPPED(GS_RULE_HOST_BIND))
        atomic_fetch_add_explicit(&gs__mem_epoch, 1, memory_order_relaxed);
    {
        GS_PROF_START(t);
        gs__engine_boundary(c);
        GS_PROF_STOP(GS_PROF_BOUNDARY, t);
    }
    if (gates_captures(c))
        gs__graph_sync_enter();
}

/* A stream synchronize (waited), or a query that found the stream idle,
** returned; only a synchronize waited, which the chunks' rule drain hears of. */
static void stream_synced(CUstream stream, int waited)
{
    struct gs_stream *s;

    if (gs__passthrough)
        return;
    s = gs__stream_get(stream);
    gs__lock(&s->lock);
    if (waited)
        gs__chunks_synced(s, 1);
    gs__gain_stream_synced(s);
    gs__unlock(&s->lock);
}

/* A context synchronize returned (ctx), or an event's (rule gain-event-sync):
** every stream's segment that ended at it is timed.  A context's waited for
** the streams of the current context, which the chunks' rule drain hears of;
** an event's for none that can be told, and the rule hears nothing. */
static void ctx_synced(int ctx)
{
    CUcontext cur = NULL;

    if (gs__passthrough)
        return;
    /* The context whose streams it waited for; where it cannot be told, none. */
    if (ctx && GS_REAL(cuCtxGetCurrent)(&cur) != CUDA_SUCCESS)
        cur = NULL;
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        gs__lock(&s->lock);
        if (ctx)
            gs__chunks_synced(s, cur && s->ctx == cur);
        gs__gain_stream_synced(s);
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
}

void gs__guard_after(const struct gs_call *c, CUresult rc)
{
    if (gates_captures(c))
        gs__graph_sync_leave();
    if (c->cls == GS_CAPTURE && rc != CUDA_SUCCESS)
        gs__engine_capture_refused(c);
    if (c->cls == GS_SYNC && c->stream != GS_NONE && rc == CUDA_SUCCESS && (is_stream_sync(c) || is_idle_query(c))) {
        GS_PROF_START(t);
        stream_synced(c->stream, is_stream_sync(c));
        GS_PROF_STOP(GS_PROF_SYNCED, t);
    } else if (rc == CUDA_SUCCESS && (is_ctx_sync(c) || is_event_sync(c))) {
        ctx_synced(is_ctx_sync(c));
    }
    if (gs__trace_on)
        gs__trace_line(gs__tid(), c->abi, c->stream, rc, NULL, NULL, NULL, gs__class_name(c->cls));
}

int gs__guard_out_of_memory(void)
{
    if (gs__passthrough || GS_DROPPED(GS_RULE_OOM_RETRY) || gs__engine_capturing())
        return 0;
    if (!gs__release_memory())
        return 0;
    atomic_fetch_add(&gs__oom_retries, 1);
    return 1;
}

CUresult gs__guard_retried(CUresult rc)
{
    if (rc == CUDA_SUCCESS)
        atomic_fetch_add(&gs__oom_retries_ok, 1);
    return rc;
}
