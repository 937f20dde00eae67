/*
** test_period.c: steps, a period found in a sequence (policy/rules/step.h),
** over the fake driver: periodprog's loops that repeat a step many times
** between synchronizes, each run with and without graphshim (the output must
** be the same), and what the report says was replayed.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define PERIODPROG BUILD_DIR "/tests/periodprog"

/* Runs scenario under graphshim with the settings of env (NULL-terminated, up
** to 6) and without it, checks that the outputs are the same, and returns the
** report (freed by the caller).  The watchdog waits a second and the gain
** check is off (unless env turns it on): a busy machine's stalls and timer
** jitter are no part of these counts. */
static char *report_of(const char *scenario, const char *iters, const char *const *env)
{
    const char *argv[] = {PERIODPROG, scenario, iters, NULL};
    const char *e[10] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_MAX_DEFER_US=1000000", "GRAPHSHIM_GAIN_CHECK=0"};
    struct run base, r;
    char *report;

    for (int i = 0; env && env[i] && i < 6; i++)
        e[i + 3] = env[i];
    run_prog(&base, RUN_BARE, NULL, argv, 30);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", scenario, base.err);
    cr_assert_eq(count_lines(base.out, scenario), atoi(iters), "%s", base.out);
    run_prog(&r, run_lib(e), e, argv, 30);
    cr_assert_eq(r.status, 0, "%s under graphshim: %s", scenario, r.err);
    cr_assert_str_eq(r.out, base.out, "%s: graphshim changed the output", scenario);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report);
    run_free(&base), run_free(&r);
    return report;
}

/* Of the report's sequences of `ops` ops, the one replayed most: its count of
** `key` ("replays", "graph_launches", "seen"); -1 where there is none. */
static long seq(const char *report, int ops, const char *key)
{
    char pat[32];
    long best = -1, best_replays = -1;

    snprintf(pat, sizeof pat, "{\"ops\": %d, \"seen\"", ops);
    for (const char *p = strstr(report, pat); p; p = strstr(p + 1, pat)) {
        const char *e = strchr(p, '}');
        char *row = e ? strndup(p, (size_t)(e - p + 1)) : NULL;
        if (row && total(row, "replays") > best_replays) {
            best_replays = total(row, "replays");
            best = total(row, key);
        }
        free(row);
    }
    return best;
}

/* A 36-op training step, 100 steps a synchronize, 6 synchronizes: the first
** segment (3,600 ops) runs eagerly and shows the step; from the second on, the
** segment ends at every step, and after two steps eagerly (the warm-up) each
** step is replayed as one graph of 36 ops, its four changed scalars set in
** place: about 98 replays a synchronize, a graph launch each.  Without steps
** (GRAPHSHIM_STEPS=0) the 3,600-op sequence, seen once a synchronize, is
** replayed whole at best and the step is no sequence of its own. */
Test(period, a_step_repeated_100_times_a_synchronize_is_replayed_as_one_graph_a_step, .timeout = 60)
{
    char *report = report_of("step36x100", "6", NULL);
    long replays = seq(report, 36, "replays");

    cr_assert_geq(replays, 5 * 95, "%s", report);
    cr_assert_leq(seq(report, 36, "graph_launches"), replays + replays / 10, "%s", report);
    cr_assert_eq(seq(report, 3600, "replays"), -1, "a sequence of 100 steps is listed: %s", report);
    cr_assert_geq(total_f(report, "hit_rate"), 0.8, "%s", report);
    free(report);

    report = report_of("step36x100", "6", (const char *[]){"GRAPHSHIM_STEPS=0", NULL});
    cr_assert_leq(seq(report, 36, "replays"), 0, "without steps: %s", report);
    free(report);
}

/* "GRAPHSHIM_TEST_DROP_RULE=rule" in buf, or NULL where rule is NULL (none). */
static const char *drop_var(char *buf, size_t len, const char *rule)
{
    if (!rule)
        return NULL;
    snprintf(buf, len, "GRAPHSHIM_TEST_DROP_RULE=%s", rule);
    return buf;
}

/* The report of scenario (iters iterations) where a graph launch costs the
** host graph_us and a launch 1 us (the fake's virtual clock, graphshim's
** too), the gain check on, without rule where one is named. */
static char *losing_report(const char *scenario, const char *iters, const char *graph_us, const char *rule)
{
    char glaunch[64], drop[64];
    const char *env[] = {"FAKECUDA_CLOCK=virtual", "GRAPHSHIM_TEST_CLOCK=fake", "FAKECUDA_LAUNCH_US=1", glaunch,
                         "GRAPHSHIM_GAIN_CHECK=1", NULL, NULL};

    snprintf(glaunch, sizeof glaunch, "FAKECUDA_GRAPH_LAUNCH_US=%s", graph_us);
    env[5] = drop_var(drop, sizeof drop, rule);
    return report_of(scenario, iters, env);
}

/* The replays of losing_report's sequence of ops ops (seq). */
static long losing_replays(const char *scenario, const char *iters, const char *graph_us, const char *rule, int ops)
{
    char *report = losing_report(scenario, iters, graph_us, rule);
    long n = seq(report, ops, "replays");

    free(report);
    return n;
}

/* scenario's 36-op steps, 100 a synchronize, 6 times, where a graph launch
** costs the host 100 us: each step's replay takes the loop longer than its
** eager run.  With rule, the step's graph is tried after its first replays
** and runs eagerly for good; without it, the graph is replayed at every step. */
static void step_loses_and_runs_eagerly(const char *scenario, const char *rule)
{
    char *report = losing_report(scenario, "6", "100", NULL);

    cr_assert_eq(total(strstr(report, "\"bails\""), "no-gain"), 1, "%s", report);
    cr_assert_lt(seq(report, 36, "replays"), 50, "%s", report);
    free(report);

    report = losing_report(scenario, "6", "100", rule);
    cr_assert_geq(seq(report, 36, "replays"), 5 * 95, "without %s: %s", rule, report);
    free(report);
}

/* Each step timed to the next step's first op (rule gain-next); without the
** rule only the last step before each synchronize is timed. */
Test(period, a_step_whose_replays_lose_runs_eagerly, .timeout = 60)
{
    step_loses_and_runs_eagerly("step36x100", "gain-next");
}

/* The host polls the stream with cuStreamQuery after each step until it is
** idle: the query that finds it idle ends the step's time as a synchronize's
** return does (rule gain-query), and a step a query found busy, not timed so,
** is timed to the stream's next op (rule gain-query-next); without both no
** segment a query ends is timed.  (Either alone times this step.) */
Test(period, a_step_that_a_polled_query_ends_is_judged, .timeout = 60)
{
    step_loses_and_runs_eagerly("step36-poll", "gain-query,gain-query-next");
}

/* The eager time of scenario's 36-op step, 5 ms of the host's own work after
** each step's wait, rule dropped (or none). */
static long eager_us_after_wait(const char *scenario, const char *rule)
{
    char drop[64];
    const char *env[] = {"FAKECUDA_CLOCK=virtual", "GRAPHSHIM_TEST_CLOCK=fake", "PERIODPROG_AFTER_US=5000",
                         "GRAPHSHIM_GAIN_CHECK=1", drop_var(drop, sizeof drop, rule), NULL};
    char *report = report_of(scenario, "6", env);
    long us = seq(report, 36, "eager_us");

    cr_assert_geq(us, 0, "%s: no eager time: %s", scenario, report);
    free(report);
    return us;
}

/* A step the host polls to idle, or waits for by an event's synchronize, then
** 5 ms of its own work: timed to the query that finds the stream idle (rule
** gain-query) or to the synchronize's return (rule gain-event-sync), the GPU's
** time, not the host's after it; without the rule, at the next op (rule
** gain-query-next), the 5 ms in. */
Test(period, a_step_is_timed_to_the_wait_not_to_the_host_after_it, .timeout = 60)
{
    cr_assert_lt(eager_us_after_wait("step36-poll", NULL), 4000);
    cr_assert_geq(eager_us_after_wait("step36-poll", "gain-query"), 5000, "without gain-query");
    cr_assert_lt(eager_us_after_wait("step36-evsync", NULL), 4000);
    cr_assert_geq(eager_us_after_wait("step36-evsync", "gain-event-sync"), 5000, "without gain-event-sync");
}

/* An event recorded on a second stream and synchronized after each step: the
** event's synchronize ends the step's segment (a synchronize of no stream) and
** its return times it (rule gain-event-sync); without it, the next op does
** (rule gain-query-next: a step a synchronize ended that its return did not
** time); without both only the last step before each iteration's synchronize
** is timed. */
Test(period, a_step_that_an_event_synchronize_ends_is_judged, .timeout = 60)
{
    step_loses_and_runs_eagerly("step36-evsync", "gain-event-sync,gain-query-next");
}

/* One kernel and an event record, 50 times an iteration, then the kernel
** before the synchronize: the one-op sequence is learned where the
** synchronize ends it (a short sequence on trial) and replayed where the
** records end it, shorter than GRAPHSHIM_MIN_OPS.  Graphed, it is timed there
** too (rule gain-short-end), and a graph launch of 100 us loses at once;
** without the rule only the one replay before each synchronize is timed, and
** the records' 50 are replayed untimed. */
Test(period, a_short_graph_that_event_records_end_is_judged, .timeout = 60)
{
    cr_assert_lt(losing_replays("step1-record", "6", "100", NULL, 1), 50);
    cr_assert_geq(losing_replays("step1-record", "6", "100", "gain-short-end", 1), 150, "without gain-short-end");
}

/* 2-op steps, 10 a synchronize, a graph launch costing 20 ms: the 8-op
** segments that the next step ends lose; their trial times no pair (each eager
** run is held as a step and issued at its end), and their replays took twice
** the eager time or more: the window that found them slow stands (rule
** gain-unpaired).  The 4 ops before each synchronize, a
** prefix of those 8, were held so when asked to run eagerly: they are asked
** again at their 8th, 16th, ... replay (rule gain-retime), timed once the 8-op
** graph is gone, and dropped too.  Rule gain-bound drops both as well, once
** their replays took twice their held runs' time (over the fake a held run
** takes as long as an eager one): without it and either rule, a graph is kept
** for good (without gain-unpaired alone, the 8-op graph is dropped 4 replays
** later; without gain-bound alone, gain-retime drops the 4-op one). */
Test(period, graphs_whose_eager_runs_are_held_are_judged_still, .timeout = 60)
{
    cr_assert_lt(losing_replays("step2x10", "100", "20000", NULL, 8), 10);
    cr_assert_lt(losing_replays("step2x10", "100", "20000", NULL, 4), 10);
    cr_assert_geq(losing_replays("step2x10", "100", "20000", "gain-unpaired", 8), 12, "without gain-unpaired");
    cr_assert_gt(losing_replays("step2x10", "100", "20000", "gain-unpaired,gain-bound", 8), 150,
                 "without gain-unpaired and gain-bound");
    cr_assert_lt(losing_replays("step2x10", "100", "20000", "gain-bound", 4), 40, "without gain-bound");
    cr_assert_gt(losing_replays("step2x10", "100", "20000", "gain-retime,gain-bound", 4), 80,
                 "without gain-retime and gain-bound");
}

/* 10 steps a synchronize: each step one graph from the second segment on (but
** the warm-up's two), not the 360-op sequence in early chunks. */
Test(period, a_step_repeated_10_times_a_synchronize_is_replayed_as_one_graph_a_step, .timeout = 60)
{
    char *report = report_of("step36x10", "12", NULL);
    long replays = seq(report, 36, "replays");

    cr_assert_geq(replays, 11 * 10 - 4, "%s", report);
    cr_assert_leq(seq(report, 36, "graph_launches"), replays + replays / 10, "%s", report);
    cr_assert_leq(seq(report, 360, "replays"), 0, "%s", report);
    free(report);

    report = report_of("step36x10", "12", (const char *[]){"GRAPHSHIM_STEPS=0", NULL});
    cr_assert_leq(seq(report, 36, "replays"), 0, "without steps: %s", report);
    cr_assert_gt(seq(report, 360, "replays"), 0, "without steps: %s", report);
    free(report);
}

/* Five ops of other work before the steps each synchronize: the period is
** found from the segment's end backwards, and the head is a sequence of its
** own, ended before the first step. */
Test(period, a_head_before_the_steps_is_a_sequence_of_its_own, .timeout = 60)
{
    char *report = report_of("step36-head", "12", NULL);

    cr_assert_geq(seq(report, 36, "replays"), 11 * 10 - 4, "%s", report);
    cr_assert_geq(seq(report, 5, "replays"), 12 - 3, "%s", report);
    free(report);
}

/* A step of 2,000 ops (five kernels of one shape in turn: a period of five by
** shape, of 2,000 byte for byte), 4 steps a synchronize: replayed whole from
** the second segment on, but for the warm-up's two. */
Test(period, a_step_of_2000_ops_is_replayed, .timeout = 60)
{
    char *report = report_of("step2000", "6", NULL);

    cr_assert_geq(seq(report, 2000, "replays"), 5 * 4 - 3, "%s", report);
    cr_assert_leq(seq(report, 5, "replays"), 0, "%s", report);
    free(report);
}

/* One kernel the same 500 times a synchronize: a loop body's (body.h), which
** steps leave alone. */
Test(period, a_one_op_period_stays_a_loop_body, .timeout = 60)
{
    char *report = report_of("step1", "6", NULL);

    cr_assert_gt(total(report, "body_graphs"), 0, "%s", report);
    cr_assert_geq(total_f(report, "hit_rate"), 0.9, "%s", report);
    cr_assert_leq(seq(report, 8, "replays"), 0, "%s", report);
    free(report);
}

/* The 51st step of two segments breaks at its 21st op (another shape): the
** ops held up to there go out eagerly, in order (the same output), counted
** as one mismatch each time; the broken step alone is lost, the next ones
** replay. */
Test(period, a_step_that_breaks_goes_out_eagerly_and_the_steps_go_on, .timeout = 60)
{
    char *report = report_of("step36-break", "6", NULL);

    cr_assert_eq(total(report, "mismatch"), 2, "%s", report);
    cr_assert_geq(seq(report, 36, "replays"), 5 * 95 - 4, "%s", report);
    free(report);
}

/* Steps ended by an event record, a wait of another stream and a host function
** there (a JAX step's end): each step is a segment, replayed as one graph; a
** query of an event long done between steps ends nothing, and the steps are
** found in the segment of 100 as without it. */
Test(period, steps_are_replayed_across_event_records_host_functions_and_queries, .timeout = 60)
{
    const char *scenario[2] = {"step36-events", "step36-query"};

    for (int i = 0; i < 2; i++) {
        char *report = report_of(scenario[i], "6", NULL);
        long replays = seq(report, 36, "replays");
        cr_assert_geq(replays, 5 * 95, "%s: %s", scenario[i], report);
        cr_assert_leq(seq(report, 36, "graph_launches"), replays + replays / 10, "%s: %s", scenario[i], report);
        free(report);
    }
}

/* Three segments of 100 steps, then a synchronize every 50 ops of other work:
** two of its segments end at a unit that is not the step, and the steps end;
** the 50 ops are a sequence of their own, replayed whole. */
Test(period, the_steps_end_with_their_loop, .timeout = 60)
{
    char *report = report_of("phases", "12", NULL);

    cr_assert_geq(seq(report, 36, "replays"), 2 * 95, "%s", report);
    cr_assert_geq(seq(report, 50, "replays"), 12 - 3 - 5, "%s", report);
    free(report);
}

/* phases with a module unloaded before the 50 ops: every stream forgets what
** it learned, its step too, so the 50-op sequence is learned as on a new
** stream: two segments eagerly, then replayed whole every time.  A step kept
** across the unload cuts the first segments at its length.  (The gain check
** off: its trial would take one replay.) */
Test(period, a_module_unload_forgets_the_step, .timeout = 60)
{
    char *report = report_of("phases-unload", "12", (const char *[]){"GRAPHSHIM_GAIN_CHECK=0", NULL});

    cr_assert_eq(seq(report, 50, "replays"), 12 - 3 - 2, "%s", report);
    cr_assert_geq(seq(report, 36, "replays"), 2 * 95, "%s", report);
    free(report);
}

/* How much longer, in ms, a program across streams of the fuzzer's (fuzzprog
** xs SEED; FUZZ_XS_LIST=1 lists its step) takes with graphshim where a graph
** launch costs 20 ms and a launch 1 us, rule (where not NULL) dropped: both
** runs on the virtual clocks, in the fake's dependency order, with groups
** across streams.  The outputs must be the same. */
static long long xs_slower_ms(const char *seed, const char *rule)
{
    char drop[64];
    const char *argv[] = {BUILD_DIR "/tests/fuzzprog", "xs", seed, NULL};
    const char *env[] = {"FAKECUDA_CLOCK=virtual", "GRAPHSHIM_TEST_CLOCK=fake", "FAKECUDA_GRAPH_LAUNCH_US=20000",
                         "FAKECUDA_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=0", "FAKECUDA_ORDER=deps",
                         "GRAPHSHIM_XSTREAM=1", "FAKECUDA_STATS=@/stats", drop_var(drop, sizeof drop, rule), NULL};
    struct run base, r;
    long long t[2];

    run_prog(&base, RUN_BARE, env, argv, 30);
    run_prog(&r, run_lib(env), env, argv, 30);
    cr_assert_eq(r.status, 0, "xs %s under graphshim: %s", seed, r.err);
    cr_assert_str_eq(r.out, base.out, "xs %s: graphshim changed the output", seed);
    for (int i = 0; i < 2; i++) {
        char *stats = run_file(i ? &r : &base, "stats");
        const char *c = stats ? strstr(stats, "clock_ns ") : NULL;
        cr_assert_not_null(c, "xs %s: no clock in the fake's stats", seed);
        t[i] = strtoll(c + 9, NULL, 10);
        free(stats);
    }
    run_free(&base), run_free(&r);
    return (t[1] - t[0]) / 1000000;
}

/* xs programs whose graphs lose (20 ms a graph launch) where no window of
** timed replays against timed eager runs judges them, each kept by the
** engine without the rule named (ms lost: under `with`, at least `without`):
** - xs 126, gain-bound: a group of two streams a step, a context synchronize
**   after each; asked to run eagerly to be timed, its run meets a prefix that
**   another sequence holds, is held, and bails out: never timed eagerly.  A
**   run held and then issued eagerly takes no less than an eager one.
** - xs 155, gain-group-end: a group ended each step by a call outside its
**   narrow case, no synchronize until the end: timed to the origin's next op.
** - xs 74, gain-order-end: a blocking stream's segment that a legacy-stream op
**   issues every step: timed to the stream's next op.
** - xs 255, gain-query-on: a one-op step ended by a query that finds the
**   stream busy, then records, a context synchronize every step: the records
**   dropped the step the query left to be timed, eagerly and replayed.
** - xs 66, gain-own-time: one thread's streams: an eager run of a 5-op
**   sequence (2.7 us) took 20-40 ms on the host's clock, through the graph
**   launches of the other streams, as long as its replay.
** - xs 154, gain-query-next: a one-op segment a query found busy, the next
**   op coming before any synchronize: the next segment dropped its timing. */
struct losing_case {
    char seed[8], rule[24];
    int with, without;
};

static struct losing_case losing[] = {
    {"126", "gain-bound", 300, 1000},       {"155", "gain-group-end", 400, 1000},
    {"74", "gain-order-end", 1300, 2500},   {"255", "gain-query-on", 500, 800},
    {"66", "gain-own-time", 750, 900},      {"154", "gain-query-next", 1200, 3000},
};

ParameterizedTestParameters(period, a_losing_graph_is_judged_however_its_step_ends)
{
    return cr_make_param_array(struct losing_case, losing, sizeof losing / sizeof losing[0]);
}

ParameterizedTest(struct losing_case *c, period, a_losing_graph_is_judged_however_its_step_ends, .timeout = 60)
{
    cr_assert_lt(xs_slower_ms(c->seed, NULL), c->with, "xs %s", c->seed);
    cr_assert_geq(xs_slower_ms(c->seed, c->rule), c->without, "xs %s without %s", c->seed, c->rule);
}

/* Eight layers of three kernels on their own weights: the same shapes every
** three ops, but no op repeats byte for byte, so no step: the segment is
** replayed whole, not in pieces. */
Test(period, layers_on_other_weights_are_no_step, .timeout = 60)
{
    char *report = report_of("layers", "8", NULL);

    cr_assert_geq(seq(report, 24, "replays"), 8 - 3, "%s", report);
    cr_assert_eq(seq(report, 9, "replays"), -1, "%s", report);
    free(report);
}

/* Steps keep the output under settings that move where held work goes out. */
struct period_case {
    char scenario[16], setting[40];
};

static struct period_case cases[] = {
    {"step36x100", "GRAPHSHIM_WARMUP=1"},    {"step36x100", "GRAPHSHIM_CHUNK_OPS=1"},
    {"step36-break", "GRAPHSHIM_WARMUP=1"},  {"step36-break", "GRAPHSHIM_MAX_GRAPHS=1"},
    {"step36-head", "GRAPHSHIM_MIN_OPS=1"},  {"step36-head", "GRAPHSHIM_CHUNK_OPS=0"},
    {"step2000", "GRAPHSHIM_MAX_DEFER_US=1"}, {"step36x10", "GRAPHSHIM_GAIN_CHECK=0"},
};

ParameterizedTestParameters(period, steps_keep_the_output_under_every_setting)
{
    return cr_make_param_array(struct period_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct period_case *c, period, steps_keep_the_output_under_every_setting, .timeout = 60)
{
    free(report_of(c->scenario, "6", (const char *[]){c->setting, NULL}));
}
