/*
** xgroup.h: the end of a group across streams and what decides it (xgroup.c;
** the group's state: stream/xs.h; its doors: entry/xevent.c).  Called
** unlocked.
*/
#ifndef GS_XGROUP_H
#define GS_XGROUP_H

#include "../../driver/ops.h"
#include "../stream/xs.h"

/* The program's events: created untimed (flags); is e one (and *fresh: never
** recorded since it was made); its group's origin (NULL: none; gone:
** forgotten); recorded on s (grp: as an op of s's group). */
void gs__xg_event_created(CUevent e, unsigned flags);
int gs__xg_ev_untimed(CUevent e, int *fresh);
struct gs_stream *gs__xg_ev_group(CUevent e, int gone);
void gs__xg_ev_recorded(CUevent e, struct gs_stream *s, int grp);
/* Ends o's group where it has one (and records e, where e is not NULL): its
** fork events refused, its segment ended, held ops out in program order. */
void gs__xg_group_end(struct gs_stream *o, CUevent e);
/* e queried or destroyed (gone): the group that recorded it ends; but for a
** destroy by the group's thread, which waits for the group's end (1: the
** driver is not to be called now). */
int gs__xg_event_used(CUevent e, int gone);
/* A member's boundary ends its group. */
void gs__xg_member_boundary(struct gs_stream *m);
/* A member's op goes to its origin: the origin, its key built (from *a, then
** NULL) and marked with the member's index; m where m is no member now. */
struct gs_stream *gs__xg_route(struct gs_stream *m, void *key, int *len, const struct gs_launch **a);
/* May s take part in a group (its origin; a member of o's)? */
int gs__xg_eligible(const struct gs_stream *s, const struct gs_stream *o);
/* e, recorded outside any group, is waited for by y: e may be a fork event. */
void gs__xg_fork_learn(struct gs_stream *y, CUevent e);

#endif
