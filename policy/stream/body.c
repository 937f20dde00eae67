/*
** body.c: loop bodies inside one segment (body.h): finding them, holding their
** ops, and sending them out as graphs of 2^j bodies.
*/
#define _GNU_SOURCE
#define GS_OWNS_BODY /* this file writes the room (state.h, GS_ROOM); body_find.c through it */
#include "body.h"

#include "replay.h"
#include "segment.h"
#include "sites.h"

#include <stdlib.h>
#include <string.h>

#include "../graph/graph_cache.h"
#include "../base/log.h"
#include "../base/nvtx.h"
#include "../graph/graph_exec.h"

/* The largest power of two k <= GRAPHSHIM_BODY_OPS / p (at least 1, at most
** 2^(GS_BODY_GROUPS-1)). */
static uint32_t bodies_per_graph(uint32_t p)
{
    uint32_t want = (uint32_t)gs__cfg.body_ops / p, k = 1;

    while (2 * k <= want && 2 * k < (1u << GS_BODY_GROUPS))
        k *= 2;
    return k;
}

static const struct gs_key *body_key(const struct gs_body_known *kb, uint32_t i)
{
    return (const struct gs_key *)(kb->keys + kb->off[i]);
}

/* Is the body the detector just found (the last `period` ops it saw) kb? */
static int is_known(const struct gs_body *b, const struct gs_body_known *kb)
{
    unsigned first = b->n - b->period;

    if (kb->p != b->period)
        return 0;
    for (uint32_t i = 0; i < kb->p; i++) {
        unsigned x = (first + i) & (GS_BODY_RING - 1);
        if (kb->klen[i] != b->len[x] || memcmp(body_key(kb, i), b->slot[x], gs__body_cmp_len(b->len[x])) != 0)
            return 0;
    }
    return 1;
}

/* Adds the figures of a body about to be forgotten to the report's rows. */
static void retire(struct gs_body *b, const struct gs_body_known *kb)
{
    b->retired_graphs += kb->graphs;
    if (!kb->graphs)
        return;
    for (uint32_t i = 0; i < b->nrows; i++)
        if (b->rows[i].period == kb->p && b->rows[i].per_graph == kb->k) {
            b->rows[i].graphs += kb->graphs;
            b->rows[i].ops_replayed += kb->ops_replayed;
            return;
        }
    if (b->nrows < GS_BODY_ROWS)
        b->rows[b->nrows++] = (struct gs_body_row){kb->p, kb->k, kb->graphs, kb->ops_replayed};
}

static void drop_graphs(struct gs_body_known *kb)
{
    for (int j = 0; j < GS_BODY_GROUPS; j++) {
        gs__graph_destroy_owned(kb->exec[j]);
        kb->exec[j] = NULL;
    }
}

/* Forgets a known body (not the active one). */
static void known_drop(struct gs_body *b, struct gs_body_known *kb)
{
    if (!kb->p)
        return;
    retire(b, kb);
    drop_graphs(kb);
    free(kb->keys);
    memset(kb, 0, sizeof *kb);
}

/* The body the detector found becomes the active one: a known one, or a new one
** in the place of the least recently used.  Returns 0 or -1. */
static int activate(struct gs_body *b)
{
    struct gs_body_known *kb = NULL;
    unsigned first = b->n - b->period;
    uint32_t total = 0;

    for (int i = 0; i < GS_BODY_KNOWN && !kb; i++)
        if (b->known[i].p && is_known(b, &b->known[i]))
            kb = &b->known[i];
    if (!kb) {
        unsigned char *keys;
        for (int i = 0; i < GS_BODY_KNOWN; i++)
            if (!kb || !b->known[i].p || (kb->p && b->known[i].last_used < kb->last_used))
                kb = &b->known[i];
        for (uint32_t i = 0; i < b->period; i++)
            total += (b->len[(first + i) & (GS_BODY_RING - 1)] + 15u) & ~15u;
        if (!(keys = aligned_alloc(16, total)))
            return -1;
        known_drop(b, kb);
        total = 0;
        for (uint32_t i = 0; i < b->period; i++) {
            unsigned x = (first + i) & (GS_BODY_RING - 1);
            kb->off[i] = total;
            kb->klen[i] = b->len[x];
            memcpy(keys + total, b->slot[x], b->len[x]);
            total += (b->len[x] + 15u) & ~15u;
        }
        kb->off[b->period] = total;
        kb->keys = keys;
        kb->p = b->period;
        kb->k = bodies_per_graph(kb->p);
    }
    kb->last_used = ++b->clock;
    b->active = kb;
    b->pos = 0;
    b->held = 0;
    return 0;
}

/* Does body kb have an op whose key is longer than GS_BODY_TREE_KEY_MAX?  Then
** its segment is left to the body, not learned by the prefix tree: a tree path
** holds a copy of every op's key, and a launch with a parameter struct of up to
** 32 KiB held on a path of a thousand of them costs copies, compares and node
** updates of megabytes per segment, where the body keeps one copy per op of its period and its
** graphs, one per set of arguments, as they are. */
static int big_keys(const struct gs_body_known *kb)
{
    for (uint32_t i = 0; i < kb->p; i++)
        if (kb->klen[i] > GS_BODY_TREE_KEY_MAX)
            return 1;
    return 0;
}

/* --- Issuing held bodies ---------------------------------------------------- */

/* Issues ops 0 .. n-1 of the active body, reps times, eagerly. */
static void issue_eager(struct gs_stream *s, CUstream st, uint32_t reps, uint32_t n)
{
    const struct gs_body_known *kb = s->body.active;
    for (uint32_t r = 0; r < reps; r++)
        for (uint32_t i = 0; i < n; i++)
            if (gs__key_issue(body_key(kb, i), st, NULL) != CUDA_SUCCESS)
                s->issue_errors++;
}

/* Issues 2^j whole bodies as one graph, capturing it first if needed; eagerly if
** no graph can be had, or if so few ops would not pay for one. */
static void issue_bodies(struct gs_stream *s, CUstream st, unsigned j)
{
    struct gs_body_known *kb = s->body.active;
    uint32_t reps = 1u << j, nops = reps * kb->p;

    if (!kb->failed && nops >= (uint32_t)gs__cfg.min_ops) {
        if (kb->exec[j] && gs__exec_stale(kb->exec[j])) {
            /* Memory it copies to or from was freed or allocated since (graph_cache.h). */
            gs__graph_destroy_owned(kb->exec[j]);
            kb->exec[j] = NULL;
            s->recaptures++;
        }
        if (!kb->exec[j]) {
            const struct gs_key *keys[GS_BODY_MAX_PERIOD];
            for (uint32_t i = 0; i < kb->p; i++)
                keys[i] = body_key(kb, i);
            gs__nvtx_begin(GS_NVTX_CAPTURE, nops);
            int cap = gs__graph_capture_keys(&s->graphs, keys, kb->p, reps, &kb->exec[j]);
            gs__nvtx_end();
            if (cap != 0 && cap != GS_CAPTURE_BUSY) {
                gs__debug("graph of %u bodies of %u ops failed; this body runs eagerly", reps, kb->p);
                kb->failed = 1;
            }
        }
        if (kb->exec[j] && gs__replay(s, kb->exec[j], st, GS_NVTX_BODY, nops) == GS_REPLAYED) {
            kb->graphs++;
            kb->ops_replayed += nops;
            return;
        }
        if (kb->exec[j]) { /* its launch failed: the ops go out eagerly, now and from now on */
            kb->failed = 1;
            s->bails[GS_BAIL_GRAPH_FAILED]++;
        }
    }
    issue_eager(s, st, reps, kb->p);
}

/* Issues the held ops, in order: the whole bodies as graphs of 2^j bodies, largest
** first, then the ops of the body begun; where s's context cannot be made
** current, none (they would go to another context), counted as issue errors.
** Stops holding. */
static void issue_held(struct gs_stream *s)
{
    struct gs_body *b = &s->body_w;
    uint32_t whole;
    CUstream st;
    CUcontext prev;

    if (!b->held)
        return;
    whole = b->held / b->active->p;
    st = gs__issue_stream(s);
    if (gs__enter_ctx(s, &prev) != 0) {
        s->issue_errors += b->held;
    } else {
        for (int j = GS_BODY_GROUPS - 1; j >= 0; j--)
            if (whole & (1u << j))
                issue_bodies(s, st, (unsigned)j);
        issue_eager(s, st, 1, b->held - whole * b->active->p);
        gs__issued_on(s, st);
        gs__leave_ctx(s, prev);
    }
    b->held = 0;
    b->pos = 0;
    gs__seg_held_out(s);
}

/* The watchdog and loop bodies, per stream (a loop whose pointers move is a
** new body each time, so a body's own count would start anew).  A hit is
** forgiven where a body then runs a whole loop free of hits: the second call of
** the program's that issues a body's held ops (its loop ended, a boundary, a
** bail other than the watchdog's) with no hit between.  A host that waits for a
** body once a loop hits again before that.  Bodies are set aside for good on the
** stream after two hits in a row, or where hits came in one loop of
** GS_WD_LOOPS_PER_HIT or fewer, three or more of them (a host that waits every
** few loops); rare stalls of a descheduled thread never add up to that. */
#define GS_WD_LOOPS_PER_HIT 32
static void wd_clean(struct gs_body *b)
{
    if (!b->active)
        return;
    b->wd_loops++;
    if (!b->wd_loop)
        b->wd_row = 0;
    b->wd_loop = 0;
}

/* --- The engine's calls --------------------------------------------------------- */

int gs__body_pass(struct gs_stream *s)
{
    struct gs_body *b = &s->body_w;

    if (b->active || !b->rest || b->wd_off)
        return 0;
    b->rest--; /* as gs__body_op() counts an op while the search rests */
    return 1;
}

int gs__body_op(struct gs_stream *s, const void *key, uint32_t len)
{
    struct gs_body *b = &s->body_w;
    struct gs_body_known *kb = b->active;

    if (kb) {
        if (kb->klen[b->pos] == len && memcmp(body_key(kb, b->pos), key, gs__body_cmp_len(len)) == 0) {
            if (!b->held)
                gs__seg_hold_body(s);
            b->held++;
            s->ops_held++;
            if (++b->pos == kb->p) {
                b->pos = 0;
                if (b->held == kb->k * kb->p)
                    issue_held(s); /* holding goes on with the next op that follows the body */
            }
            return 1;
        }
        /* The loop ended: what it holds goes out, and the body is kept for when
        ** it comes back. */
        wd_clean(b);
        if (b->held) {
            gs__site_bail(s, GS_BAIL_BODY_END);
            gs__nvtx_begin(GS_NVTX_BAIL + GS_BAIL_BODY_END, b->held);
            issue_held(s);
            gs__nvtx_end();
            s->bails[GS_BAIL_BODY_END]++;
        }
        b->active = NULL;
        gs__body_detect_reset(b);
    }
    if (((const struct gs_key *)key)->kind == GS_OP_H2D_PAGEABLE || b->wd_off) {
        gs__body_detect_reset(b); /* its source is read at call time: never held in a body */
        return 0;
    }
    if (b->rest) { /* no loop for long: the search rests */
        b->rest--;
        return 0;
    }
    if (gs__body_detect(b, key, len) && activate(b) == 0) {
        gs__body_detect_reset(b);
        b->quiet = b->rest_len = 0;
        if (big_keys(b->active) && !GS_DROPPED(GS_RULE_BIG_BODY))
            gs__seg_unlearned(s);
    } else if (++b->quiet >= GS_BODY_QUIET) {
        /* Work without loops pays for the search at every launch: rest, longer
        ** each time nothing is found in between. */
        b->rest_len = b->rest_len ? (b->rest_len < GS_BODY_REST_MAX ? 2 * b->rest_len : GS_BODY_REST_MAX)
                                  : GS_BODY_QUIET;
        b->rest = b->rest_len;
        b->quiet = 0;
        gs__body_detect_reset(b);
    }
    return 0;
}

void gs__body_failed(struct gs_stream *s)
{
    struct gs_body *b = &s->body_w;

    /* Held ops returned success and are not this op; a body just found ends
    ** with it. */
    if (b->active && !b->held)
        b->active = NULL;
    gs__body_detect_reset(b);
}

void gs__body_flush(struct gs_stream *s, int watchdog)
{
    if (!watchdog)
        wd_clean(&s->body_w);
    issue_held(s);
}

void gs__body_segment_end(struct gs_stream *s)
{
    wd_clean(&s->body_w);
    issue_held(s);
    gs__body_detect_reset(&s->body_w);
}

void gs__body_watchdog(struct gs_stream *s)
{
    struct gs_body *b = &s->body_w;

    if (b->active) {
        b->wd_loop = 1;
        b->wd_row++;
        b->wd_hits++;
        if (b->wd_row >= GS_WATCHDOG_HITS ||
            (b->wd_hits >= GS_WATCHDOG_HITS + 1 && b->wd_hits * GS_WD_LOOPS_PER_HIT >= b->wd_loops))
            b->wd_off = 1;
    }
    b->active = NULL;
    gs__body_detect_reset(b);
}

void gs__body_forget(struct gs_stream *s, int learned)
{
    struct gs_body *b = &s->body_w;

    issue_held(s);
    for (int i = 0; i < GS_BODY_KNOWN; i++) {
        if (learned)
            known_drop(b, &b->known[i]);
        else
            drop_graphs(&b->known[i]);
    }
    if (learned) {
        b->active = NULL;
        gs__body_detect_reset(b);
    }
}

void gs__body_rows(const struct gs_stream *s, void (*fn)(void *, const struct gs_body_row *), void *arg)
{
    const struct gs_body *b = &s->body;

    for (uint32_t i = 0; i < b->nrows; i++)
        fn(arg, &b->rows[i]);
    for (int i = 0; i < GS_BODY_KNOWN; i++) {
        const struct gs_body_known *kb = &b->known[i];
        if (kb->p && kb->graphs)
            fn(arg, &(struct gs_body_row){kb->p, kb->k, kb->graphs, kb->ops_replayed});
    }
}

uint64_t gs__body_graphs(const struct gs_stream *s)
{
    uint64_t n = s->body.retired_graphs;
    for (int i = 0; i < GS_BODY_KNOWN; i++)
        n += s->body.known[i].graphs;
    return n;
}
