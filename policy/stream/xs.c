/*
** xs.c: a group across streams, its state's one writer (xs.h): members, the
** events recorded in it, joins, fork events, and the bridges around its graph
** launch.
*/
#define _GNU_SOURCE
#define GS_OWNS_XS /* this file writes its rooms (state.h, GS_ROOM) */
#include "xs.h"

#include "../base/assert.h"
#include "../base/log.h"

#include <stdlib.h>

atomic_int gs__xs_members;

void gs__xs_open(struct gs_stream *s, int tid, int fresh)
{
    GS_ASSERT_LOCKED(s);
    if (s->xs.open)
        return;
    s->xs_w.open = 1;
    s->xs_w.tid = tid;
    s->xs_w.fresh_open = fresh;
    s->xs_w.nmembers = 0;
    s->xs_w.nev = 0;
    s->xs_w.mops[0] = s->xs_w.joined[0] = 0;
    s->xs_w.groups++;
}

int gs__xs_add_member(struct gs_stream *o, struct gs_stream *m)
{
    GS_ASSERT_LOCKED(o);
    uint32_t k = o->xs.nmembers + 1;

    if (!o->xs.open || k > GS_XS_MEMBERS)
        return -1;
    o->xs_w.nmembers = k;
    o->xs_w.mem[k] = m;
    o->xs_w.mops[k] = o->xs_w.joined[k] = 0;
    m->xs_w.idx = k;
    m->xs_w.origin_tid = o->xs.tid;
    __atomic_store_n(&m->xs_w.origin, o, __ATOMIC_RELEASE);
    atomic_fetch_add(&gs__xs_members, 1);
    if (k + 1 > o->xs.streams_max)
        o->xs_w.streams_max = k + 1;
    return (int)k;
}

void gs__xs_member_op(struct gs_stream *o, uint32_t k)
{
    GS_ASSERT_LOCKED(o);
    o->xs_w.mops[k]++;
}

int gs__xs_record(struct gs_stream *o, uint32_t k, CUevent e)
{
    GS_ASSERT_LOCKED(o);
    int i = gs__xs_event(o, e);

    if (i < 0)
        i = gs__xs_event(o, NULL); /* a slot an event destroyed freed */
    if (i < 0) {
        if (o->xs.nev == GS_XS_EVENTS)
            return -1;
        i = (int)o->xs_w.nev++;
    }
    o->xs_w.ev[i] = e;
    o->xs_w.ev_by[i] = k;
    o->xs_w.ev_mops[i] = o->xs.mops[k] + (k != 0); /* a member's record is its op too, counted as it goes
                                                    ** to the origin (entry/xevent.c's route) */
    return i;
}

int gs__xs_defer_destroy(struct gs_stream *o, CUevent e)
{
    GS_ASSERT_LOCKED(o);
    int i = gs__xs_event(o, e);

    if (i < 0)
        return -1;
    if (o->xs.ndying == o->xs.dying_cap) {
        uint32_t cap = o->xs.dying_cap ? 2 * o->xs.dying_cap : 16;
        CUevent *d = realloc(o->xs_w.dying, cap * sizeof *d);
        if (!d)
            return -1;
        o->xs_w.dying = d;
        o->xs_w.dying_cap = cap;
    }
    o->xs_w.dying[o->xs_w.ndying++] = e;
    o->xs_w.ev[i] = NULL;
    return 0;
}

int gs__xs_event(const struct gs_stream *o, CUevent e)
{
    for (uint32_t i = 0; i < o->xs.nev; i++)
        if (o->xs.ev[i] == e)
            return (int)i;
    return -1;
}

void gs__xs_waited(struct gs_stream *o, uint32_t k, int ev)
{
    GS_ASSERT_LOCKED(o);
    uint32_t by = o->xs.ev_by[ev];

    if (k == 0 && by != 0 && o->xs.ev_mops[ev] > o->xs.joined[by])
        o->xs_w.joined[by] = o->xs.ev_mops[ev];
}

int gs__xs_joined(const struct gs_stream *o)
{
    for (uint32_t k = 1; k <= o->xs.nmembers; k++)
        if (o->xs.joined[k] != o->xs.mops[k])
            return 0;
    return 1;
}

CUstream gs__xs_stream(const struct gs_stream *o, uint32_t k)
{
    return k && k <= o->xs.nmembers ? o->xs.mem[k]->handle : o->handle;
}

/* --- Fork events ------------------------------------------------------------ */

static int fork_at(const struct gs_stream *s, CUevent e)
{
    for (uint32_t i = 0; i < s->xs.nforks; i++)
        if (s->xs.forks[i] == e)
            return (int)i;
    return -1;
}

void gs__xs_fork_learn(struct gs_stream *s, CUevent e, int fresh)
{
    GS_ASSERT_LOCKED(s);
    if (fresh)
        s->xs_w.fresh_fork = 1;
    if (fork_at(s, e) >= 0 || s->xs.nforks == GS_XS_FORKS)
        return;
    s->xs_w.refused[s->xs.nforks] = 0;
    s->xs_w.forks[s->xs_w.nforks++] = e;
}

int gs__xs_is_fork(const struct gs_stream *s, CUevent e, int fresh)
{
    /* A new event's handle says nothing: the driver gives a destroyed one's again. */
    if (fresh)
        return s->xs.fresh_fork && !s->xs.fresh_refused;
    int i = fork_at(s, e);
    return i >= 0 && !s->xs.refused[i];
}

void gs__xs_refuse(struct gs_stream *o)
{
    GS_ASSERT_LOCKED(o);
    if (o->xs.fresh_open)
        o->xs_w.fresh_refused = 1;
    for (uint32_t i = 0; i < o->xs.nev; i++) {
        int f = fork_at(o, o->xs.ev[i]); /* -1 for a freed slot: no fork is NULL */
        if (f >= 0 && o->xs.ev_by[i] == 0)
            o->xs_w.refused[f] = 1;
    }
}

/* --- Bridges ------------------------------------------------------------------ */

/* Graphshim's event k of o (0: after the launch; k: before it, member k). */
static CUevent bridge(struct gs_stream *o, uint32_t k)
{
    if (!o->xs.bridge[k] && GS_REAL(cuEventCreate)(&o->xs_w.bridge[k], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        o->xs_w.bridge[k] = NULL;
    return o->xs.bridge[k];
}

/* Waits of streams w[0..n) for what stream r issued so far, by one record of
** graphshim's event k; where no event can be made or recorded, or a wait
** fails, the host waits for r. */
static void order_after(struct gs_stream *o, uint32_t k, CUstream r, const CUstream *w, uint32_t n)
{
    CUevent e = bridge(o, k);
    uint32_t i = 0;

    if (e && GS_REAL(cuEventRecord)(e, r) == CUDA_SUCCESS)
        while (i < n && GS_REAL(cuStreamWaitEvent)(w[i], e, 0) == CUDA_SUCCESS)
            i++;
    if (i < n && GS_REAL(cuStreamSynchronize)(r) != CUDA_SUCCESS)
        gs__warn("a stream of a group could not be ordered before another (its synchronize failed)");
}

void gs__xs_bridge_before(struct gs_stream *o, CUstream st)
{
    GS_ASSERT_LOCKED(o);
    if (GS_DROPPED(GS_RULE_XS_BRIDGE))
        return;
    for (uint32_t k = 1; k <= o->xs.nmembers; k++)
        order_after(o, k, gs__xs_stream(o, k), &st, 1);
}

/* The program's events were recorded inside the graph's work: recorded again on
** st after it, each completes once the graph has run (the group's last record
** of it came before the graph's end), and answers queries, synchronizes and
** later waits as if its record had run eagerly.  Untimed events only join a
** group (entry/xevent.c): a later record changes no time the program reads. */
void gs__xs_bridge_after(struct gs_stream *o, CUstream st)
{
    GS_ASSERT_LOCKED(o);
    int lost = 0;
    for (uint32_t i = 0; i < o->xs.nev; i++) {
        uint32_t by = o->xs.ev_by[i];
        CUstream on = GS_DROPPED(GS_RULE_XS_RERECORD) && by ? gs__xs_stream(o, by) : st;
        if (o->xs.ev[i]) /* not one the program destroyed: no one can ask it */
            lost |= GS_REAL(cuEventRecord)(o->xs.ev[i], on) != CUDA_SUCCESS;
    }
    /* A record that fails leaves the event at its last record, which may
    ** complete before the graph: the host waits for the graph instead, so that
    ** what the event answers, and every later wait on it, comes after it. */
    if (lost && GS_REAL(cuStreamSynchronize)(st) != CUDA_SUCCESS)
        gs__warn("a group's event could not be recorded after its graph, nor the graph waited for");
    if (GS_DROPPED(GS_RULE_XS_BRIDGE))
        return;
    CUstream members[GS_XS_MEMBERS];
    for (uint32_t k = 1; k <= o->xs.nmembers; k++)
        members[k - 1] = gs__xs_stream(o, k);
    order_after(o, 0, st, members, o->xs.nmembers);
}

uint32_t gs__xs_event_ops(const struct gs_node *t, uint32_t from)
{
    uint32_t n = 0;

    for (const struct gs_node *x = t; x && x->depth > from; x = x->parent)
        n += x->key.kind >= GS_OP_RECORD;
    return n;
}

/* --- The end --------------------------------------------------------------------- */

void gs__xs_segment_end(struct gs_stream *o)
{
    GS_ASSERT_LOCKED(o);
    if (!o->xs.open)
        return;
    if (!gs__xs_joined(o))
        gs__xs_refuse(o);
    for (uint32_t k = 1; k <= o->xs.nmembers; k++) {
        __atomic_store_n(&o->xs_w.mem[k]->xs_w.origin, NULL, __ATOMIC_RELEASE);
        atomic_fetch_sub(&gs__xs_members, 1);
    }
    o->xs_w.nmembers = 0;
    o->xs_w.nev = 0;
    o->xs_w.open = 0;
    /* Their records and waits went out (the segment's end follows its issue). */
    for (uint32_t i = 0; i < o->xs.ndying; i++)
        GS_IGNORE(GS_REAL(cuEventDestroy_v2)(o->xs.dying[i])); /* the program was told it went */
    o->xs_w.ndying = 0;
}

void gs__xs_forget(struct gs_stream *o, int learned)
{
    GS_ASSERT_LOCKED(o);
    gs__xs_segment_end(o);
    if (!learned)
        return;
    o->xs_w.nforks = 0;
    o->xs_w.fresh_fork = o->xs_w.fresh_refused = 0;
    free(o->xs_w.dying);
    o->xs_w.dying = NULL;
    o->xs_w.dying_cap = 0;
    for (uint32_t k = 0; k <= GS_XS_MEMBERS; k++)
        if (o->xs.bridge[k]) {
            GS_IGNORE(GS_REAL(cuEventDestroy_v2)(o->xs.bridge[k])); /* an event not destroyed leaks */
            o->xs_w.bridge[k] = NULL;
        }
}
