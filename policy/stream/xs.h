/*
** xs.h: a group across streams (GRAPHSHIM_XSTREAM=1), the state of one
** (struct gs_xs, state.h) and its writer, xs.c.
**
** A group is one segment of an origin stream O that also holds the ops of
** member streams: O records a fork event E (one of its own that another stream
** waited for before, or one made for the record), a member M waits on E, issues ops, records an event that
** O waits on (the join).  All of it is one sequence of O, learned, held,
** captured and replayed as any other: the members' ops keyed with their index
** (gs_key.member), the records and waits ops of their own (GS_OP_RECORD,
** GS_OP_WAIT).  Only on the thread that issues O's ops; anything else ends the
** group (entry/xevent.c), its held ops out in the order the program issued
** them, across the streams.  Functions here are called with O locked, but
** gs__xs_route's first test.
*/
#ifndef GS_XS_H
#define GS_XS_H

#include "stream.h"

/* Streams that are members of a group now (read on every op, relaxed). */
extern atomic_int gs__xs_members;

/* Opens a group on s: its open segment holds one from now on (thread tid);
** fresh: by a record of an event never recorded before (gs__xs_is_fork). */
void gs__xs_open(struct gs_stream *s, int tid, int fresh);
/* Makes m a member of o's group: its index, or -1 where o has no room. */
int gs__xs_add_member(struct gs_stream *o, struct gs_stream *m);
/* m's origin (any thread; NULL: m is no member). */
static inline struct gs_stream *gs__xs_origin(const struct gs_stream *m)
{
    return __atomic_load_n(&m->xs.origin, __ATOMIC_ACQUIRE);
}
/* One more op of member k (0: the origin) in o's group. */
void gs__xs_member_op(struct gs_stream *o, uint32_t k);
/* Member k recorded event e in o's group: its slot (e's, or the first free
** one), or -1 (no room: the group ends). */
int gs__xs_record(struct gs_stream *o, uint32_t k, CUevent e);
/* The slot in o's group of event e's record (-1: none). */
int gs__xs_event(const struct gs_stream *o, CUevent e);
/* The program destroys e, recorded in o's group: its slot is free, and the
** driver's destroy waits for the group's end (gs__xs_segment_end), where its
** held records and waits have gone out.  0, or -1 (no memory). */
int gs__xs_defer_destroy(struct gs_stream *o, CUevent e);
/* Member k waited on e, recorded in the group: a join where k is 0. */
void gs__xs_waited(struct gs_stream *o, uint32_t k, int ev);
/* Has every member's last op been waited for by the origin? */
int gs__xs_joined(const struct gs_stream *o);
/* The stream member k of o's group issues on (k >= 1). */
CUstream gs__xs_stream(const struct gs_stream *o, uint32_t k);

/* Fork events: e, recorded on s, was waited for by another stream (learn); is it
** one whose record opens a group (not refused)?  fresh: e's record was (is) its
** first since it was made: s learns that its records of events made for them
** fork (PyTorch's Stream.wait_stream makes an event each time), and such a
** record opens a group.  Refuse: the open group's fork events open none again
** (it ended outside the narrow case), nor its fresh ones where one opened it. */
void gs__xs_fork_learn(struct gs_stream *s, CUevent e, int fresh);
int gs__xs_is_fork(const struct gs_stream *s, CUevent e, int fresh);
void gs__xs_refuse(struct gs_stream *o);

/* Around the graph launch of o's group on st: before it, each member's
** earlier work precedes it; after it, the program's events are recorded again
** on st and each member's later work follows it. */
void gs__xs_bridge_before(struct gs_stream *o, CUstream st);
void gs__xs_bridge_after(struct gs_stream *o, CUstream st);

/* The event records and waits (GS_OP_RECORD, GS_OP_WAIT) among the ops of the
** sequence ending at t past its first from: no work of the program's, not
** counted as ops in the report (ops, ops_held, ops_replayed). */
uint32_t gs__xs_event_ops(const struct gs_node *t, uint32_t from);

/* o's segment ended: the group closes (its members are members no more);
** unjoined, its fork events are refused. */
void gs__xs_segment_end(struct gs_stream *o);
/* o's learning is forgotten (destroy, context, module): its fork events and
** bridge events go. */
void gs__xs_forget(struct gs_stream *o, int learned);

#endif
