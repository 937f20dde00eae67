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
** function ended (s->gain.last_open): that segment took until now.  Called
** locked. */
void gs__gain_step_began(struct gs_stream *s);
/* An op of s, matched at c (or NULL), before it is held or issued: the step
** before it is timed where no synchronize ended it (gs__gain_step_began), and
** the segment is timed from it where it may be graphed (gs__seg_timed_from).
** Called locked. */
static inline void gs__gain_op(struct gs_stream *s, const struct gs_node *c)
{
    if (GS_UNLIKELY(s->gain.last_open))
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
/* Rule gain-bound.  A run whose ops were held and then issued eagerly (a bail)
** took at least as long as an eager run would: the shortest such time is an
** upper bound of the eager time.  A graph never timed eagerly (its eager runs
** held as a prefix, or bailing out where it runs eagerly to be timed: a group
** across streams whose prefix is held for another sequence) whose replays took
** twice that bound or more in three of GS_GAIN_FIRST loses for sure, whatever
** pace the program changed to since (a host 3 % slower each iteration keeps
** its graph: engine's drift-prefix).  gs__gain_bound keeps the bound;
** gs__gain_bound_loses counts a replay of d ns, and says 1 where the graph
** loses. */
static inline void gs__gain_bound(struct gs_node *t, uint64_t d)
{
    if (d && d < UINT32_MAX && (!t->gain.eager_bound_ns || d < t->gain.eager_bound_ns))
        t->gain.eager_bound_ns = (uint32_t)d;
}
static inline int gs__gain_bound_loses(struct gs_node *t, uint64_t d)
{
    if (GS_DROPPED(GS_RULE_GAIN_BOUND) || !t->gain.eager_bound_ns || t->gain.eager_last_ns)
        return 0;
    t->gain.bound_slow += d > 2ull * t->gain.eager_bound_ns;
    if (++t->gain.bound_n < GS_GAIN_FIRST)
        return 0;
    int v = gs__gain_verdict(t->gain.bound_slow, t->gain.bound_n, GS_GAIN_FIRST);
    t->gain.bound_slow = 0, t->gain.bound_n = 0;
    return v == 0;
}
#define GS_GAIN_BACKOFF_MAX 6 /* a trial that keeps a graph lets 1, 3, ... 63 windows pass */

#endif
