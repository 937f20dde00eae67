/*
** xgroup.c: the end of a group across streams (GRAPHSHIM_XSTREAM=1;
** entry/xevent.c says what a group is), and what decides it: the program's
** untimed events (their last record, their group), a member's op going to its
** origin, a member's boundary, fork events learned.
*/
#define _GNU_SOURCE
#include "xgroup.h"

#include <pthread.h>

#include "../graph/key.h"
#include "resolve.h"

/* --- The program's events ----------------------------------------------------- */

/* Untimed events the program created (by handle), the stream that last
** recorded each outside a group and on which thread, and the origin whose group
** recorded it last (NULL: none, or it ended).  A full table tracks no more:
** their records stay boundaries. */
#define EV_TABLE 4096
static struct ev {
    CUevent e;
    struct gs_stream *rec, *grp;
    int tid;
    uint8_t used, first; /* recorded since it was made; the last record (rec's) was its first */
} evs[EV_TABLE];
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

/* e's entry, or where it goes (add); NULL: none.  Called with ev_lock. */
static struct ev *ev_find(CUevent e, int add)
{
    uintptr_t h = ((uintptr_t)e * 0x9E3779B97F4A7C15ull) >> 52;

    for (unsigned i = 0; i < 64; i++) {
        struct ev *v = &evs[(h + i) % EV_TABLE];
        if (v->e == e)
            return v;
        if (!v->e && add) {
            *v = (struct ev){e, NULL, NULL, 0, 0, 0};
            return v;
        }
    }
    return NULL;
}

void gs__xg_event_created(CUevent e, unsigned flags)
{
    if (!(flags & CU_EVENT_DISABLE_TIMING) || (flags & CU_EVENT_INTERPROCESS))
        return;
    pthread_mutex_lock(&ev_lock);
    ev_find(e, 1);
    pthread_mutex_unlock(&ev_lock);
}

/* The origin whose group recorded e (NULL: none); e's entry forgotten (gone). */
struct gs_stream *gs__xg_ev_group(CUevent e, int gone)
{
    struct gs_stream *o = NULL;
    struct ev *v;

    pthread_mutex_lock(&ev_lock);
    if ((v = ev_find(e, 0)) != NULL) {
        o = v->grp;
        if (gone)
            v->e = NULL; /* a tombstone: lookups probe on past it */
    }
    pthread_mutex_unlock(&ev_lock);
    return o;
}

int gs__xg_ev_untimed(CUevent e, int *fresh)
{
    pthread_mutex_lock(&ev_lock);
    struct ev *v = ev_find(e, 0);
    *fresh = v && !v->used;
    pthread_mutex_unlock(&ev_lock);
    return v != NULL;
}

/* e was recorded on s (a group's origin where grp; else outside any group). */
void gs__xg_ev_recorded(CUevent e, struct gs_stream *s, int grp)
{
    struct ev *v;

    pthread_mutex_lock(&ev_lock);
    if ((v = ev_find(e, 0)) != NULL) {
        v->grp = grp ? s : NULL;
        v->rec = grp ? NULL : s;
        v->tid = gs__tid();
        v->first = !v->used;
        v->used = 1;
    }
    pthread_mutex_unlock(&ev_lock);
}

/* --- Ending a group ---------------------------------------------------------- */

/* Ends o's group, if it still has one (and e, where not NULL, is recorded in
** it): its fork events refused, its segment ended (held ops out in program
** order, across its streams).  Called unlocked. */
void gs__xg_group_end(struct gs_stream *o, CUevent e)
{
    gs__lock(&o->lock);
    if (o->xs.open && (!e || gs__xs_event(o, e) >= 0)) {
        gs__xs_refuse(o);
        gs__resolve_locked(o, GS_BAIL_XSTREAM);
    }
    gs__unlock(&o->lock);
}

int gs__xg_event_used(CUevent e, int gone)
{
    struct gs_stream *o = gs__xg_ev_group(e, gone);
    int later = 0;

    if (!o)
        return 0;
    if (gone && !GS_DROPPED(GS_RULE_XS_DESTROY)) {
        /* No one can ask a destroyed event: its held records and waits go out
        ** with the group (on it, where the group's graph does not stand for it),
        ** then it goes. */
        gs__lock(&o->lock);
        later = o->xs.open && o->xs.tid == gs__tid() && gs__xs_defer_destroy(o, e) == 0;
        gs__unlock(&o->lock);
    }
    if (!later)
        gs__xg_group_end(o, e); /* the record it asks about goes out first */
    return later;
}

void gs__xg_member_boundary(struct gs_stream *m)
{
    struct gs_stream *o = gs__xs_origin(m);

    if (o) /* a member's boundary observes the group's held work: it goes out first */
        gs__xg_group_end(o, NULL);
}

struct gs_stream *gs__xg_route(struct gs_stream *m, void *key, int *len, const struct gs_launch **a)
{
    struct gs_stream *o = gs__xs_origin(m);

    if (!o)
        return m;
    if (m->xs.origin_tid != gs__tid()) {
        gs__xg_group_end(o, NULL); /* another thread's op: out of the narrow case */
        return m;
    }
    if (*a) {
        *len = gs__key_launch(key, *a);
        *a = NULL;
    }
    gs__lock(&o->lock);
    if (*len < 0 || gs__xs_origin(m) != o) {
        gs__unlock(&o->lock);
        gs__xg_group_end(o, NULL);
        return m;
    }
    gs__xs_member_op(o, m->xs.idx);
    ((struct gs_key *)key)->member = (uint16_t)m->xs.idx;
    gs__unlock(&o->lock);
    return o;
}

/* May s take part in a group (as its origin, or a member of o's)?  A created
** stream; as an origin the legacy stream too (PyTorch's current stream), which
** graphshim never captures itself (its capture streams are its own). */
int gs__xg_eligible(const struct gs_stream *s, const struct gs_stream *o)
{
    return (s->kind == GS_STREAM_CREATED || (!o && s->kind == GS_STREAM_LEGACY && !GS_DROPPED(GS_RULE_XS_LEGACY))) &&
           s->ready && s->usable && !s->app_capturing && !gs__xs_origin(s) &&
           (!o || (s != o && !s->xs.open && s->ctx == o->ctx && (!s->blocking || o->blocking)));
}


/* e, recorded outside any group, is waited for by y: where its record was on
** another created stream of this thread, e is that stream's fork event. */
void gs__xg_fork_learn(struct gs_stream *y, CUevent e)
{
    struct gs_stream *x = NULL;
    struct ev *v;
    int fresh = 0;

    pthread_mutex_lock(&ev_lock);
    if ((v = ev_find(e, 0)) != NULL && v->rec && v->rec != y && v->tid == gs__tid()) {
        x = v->rec;
        fresh = v->first;
    }
    pthread_mutex_unlock(&ev_lock);
    if (!x || !gs__xg_eligible(x, NULL))
        return;
    gs__lock(&x->lock);
    gs__xs_fork_learn(x, e, fresh);
    gs__unlock(&x->lock);
}

