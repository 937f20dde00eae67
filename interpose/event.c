/*
** event.c: the shims of event records and waits, and of the event calls a
** group across streams tracks (create, query, destroy).  With
** GRAPHSHIM_XSTREAM=0 a record or wait is a boundary, as a GS_HOOK row's
** wrapper makes it (shims.c), and the others go straight to the driver; with 1
** the engine may take a record or wait as an op of a group
** (policy/entry/xevent.c).
*/
#include "interpose.h"
#include "../policy/base/config.h"
#include "../policy/base/trace.h"
#include "../policy/entry/engine.h"
#include "../policy/entry/guard.h"

enum { REC, WAIT };

/* The real call of row id. */
static CUresult real(int id, CUevent e, CUstream h, unsigned f)
{
    switch (id) {
    case GS_ID_cuEventRecord: return GS_APP(cuEventRecord)(e, h);
    case GS_ID_cuEventRecord_ptsz: return GS_APP(cuEventRecord_ptsz)(e, h);
    case GS_ID_cuEventRecordWithFlags: return GS_APP(cuEventRecordWithFlags)(e, h, f);
    case GS_ID_cuEventRecordWithFlags_ptsz: return GS_APP(cuEventRecordWithFlags_ptsz)(e, h, f);
    case GS_ID_cuStreamWaitEvent: return GS_APP(cuStreamWaitEvent)(h, e, f);
    default: return GS_APP(cuStreamWaitEvent_ptsz)(h, e, f);
    }
}

/* A record or wait (what) through row id: a boundary, or an op of a group. */
static CUresult door(int id, int pt, int what, CUevent e, CUstream h, unsigned f)
{
    struct gs_call c = {id, GS_EVENT, gs__rows[id].abi, gs__norm_stream(h, pt), 0};
    CUresult rc;

    gs__ensure_init();
    if (GS_UNLIKELY(!gs__real[id]))
        return CUDA_ERROR_NOT_FOUND;
    if (GS_UNLIKELY(gs__tls.depth))
        return real(id, e, h, f);
    if (GS_UNLIKELY(gs__cfg.xstream) && !gs__passthrough &&
        (what == REC ? gs__engine_record(&c, e, f, &rc) : gs__engine_wait(&c, e, f, &rc))) {
        atomic_fetch_add_explicit(&gs__calls_by_class[GS_EVENT], 1, memory_order_relaxed);
        if (gs__trace_on)
            gs__trace_line(gs__tid(), c.abi, c.stream, rc, NULL, NULL, NULL, "event-op");
        return rc;
    }
    gs__guard_before(&c);
    rc = real(id, e, h, f);
    gs__guard_after(&c, rc);
    if (GS_UNLIKELY(gs__cfg.xstream) && what == REC && rc == CUDA_SUCCESS && !gs__passthrough)
        gs__engine_recorded(c.stream, e);
    return rc;
}

GS_EXPORT CUresult cuEventRecord(CUevent e, CUstream h) { return door(GS_ID_cuEventRecord, 0, REC, e, h, 0); }
GS_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream h) { return door(GS_ID_cuEventRecord_ptsz, 1, REC, e, h, 0); }
GS_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream h, unsigned int f)
{
    return door(GS_ID_cuEventRecordWithFlags, 0, REC, e, h, f);
}
GS_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream h, unsigned int f)
{
    return door(GS_ID_cuEventRecordWithFlags_ptsz, 1, REC, e, h, f);
}
GS_EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int f)
{
    return door(GS_ID_cuStreamWaitEvent, 0, WAIT, e, h, f);
}
GS_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned int f)
{
    return door(GS_ID_cuStreamWaitEvent_ptsz, 1, WAIT, e, h, f);
}

/* Create, query, destroy: harmless queries but to a group (the engine's). */
static int tracked(int id)
{
    gs__ensure_init();
    return !gs__tls.depth && gs__cfg.xstream && !gs__passthrough && gs__real[id];
}

GS_EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    CUresult rc;

    if (!tracked(GS_ID_cuEventCreate))
        return gs__real[GS_ID_cuEventCreate] ? GS_APP(cuEventCreate)(e, flags) : CUDA_ERROR_NOT_FOUND;
    if ((rc = GS_APP(cuEventCreate)(e, flags)) == CUDA_SUCCESS)
        gs__engine_event_created(*e, flags);
    return rc;
}

GS_EXPORT CUresult cuEventQuery(CUevent e)
{
    if (tracked(GS_ID_cuEventQuery))
        gs__engine_event_used(e, 0);
    return gs__real[GS_ID_cuEventQuery] ? GS_APP(cuEventQuery)(e) : CUDA_ERROR_NOT_FOUND;
}

GS_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    if (tracked(GS_ID_cuEventDestroy_v2) && gs__engine_event_used(e, 1))
        return CUDA_SUCCESS; /* destroyed once the group that recorded it ends */
    return gs__real[GS_ID_cuEventDestroy_v2] ? GS_APP(cuEventDestroy_v2)(e) : CUDA_ERROR_NOT_FOUND;
}
