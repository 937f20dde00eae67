/*
** xevent.c: the doors of a group across streams (GRAPHSHIM_XSTREAM=1; the
** group itself: stream/xs.h).  An event record or wait that belongs to a group
** becomes an op of its origin's sequence (held, learned or issued as ops are);
** a member's op goes to its origin (gs__engine_xs_route); every call outside
** the narrow case ends the group first, its held ops out in program order.
**
** The narrow case: an origin O (a created stream, or the legacy stream)
** records an untimed event it recorded before and another stream then waited
** for (a fork event), or one made for the record where O learned that such
** records fork; a created stream of O's context, holding nothing of a group,
** waits on it on the thread that issues O's ops and becomes a member; members issue ops, record events
** and wait on the group's events; O waits on their records (joins).  Events
** with timing are left out: a group's graph records the program's events again
** after its launch (stream/xs.c), which would move their times; their records
** stay boundaries.  What ends a group: a member's op from another thread, a
** boundary of a member (synchronize, query, host function, destroy, a wait on
** an event outside the group), a query of an event the group recorded (its
** destroy by O's thread waits for the group's end instead), a third stream's
** wait on one where it cannot be a member, no room.  Its fork events then open
** no group again (refused), so such a program runs as it does without groups.
** Also: the program's own events, their flags and their last eager record (the
** table below).
*/
#define _GNU_SOURCE
#include "engine.h"

#include <pthread.h>

#include "../graph/key.h"
#include "../rules/resolve.h"
#include "../stream/issue.h"
#include "../rules/xgroup.h"
#include "../stream/xs.h"

/* --- Records and waits as ops -------------------------------------------------- */


/* The event op of key (on the program's stream st) through the ops' door: held,
** or issued here (*rc).  0 where the door passed it: the caller's old path. */
static int event_op(CUstream st, void *key, int len, CUresult *rc)
{
    struct gs_stream *s;
    const struct gs_key *k = key;
    int op = gs__engine_op_begin(&s, st, key, len, NULL);

    if (op == GS_OP_PASS)
        return 0;
    *rc = CUDA_SUCCESS;
    if (op == GS_OP_ISSUE) {
        *rc = k->kind == GS_OP_RECORD ? GS_APP(cuEventRecord)((CUevent)(uintptr_t)k->dst, st)
                                      : GS_APP(cuStreamWaitEvent)(st, (CUevent)(uintptr_t)k->dst, (unsigned)k->size);
        gs__engine_op_end(s, *rc);
    }
    return 1;
}

/* o, locked, enters the group's state: a body it holds goes out first (its ops
** came before), and where that leaves o holding nothing of a group, one opens. */
static void origin_enter(struct gs_stream *o, int fresh)
{
    if (o->holding == GS_HOLD_BODY)
        gs__flush(o, GS_BAIL_XSTREAM);
    gs__xs_open(o, gs__tid(), fresh);
}

int gs__engine_record(const struct gs_call *c, CUevent e, unsigned flags, CUresult *rc)
{
    struct gs_stream *x = gs__stream_get(c->stream), *o;
    unsigned char key[sizeof(struct gs_key)];
    int len, k = 0, slot, fresh;

    struct gs_stream *g = gs__xg_ev_group(e, 0);

    if (g && g != x && g != gs__xs_origin(x))
        gs__xg_group_end(g, e); /* a group's event recorded outside it: the group ends first */
    if (flags || gs__engine_capturing() || !gs__xg_ev_untimed(e, &fresh))
        return 0;
    if ((o = gs__xs_origin(x)) != NULL) {
        if (x->xs.origin_tid != gs__tid()) {
            gs__xg_group_end(o, NULL);
            return 0;
        }
        k = (int)x->xs.idx;
    } else {
        o = x;
        if (!x->xs.open && (!gs__xs_is_fork(x, e, fresh) || !gs__xg_eligible(x, NULL)))
            return 0;
    }
    gs__lock(&o->lock);
    if (k == 0)
        origin_enter(o, fresh);
    slot = o->xs.open ? gs__xs_record(o, (uint32_t)k, e) : -1;
    gs__unlock(&o->lock);
    if (slot < 0) {
        gs__xg_group_end(o, NULL);
        return 0;
    }
    gs__xg_ev_recorded(e, o, 1);
    len = gs__key_event(key, GS_OP_RECORD, e, c->stream, 0, (uint32_t)slot);
    return event_op(c->stream, key, len, rc);
}

/* Where y may wait on e as an op of o's group: its index there (0: the origin),
** a new member's, or -1 (*ev: the event's index in the group, -1: not in it). */
static int wait_member(struct gs_stream *o, struct gs_stream *y, CUevent e, int *ev)
{
    struct gs_stream *yo = gs__xs_origin(y);
    int k = -1;

    gs__lock(&o->lock);
    *ev = o->xs.open && o->xs.tid == gs__tid() ? gs__xs_event(o, e) : -1;
    if (*ev >= 0 && (y == o || yo == o))
        k = y == o ? 0 : (int)y->xs.idx;
    gs__unlock(&o->lock);
    if (k >= 0 || *ev < 0 || yo || !gs__xg_eligible(y, o))
        return k;
    gs__resolve(y, GS_BAIL_BOUNDARY + GS_EVENT); /* its own held work out, as at its wait without groups */
    gs__lock(&o->lock);
    if (o->xs.open && (*ev = gs__xs_event(o, e)) >= 0)
        k = gs__xs_add_member(o, y);
    gs__unlock(&o->lock);
    return k;
}

int gs__engine_wait(const struct gs_call *c, CUevent e, unsigned flags, CUresult *rc)
{
    struct gs_stream *y = gs__stream_get(c->stream), *o;
    unsigned char key[sizeof(struct gs_key)];
    int k, ev;

    /* A wait on an event whose record a group holds, that cannot be an op of
    ** that group (flags, another thread, a stream that cannot join), ends the
    ** group first: the real wait must find the record issued. */
    o = gs__xg_ev_group(e, 0);
    if (flags || gs__engine_capturing()) {
        if (o)
            gs__xg_group_end(o, e);
        return 0;
    }
    if (!o) {
        gs__xg_fork_learn(y, e);
        return 0;
    }
    if ((k = wait_member(o, y, e, &ev)) < 0) {
        gs__xg_group_end(o, e); /* ends it only where e's record is in it */
        return 0;
    }
    gs__lock(&o->lock);
    if (o->xs.open)
        gs__xs_waited(o, (uint32_t)k, ev);
    gs__unlock(&o->lock);
    return event_op(c->stream, key, gs__key_event(key, GS_OP_WAIT, e, c->stream, flags, (uint32_t)ev), rc);
}

void gs__engine_recorded(CUstream st, CUevent e) { gs__xg_ev_recorded(e, gs__stream_get(st), 0); }
void gs__engine_event_created(CUevent e, unsigned flags) { gs__xg_event_created(e, flags); }
int gs__engine_event_used(CUevent e, int gone) { return gs__xg_event_used(e, gone); }
