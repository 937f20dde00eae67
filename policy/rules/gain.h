/*
** gain.h: the gain check at a step's end (gain.c): a sequence whose graph runs
** slower than its ops did eagerly runs eagerly for good.
*/
#ifndef GS_GAIN_H
#define GS_GAIN_H

#include "../stream/segment.h"
#include "../stream/stream.h"

/* The segment of s ended at node t (NULL: not learned), for reason (enum
** gs_bail), replayed as a graph or not: where a synchronize ended it and it may
** be graphed, it is timed when the synchronize returns; where an event record
** or a host function did, at the stream's next op (gs__gain_op) or a
** synchronize's return.  Called locked, before
** the segment's records are reset (stream/segment.h). */
void gs__gain_segment_ended(struct gs_stream *s, struct gs_node *t, int reason, int replayed);
/* The fewest ops a sequence that a segment ending for reason (enum gs_bail)
** completes needs to become stable: GRAPHSHIM_MIN_OPS, or 1 where a synchronize
** ended it and the gain check times it (GRAPHSHIM_SHORT_TRIAL: a shorter
** sequence is graphed on trial, and kept only where its replays are no slower
** than its eager runs). */
static inline long gs__gain_min_ops(int reason)
{
    return gs__cfg.short_trial && gs__cfg.gain_check && reason == GS_BAIL_BOUNDARY + GS_SYNC ? 1 : gs__cfg.min_ops;
}
/* Did a sequence's eager run, eager_ns from its first op to the synchronize's
** return and issue_ns of that the host's, keep the GPU busy GS_GPU_BOUND times
** as long as the host took to issue it (rule busy-gpu)?  Its graph can save
** the GPU no more than a few gaps between kernels. */
#define GS_GPU_BOUND 8
static inline int gs__gain_gpu_bound(uint64_t eager_ns, uint64_t issue_ns)
{
    return !GS_DROPPED(GS_RULE_BUSY_GPU) && issue_ns && eager_ns > GS_GPU_BOUND * issue_ns;
}
/* The stream's first op after a segment that an event record or a host
** function ended (s->gain.last_open), or a query that found the stream busy
** (rule gain-query-next: the program went on without waiting for it): that
** segment took until now.  Called locked. */
void gs__gain_step_began(struct gs_stream *s);
/* An op of s, matched at c (or NULL), before it is held or issued: the step
** before it is timed where no synchronize ended it (gs__gain_step_began), and
** the segment is timed from it where it may be graphed (gs__seg_timed_from).
** Called locked. */
static inline void gs__gain_op(struct gs_stream *s, const struct gs_node *c)
{
    if (GS_UNLIKELY(s->gain.last_term != NULL))
        gs__gain_step_began(s);
    gs__seg_timed_from(s, c);
}
/* s forgets the segment it was to time (its tree or graphs go).  Called locked. */
void gs__gain_forget(struct gs_stream *s);
/* A synchronize returned (a stream's, a context's or an event's, or a query
** that found the stream idle): the segment of s it ended is timed.  Called
** locked (entry/guard.c, which tells the chunks' rule drain of the
** synchronizes that waited for s). */
void gs__gain_stream_synced(struct gs_stream *s);

/* Does the graph of a sequence pay?  Each replay is timed against the sequence's
** eager time; a replay is slow when it took more than 10% longer (strict: a
** sequence on trial, shorter than GRAPHSHIM_MIN_OPS, when it took longer at
** all).  n replays with `slow` slow ones, of a window of `window`, say: 1 (keep
** the graph), 0 (at least three in four were slow), or -1 (fewer than window
** replays: too few to say).  Single slow replays (a descheduled thread, a
** garbage collection in the program) do not count against a graph that pays.
** A window that says 0 starts a paired trial (rules/gain.c), as do the first
** window that does not of a step an event record or a host function ends (rule
** gain-pairs) and a window whose replays took longer at all in three of four
** (rule gain-strict): each replay of a trial is judged strictly against the
** eager runs before and after it, and a graph slow in more than half of its
** pairs runs eagerly for good.  A graph's first window ends after
** GS_GAIN_FIRST replays where they say 0: one slower than eager from its first
** replays is tried early. */
static inline int gs__gain_slow(uint64_t eager_ns, uint64_t replay_ns, int strict)
{
    return eager_ns && replay_ns * 100 > eager_ns * (strict ? 100 : 110);
}
static inline int gs__gain_verdict(uint32_t slow, uint32_t n, uint32_t window)
{
    return n < window ? -1 : slow * 4 < n * 3;
}
#define GS_GAIN_REPLAYS 8
#define GS_GAIN_FIRST 4
/* Did the last eager run of node t keep the GPU busy (gs__gain_gpu_bound)?
** Holding made the GPU start late by the issue time (four 4096-cubed products:
** 0.2-0.4 % slower replayed, within the 10 % any graph may lose to noise, and
** within the noise of one eager time): it is judged strictly, and in pairs
** after its first window. */
static inline int gs__gain_node_gpu_bound(const struct gs_node *t)
{
    return gs__gain_gpu_bound(t->gain.eager_ns, t->gain.eager_issue_ns);
}

/* Do t's replays save the program (almost) no driver call (rule gain-calls)?
** Their graph launches and the nodes set before them are 90 % of the launches
** its eager runs make, or more: a JAX step of four launches replays as a graph
** launch and three node sets.  Such a graph can gain only on the GPU, and the
** held work it launches starts late there. */
static inline int gs__gain_saves_no_call(const struct gs_node *t)
{
    return !GS_DROPPED(GS_RULE_GAIN_CALLS) && t->runs.replays &&
           (t->cost.graph_launches + t->cost.nodes_set) * 10 >= (uint64_t)t->depth * t->runs.replays * 9;
}

/* Is t's graph judged strictly (a replay is slow where it took longer at all)?
** A sequence on trial, shorter than GRAPHSHIM_MIN_OPS, a busy GPU's, and one
** whose replays save no driver call. */
static inline int gs__gain_judged_strictly(const struct gs_node *t)
{
    if (gs__gain_saves_no_call(t))
        return 1;
    return t->depth < (uint32_t)gs__cfg.min_ops || gs__gain_node_gpu_bound(t);
}

/* Is a segment that ended for reason (enum gs_bail) timed?  Where a synchronize
** ended it, to its return; an event record (or wait), a host function, a call
** outside a group's narrow case that ended its group, or an op whose order
** after the legacy stream's issued it (a blocking stream's work before a
** legacy-stream op), to the stream's next op or a synchronize's return (rules
** gain-step, gain-group-end, gain-order-end); the next step (rules/step.c), to
** its first op, what the program sees of a loop ahead of the GPU (gain-next). */
static inline int gs__gain_timed_end(int reason)
{
    return reason == GS_BAIL_BOUNDARY + GS_SYNC || (reason == GS_BAIL_STEP && !GS_DROPPED(GS_RULE_GAIN_NEXT)) ||
           (!GS_DROPPED(GS_RULE_GAIN_STEP) &&
            (reason == GS_BAIL_BOUNDARY + GS_EVENT || reason == GS_BAIL_BOUNDARY + GS_HOSTFN)) ||
           (reason == GS_BAIL_XSTREAM && !GS_DROPPED(GS_RULE_GAIN_GROUP_END)) ||
           (reason == GS_BAIL_OTHER_STREAM && !GS_DROPPED(GS_RULE_GAIN_ORDER_END));
}

#define GS_GAIN_BACKOFF_MAX 6 /* a trial that keeps a graph lets 1, 3, ... 63 windows pass */

#endif
