/*
** step.c: the step (see step.h): the search for a period in a sequence, once
** per new sequence, and where the stream's segments end while it has one.
**
** The search is the prefix function of Knuth, Morris and Pratt over the
** sequence's ops, compared by shape (as the tree compares them): for each
** prefix of the ops, the longest proper prefix that is also its suffix, whose
** length gives the prefix's smallest period; the longest prefix that holds its
** period twice or more is the periodic run.  It runs once from the sequence's
** first op (a loop from the segment's start) and once from its last op
** backwards (a loop that ends at the synchronize, after a head of other work),
** in time linear in the sequence's length (each op compared about twice).  Of
** the multiples of the run's shape period, the first at which at least half of
** the ops repeat byte for byte (sampled first, then counted in full) is the
** step: layers of one shape on other weights are no step, an optimizer's step
** with a changed scalar or two is.
*/
#define GS_OWNS_STEP /* this file writes its rooms (state.h, GS_ROOM) */
#define _GNU_SOURCE
#include "step.h"

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../base/log.h"
#include "../graph/learner.h"

/* Sequences longer than this are not searched (a periodic run needs two
** periods: steps of up to half of it). */
#define GS_STEP_SCAN_MAX (1u << 14)
/* Byte compares an op of a sequence that trying the multiples of its shape
** period may take. */
#define GS_STEP_BUDGET 4
/* Ops compared byte for byte at a candidate period before it is counted in full. */
#define GS_STEP_SAMPLES 64
/* Units in a row that end at another sequence than the step's, after which
** the steps end. */
#define GS_STEP_MISSES 2

/* Are a and b the same op as the tree compares them (all but their arguments)? */
static int shape_same(const struct gs_node *a, const struct gs_node *b)
{
    return a->len == b->len && a->cmp == b->cmp && gs__key_shape_eq(&a->key, &b->key, a->len, a->cmp);
}

/* Are a and b the same op byte for byte, arguments included? */
static int bytes_same(const struct gs_node *a, const struct gs_node *b)
{
    return a->len == b->len && memcmp(&a->key, &b->key, a->len) == 0;
}

/* The ops of a sequence of d, in one direction: from its first op (rev 0) or
** from its last one backwards (rev 1). */
struct ops {
    const struct gs_node **path; /* path[i]: the op at depth i + 1 */
    uint32_t d;
    int rev;
};

static inline const struct gs_node *op_at(const struct ops *o, uint32_t i)
{
    return o->path[o->rev ? o->d - 1 - i : i];
}

/* The longest run of ops from the start (in o's direction) that holds its
** smallest shape period twice or more: its length (0: none), the period in
** *per.  pi: d entries of scratch. */
static uint32_t periodic_run(const struct ops *o, uint32_t *pi, uint32_t *per)
{
    uint32_t run = 0;

    pi[0] = 0;
    for (uint32_t i = 1; i < o->d; i++) {
        uint32_t k = pi[i - 1];
        const struct gs_node *x = op_at(o, i);

        while (k && !shape_same(x, op_at(o, k)))
            k = pi[k - 1];
        if (shape_same(x, op_at(o, k)))
            k++;
        pi[i] = k;
        if (i + 1 >= 2 * (i + 1 - k)) {
            run = i + 1;
            *per = i + 1 - k;
        }
    }
    return run;
}

/* Do at least half of the run's ops (of `run`, from the start in o's
** direction) equal the op q later byte for byte?  Counted at `samples` of
** them spread by a multiplicative hash (an even stride would fall on the same
** places of every period, those with a changing argument or none of them), or
** at all of them (samples 0, or no fewer ops than samples); stopped as soon as
** more than half differ.  Each compare is taken from *budget.  2 where all of
** them do (counted at all), 1 where half do, 0 where fewer do. */
static int repeats(const struct ops *o, uint32_t run, uint32_t q, uint32_t samples, int64_t *budget)
{
    uint32_t n = run - q, eq = 0, ne = 0, all = samples && n > samples ? samples : n;

    for (uint32_t k = 0; k < all; k++) {
        uint32_t i = all == n ? k : (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull >> 32) % n);
        --*budget;
        if (bytes_same(op_at(o, i), op_at(o, i + q)))
            eq++;
        else if (2 * ++ne > all)
            return 0;
    }
    return eq == n ? 2 : 1;
}

/* The step of the ops in o's direction: the length of the periodic run it
** covers (0: none), its unit in *unit.  A run that repeats byte for byte with
** a period loop bodies find is theirs (stream/body.h): they hold K periods a
** graph, and know when a host waits for their loop.  The multiples of the
** shape period are tried with GS_STEP_BUDGET compares an op of the sequence
** at most: the search stays linear in its length (one kernel on other
** buffers thousands of times has thousands of multiples, none a step). */
static uint32_t step_of(const struct ops *o, uint32_t *pi, uint32_t *unit)
{
    uint32_t per = 0, run = periodic_run(o, pi, &per);
    int64_t budget = (int64_t)GS_STEP_BUDGET * o->d;
    int same;

    if (!run || 2 * run < o->d)
        return 0; /* no period, or over too little of the sequence */
    for (uint32_t q = per; 2 * q <= run && budget > 0; q += per) {
        if (!repeats(o, run, q, GS_STEP_SAMPLES, &budget) || !(same = repeats(o, run, q, 0, &budget)))
            continue;
        if (same == 2 && q <= GS_BODY_MAX_PERIOD && gs__cfg.body_ops)
            return 0;
        *unit = q * ((GS_STEP_MIN_OPS + q - 1) / q);
        return run >= 2 * *unit ? run : 0;
    }
    return 0;
}

int gs__step_period(const struct gs_node *t, uint32_t *unit, uint32_t *off)
{
    uint32_t d = t->depth, fwd_unit = 0, rev_unit = 0, fwd, rev;
    const struct gs_node **path;
    uint32_t *pi;

    if (d < 2 * GS_STEP_MIN_OPS || d > GS_STEP_SCAN_MAX)
        return 0;
    path = malloc(d * sizeof *path);
    pi = malloc(d * sizeof *pi);
    if (!path || !pi) {
        free(path), free(pi);
        return 0;
    }
    for (const struct gs_node *n = t; n && n->depth; n = n->parent)
        path[n->depth - 1] = n;
    fwd = step_of(&(struct ops){path, d, 0}, pi, &fwd_unit);
    rev = step_of(&(struct ops){path, d, 1}, pi, &rev_unit);
    free(path), free(pi);
    if (!fwd && !rev)
        return 0;
    if (fwd >= rev) { /* steps from the segment's start */
        *unit = fwd_unit;
        *off = 0;
    } else { /* steps that end at the segment's end, after a head */
        *unit = rev_unit;
        *off = d - rev / rev_unit * rev_unit;
    }
    return 1;
}

/* --- The stream's steps -------------------------------------------------------- */

/* The steps end: segments end where the program's calls end them. */
static void steps_end(struct gs_stream *s)
{
    s->step_w.unit = 0;
    s->step_w.off = 0;
    s->step_w.unit_node = NULL;
    s->step_w.misses = 0;
}

/* The period of t, from the sequences s searched (the search, where t ended its
** first segment, unless body_found: loop bodies take it): 1 and its unit and
** head in *f, or 0. */
static int found(struct gs_stream *s, const struct gs_node *t, int body_found, struct gs_step_found *f)
{
    struct gs_step *st = &s->step_w;

    for (uint32_t i = 0; i < GS_STEP_FOUND; i++)
        if (st->found[i].node == t && st->found[i].depth == t->depth) {
            *f = st->found[i];
            return 1;
        }
    if (t->seen != 1 || body_found || !gs__step_period(t, &f->unit, &f->off))
        return 0; /* searched before, or the bodies' */
    f->node = t;
    f->depth = t->depth;
    st->found[st->nfound++ % GS_STEP_FOUND] = *f;
    gs__debug("stream %d: a %u-op sequence repeats a step: segments end every %u ops, after %u", s->id, t->depth,
              f->unit, f->off);
    return 1;
}

void gs__step_segment_ended(struct gs_stream *s, const struct gs_node *t, int reason)
{
    struct gs_step *st = &s->step_w;
    struct gs_step_found f;

    GS_ASSERT_LOCKED(s);
    if (reason == GS_BAIL_STEP) {
        /* A unit's end: the steps go on while units end the sequence the first
        ** did; one that did not (a step broken once) is forgiven, two in a row
        ** end the steps. */
        if (!st->head && st->unit_node && st->unit_node != t) {
            if (++st->misses >= GS_STEP_MISSES) {
                gs__debug("stream %d: steps ended at other sequences twice: the steps end", s->id);
                steps_end(s);
            }
        } else if (!st->head) {
            st->unit_node = t;
            st->misses = 0;
        }
        st->head = 0;
    } else {
        /* A loop body found in the segment is the bodies' (they hold K periods a
        ** graph); where they stopped holding because the host waits for held
        ** loops (wd_off), no step is held either. */
        int body_found = s->body.clock != st->body_mark || s->body.active || s->body.wd_off;

        st->body_mark = s->body.clock; /* bodies.clock counts the bodies found */
        if (gs__cfg.steps && t && t->depth && s->seg.clean && !s->xs.open && found(s, t, body_found, &f) &&
            (f.unit != st->unit || f.off != st->off)) {
            st->unit = f.unit;
            st->off = f.off;
            st->unit_node = NULL;
            st->misses = 0;
        }
        st->head = st->off != 0;
    }
    s->step_at_w = !st->unit ? 0 : st->head ? st->off : st->unit;
}

void gs__step_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    steps_end(s);
    memset(s->step_w.found, 0, sizeof s->step_w.found);
    s->step_at_w = 0;
}
