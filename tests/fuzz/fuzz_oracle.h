/*
** fuzz_oracle.h: what fuzzrun checks beyond a program's output: a report's
** accounts against what the fake driver ran (fuzz_oracle.c), and the loop
** programs' virtual time against eager (fuzz_loop.c, fuzzrun.c).
*/
#ifndef FUZZ_ORACLE_H
#define FUZZ_ORACLE_H

#include <stddef.h>

/* The value of "name value" in the text the fake driver writes at exit
** (FAKECUDA_STATS); -1 where text has no such line. */
long long stat_of(const char *stats, const char *name);

/* Do the JSON report and the fake driver's counts agree?  base: the driver's
** counts without graphshim, shim: with it (the same program, the same
** schedule).  Returns 0, or 1 with why (len bytes) saying what disagrees:
** - no kernel name query of graphshim's is refused for a handle of the other
**   kind (FAKECUDA_STATS' refused_names);
** - every op the program made ran once, eagerly or as a node of a graph of
**   graphshim's: the eager ops with graphshim and the ops in graphshim's graph
**   launches add up to the eager ops without it;
** - ops_replayed is the ops in graphshim's graph launches, ops_replayed less
**   launches_saved the graph launches, graphs_captured the executables made;
** - the streams' counters add up to the totals; a stream's loop bodies' graphs
**   to its body_graphs, their ops to no more than its ops_replayed; its
**   sequences' graph launches to no more than its replays and chunks;
**   ops_replayed <= ops_held <= ops, and the graph launches no more than the
**   replays, chunks and body graphs together. */
int oracle_accounts(const char *report, const char *base, const char *shim, char *why, size_t len);

/* The loop programs (fuzz_loop.c) run under settings over the fake driver's
** virtual clock whose cost says how long the program may take with graphshim,
** against without it (tests/fuzz/README.md, "Time"):
** - LOOP_LOSE: a graph launch costs 20 ms, a launch 1 us: every timed replay
**   is slower than the eager run it is judged against, so the gain check drops
**   each graph after its first replay (which built it, untimed), a first window
**   of GS_GAIN_FIRST (4) replays and a trial of GS_GAIN_REPLAYS (8): at most
**   LOOP_MAX_REPLAYS graph launches per executable (no early chunks);
** - LOOP_BUSY: kernels of 200 us, 10 us of host work before each op: the GPU
**   is busy 20 times as long as the host issues (rule busy-gpu), a replay
**   starts it late by the held ops' host work, which the strict judgement of a
**   busy GPU's graph finds slow: the same LOOP_MAX_REPLAYS late replays;
** - LOOP_WIN: launches of 50 us, graph launches of 1 us: the loop must end
**   faster with graphshim, by half its iterations' launches at 25 us each;
** - LOOP_EVEN: launches of 100 us, a graph launch 8 % dearer than the
**   program's launches of one iteration (loop_graph_launch_us): a loop whose
**   graph the gain check judges strictly (replays that save no driver call, a
**   sequence shorter than GRAPHSHIM_MIN_OPS) gets LOOP_MAX_REPLAYS late
**   replays at most (LOOP_MAX_REPLAYS_LATE where the strict judgement comes
**   late); one judged within 10 % may keep its graph.
** And in every setting: a long sequence is captured only after an eager run
** of it was timed; where no segment bailed, the sequences' graph launches are
** the driver's. */
enum { LOOP_LOSE, LOOP_BUSY, LOOP_WIN, LOOP_EVEN, LOOP_PAUSE, LOOP_STALL, LOOP_REST, LOOP_CHUNKS, LOOP_SLOW, LOOP_LEGACY, LOOP_UNLISTED, LOOP_COLLECTIVE, LOOP_NAMELESS, LOOP_DESTROY, LOOP_OOM, LOOP_DRAIN, LOOP_LIMIT, LOOP_DRIFT, LOOP_STEPS, LOOP_STEPS_POLL, LOOP_PERIODS, LOOP_PERIODS_LOSE, LOOP_XS };
/* The program a loop setting runs: fuzzprog loop, steps or periods SEED. */
const char *loop_program(int kind);
/* The eager runs of the trial after the first window of a step that an event
** record or a host function ends (rule gain-pairs: 8 pairs, and one more where
** the last replay waits for the eager run after it). */
#define LOOP_TRIAL 9
#define LOOP_MAX_REPLAYS 13
#define LOOP_MAX_REPLAYS_LATE 25 /* loop-even, judged strictly late (fuzz_oracle.c) */
struct loop_setting {
    const char *name;
    int kind;
    const char *env[8];
};
extern const struct loop_setting loop_settings[];
extern const int nloop_settings;
/* The FAKECUDA_GRAPH_LAUNCH_US of LOOP_EVEN and LOOP_DRIFT (kind) for the loop
** program that printed out; 0 for another kind. */
long loop_graph_launch_us(int kind, const char *out);

/* Does the loop program's time with graphshim (the fake's clock_ns of shim)
** break ls's claim against its time without (base)?  out: the program's
** output (its shape), report: graphshim's.  0, or 1 with why. */
int oracle_loop_time(const struct loop_setting *ls, const char *out, const char *report, const char *base,
                     const char *shim, char *why, size_t len);

/* The step programs (fuzzprog steps SEED, fuzz_loop.c) under LOOP_STEPS:
** launches of 50 us, graph launches of 1 us (every graph pays), no early
** chunks.  Their segments end where the rule steps says (docs/engine.md,
** "Steps"), told by the driver's graph launches in the loop (err: the
** program's stderr says how many came before its end) and after it:
** - a step (more than half of the ops repeat byte for byte a step later,
**   covering twice the unit and half of the sequence): every unit is a
**   segment, replayed as a graph once learned: at least the units of each
**   iteration but the first 4;
** - layers (the period holds by shape alone): no step, a graph launch an
**   iteration at most;
** - the work after the loop (no period; 30 iterations): the steps end at its
**   second unit that ends at another sequence, and it is replayed whole: 30
**   graph launches at most. */
/* LOOP_STEPS_POLL: the step programs with FUZZ_STEPS_POLL, whose host polls
** (works 1 ms, more than GRAPHSHIM_MAX_DEFER_US, 50 us) in a loop of one
** kernel repeated, which loop bodies hold until the watchdog stops them, then
** after the first step of every iteration: the stream holds no steps where its
** bodies stopped for the watchdog, and the tree's cuts end its waits: at most
** 8 watchdog bails (report: graphshim's). */
int oracle_steps(const struct loop_setting *ls, const char *out, const char *err, const char *report,
                 const char *base, const char *shim, char *why, size_t len);

#endif
