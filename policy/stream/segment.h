/*
** segment.h: a stream's segment, the ops between two boundaries, and the one
** owner of what records it (segment.c for the rarer steps): the current node
** (cur), whether every op of it succeeded (clean), what it held (seg_held,
** seg_resumed), when it began to be timed (seg_start), the holding marks, and
** where it ends, what its graph launches cost (issue.c and replay.c add to
** seg_launches, seg_nodes_set and seg_driver_ns through gs__seg_cost_add;
** gs__seg_cost_settle gives them, and the time its graphs took to build since
** seg_built_mark, to the sequence the segment replayed: the node's cost, which
** no other file writes).  The depth up to which its ops went out (chunk_depth)
** is set through gs__seg_issued_to.
** No other file writes these fields, and the compiler checks it: they are
** rooms (state.h, GS_ROOM), whose writable names (cur_w, holding_w, ...) are
** poisoned at the end of this file, after the functions below, but in
** segment.c (GS_OWNS_SEG); stream.h includes this file, so every file that
** sees a stream's state sees them closed.  The rules decide, and the
** segment's functions record what they decided.
**
** Holding.  s->holding alone answers "does s hold work?": GS_HOLD_NONE, or
** GS_HOLD_TRIE (the ops on cur's path past chunk_depth are held), or
** GS_HOLD_BODY (body.held ops of a loop body are).  Two clocks go with it, and
** are nonzero only while it holds: held_since, the watchdog's (when the oldest
** op held now was held; 0 where an early chunk took every held op), and
** chunk_since, the early chunks' (the same time, in the tree only).
**
** Every function here is called with s locked.
*/
#ifndef GS_SEGMENT_H
#define GS_SEGMENT_H

#include "../base/assert.h"
#include "state.h"

/* Host ns the calling thread spent in the driver setting nodes and launching
** graphs, of any stream (gs__seg_cost_add): the gain check leaves the other
** streams' part out of a segment's time (rule gain-own-time). */
extern GS_TLS uint64_t gs__thread_driver_ns;

/* Streams that hold work, for the legacy-stream rule (seg_set_hold keeps them). */
extern atomic_int gs__blocking_holding, gs__legacy_holding;
/* The watchdog sleeps on gs__watchdog_idle until woken while no stream holds
** work (rules/watchdog.c). */
extern atomic_int gs__watchdog_idle;
void gs__watchdog_wake(void);

/* --- The invariants (the test build's, base/assert.h) ----------------------- */

/* What is true of s's segment between any two of its changes: checked after
** each, with s locked. */
static inline void gs__seg_check(const struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    GS_ASSERT(s->holding == GS_HOLD_NONE || s->holding == GS_HOLD_TRIE || s->holding == GS_HOLD_BODY);
    /* Holding nothing, no clock runs; a clock runs only while s holds. */
    GS_ASSERT(s->holding != GS_HOLD_NONE ||
              (!s->chunk_since && !atomic_load_explicit(&s->seg.held_since, memory_order_relaxed)));
    GS_ASSERT(!s->chunk_since || s->holding == GS_HOLD_TRIE);
    /* Holding in the tree: the held ops are on cur's path, past the chunks. */
    GS_ASSERT(s->holding != GS_HOLD_TRIE || (s->cur && s->cur->depth >= s->chunk_depth));
    /* Whatever is held was held by this segment; resumed, it held before. */
    GS_ASSERT(s->holding == GS_HOLD_NONE || s->seg_held);
    GS_ASSERT(!s->seg.seg_resumed || s->seg_held);
    GS_ASSERT(atomic_load_explicit(&gs__legacy_holding, memory_order_relaxed) >= 0 &&
              atomic_load_explicit(&gs__blocking_holding, memory_order_relaxed) >= 0);
}

/* --- The holding marks ----------------------------------------------------- */

/* s holds work from time t on, for the watchdog (held_since), and wakes the
** watchdog where it sleeps.  The store, then the load, in that order: the
** watchdog's barrier makes one of them see the other (rules/watchdog.c). */
static inline void gs__held_from(struct gs_stream *s, uint64_t t)
{
    atomic_store_explicit(&s->seg_w.held_since, t, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (GS_UNLIKELY(atomic_load_explicit(&gs__watchdog_idle, memory_order_relaxed)))
        gs__watchdog_wake();
}

/* s begins holding work (mode GS_HOLD_TRIE or GS_HOLD_BODY) or stops
** (GS_HOLD_NONE): the one writer of s->holding, which keeps the counts of
** holding streams (the legacy rule's) and the clocks with it.  The segment's
** own: the rooms around it say what happened (gs__seg_hold_tree,
** gs__seg_hold_body, gs__seg_held_out), and the segment sets its mode. */
static inline void seg_set_hold(struct gs_stream *s, int mode)
{
    int on = mode != GS_HOLD_NONE;

    s->holding_w = mode;
    if (s->kind == GS_STREAM_LEGACY)
        atomic_fetch_add(&gs__legacy_holding, on ? 1 : -1);
    else if (s->blocking)
        atomic_fetch_add(&gs__blocking_holding, on ? 1 : -1);
    if (on) {
        gs__held_from(s, gs__now_ns());
    } else {
        s->chunk_since_w = 0;
        atomic_store_explicit(&s->seg_w.held_since, 0, memory_order_relaxed);
    }
    gs__seg_check(s);
}

/* What s held went out, replayed as a graph or issued eagerly: it holds nothing. */
static inline void gs__seg_held_out(struct gs_stream *s)
{
    seg_set_hold(s, GS_HOLD_NONE);
}

/* An early chunk took every op s held in its tree, and holding goes on: both
** clocks stop, and the next held op starts them (gs__seg_clocks_start). */
static inline void gs__held_none(struct gs_stream *s)
{
    s->chunk_since_w = 0;
    atomic_store_explicit(&s->seg_w.held_since, 0, memory_order_relaxed);
    gs__seg_check(s);
}

/* The first op s holds in its tree after an early chunk: the clocks start. */
static inline void gs__seg_clocks_start(struct gs_stream *s)
{
    s->chunk_since_w = gs__now_ns();
    gs__held_from(s, s->chunk_since);
    gs__seg_check(s);
}

/* --- The segment ----------------------------------------------------------- */

/* The segment's ops up to depth d went out: an early chunk's (rules/chunk.c),
** or those held, eagerly or as a graph (issue.c); 0 where the segment ends. */
static inline void gs__seg_issued_to(struct gs_stream *s, uint32_t d)
{
    s->chunk_depth_w = d;
}

/* The segment goes on at node n of the tree (the op just learned or held). */
static inline void gs__seg_advance(struct gs_stream *s, struct gs_node *n)
{
    s->cur_w = n;
    gs__seg_check(s);
}

/* The segment is not learned from here on (cur NULL): the program captures,
** or a loop body's keys are too big for the tree. */
static inline void gs__seg_unlearned(struct gs_stream *s)
{
    s->cur_w = NULL;
    gs__seg_check(s);
}

/* An op of the segment failed: the segment is no learned sequence. */
static inline void gs__seg_failed(struct gs_stream *s)
{
    s->seg_w.clean = 0;
    s->cur_w = NULL;
    gs__seg_check(s);
}

/* What the segment's graph launches cost goes to the sequence ending at
** replayed, or to none (NULL: it stays in the stream's totals only), and the
** segment's count starts over.  The one place a segment's cost is given or
** dropped, where the segment ends (gs__seg_begin) or its tree goes. */
static inline void gs__seg_cost_settle(struct gs_stream *s, struct gs_node *replayed)
{
    uint64_t built = s->graphs.capture_ns + s->graphs.instantiate_ns;

    if (replayed) {
        replayed->cost.graph_launches += s->seg_cost.seg_launches;
        replayed->cost.nodes_set += s->seg_cost.seg_nodes_set;
        replayed->cost.driver_ns += s->seg_cost.seg_driver_ns;
        replayed->cost.build_ns += built - s->seg.seg_built_mark;
    }
    s->seg_w.seg_built_mark = built;
    s->seg_cost_w.seg_launches = 0;
    s->seg_cost_w.seg_nodes_set = 0;
    s->seg_cost_w.seg_driver_ns = 0;
}

/* The tree of s is new or was emptied: the segment goes on from its root, as
** if every op so far had succeeded; what its graph launches cost so far goes
** to no sequence (its nodes are gone). */
static inline void gs__seg_rewind(struct gs_stream *s)
{
    gs__seg_cost_settle(s, NULL);
    s->cur_w = &s->trie.root;
    s->seg_w.clean = 1;
    gs__seg_check(s);
}

/* The gain check times a segment from its first op, where it may come to be a
** sequence long enough to be graphed: an op the tree knows (c), and has seen
** followed, or one alone on trial (GRAPHSHIM_SHORT_TRIAL: a segment of one launch
** and a synchronize whose graph did not pay reads no clock). */
static inline void gs__seg_timed_from(struct gs_stream *s, const struct gs_node *c)
{
    if (!s->seg.seg_start && gs__cfg.gain_check && c && c->depth == 1 &&
        (c->nchildren || gs__cfg.min_ops <= 1 || (gs__cfg.short_trial && !c->ungraphable))) {
        s->seg_w.seg_start = gs__now_ns();
        s->seg_w.seg_start_driver = gs__thread_driver_ns;
        s->seg_w.seg_start_tid = gs__tid();
    }
}

/* s, holding nothing, begins to hold the ops of a loop body (stream/body.c). */
static inline void gs__seg_hold_body(struct gs_stream *s)
{
    s->seg_held_w = 1;
    seg_set_hold(s, GS_HOLD_BODY);
    gs__seg_check(s);
}

/* The segment's graph launches (replay.c, issue.c): launches that went out,
** nodes set in place before them, and host ns in the driver for both. */
static inline void gs__seg_cost_add(struct gs_stream *s, uint64_t launches, uint64_t nodes_set, uint64_t driver_ns)
{
    gs__thread_driver_ns += driver_ns;
    s->seg_cost_w.seg_launches += launches;
    s->seg_cost_w.seg_nodes_set += nodes_set;
    s->seg_cost_w.seg_driver_ns += driver_ns;
}

/* s, holding nothing, begins to hold ops of its tree after cur.  1 where the
** segment held ops before that went out before its end (it resumes: the caller
** places its chunks as after one that ended at cur), 0 otherwise. */
int gs__seg_hold_tree(struct gs_stream *s);

/* The segment ended (rules/resolve.c, which sent its held work out and counted
** it): what its graph launches cost goes to the sequence it replayed, ending at
** replayed (NULL: it was no replay; its cost stays in the stream's totals
** only), and the next one begins at start (the tree's root, or NULL where
** learning rests), clean, nothing held, timed or cost yet. */
void gs__seg_begin(struct gs_stream *s, struct gs_node *start, struct gs_node *replayed);

/* The segment's rooms close: their writable names, poisoned but in segment.c
** (state.h, GS_ROOM). */
#ifndef GS_OWNS_SEG
#pragma GCC poison cur_w holding_w seg_held_w chunk_since_w chunk_depth_w seg_w seg_cost_w resumes_w
#endif

#endif
