/*
** boundary.c: the calls that are not ops: what each class of call resolves (a
** stream, every stream, the legacy stream's partners); the program's own
** captures and gs_pause(); streams destroyed; resets after context, module and
** attribute changes.
*/
#define _GNU_SOURCE
#define GS_OWNS_BOUNDARY /* this file writes its rooms (state.h, GS_ROOM) */
#include "engine.h"

#include "../base/assert.h"
#include "../graph/graph_cache.h"
#include "../graph/key.h"
#include "../rules/resolve.h"
#include "../stream/body.h"
#include "../stream/issue.h"
#include "../stream/segment.h"
#include "../stream/stream.h"
#include "../rules/xgroup.h"

static void capture_call(struct gs_stream *s, int id);
static void stream_destroyed(struct gs_stream *s);
static void reset_after(int cls);

/* The rule each class of boundary belongs to (GS_CLASSES), for
** GRAPHSHIM_TEST_DROP_RULE; GS_RULE_NONE: none. */
static const unsigned char class_rule[GS_NCLASSES] = {
#define GS_CLASS_RULE(id, name, rule, doc) [GS_##id] = GS_RULE_##rule,
    GS_CLASSES(GS_CLASS_RULE)
#undef GS_CLASS_RULE
};

void gs__engine_boundary(const struct gs_call *c)
{
    struct gs_stream *s;

    if (gs__passthrough)
        return;
    if (class_rule[c->cls] != GS_RULE_NONE && GS_DROPPED(class_rule[c->cls])) {
        if (c->cls == GS_CAPTURE && c->stream != GS_NONE)
            capture_call(gs__stream_get(c->stream), c->id);
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
        if (GS_UNLIKELY(s == &gs__nomem_stream)) { /* no state of its own: every stream */
            if (c->cls != GS_CAPTURE)
                break;
            capture_call(s, c->id); /* which issues every stream's held work */
            return;
        }
        if (GS_UNLIKELY(atomic_load_explicit(&gs__xs_members, memory_order_relaxed)))
            gs__xg_member_boundary(s); /* a member's boundary ends its group */
        if (GS_UNLIKELY(!s->ready)) /* blocking or not: a stream of records and waits alone too */
            gs__stream_make_ready(s);
        gs__legacy_rule(s);
        gs__resolve(s, GS_BAIL_BOUNDARY + c->cls);
        if (c->cls == GS_SYNC)
            gs__ptds_catch_up(s);
        if (c->cls == GS_CAPTURE)
            capture_call(s, c->id);
        if (c->cls == GS_STREAM)
            stream_destroyed(s);
        return;
    default:
        break;
    }
    /* Allocation, synchronous copies, context changes, and anything unclassified:
    ** every stream. */
    gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_BOUNDARY + c->cls);
    if (c->cls == GS_CTX || c->cls == GS_MODULE || (c->cls == GS_ATTR && !c->keep_graphs))
        reset_after(c->cls);
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

static int is_begin(int id)
{
    return id == GS_ID_cuStreamBeginCapture || id == GS_ID_cuStreamBeginCapture_ptsz ||
           id == GS_ID_cuStreamBeginCapture_v2 || id == GS_ID_cuStreamBeginCapture_v2_ptsz ||
           id == GS_ID_cuStreamBeginCaptureToGraph || id == GS_ID_cuStreamBeginCaptureToGraph_ptsz;
}

/* The program's capture on s is closed: counted down once. */
static void capture_closed(struct gs_stream *s)
{
    gs__lock(&s->lock);
    if (s->app_capturing) {
        s->app_capturing_w = 0;
        atomic_fetch_sub(&gs__app_captures, 1);
    }
    gs__unlock(&s->lock);
}

/* The program's own capture: nothing is held anywhere while one is open. */
static void capture_call(struct gs_stream *s, int id)
{
    int begin = is_begin(id), end = id == GS_ID_cuStreamEndCapture || id == GS_ID_cuStreamEndCapture_ptsz;

    if (s == &gs__nomem_stream) {
        /* Its capture's end may find another state: never counted down. */
        if (begin)
            atomic_fetch_add(&gs__app_captures, 1);
        gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_APP_CAPTURE);
        return;
    }
    if (begin) {
        /* Counted first: from here on no op is held, then what is held goes out. */
        gs__lock(&s->lock);
        if (!s->app_capturing) {
            s->app_capturing_w = 1;
            atomic_fetch_add(&gs__app_captures, 1);
        }
        gs__unlock(&s->lock);
        gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_APP_CAPTURE);
    } else if (end) {
        capture_closed(s);
    }
}

void gs__engine_capture_refused(const struct gs_call *c)
{
    CUstreamCaptureStatus st;
    struct gs_stream *s;

    if (gs__passthrough || c->stream == GS_NONE || !is_begin(c->id) || GS_DROPPED(GS_RULE_CAPTURE_REFUSED))
        return;
    s = gs__stream_get(c->stream);
    if (s == &gs__nomem_stream) { /* counted at each begin */
        gs__engine_resume();
        return;
    }
    /* A second begin on a capturing stream is refused too: its capture stays. */
    if (!gs__real[GS_ID_cuStreamIsCapturing] ||
        GS_REAL(cuStreamIsCapturing)(c->stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE)
        return;
    capture_closed(s);
}

/* Destroys the graphs kept for s; with learned, also forgets its sequences, whose
** rows the report keeps, and every rule's state (rules/resolve.c's rooms).  Work
** that s holds goes out first: another thread may have begun holding since the
** boundary that led here resolved every stream.  Called locked. */
static void stream_empty(struct gs_stream *s, int learned, int reason)
{
    GS_ASSERT_LOCKED(s);
    if (s->holding)
        gs__flush(s, reason);
    gs__rooms_forget(s, learned);
    if (learned) {
        gs__staging_drop(s);
        gs__foreign_drop(s);
    }
}

static void stream_destroyed(struct gs_stream *s)
{
    if (s->kind != GS_STREAM_CREATED)
        return;
    gs__lock(&s->lock);
    stream_empty(s, 1, GS_BAIL_BOUNDARY + GS_STREAM);
    gs__stream_unready(s); /* a new stream may get the same handle */
    gs__unlock(&s->lock);
}

/* After a call of class cls (held work already resolved): a context going away
** takes every graph, sequence and private stream with it; an unloaded module may
** hand its function handles to new functions, so learned sequences and parameter
** layouts go; changed attributes or limits only need the graphs rebuilt. */
static void reset_after(int cls)
{
    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        gs__lock(&s->lock);
        stream_empty(s, cls != GS_ATTR, GS_BAIL_BOUNDARY + cls);
        if (cls == GS_CTX)
            gs__stream_unready(s);
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
    if (cls == GS_CTX)
        gs__graph_reset();
    if (cls != GS_ATTR)
        gs__layouts_reset();
}
