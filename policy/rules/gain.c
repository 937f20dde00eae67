/*
** gain.c: the gain check.  A segment is timed from its first op to the end
** that gs__gain_timed_end() names (gain.h): the return of the synchronize that
** ended it, the stream's next op, the next step's first op.  Replays are
** judged in windows against the eager time; a window that finds them slow, or
** a graph's first, starts a paired trial, whose verdict keeps the graph or
** runs the sequence eagerly for good (no-gain).
*/
#define GS_OWNS_GAIN /* this file writes its rooms (state.h, GS_ROOM) */
#define _GNU_SOURCE
#include "gain.h"

#include "../base/assert.h"
#include "../base/log.h"
#include "../base/nvtx.h"
#include "../graph/graph_cache.h"

_Static_assert(GS_GAIN_END_STEP < 32, "gs_node_gain.gain_end: 5 bits hold a boundary class + 1, or a step's end");
_Static_assert(GS_GAIN_BACKOFF_MAX < 8, "gs_node_gain.gain_backoff: 3 bits");

/* The next n segments of s run their ops eagerly where the tree does not hold
** them: no loop body either, or a sequence whose ops repeat is never timed. */
static void time_eagerly(struct gs_stream *s, uint32_t n)
{
    if (s->gain_w.timing_eager < n)
        s->gain_w.timing_eager = n;
}

/* The sequence ending at t runs eagerly again (its warmup's times), to be
** timed: its graph is kept for when it is stable again. */
static void time_eagerly_again(struct gs_stream *s, struct gs_node *t)
{
    t->gain.eager_ns = 0;
    gs__trie_relearn(t);
    time_eagerly(s, (uint32_t)gs__warmup(s) + 1);
}

/* The sequence ending at t runs eagerly once, to be timed (stable again at its
** end): the next segment, or the one after where another came between. */
static void time_eagerly_once(struct gs_stream *s, struct gs_node *t)
{
    gs__trie_eager_once(t);
    time_eagerly(s, 2);
}

/* How much longer a replay took to count as slow, in words for the debug log. */
static const char *slow_words(const struct gs_node *t)
{
    return gs__gain_judged_strictly(t) ? "longer" : "more than 10% longer";
}

/* The graph of t runs eagerly for good (no-gain). */
static void no_gain(struct gs_stream *s, struct gs_node *t)
{
    t->gain.gain_verdict = GS_VERDICT_NO_GAIN;
    gs__debug("a %u-op sequence took %s replayed than eagerly in %u of %u trial pairs: it runs eagerly from now on",
              t->depth, slow_words(t), t->gain.replay_slow, t->gain.replay_n);
    gs__trie_unstable(t);
    gs__graph_drop_exec(t, s);
    s->bails[GS_BAIL_NO_GAIN]++;
    gs__nvtx_mark(GS_NVTX_BAIL + GS_BAIL_NO_GAIN);
}

/* Counts a timed replay of t, d ns long, in its window: slow, and longer at all. */
static void replay_timed(struct gs_node *t, uint64_t d)
{
    t->gain.replay_slow += (uint8_t)gs__gain_slow(t->gain.eager_ns, d, gs__gain_judged_strictly(t));
    t->gain.replay_slower += (uint8_t)gs__gain_slow(t->gain.eager_ns, d, 1);
    t->gain.replay_n++;
}

/* A trial's verdict (as gs__gain_verdict's): the graph is kept where at most
** half of its pairs were slow (rule gain-pairs); -1: too few pairs timed. */
static int trial_verdict(const struct gs_node *t)
{
    if (GS_DROPPED(GS_RULE_GAIN_PAIRS))
        return gs__gain_verdict(t->gain.replay_slow, t->gain.replay_n, GS_GAIN_REPLAYS);
    if (t->gain.replay_n < GS_GAIN_REPLAYS)
        return -1;
    return t->gain.replay_slow * 2 <= t->gain.replay_n;
}

/* A window of replays found t's graph slow (TRIAL_SLOW), within the 10 % but
** longer at all (TRIAL_LONGER: rule gain-strict), or its first window ended
** (TRIAL_WARM): the sequence runs eagerly and replayed in turn, each replay
** judged against the eager runs around it (trial_replay): a program that
** changes pace changes both alike, where a window judged against one earlier
** eager time would see the change as the graph's. */
enum trial_why { TRIAL_SLOW, TRIAL_WARM, TRIAL_LONGER };
static void trial_start(struct gs_stream *s, struct gs_node *t, enum trial_why why)
{
    if (why == TRIAL_SLOW)
        gs__debug("a %u-op sequence took %s than its %.1f us eagerly in 3 of 4 replays or more: "
                  "a trial runs it eagerly and replayed in turn", t->depth, slow_words(t), t->gain.eager_ns / 1e3);
    else
        gs__debug("a %u-op sequence's %s: a trial runs it eagerly and replayed in turn, warm", t->depth,
                  why == TRIAL_WARM ? "first window passed" : "replays took longer than eagerly in 3 of 4");
    t->gain.gain_trial = 1;
    t->gain.trial_slow = why == TRIAL_SLOW && t->gain.timed_sum_ns > 2 * t->gain.timed_replays * t->gain.eager_ns;
    t->gain.gain_verdict = GS_VERDICT_TRIAL;
    t->gain.gain_paid = 0;
    t->gain.gain_fresh = 0;
    time_eagerly_once(s, t);
}

/* Ends t's paired trial, whose pairs said v (gs__gain_verdict).  A graph found
** slow runs eagerly for good.  One kept lets 1, 3, 7, ... 63 windows pass
** before a slow one starts its next trial: a program whose pace keeps moving
** would otherwise run a third of its occurrences eagerly in trials.  Where too
** few pairs were timed (its eager runs were held, as a prefix of another stable
** sequence or a step, and issued at the segment's end: not timed), a graph
** whose replays took twice its eager time or more on average is dropped (rule
** gain-unpaired: a host's drift moves its pace by less); after another window,
** the check rests for the sequence until an eager run is timed again. */
static void trial_end(struct gs_stream *s, struct gs_node *t, int v)
{
    if (v < 0 && t->gain.trial_slow && !GS_DROPPED(GS_RULE_GAIN_UNPAIRED))
        v = 0;
    if (v == 0) {
        no_gain(s, t);
    } else if (v == 1) {
        gs__debug("a %u-op sequence took %s replayed than eagerly in only %u of %u trial pairs: its graph is kept",
                  t->depth, slow_words(t), t->gain.replay_slow, t->gain.replay_n);
        t->gain.gain_paid = 1;
        t->gain.gain_verdict = GS_VERDICT_PAYS;
        if (t->gain.gain_backoff < GS_GAIN_BACKOFF_MAX)
            t->gain.gain_backoff++;
        t->gain.gain_skip = (uint8_t)((1u << t->gain.gain_backoff) - 1);
    } else {
        gs__debug("a %u-op sequence's trial timed %u pairs, too few to judge: its graph is kept, untimed",
                  t->depth, t->gain.replay_n);
        t->gain.eager_ns = 0;
        t->gain.gain_verdict = GS_VERDICT_NONE;
        t->gain.gain_asked = 1; /* and not run eagerly to be timed (never_timed) */
    }
    t->gain.gain_warm = 1; /* its eager time is fresh, or none */
    t->gain.gain_trial = 0;
    t->gain.pair_replay_ns = 0;
    t->gain.replay_n = 0, t->gain.replay_slow = 0, t->gain.replay_slower = 0;
}

/* A replay of t in its paired trial, d ns long.  With rule gain-pairs the eager
** runs before and after it judge it (trial_eager), strictly: a pace that drifts
** one way moves both alike, and no margin hides a graph that loses a few per
** cent.  Without, the eager run before it does, as windows judge.  The trial
** ends after GS_GAIN_REPLAYS pairs, or once two of its eager runs went untimed. */
static void trial_replay(struct gs_stream *s, struct gs_node *t, uint64_t d)
{
    if (!t->gain.gain_fresh)
        t->gain.gain_trial++, t->gain.pair_replay_ns = 0;
    else if (GS_DROPPED(GS_RULE_GAIN_PAIRS))
        replay_timed(t, d);
    else
        t->gain.pair_replay_ns = d;
    t->gain.gain_fresh = 0;
    if (t->gain.replay_n < GS_GAIN_REPLAYS && t->gain.gain_trial < 3)
        time_eagerly_once(s, t);
    else
        trial_end(s, t, trial_verdict(t));
}

/* An eager run of t in its trial, d ns long, before_ns the one before: the
** replay between them, if one waits, is slow where it took over their mean. */
static void trial_eager(struct gs_stream *s, struct gs_node *t, uint64_t before_ns, uint64_t d)
{
    uint64_t r = t->gain.pair_replay_ns;

    if (!t->gain.gain_trial || !r)
        return;
    t->gain.pair_replay_ns = 0;
    t->gain.replay_slow += r * 2 > before_ns + d;
    t->gain.replay_n++;
    if (t->gain.replay_n >= GS_GAIN_REPLAYS)
        trial_end(s, t, trial_verdict(t));
}

/* A replay of t, which was never timed eagerly: its eager runs were held (as a
** loop body, whose search found its repeated ops while it was learned, or as a
** prefix of another stable sequence).  It runs eagerly to be timed, the search
** off, once and again at its 8th, 16th, 32nd, ... replay (rule gain-retime): a
** run held as a prefix stays untimed, but the longer sequence may be gone. */
static void never_timed(struct gs_stream *s, struct gs_node *t)
{
    uint64_t n = t->runs.replays;

    if (t->gain.gain_asked && (GS_DROPPED(GS_RULE_GAIN_RETIME) || n < 8 || (n & (n - 1))))
        return;
    gs__debug("a %u-op sequence was never timed eagerly: it runs eagerly once, to be timed", t->depth);
    t->gain.gain_asked = 1;
    time_eagerly_once(s, t);
}

/* Rule gain-bound.  A run whose ops were held and then issued eagerly (a bail)
** took at least as long as an eager run would: the shortest such time is an
** upper bound of the eager time (eager_bound_ns).  A graph never timed eagerly
** (its eager runs held as a prefix, or bailing out where it runs eagerly to be
** timed: a group across streams whose prefix is held for another sequence)
** whose replays took twice that bound or more in three of GS_GAIN_FIRST loses
** for sure, whatever pace the program changed to since (a host 3 % slower each
** iteration keeps its graph: engine's drift-prefix).  A replay of t, never
** timed eagerly, d ns long: 1 where it and two of the three before it took
** twice t's bound or more. */
static int bound_loses(struct gs_node *t, uint64_t d)
{
    if (GS_DROPPED(GS_RULE_GAIN_BOUND) || !t->gain.eager_bound_ns || t->gain.eager_last_ns)
        return 0;
    t->gain.bound_slow += d > 2ull * t->gain.eager_bound_ns;
    if (++t->gain.bound_n < GS_GAIN_FIRST)
        return 0;
    int lost = gs__gain_verdict(t->gain.bound_slow, t->gain.bound_n, GS_GAIN_FIRST) == 0;
    t->gain.bound_slow = 0, t->gain.bound_n = 0;
    return lost;
}

/* Were the first GS_GAIN_FIRST timed replays of t's graph slow (three in four,
** gs__gain_verdict)?  Its first window ends there (rule gain-first): a capture
** that does not pay is found after a few replays, not GS_GAIN_REPLAYS.  One that
** pays goes on with its window. */
static int slow_from_the_first(const struct gs_node *t)
{
    return !t->gain.gain_warm && !GS_DROPPED(GS_RULE_GAIN_FIRST) && t->gain.replay_n == GS_GAIN_FIRST &&
           gs__gain_verdict(t->gain.replay_slow, t->gain.replay_n, GS_GAIN_FIRST) == 0;
}

/* d, a segment's time on the host's clock, less what the thread spent in the
** driver for other streams' graphs since the segment began (their launches and
** node sets: a stream's eager run between them took as long as its replay),
** where the thread timing it began it (rule gain-own-time). */
static uint64_t own_time(const struct gs_stream *s, uint64_t d)
{
    uint64_t now = gs__thread_driver_ns, o = now - s->gain_w.last_own;

    if (GS_DROPPED(GS_RULE_GAIN_OWN_TIME) || gs__tid() != s->gain_w.last_tid || now < s->gain_w.last_own || o >= d)
        return d;
    return d - o;
}

/* After a synchronize returned, or at the stream's first op after a segment
** that an event record or a host function ended (gs__gain_step_began): the
** segment of s that ended there took from its first op until end_ns.  Counted for the sequence, eager or replayed (the first
** replay, which built the graph, is not, nor a segment that held ops and then issued
** them eagerly, which is neither), and kept for the report (eager_last_ns, and
** the timed replays' sum and count).  Replays are judged in windows of
** GS_GAIN_REPLAYS against the last eager time (the first ends early where it
** finds the graph slow, slow_from_the_first) and in trials.  Called locked. */
static void segment_timed(struct gs_stream *s, uint64_t end_ns)
{
    GS_ASSERT_LOCKED(s);
    struct gs_node *t = s->gain_w.last_term;
    uint64_t d;
    int v;

    s->gain_w.last_term = NULL;
    s->gain_w.last_open = 0;
    if (!t || s->gain_w.last_evicted != s->trie.evicted)
        return;
    d = own_time(s, end_ns - s->gain_w.last_start);
    if (s->gain_w.last_how == 0) {
        gs__debug("a %u-op sequence took %.1f us eagerly", t->depth, d / 1e3);
        trial_eager(s, t, t->gain.eager_ns, d);
        t->gain.eager_ns = d;
        t->gain.eager_last_ns = d;
        t->gain.eager_issue_ns = s->gain_w.last_issued - s->gain_w.last_start;
        t->gain.gain_fresh = 1;
        return;
    }
    if (s->gain_w.last_how == -1 && d < UINT32_MAX && (!t->gain.eager_bound_ns || d < t->gain.eager_bound_ns))
        t->gain.eager_bound_ns = (uint32_t)d; /* held, then issued eagerly: no eager run is longer (gain-bound) */
    if (s->gain_w.last_how != 1 || t->runs.replays <= 1)
        return;
    t->gain.timed_sum_ns += d; /* the report's, also where no eager time judges it */
    t->gain.timed_replays++;
    if (!t->gain.eager_ns) {
        bound_loses(t, d) ? no_gain(s, t) : never_timed(s, t); /* slower than its held runs? */
        return;
    }
    gs__debug("a %u-op sequence took %.1f us replayed (%.1f us eagerly)", t->depth, d / 1e3, t->gain.eager_ns / 1e3);
    if (t->gain.gain_trial) {
        trial_replay(s, t, d);
        return;
    }
    replay_timed(t, d);
    v = gs__gain_verdict(t->gain.replay_slow, t->gain.replay_n, GS_GAIN_REPLAYS);
    if (v < 0 && slow_from_the_first(t))
        v = 0;
    if (v == 1)
        t->gain.gain_paid = 1, t->gain.gain_verdict = GS_VERDICT_PAYS;
    if (v < 0)
        return; /* the window goes on */
    /* A window within the 10 % whose replays took longer at all in 3 of 4 is
    ** tried too (rule gain-strict): a graph that loses a few per cent for good
    ** passes every window; the trial's pairs judge it strictly. */
    int longer = v == 1 && !GS_DROPPED(GS_RULE_GAIN_STRICT) && !gs__gain_judged_strictly(t) &&
                 gs__gain_verdict(t->gain.replay_slower, t->gain.replay_n, GS_GAIN_REPLAYS) == 0;
    t->gain.replay_n = 0, t->gain.replay_slow = 0, t->gain.replay_slower = 0; /* a fresh window */
    if ((v == 0 || longer) && !t->gain.gain_skip) {
        trial_start(s, t, v == 0 ? TRIAL_SLOW : TRIAL_LONGER);
        return;
    }
    if (t->gain.gain_skip)
        t->gain.gain_skip--;
    if (!t->gain.gain_warm) {
        /* The eager time came from the program's first iterations, often slower
        ** than later ones, and one time can be high by chance: once, after the
        ** first window, it is timed again, warm; a step that an event record or
        ** a host function ended (its held work starts the GPU late) is tried
        ** (rule gain-pairs).  A loop's step (rule gain-next) was timed warm, in
        ** the loop. */
        int stepped = t->gain.gain_end == GS_EVENT + 1 || t->gain.gain_end == GS_HOSTFN + 1;
        t->gain.gain_warm = 1;
        if (gs__gain_node_gpu_bound(t) || (stepped && !GS_DROPPED(GS_RULE_GAIN_PAIRS)))
            trial_start(s, t, TRIAL_WARM); /* its eager runs timed warm, each between replays */
        else if (t->gain.gain_end != GS_GAIN_END_STEP)
            time_eagerly_again(s, t);
    }
}

/* Is t a sequence shorter than GRAPHSHIM_MIN_OPS that is graphed (stable, or
** run eagerly once to be timed)? */
static int graphed_short(const struct gs_node *t)
{
    return (t->stable || t->eager_once) && !GS_DROPPED(GS_RULE_GAIN_SHORT_END);
}

/* Does the segment before wait on to be timed, past a segment of no op that
** reason ended?  One timed to the next op (an event record ended it) does.  One
** that a query found busy does too, past a synchronize (a poll: rule
** gain-query; any other synchronize's return times it) and past the records
** and host functions after the query (rule gain-query-on: else a record after
** every busy query left the step untimed, eagerly and replayed): its time runs
** on to the query that finds the stream idle or a synchronize's return. */
static int waits(const struct gs_stream *s, int reason)
{
    if (!s->gain_w.last_term || s->gain_w.last_open)
        return s->gain_w.last_open;
    return reason == GS_BAIL_BOUNDARY + GS_SYNC ? !GS_DROPPED(GS_RULE_GAIN_QUERY) : !GS_DROPPED(GS_RULE_GAIN_QUERY_ON);
}

void gs__gain_segment_ended(struct gs_stream *s, struct gs_node *t, int reason, int replayed)
{
    GS_ASSERT_LOCKED(s);
    if (t && t->depth)
        t->gain.gain_end = reason >= GS_BAIL_BOUNDARY ? (unsigned)(reason - GS_BAIL_BOUNDARY + 1)
                           : reason == GS_BAIL_STEP ? GS_GAIN_END_STEP
                                                    : 0;
    if (s->gain_w.timing_eager)
        s->gain_w.timing_eager--;
    /* A segment of no op that a call of the program's ended (a second event
    ** recorded, a synchronize after the record) leaves the step before it to be
    ** timed at the next op; a pause, or a capture of the program's own, does
    ** not: the step's time would be the pause's. */
    if (waits(s, reason) && (!t || !t->depth) && reason >= GS_BAIL_BOUNDARY &&
        reason != GS_BAIL_BOUNDARY + GS_CAPTURE)
        return;
    /* Timed: a learned segment whose end gs__gain_timed_end() times, long
    ** enough to be graphed (a shorter one is not worth the clock read), or graphed already
    ** (stable), whatever its length: a one-op sequence learned where a
    ** synchronize ended it and replayed where an event record ends it (rule
    ** gain-short-end). */
    s->gain_w.last_term = t && (t->depth >= (uint32_t)gs__gain_min_ops(reason) || graphed_short(t)) &&
                                  s->seg.clean && s->seg.seg_start && gs__gain_timed_end(reason)
                              ? t
                              : NULL;
    s->gain_w.last_open = s->gain_w.last_term && reason != GS_BAIL_BOUNDARY + GS_SYNC;
    s->gain_w.last_start = s->seg.seg_start;
    s->gain_w.last_own = s->seg.seg_start_driver + s->seg_cost.seg_driver_ns;
    s->gain_w.last_tid = s->seg.seg_start_tid;
    s->gain_w.last_issued = s->gain_w.last_term ? gs__now_ns() : 0;
    s->gain_w.last_how = replayed ? (s->seg.seg_resumed ? -2 : 1) : s->seg_held ? -1 : 0;
    s->gain_w.last_evicted = s->trie.evicted;
}

void gs__gain_step_began(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    if (!s->gain_w.last_open && GS_DROPPED(GS_RULE_GAIN_QUERY_NEXT))
        return;
    if (gs__cfg.gain_check)
        segment_timed(s, gs__now_ns());
    s->gain_w.last_term = NULL;
    s->gain_w.last_open = 0;
}

void gs__gain_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->gain_w.last_term = NULL;
    s->gain_w.last_open = 0;
}

void gs__gain_stream_synced(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    if (gs__cfg.gain_check)
        segment_timed(s, gs__now_ns());
}
