/*
** test_engine.c: the engine over the fake driver.
**
** For every guard rule, guardprog runs a scenario without graphshim, with it, and
** with the rule turned off (the test build, GRAPHSHIM_TEST_DROP_RULE): the output with graphshim
** must equal the output without it, the engine must really have held ops, and
** without the rule the output must be wrong (or the program must hang, for the
** watchdog).  Then the knobs that shape learning, and threads.  Last, work
** that repeats inside a segment or with other arguments: the same output under
** several settings, and the share of ops replayed.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"

struct rule {
    char scenario[16], rule[16];
};

static struct rule rules[] = {
    {"sync", "sync"},         {"event", "event"},     {"hostfn", "hostfn"},
    {"alloc", "alloc"},       {"syncop", "syncop"},   {"pageable-d2h", "pageable-d2h"},
    {"legacy", "legacy"},     {"capture", "capture"}, {"unclassified", "unclassified"},
    {"params", "params"},     {"watchdog", "watchdog"}, {"staging", "staging"},
    {"stream-destroy", "stream-destroy"}, {"module", "module"},
    {"many-params", "params"}, {"big-struct", "params"},
    {"body-poll", "watchdog"}, {"body-module", "module"}, {"two-ctx", "current"},
    {"two-ctx-pt", "current"}, {"two-proc", "watchdog"}, {"host-bind", "host-bind"},
    {"copy-range", "copy-range"}, {"event-legacy", "legacy"}, {"legacy-records", "legacy"},
    /* Each rule's other ways in, where a planted bug in one (tests/mutants/list)
    ** went unseen: a record on the per-thread stream (cuEventRecord_ptsz), the
    ** older host function (cuStreamAddCallback), a synchronous byte memset, an
    ** unlisted entry point fetched through cuGetProcAddress, and a graph whose
    ** only host copy is a device-to-host one; a held pageable copy that bails
    ** out, issued eagerly. */
    {"staging-bail", "staging"}, {"event-pt", "event"}, {"callback", "hostfn"}, {"syncop-memset", "syncop"},
    {"unclass-proc", "unclassified"}, {"host-bind-d2h", "host-bind"}, {"attr-lowered", "smem-lowered"},
};

ParameterizedTestParameters(engine, guard_rule)
{
    return cr_make_param_array(struct rule, rules, sizeof rules / sizeof rules[0]);
}

ParameterizedTest(struct rule *r, engine, guard_rule, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, r->scenario, "8", NULL};
    char drop[64];
    /* The watchdog's scenarios poll memory with no CUDA call: their time is
    ** the host's, which no virtual clock can count. */
    int host = strcmp(r->rule, "watchdog") == 0;
    const char *drop_env[] = {drop, "GRAPHSHIM_REPORT=@/report.json",
                              host ? "GRAPHSHIM_TEST_CLOCK=host" : NULL, "FAKECUDA_CLOCK=host", NULL};
    const char *on_env[] = {"GRAPHSHIM_REPORT=@/report.json", host ? "GRAPHSHIM_TEST_CLOCK=host" : NULL,
                            "FAKECUDA_CLOCK=host", NULL};
    struct run base, on, off;
    char *report;

    snprintf(drop, sizeof drop, "GRAPHSHIM_TEST_DROP_RULE=%s", r->rule);
    run_prog(&base, 0, NULL, argv, 20);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", r->scenario, base.err);
    cr_assert(strlen(base.out) > 0);

    run_prog(&on, 1, on_env, argv, 20);
    cr_assert_eq(on.status, 0, "%s under graphshim: %s", r->scenario, on.err);
    cr_assert_str_eq(on.out, base.out, "%s: graphshim changed the output", r->scenario);
    report = run_file(&on, "report.json");
    cr_assert_gt(total(report, "ops_held"), 0, "%s: the engine held nothing, so the test proves nothing: %s",
                 r->scenario, report);
    free(report);

    run_prog(&off, RUN_TEST_BUILD, drop_env, argv, 10);
    cr_assert(off.status != 0 || strcmp(off.out, base.out) != 0,
              "%s: without the %s rule the output is still right, so the test cannot fail", r->scenario, r->rule);
    run_free(&base), run_free(&on), run_free(&off);
}

/* The switch is the test build's alone: the library users run replays as ever
** under it, and names it as no setting of its own.  In the test build a value
** that names no rule gets one line that says so, and every rule stays on. */
Test(engine, only_the_test_build_turns_a_rule_off)
{
    const char *argv[] = {GUARDPROG, "sync", "8", NULL};
    const char *env[] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_TEST_DROP_RULE=sync", NULL};
    const char *bad[] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_TEST_DROP_RULE=abc", NULL};
    struct run base, r;
    char *report;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, RUN_USERS_LIB, env, argv, 20);
    cr_assert_str_eq(r.out, base.out, "the users' library turned the sync rule off");
    cr_assert(strstr(r.err, "GRAPHSHIM_TEST_DROP_RULE is not a graphshim setting"), "%s", r.err);
    report = run_file(&r, "report.json");
    cr_assert_eq(total(report, "replays"), 8 - 2, "%s", report);
    free(report), run_free(&r);

    run_prog(&r, RUN_TEST_BUILD, bad, argv, 20);
    cr_assert_str_eq(r.out, base.out);
    cr_assert_eq(count_lines(r.err, "GRAPHSHIM_TEST_DROP_RULE"), 1, "not one line: %s", r.err);
    cr_assert(strstr(r.err, "GRAPHSHIM_TEST_DROP_RULE=abc names no rule ("), "%s", r.err);
    cr_assert(strstr(r.err, "every rule stays on"), "%s", r.err);
    report = run_file(&r, "report.json");
    cr_assert_eq(total(report, "replays"), 8 - 2, "%s", report);
    free(report), run_free(&r), run_free(&base);
}

/* Graphshim under test reads the fake driver's virtual clock (run.c): it moves
** only where time is spent on purpose, so what the engine decides by time
** (stalls, a slow host, the gain check) counts the same on a busy machine.
** The host's clock, for what is about real time: the watchdog's thread while
** a host polls memory with no CUDA call, two threads that race. */
#define HOST_CLOCK "GRAPHSHIM_TEST_CLOCK=host", "FAKECUDA_CLOCK=host"

/* Replays of a sequence seen every iteration: the first WARMUP run eagerly.  The
** gain check is off (over the fake driver a graph is no faster than eager work,
** and which one a noisy clock favours is not what these tests are about), and the
** watchdog waits a second (a test process descheduled for milliseconds on a busy
** machine must not change the count), unless env sets them otherwise; the
** clock is the fake driver's virtual one (run.c), unless env says HOST_CLOCK. */
static long replays_with(const char *scenario, const char *const *env, const char *iters, char **out)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    const char *e[12] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0",
                         "GRAPHSHIM_MAX_DEFER_US=1000000"};
    struct run base, r;
    char *report;
    long n;

    for (int i = 0; env && env[i] && i < 6; i++)
        e[i + 3] = env[i];
    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, run_lib(e), e, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    n = total(report, "replays");
    if (out)
        *out = report;
    else
        free(report);
    run_free(&base), run_free(&r);
    return n;
}

/* A refused begin of the program's capture leaves none open (rule
** capture-refused): graphshim holds and replays again after it, where it held
** nothing for the rest of the process. */
Test(engine, a_refused_capture_begin_leaves_none_open, .timeout = 60)
{
    long on = replays_with("capture-refused", NULL, "12", NULL);
    long off = replays_with("capture-refused", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=capture-refused", NULL}, "12",
                            NULL);
    cr_assert_geq(on, 6, "%ld replays in 12 iterations after a refused begin", on);
    cr_assert_eq(off, 0, "without the rule: %ld replays", off);
}

Test(engine, an_event_query_does_not_cut_the_sequence)
{
    char *report;

    /* Four ops an iteration, an event polled after the second: one sequence,
    ** replayed from the third iteration on.  A query that resolved every stream
    ** would cut it in two, each half replayed: twice as many replays. */
    long n = replays_with("event-poll", NULL, "12", &report);
    cr_assert_eq(n, 12 - 2, "%s", report);
    cr_assert_eq(total(report, "ops_replayed"), 4 * (12 - 2), "%s", report);
    free(report);
}

Test(engine, warmup_decides_when_a_sequence_is_graphed)
{
    cr_assert_eq(replays_with("sync", NULL, "8", NULL), 8 - 2);
    cr_assert_eq(replays_with("sync", (const char *[]){"GRAPHSHIM_WARMUP=5", NULL}, "8", NULL), 8 - 5);
    cr_assert_eq(replays_with("sync", (const char *[]){"GRAPHSHIM_WARMUP=9", NULL}, "8", NULL), 0);
}

Test(engine, launch_attributes_are_keyed_by_their_value_alone)
{
    /* The bytes of an attribute's union that its id does not use differ every call. */
    cr_assert_eq(replays_with("attrs", NULL, "8", NULL), 8 - 2);
}

Test(engine, attribute_sets_that_change_no_result_keep_the_graphs)
{
    /* func-attr's iterations raise a kernel's dynamic shared memory limit, lower
    ** it, set it to its value, and now and then change the carveout (a hint): two
    ** sequences, whose graphs are built once, and again after each of the 4 real
    ** changes (a cluster attribute, at iterations 9, 19, 29, 39), which drop
    ** every graph.  Were every set such a change, every replay would build its
    ** graph anew (PyTorch's training steps did: 455 graphs for 457 graph
    ** launches on an H100). */
    char *report;
    long with, without;

    replays_with("func-attr", NULL, "40", &report);
    with = total(report, "graphs_captured");
    cr_assert_eq(total(report, "replays"), 2 * (40 - 2), "%s", report); /* a rebuilt graph still replays */
    cr_assert_eq(with, 2 + 2 * 4, "%s", report);
    free(report);
    replays_with("func-attr", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=attr-keep", NULL}, "40", &report);
    without = total(report, "graphs_captured");
    cr_assert_geq(without, 60, "%s", report);
    free(report);
}

Test(engine, learning_rests_where_nothing_repeats_and_resumes_when_a_segment_comes_back)
{
    /* new-then-same: 300 segments that are all new, then 300 of one sequence.
    ** After 64 new segments in a row learning rests, 64 segments; then 16 new
    ** ones (a quarter: it rested before, and nothing came back) start a rest of
    ** 128, and 16 more one of 256 at segment 289; the 2nd repeated segment
    ** finds the 1st's fingerprint, learning resumes, and the sequence is stable
    ** 2 segments later: replayed from the 5th.  Rested: 64 + 128 + 12 + 2.
    ** Without the fingerprints the rest would run on for 242 more segments. */
    char *report;

    replays_with("new-then-same", NULL, "600", &report);
    cr_assert_eq(total(report, "replays"), 300 - 4, "%s", report);
    cr_assert(strstr(report, "\"segments_rested\": 206,"), "%s", report);
    free(report);
}

Test(engine, a_segment_that_comes_back_breaks_a_run_of_new_ones)
{
    /* new-and-same: 200 new segments, each followed by the same 3-op sequence,
    ** replayed from the 3rd on.  A run of new segments ends at each repeated
    ** one, so learning never rests and the sequence is replayed 198 times.
    ** Were the runs counted across it, learning would rest after 64 new
    ** segments, for two segments at least each time (until the sequence's
    ** fingerprint comes back), and some replays would be lost. */
    char *report;

    replays_with("new-and-same", NULL, "200", &report);
    cr_assert_eq(total(report, "replays"), 200 - 2, "%s", report);
    cr_assert(strstr(report, "\"segments_rested\": 0,"), "%s", report);
    free(report);
}

Test(engine, pure_queries_inside_a_sequence_do_not_cut_it)
{
    char *report;
    cr_assert_eq(replays_with("queries", NULL, "8", &report), 8 - 2, "%s", report);
    cr_assert(strstr(report, "\"unclassified\": 0"), "%s", report);
    free(report);
}

Test(engine, short_sequences_are_not_graphed)
{
    cr_assert_eq(replays_with("single", NULL, "8", NULL), 0);
    cr_assert_eq(replays_with("single", (const char *[]){"GRAPHSHIM_MIN_OPS=1", NULL}, "8", NULL), 8 - 2);
}

Test(engine, a_lone_launch_is_graphed_where_its_graph_is_faster)
{
    const char *dear_launches[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_LAUNCH_US=300", NULL};
    const char *no_trial[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_LAUNCH_US=300", "GRAPHSHIM_SHORT_TRIAL=0", NULL};
    char *report;

    /* One launch and a synchronize an iteration (a residual read back), each
    ** launch 300 us of the host's time, a graph's launch none: graphed on
    ** trial from the third iteration, its replays faster, kept; run eagerly
    ** twice more once, after its first window (timed warm).  Without the
    ** trial, never graphed. */
    long n = replays_with("single", dear_launches, "40", &report);
    cr_assert_null(strstr(report, "no-gain"), "%s", report);
    cr_assert_geq(n, 40 - 2 - 2 - 1, "%s", report);
    free(report);
    cr_assert_eq(replays_with("single", no_trial, "40", NULL), 0);
}

Test(engine, a_busy_gpus_sequence_runs_eagerly_where_holding_delays_it)
{
    const char *env[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_KERNEL_US=3000", NULL};
    const char *dropped[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_KERNEL_US=3000",
                             "GRAPHSHIM_TEST_DROP_RULE=busy-gpu,gain-strict", NULL};
    char *report;

    /* Three kernels of 3 ms of GPU time an iteration, the host issuing them in
    ** 0.4 ms: replayed, the GPU begins 0.4 ms later, each replay about 4 %
    ** slower than an eager run, within the 10 % a graph may lose to noise.  The
    ** GPU busy 20 times as long as the host issued: judged strictly, the window
    ** of 8 and the trial's 8 pairs find the replays slower, and the sequence
    ** runs eagerly for good: 1 + 8 + 8 replays.  A loaded test machine's
    ** timer jitter (eager runs 9 to 12 ms) keeps the graph in one trial of
    ** about 8; one window passes, and the next window and trial drop it: at
    ** most 1 + 8 + 16 + 8 + 8 + 16 replays.  Without the rule the graph stays
    ** (80 iterations, 70 replays or more), unless rule gain-strict's trial
    ** finds it: both are off there. */
    long n = replays_with("gpubound", env, "80", &report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    cr_assert_leq(n, 1 + 8 + 16 + 8 + 8 + 16, "%s", report);
    free(report);
    n = replays_with("gpubound", dropped, "80", &report);
    cr_assert_null(strstr(report, "no-gain"), "%s", report);
    cr_assert_geq(n, 70, "%s", report);
    free(report);
}

Test(engine, a_busy_gpus_sequence_whose_eager_runs_were_held_as_loop_bodies_is_timed)
{
    const char *env[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_KERNEL_US=3000", NULL};
    char *report;

    /* The same with the middle kernel four times, equal (four matrix products
    ** of one size): while the sequence is learned, the search for loop bodies
    ** holds its repeated kernel, so no eager run of it is timed.  Once
    ** replayed, it runs eagerly once to be timed, that search off; then the
    ** busy GPU's rule judges it and it runs eagerly (bounds as above, one
    ** replay more).  Without the timed run the gain check had nothing to judge
    ** by, and its 78 replays stayed. */
    long n = replays_with("gpubound-body", env, "80", &report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    cr_assert_leq(n, 2 + 8 + 16 + 8 + 8 + 16, "%s", report);
    free(report);
}

/* Rule capture-pays.  100 ops of as many shapes, each kernel 20 us of GPU time
** (2 ms a step, 10 us of it issuing, on the virtual clock): a graph saves such
** a step 1/400 of its time, 5 us, and its capture is estimated at 2 us an op
** (none measured yet), 200 us: it is graphed once seen 40 times.  In 30 steps
** nothing is captured; in 60 it replays.  Without the rule it is captured at
** its third step, and its replays lose to its eager runs (the gain check drops
** it).  A host-bound step of the same ops is graphed one step after the warmup
** (its first occurrence is timed first: 100 ops cost 200 us to capture). */
Test(engine, a_busy_gpus_long_sequence_is_graphed_once_its_graph_would_have_paid)
{
    const char *busy[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_KERNEL_US=20", NULL};
    const char *dropped[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_KERNEL_US=20", "GRAPHSHIM_TEST_DROP_RULE=capture-pays",
                             NULL};
    const char *host[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_LAUNCH_US=3", NULL};
    char *report;

    cr_assert_eq(replays_with("prompt", busy, "30", &report), 0, "%s", report);
    cr_assert_eq(total(report, "graphs_captured"), 0, "%s", report);
    free(report);
    long n = replays_with("prompt", busy, "60", &report);
    cr_assert(n > 0 && n <= 60 - 40, "%s", report);
    free(report);
    cr_assert_gt(replays_with("prompt", dropped, "30", &report), 0, "%s", report);
    cr_assert_gt(total(report, "graphs_captured"), 0, "%s", report);
    free(report);
    cr_assert_geq(replays_with("prompt", host, "30", &report), 30 - 5, "%s", report);
    free(report);
}

/* Rule failed-kept.  One launch and a synchronize a step, of 40 shapes in
** turn, each three times in a row, and every capture fails: each one-op
** sequence is stable after two steps and fails at its third.  The tree drops
** it before it comes back (a node has at most 32 children), and it is learned
** anew: without the rule it is captured again, and fails again, each round
** (119 failures in 360 steps); with it, once (40). */
Test(engine, a_one_op_sequence_whose_graph_failed_is_not_captured_again)
{
    const char *env[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_FAIL=cuStreamEndCapture:1+:CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                         NULL};
    const char *dropped[] = {"GRAPHSHIM_GAIN_CHECK=1",
                             "FAKECUDA_FAIL=cuStreamEndCapture:1+:CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                             "GRAPHSHIM_TEST_DROP_RULE=failed-kept", NULL};
    char *report;

    replays_with("singles", env, "360", &report);
    cr_assert_eq(total(report, "graph_failures"), 40, "%s", report);
    free(report);
    replays_with("singles", dropped, "360", &report);
    cr_assert_gt(total(report, "graph_failures"), 100, "%s", report);
    free(report);
}

Test(engine, a_lone_launch_whose_graph_is_slower_runs_eagerly)
{
    char *report;

    /* The same with launches at no cost and each graph launch 300 us: the first
    ** replay builds the graph, its first 4 timed replays are slower than the
    ** eager runs (rule gain-first), 8 trial pairs are too, and the sequence runs
    ** eagerly for good.  Without the rule the first window is 8 replays long. */
    long n = replays_with("single", (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_GRAPH_LAUNCH_US=300", NULL},
                          "40", &report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    cr_assert_eq(n, 1 + 4 + 8, "%s", report);
    free(report);
    n = replays_with("single",
                     (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_GRAPH_LAUNCH_US=300",
                                      "GRAPHSHIM_TEST_DROP_RULE=gain-first", NULL},
                     "40", &report);
    cr_assert_eq(n, 1 + 8 + 8, "%s", report);
    free(report);
}

Test(engine, a_short_sequence_whose_graph_is_a_little_slower_runs_eagerly)
{
    const char *env[] = {"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_LAUNCH_US=1000", "FAKECUDA_GRAPH_LAUNCH_US=1060",
                         "GRAPHSHIM_TEST_DROP_RULE=gain-calls", NULL};
    char *report;

    /* The same with each launch 1 ms of the host's time and each graph launch
    ** 6 % more: within the 10 % a long sequence's graph may lose to noise, but
    ** a sequence on trial (shorter than GRAPHSHIM_MIN_OPS) is judged strictly,
    ** and runs eagerly after its first window and a trial.  Judged like a long
    ** one, its graph would stay for all 38 replays.  (A one-op sequence's graph
    ** saves no driver call either, which rule gain-calls judges strictly too:
    ** it is off here, so that the rule for short sequences is what is seen.) */
    long n = replays_with("single", env, "40", &report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    cr_assert_eq(n, 1 + 4 + 8, "%s", report);
    free(report);
}

Test(engine, alternating_pointers_are_patched_into_one_graph)
{
    char *report;
    /* Two pointer sets alternate: one structure, stable after two iterations.
    ** Its graph is captured with the first set (the tree's); from then on each
    ** replay sets the 3 kernel nodes whose pointers changed, in place: 9 of the
    ** 10 replays (the first runs as captured), 27 nodes, and no other graph is
    ** captured or updated. */
    cr_assert_eq(replays_with("params", NULL, "12", &report), 12 - 2);
    cr_assert_eq(total(report, "graphs_captured"), 1, "%s", report);
    cr_assert_eq(total(report, "patched_launches"), 9, "%s", report);
    cr_assert_eq(total(report, "nodes_patched"), 27, "%s", report);
    free(report);
    /* Five sets: still the one graph, its nodes set for each replay.  Every
    ** replay is still right (the program checks its results). */
    cr_assert_eq(replays_with("params5", NULL, "40", &report), 40 - 2);
    cr_assert_eq(total(report, "graphs_captured"), 1, "%s", report);
    cr_assert_eq(total(report, "graph_failures"), 0, "%s", report);
    free(report);
    /* GRAPHSHIM_PATCH=0: byte-identical launches only, each set a sequence of its
    ** own, stable after two of its own. */
    cr_assert_eq(replays_with("params", (const char *[]){"GRAPHSHIM_PATCH=0", NULL}, "12", &report), 12 - 4);
    cr_assert_eq(total(report, "graphs_captured"), 2, "%s", report);
    cr_assert_eq(total(report, "patched_launches"), 0, "%s", report);
    free(report);
}

Test(engine, changing_scalars_update_nodes_in_place)
{
    char *report;
    long captured[2], rebuilt[2], patched[2];
    const char *iters[2] = {"200", "600"};

    /* scalars: 20 kernels whose scalar arguments change every iteration.  Each
    ** replay sets the changed kernel nodes of its graph in place: the captures
    ** and the graphs built again do not grow with the iterations; the nodes set
    ** do.  (Before, each new set of arguments captured the sequence again and
    ** updated the whole graph: 199 captures in 200 iterations of 10 kernels.)
    ** Early chunks off: where they end depends on the host's pace. */
    for (int i = 0; i < 2; i++) {
        cr_assert_geq(replays_with("scalars", (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", NULL}, iters[i], &report),
                      atol(iters[i]) - 3, "%s", report);
        captured[i] = total(report, "graphs_captured");
        rebuilt[i] = total(report, "recaptures");
        patched[i] = total(report, "nodes_patched");
        cr_assert_leq(captured[i], 1, "%s", report);
        free(report);
    }
    cr_assert_eq(captured[0], captured[1], "captures grew with iterations: %ld, %ld", captured[0], captured[1]);
    cr_assert_eq(rebuilt[0], rebuilt[1], "graphs built again grew with iterations: %ld, %ld", rebuilt[0],
                 rebuilt[1]);
    cr_assert_geq(patched[1], 19 * (600 - 4), "%ld nodes set in 600 iterations", patched[1]);
}

Test(engine, a_node_set_again_asks_the_driver_for_nothing_but_the_set)
{
    const char *env[] = {"FAKECUDA_LOG=@/fake.log", "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_CHUNK_OPS=0", NULL};
    const char *iters[2] = {"200", "600"};
    /* scalars sets its 20 kernel nodes at every replay; copies its four memset
    ** nodes and most of its four copy nodes, in up to 4 variants.  What each
    ** node was captured with is read from the graph once, at its first set,
    ** and kept (a graph's nodes never change: sets go to the executable): the
    ** driver's get-params calls stay at one a node however many sets follow.
    ** Read before every set, they grew with the sets, each a driver call. */
    const struct {
        const char *scenario, *get, *set;
        long nodes, sets;
    } c[3] = {
        {"scalars", "cuGraphKernelNodeGetParams", "cuGraphExecKernelNodeSetParams", 20, 19 * (600 - 4)},
        {"copies", "cuGraphMemsetNodeGetParams", "cuGraphExecMemsetNodeSetParams", 4 * 4, 4 * (600 - 10)},
        {"copies", "cuGraphMemcpyNodeGetParams", "cuGraphExecMemcpyNodeSetParams", 4 * 4, 600},
    };

    for (int k = 0; k < 3; k++) {
        long got[2], set[2];
        for (int i = 0; i < 2; i++) {
            const char *argv[] = {GUARDPROG, c[k].scenario, iters[i], NULL};
            struct run base, r;
            char *log;
            run_prog(&base, 0, NULL, argv, 20);
            run_prog(&r, 1, env, argv, 20);
            cr_assert_eq(r.status, 0, "%s", r.err);
            cr_assert_str_eq(r.out, base.out);
            log = run_file(&r, "fake.log");
            got[i] = count_lines(log, c[k].get);
            set[i] = count_lines(log, c[k].set);
            free(log);
            run_free(&base), run_free(&r);
        }
        cr_assert_geq(set[1], c[k].sets, "%s: %ld nodes set in 600 iterations", c[k].set, set[1]);
        cr_assert_leq(got[1], c[k].nodes, "%s: %ld calls for %ld sets", c[k].get, got[1], set[1]);
        cr_assert_eq(got[0], got[1], "%s: calls grew with the sets: %ld, %ld", c[k].get, got[0], got[1]);
    }
}

/* scenario for 200 and then 600 iterations, early chunks off (where they end
** depends on the host's pace): every iteration but the first 4 or fewer is
** replayed, the output is the eager run's (replays_with), at most
** max_captures graphs are captured, and as many at 600 iterations as at 200:
** captures do not grow with the work.  With refused, each run built a graph
** again (a set the driver refused).  Returns the nodes set in 600 iterations. */
static long set_in_place(const char *scenario, long max_captures, int refused)
{
    const char *iters[2] = {"200", "600"};
    long captured[2], patched = 0;
    char *report;

    for (int i = 0; i < 2; i++) {
        cr_assert_geq(replays_with(scenario, (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", NULL}, iters[i], &report),
                      atol(iters[i]) - 4, "%s: %s", scenario, report);
        captured[i] = total(report, "graphs_captured");
        patched = total(report, "nodes_patched");
        cr_assert_leq(captured[i], max_captures, "%s: %s", scenario, report);
        if (refused)
            cr_assert_geq(total(report, "recaptures"), 1, "%s: no set was refused, so the test proves nothing: %s",
                          scenario, report);
        free(report);
    }
    cr_assert_eq(captured[0], captured[1], "%s: captures grew with iterations: %ld, %ld", scenario, captured[0],
                 captured[1]);
    return patched;
}

Test(engine, growing_grids_update_nodes_in_place)
{
    long patched;
    /* grow: 20 kernels, four of whose grids grow every iteration (a KV cache).
    ** The prefix tree matches a launch by all but its grid and parameter bytes,
    ** and each replay sets the four nodes' grids in place: the sequence replays
    ** every iteration, with one capture however many iterations; the output
    ** (which shows each launch's grid) is the eager run's, byte for byte
    ** (replays_with compares it), and a launch with a grid the driver refuses
    ** (once) fails at its call as it does without graphshim.  Matched by grid too, every iteration was a
    ** new sequence: no replay at all. */
    patched = set_in_place("grow", 1, 0);
    cr_assert_geq(patched, 4 * (600 - 4), "%ld nodes set in 600 iterations", patched);
}

Test(engine, device_copies_and_memsets_are_set_in_place)
{
    long patched;

    /* copies: four device copies whose source rotates among five buffers and
    ** four memsets whose value counts the iterations, a synchronize apart.  The
    ** prefix tree matches them by all but their addresses, size and value, and
    ** each replay sets those that changed in place (the output, which folds in
    ** every copied and set byte, is the eager run's).  At iteration 9 one copy
    ** goes into pool memory, where the driver refuses to move the node: a
    ** variant is captured with it, beside the graph (which, holding the
    ** sources of iteration 9, is picked and refused again at times: 3
    ** refusals, 4 captures in all).  Matched whole, every iteration was a new
    ** sequence (the sources come back only every fifth): no replay. */
    patched = set_in_place("copies", 4, 1);
    /* The four memsets change every replay; the copies' sources too, but where
    ** the variant of the pool copy holds the same ones. */
    cr_assert_geq(patched, 4 * (600 - 5), "%ld nodes set in 600 iterations", patched);
}

Test(engine, a_copy_alternating_between_memory_kinds_keeps_a_variant_for_each)
{
    /* kinds: a copy whose destination alternates between cuMemAlloc and pool
    ** memory (the driver refuses to move its node between them) and whose
    ** source rotates among three states.  A refused set keeps the sequence's
    ** graphs and captures one more beside them: a variant for each kind, then
    ** only sets within a kind.  Dropping the graphs at each refusal captured at
    ** every replay. */
    set_in_place("kinds", 4, 1);
}

Test(engine, a_host_copy_of_a_moving_device_buffer_is_set_in_place)
{
    /* readback: 19 steps on one of five buffers in turn, then a copy of it
    ** into one pinned buffer, read after the synchronize; upload: a pinned
    ** buffer the host writes, copied into one of five buffers in turn, then 19
    ** steps on it.  The copy is matched by all but its device side, which each
    ** replay sets in place with the steps' arguments: one graph, replayed every
    ** iteration.  Matched whole, each device side was a sequence of its own:
    ** five graphs, each warmed up. */
    for (int c = 0; c < 2; c++) {
        long patched = set_in_place(c ? "upload" : "readback", 1, 0);
        cr_assert_geq(patched, 20 * (600 - 5), "%ld nodes set in 600 iterations", patched);
    }
}

Test(engine, a_graph_whose_nodes_are_not_known_keeps_its_arguments_right)
{
    const char *argv[] = {GUARDPROG, "params", "12", NULL};
    struct run base, r;

    /* The capture cannot tell the nodes (every capture-info query fails): the
    ** graph is captured with the held launches' own arguments and cannot be
    ** set in place.  Its arguments must still be known, or a later replay with
    ** the sequence's own arguments would launch it with the others (the output
    ** differed at the third line before). */
    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, (const char *[]){"FAKECUDA_FAIL=cuStreamGetCaptureInfo_v2:1+:2", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    run_free(&base), run_free(&r);
}

Test(engine, rotating_buffers_get_a_graph_each)
{
    char *report;
    long set[2], captured[2];
    const char *iters[2] = {"200", "600"};

    /* rotate: 20 kernels whose buffers rotate among three sets.  Once a set of
    ** arguments came back, it gets a graph of its own (up to three a sequence),
    ** replayed as it is: the nodes set and the captures stop growing.  Set in
    ** place alone, each replay would set 20 nodes (scalars, whose arguments never
    ** come back, does that: above).  Early chunks off: where they end depends
    ** on the host's pace, and each chunk's graph has variants of its own. */
    for (int i = 0; i < 2; i++) {
        cr_assert_geq(replays_with("rotate", (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", NULL}, iters[i], &report),
                      atol(iters[i]) - 3, "%s", report);
        set[i] = total(report, "nodes_patched");
        captured[i] = total(report, "graphs_captured");
        free(report);
    }
    cr_assert_eq(set[0], set[1], "nodes set grew with iterations: %ld, %ld", set[0], set[1]);
    cr_assert_eq(captured[0], captured[1], "captures grew with iterations: %ld, %ld", captured[0], captured[1]);
    cr_assert_leq(set[1], 3 * 20, "%ld nodes set", set[1]);
    cr_assert_leq(captured[1], 3, "%ld graphs", captured[1]);
}

Test(engine, a_loop_of_large_parameter_launches_replays_as_bodies)
{
    char *report;

    /* huge-loop: 1,000 launches of a kernel with a 32,000-byte parameter struct
    ** per synchronize, the bytes alternating between iterations.  The body of
    ** one launch holds them, and its graphs (one set per argument set) are
    ** replayed as they are: no sequence of the tree, no node set, no graph
    ** built again.  Without the rule the tree learns the 1,000-op sequence,
    ** holds 32 MB of keys, sets a thousand nodes per iteration and loses some
    ** of it to the watchdog. */
    replays_with("huge-loop", NULL, "20", &report);
    cr_assert_geq(total(report, "ops_replayed"), 20000 * 9 / 10, "%s", report);
    cr_assert_gt(total(report, "body_graphs"), 0, "%s", report);
    cr_assert_eq(total(report, "nodes_patched"), 0, "%s", report);
    cr_assert_eq(total(report, "recaptures"), 0, "%s", report);
    cr_assert_leq(total(report, "graphs_captured"), 8, "%s", report);
    free(report);
    replays_with("huge-loop", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=big-body", NULL}, "20", &report);
    cr_assert_gt(total(report, "nodes_patched") + total(report, "recaptures"), 0,
                 "without the rule the tree should hold the loop: %s", report);
    free(report);
}

/* The device memory a program reached ("device memory reached N bytes"). */
static long long reached(const char *out)
{
    const char *p = strstr(out, "device memory reached ");
    return p ? atoll(p + strlen("device memory reached ")) : -1;
}

/* Device and pinned memory allocated until none is left, with graphs and a
** staging buffer alive: under graphshim the program gets as far as without
** it, as graphshim frees its own memory and the failed call is made again.
** Without the retry (rule oom-retry) graphshim's executables and staging
** buffer take what the program would have had.  What the driver keeps from a
** process's first instantiation (FAKECUDA_GRAPH_KB, 2 MiB as measured on an
** H100) no one can free: with it the program gets exactly that much less. */
Test(engine, an_allocation_out_of_memory_gets_as_far_as_without_graphshim, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, "oom", "6", NULL};
    /* An executable of 1.5 MiB: the 1 MiB allocation that fails fits once it is gone. */
    const char *env[] = {"FAKECUDA_MEM_MB=8", "FAKECUDA_PINNED_MB=2", "FAKECUDA_EXEC_KB=1536", "FAKECUDA_GRAPH_KB=0",
                         "GRAPHSHIM_REPORT=@/report.json", NULL};
    const char *drop[] = {"FAKECUDA_MEM_MB=8", "FAKECUDA_PINNED_MB=2", "FAKECUDA_EXEC_KB=1536", "FAKECUDA_GRAPH_KB=0",
                          "GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_TEST_DROP_RULE=oom-retry", NULL};
    const char *kept[] = {"FAKECUDA_MEM_MB=8", "FAKECUDA_PINNED_MB=2", "FAKECUDA_EXEC_KB=1536",
                          "FAKECUDA_GRAPH_KB=2048", "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, on, off, driver;
    char *report;

    run_prog(&base, 0, env, argv, 20);
    cr_assert_eq(base.status, 0, "without graphshim: %s", base.err);
    cr_assert(strstr(base.out, "device memory reached") && strstr(base.out, "pinned memory reached"), "%s",
              base.out);
    run_prog(&on, 1, env, argv, 20);
    cr_assert_eq(on.status, 0, "under graphshim: %s", on.err);
    cr_assert_str_eq(on.out, base.out, "graphshim changed what the program got");
    report = run_file(&on, "report.json");
    cr_assert_gt(total(report, "replays"), 0, "no graph was alive, so the test proves nothing: %s", report);
    /* Device memory, then pinned memory: each ran out once with graphshim's
    ** memory to free (its executable and staging buffer, built again by the
    ** loop in between).  The 1 MiB device allocation made again succeeded; the
    ** pinned one did not (a 4 KiB staging buffer), and the smaller ones after
    ** it then found room as without graphshim. */
    cr_assert_eq(total(report, "oom_retries"), 2, "%s", report);
    cr_assert_eq(total(report, "oom_retries_ok"), 1, "%s", report);
    cr_assert_geq(total(report, "oom_freed_bytes"), 2 * (1536 << 10), "%s", report);
    free(report);

    run_prog(&off, run_lib(drop), drop, argv, 20);
    cr_assert_eq(off.status, 0, "%s", off.err);
    cr_assert_str_neq(off.out, base.out, "without the retry the program still got as far, so the test cannot fail");

    run_prog(&driver, 1, kept, argv, 20);
    cr_assert_eq(driver.status, 0, "%s", driver.err);
    cr_assert_eq(reached(base.out) - reached(driver.out), 2 << 20, "reached %lld, %lld without graphshim",
                 reached(driver.out), reached(base.out));
    run_free(&base), run_free(&on), run_free(&off), run_free(&driver);
}

/* guardprog scenario with env (the fake driver's pending work in it), without
** graphshim and under it: both exit 0 and print the same.  Returns the
** report graphshim wrote. */
static char *same_with_pending(const char *scenario, const char *iters, const char *const *env)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    struct run base, on;
    char *report;

    run_prog(&base, RUN_BARE, env, argv, 20);
    cr_assert_eq(base.status, 0, "without graphshim: %s", base.err);
    run_prog(&on, RUN_SHIM, env, argv, 20);
    cr_assert_eq(on.status, 0, "under graphshim: %s", on.err);
    cr_assert_str_eq(on.out, base.out, "graphshim changed what the program got");
    report = run_file(&on, "report.json");
    cr_assert_not_null(report, "no report");
    run_free(&base), run_free(&on);
    return report;
}

/* An allocation that fails while a replayed graph, not yet run
** (FAKECUDA_PENDING), has still to read a staging buffer: graphshim frees its
** graphs but keeps that buffer, as its event answers not ready; freed, the
** graph's copy would fault when it runs (a freed pinned allocation) and the
** program's synchronize would fail. */
Test(engine, a_release_keeps_staging_that_pending_work_reads, .timeout = 60)
{
    char *report = same_with_pending("oom-pending", "6",
                                     (const char *[]){"FAKECUDA_PENDING=1000", "FAKECUDA_FAIL=cuMemAlloc_v2:2:2",
                                                      "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_REPORT=@/report.json",
                                                      NULL});
    cr_assert_eq(total(report, "oom_retries"), 1, "the release did not run: %s", report);
    cr_assert_gt(total(report, "replays"), 0, "no graph read the staging buffer: %s", report);
    free(report);
}

/* The same where graphshim's query of the staging event fails
** (GRAPHSHIM_TEST_OWN_FAIL: its own query alone): a failed query tells
** nothing, and the buffer is kept.  Taken for read, it was freed, and the
** program's synchronize failed. */
Test(engine, a_release_keeps_staging_whose_event_query_fails, .timeout = 60)
{
    char *report = same_with_pending("oom-pending", "6",
                                     (const char *[]){"FAKECUDA_PENDING=1000", "FAKECUDA_FAIL=cuMemAlloc_v2:2:2",
                                                      "GRAPHSHIM_GAIN_CHECK=0",
                                                      "GRAPHSHIM_TEST_OWN_FAIL=cuEventQuery:1+:400",
                                                      "GRAPHSHIM_REPORT=@/report.json", NULL});
    cr_assert_eq(total(report, "oom_retries"), 1, "the release did not run: %s", report);
    cr_assert_gt(total(report, "replays"), 0, "no graph read the staging buffer: %s", report);
    free(report);
}

/* A thread's per-thread stream holds work; another thread's launch on the
** legacy stream issues it (on the legacy stream, the only one it can name);
** the first thread then synchronizes its per-thread stream, which on a GPU
** does not wait for legacy work issued after the stream's last op: graphshim
** must make the stream wait for the work it issued for it.  With the fake's
** pending work, the read after the synchronize shows it. */
Test(engine, a_per_thread_streams_work_issued_by_another_thread_is_waited_for, .timeout = 60)
{
    char *report = same_with_pending("ptds-legacy", "8",
                                     (const char *[]){"FAKECUDA_PENDING=1000", "GRAPHSHIM_REPORT=@/report.json", NULL});
    cr_assert_gt(total(report, "ops_held"), 0, "nothing held, so the test proves nothing: %s", report);
    free(report);
}

/* The device full when graphshim builds a graph again: it gives that graph up
** (the sequence runs eagerly) and takes none of the program's memory. */
Test(engine, a_graph_that_finds_the_device_full_is_given_up, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, "oom-full", "6", NULL};
    /* Without the driver's own 2 MiB of the first instantiation, which no one
    ** frees (the test above): the program's total is compared whole. */
    const char *env[] = {"FAKECUDA_MEM_MB=8", "FAKECUDA_GRAPH_KB=0", "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, on;
    char *report;

    run_prog(&base, 0, env, argv, 20);
    cr_assert_eq(base.status, 0, "without graphshim: %s", base.err);
    run_prog(&on, 1, env, argv, 20);
    cr_assert_eq(on.status, 0, "under graphshim: %s", on.err);
    cr_assert_str_eq(on.out, base.out, "graphshim changed what the program got");
    cr_assert_eq(count_lines(on.err, "graphshim"), 0, "not quietly: %s", on.err);
    report = run_file(&on, "report.json");
    cr_assert_eq(total(report, "oom_retries"), 1, "%s", report);
    cr_assert_eq(total(report, "graph_failures"), 1, "%s", report);
    free(report);
    run_free(&base), run_free(&on);
}

Test(engine, graph_cache_is_bounded)
{
    char *report;
    /* slow: a 6-op sequence, and 7 ops every fifth iteration; two graphs take
    ** turns in a cache of one. */
    cr_assert_gt(replays_with("slow", (const char *[]){"GRAPHSHIM_MAX_GRAPHS=1", NULL}, "40", &report), 30);
    cr_assert_geq(total(report, "graphs_evicted"), 6, "%s", report);
    cr_assert_leq(total(report, "graphs_alive"), 1, "%s", report);
    free(report);
}

/* A context synchronize of another thread must never meet a capture of the
** engine's (it would fail with 900 and invalidate the capture); without the
** sync-capture rule it does. */
Test(engine, a_context_synchronize_never_meets_a_capture, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, "race-ctx-sync", "200", NULL};
    /* A race between two threads in real time: the host's clock. */
    const char *env[] = {"FAKECUDA_CTX_SYNC_US=500", "FAKECUDA_CAPTURE_US=300", "GRAPHSHIM_MAX_GRAPHS=1",
                         "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_REPORT=@/report.json", HOST_CLOCK, NULL, NULL};
    struct run base, on, off;
    char *report;

    run_prog(&base, 0, env, argv, 30);
    cr_assert_eq(base.status, 0, "without graphshim: %s", base.err);
    cr_assert(strstr(base.out, "second thread: 0 failed calls"), "%s", base.out);
    run_prog(&on, 1, env, argv, 30);
    cr_assert_eq(on.status, 0, "under graphshim: %s", on.err);
    cr_assert_str_eq(on.out, base.out, "graphshim changed the output: %s", on.err);
    report = run_file(&on, "report.json");
    cr_assert_gt(total(report, "ops_held"), 0, "the engine held nothing: %s", report);
    free(report);
    /* A race: on a loaded machine the second thread may miss every capture of a
    ** run, so up to five runs without the rule, one of which must go wrong. */
    env[7] = "GRAPHSHIM_TEST_DROP_RULE=sync-capture";
    for (int attempt = 0;; attempt++) {
        int wrong;
        run_prog(&off, RUN_TEST_BUILD, env, argv, 30);
        wrong = off.status != 0 || strcmp(off.out, base.out) != 0;
        run_free(&off);
        if (wrong)
            break;
        cr_assert_lt(attempt, 4, "without the sync-capture rule the output is still right in 5 runs, so the test "
                                 "cannot fail");
    }
    run_free(&base), run_free(&on);
}

/* A stream destroyed and the primary context released before exit (a runtime's
** teardown) take the learned sequences with them; the report at exit still lists
** them, marked as dropped. */
Test(engine, the_report_lists_sequences_whose_context_went_away)
{
    const char *argv[] = {GUARDPROG, "teardown", "8", NULL};
    struct run on;
    char *report;

    run_prog(&on, 1, (const char *[]){"GRAPHSHIM_REPORT=@/report.json", NULL}, argv, 20);
    cr_assert_eq(on.status, 0, "%s", on.err);
    report = run_file(&on, "report.json");
    cr_assert_not_null(report);
    cr_assert_gt(total(report, "replays"), 0, "%s", report);
    cr_assert(strstr(report, "\"graph\": \"dropped\"") != NULL, "no sequence listed: %s", report);
    cr_assert(strstr(report, "\"replays\": 6,") != NULL, "the replayed sequence is missing: %s", report);
    free(report);
    run_free(&on);
}

/* The row of a report's stream of that kind and context: its text up to its
** sequences (for total()), or NULL.  Freed by the caller. */
static char *stream_row(const char *report, const char *kind, int ctx)
{
    char pat[64];
    const char *p, *e;

    snprintf(pat, sizeof pat, "\"kind\": \"%s\", \"ctx\": %d,", kind, ctx);
    p = strstr(report, pat);
    e = p ? strstr(p, "\"sequences\"") : NULL;
    return e ? strndup(p, (size_t)(e - p)) : NULL;
}

struct default_stream {
    char scenario[16], kind[16];
};

ParameterizedTestParameters(engine, each_contexts_default_stream_is_replayed)
{
    static struct default_stream cases[] = {{"two-ctx", "legacy"}, {"two-ctx-pt", "per-thread"}};
    return cr_make_param_array(struct default_stream, cases, 2);
}

/* Two contexts, each a sequence on its own legacy (two-ctx) or per-thread
** (two-ctx-pt) stream every iteration: each context's stream has a state of its
** own, and both replay from the third iteration on, each in its own context (the
** fake driver fails a graph launched in another context than its own). */
ParameterizedTest(struct default_stream *c, engine, each_contexts_default_stream_is_replayed)
{
    char *report, *row;

    cr_assert_eq(replays_with(c->scenario, NULL, "40", &report), 2 * (40 - 2), "%s", report);
    for (int ctx = 0; ctx < 2; ctx++) {
        row = stream_row(report, c->kind, ctx);
        cr_assert_not_null(row, "no %s stream of context %d: %s", c->kind, ctx, report);
        cr_assert_eq(total(row, "replays"), 40 - 2, "context %d: %s", ctx, report);
        free(row);
    }
    cr_assert_null(stream_row(report, c->kind, 2), "a third context: %s", report);
    cr_assert_eq(total(report, "graph_failures"), 0, "%s", report);
    cr_assert_geq(total_f(report, "hit_rate"), 0.9, "%s", report);
    free(report);
}

Test(engine, engine_off_holds_nothing)
{
    char *report;
    cr_assert_eq(replays_with("sync", (const char *[]){"GRAPHSHIM=0", NULL}, "8", &report), 0);
    cr_assert_eq(total(report, "ops_held"), 0);
    free(report);
}

Test(engine, threads_each_replay_their_own_stream, .timeout = 60)
{
    char *report;
    /* Four threads, each a sequence whose fill value has period 3: one
    ** structure, stable after 2 iterations, patched where the value changed. */
    for (int round = 0; round < 5; round++) {
        long n = replays_with("threads", NULL, "40", &report);
        cr_assert_eq(n, 4 * (40 - 2), "round %d: %s", round, report);
        cr_assert_gt(total(report, "patched_launches"), 0, "round %d: %s", round, report);
        free(report);
    }
}

Test(engine, slow_hosts_get_held_work_launched_early_in_chunks)
{
    char *report;
    /* 0.3 ms of host work twice per iteration: chunks from the third held one on. */
    cr_assert_gt(replays_with("slow", (const char *[]){"GRAPHSHIM_CHUNK_US=50", NULL}, "20", &report), 0);
    cr_assert_gt(total(report, "chunks"), 0, "%s", report);
    cr_assert_eq(total(report, "issue_errors"), 0, "%s", report);
    free(report);
    cr_assert_gt(replays_with("slow", NULL, "20", &report), 0); /* off by default */
    cr_assert_eq(total(report, "chunks"), 0, "%s", report);
    free(report);
}

Test(engine, chunks_by_count_end_at_the_same_places_every_time)
{
    char *report;
    /* slow's 6-op sequence, 7 ops every fifth iteration: chunks at depths 2 and 4,
    ** so graphs of ops 1-2, 3-4, 5-6 and (the longer one) 5-7, reused each time. */
    cr_assert_gt(replays_with("slow", (const char *[]){"GRAPHSHIM_CHUNK_OPS=2", NULL}, "20", &report), 0);
    cr_assert_gt(total(report, "chunks"), 0, "%s", report);
    cr_assert_eq(total(report, "graphs_captured"), 4, "%s", report);
    cr_assert_eq(total(report, "issue_errors"), 0, "%s", report);
    free(report);
    /* By default (8) a 100-op sequence from a fast host goes out in chunks of 8,
    ** 8, 16, 32 ops and a last graph of 36: four chunks per replay.  (Its 97
    ** launches of one kernel are a loop body too, whose graphs the first two
    ** iterations would add.  The fake driver's host holds 36 ops in about as
    ** long as a graph launch costs a GPU, so the rule chunk-idle, tested below,
    ** would drop the last chunk on a fast machine and keep it on a slow one.) */
    cr_assert_eq(replays_with("long", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_TEST_DROP_RULE=chunk-idle", NULL},
                              "12", &report),
                 10);
    cr_assert_eq(total(report, "chunks"), 4 * 10, "%s", report);
    cr_assert_eq(total(report, "graphs_captured"), 5, "%s", report);
    free(report);
    cr_assert_eq(replays_with("long", (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_BODY_OPS=0", NULL}, "12",
                              &report), 10);
    cr_assert_eq(total(report, "chunks"), 0, "%s", report);
    free(report);
}

Test(engine, a_chunk_that_leaves_the_host_almost_nothing_to_issue_is_dropped)
{
    char *report;
    long n;

    /* 20 ops from a fast host: chunks at 8 and 16 in the first replay.  The
    ** host holds the last 4 ops in far less than 2 us, less than the graph
    ** launch costs the GPU: from the second replay on no chunk ends at 16
    ** (one chunk, or none where the 12 ops after 8 took less than 2 us too).
    ** With the rule dropped, two chunks every replay. */
    n = replays_with("twenty", (const char *[]){"GRAPHSHIM_BODY_OPS=0", NULL}, "12", &report);
    cr_assert_eq(n, 10, "%s", report);
    cr_assert_leq(total(report, "chunks"), 2 + (n - 1), "%s", report);
    free(report);
    n = replays_with("twenty", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_TEST_DROP_RULE=chunk-idle", NULL},
                     "12", &report);
    cr_assert_eq(n, 10, "%s", report);
    cr_assert_eq(total(report, "chunks"), 2 * n, "%s", report);
    free(report);
}

/* A 12-iteration run of scenario with env replays 10 times, with lo to hi chunks. */
static void expect_chunks(const char *scenario, const char *const *env, long lo, long hi)
{
    char *report;

    cr_assert_eq(replays_with(scenario, env, "12", &report), 10, "%s", report);
    cr_assert(total(report, "chunks") >= lo && total(report, "chunks") <= hi, "%ld to %ld chunks: %s", lo, hi,
              report);
    free(report);
}

#define SLOWLONG_CHUNKS (3 + 4 + 5 * (10 - 2))

Test(engine, a_slow_host_gets_chunks_of_16_ops_at_most)
{
    /* A 60-op sequence issued at tens of microseconds an op.  Chunks of 8, 8 and
    ** 16 ops go out as from a fast host; the next would be 32 ops long, but
    ** the host took more than 1 us an op over the 16 ops after the last chunk,
    ** so, from the second replay on, a chunk ends there (depth 48): four chunks
    ** per replay instead of three, the last graph 12 ops instead of 28.  From
    ** the third on, that last graph is cut 4 ops before the end (rule
    ** short-tail): five chunks, and a last graph of 4 ops. */
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_BODY_OPS=0", NULL}, SLOWLONG_CHUNKS, SLOWLONG_CHUNKS);
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_TEST_DROP_RULE=short-tail", NULL},
                  3 + 4 * 9, 3 + 4 * 9);
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_CHUNK_MAX=0", "GRAPHSHIM_BODY_OPS=0", NULL}, 3 * 10, 3 * 10);
    /* The host is slow every other iteration only, fast in between: the slow
    ** passes are never two in a row, and the fast host's three chunks (8, 8 and
    ** 16 ops) stay.  (The fast iterations issue in no time on the virtual
    ** clock, where rule chunk-idle would drop those chunks: it is off.) */
    expect_chunks("slowlong-fast-odd",
                  (const char *[]){"GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_TEST_DROP_RULE=chunk-idle", NULL}, 3 * 10,
                  3 * 10);
}

/* The ops of each graph graphshim captured running scenario (iters
** iterations, loop bodies off, the virtual clock, the watchdog defer_us away),
** in the order of the captures: from the fake driver's call log, the launches
** and copies between each cuStreamBeginCapture_v2 and its
** cuStreamEndCapture, as "8 8 16". */
static char *capture_sizes(const char *scenario, const char *iters, const char *defer_us)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    char defer[64];
    const char *env[] = {"FAKECUDA_LOG=@/fake.log", "GRAPHSHIM_GAIN_CHECK=0", defer, "GRAPHSHIM_BODY_OPS=0",
                         NULL};
    char *log, *line, *save, *sizes = calloc(1, 4096);
    int ops = -1;
    struct run r;

    snprintf(defer, sizeof defer, "GRAPHSHIM_MAX_DEFER_US=%s", defer_us);
    run_prog(&r, run_lib(env), env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    log = run_file(&r, "fake.log");
    cr_assert_not_null(log);
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "cuStreamBeginCapture_v2 ", 24))
            ops = 0;
        else if (!strncmp(line, "cuStreamEndCapture ", 19) && ops >= 0)
            snprintf(sizes + strlen(sizes), 4096 - strlen(sizes), "%s%d", *sizes ? " " : "", ops), ops = -1;
        else if (ops >= 0 && (!strncmp(line, "cuLaunchKernel", 14) || !strncmp(line, "cuMemcpy", 8) ||
                              !strncmp(line, "cuMemset", 8)))
            ops++;
    }
    free(log), run_free(&r);
    return sizes;
}

Test(engine, a_slow_hosts_last_graph_is_4_ops)
{
    /* slowlong's 60 ops, as above: the first replay captures chunks of 8, 8
    ** and 16 ops and a last graph of 28; the second a chunk of 16 where the
    ** slow host's votes end one (depth 48) and a last graph of 12; the third
    ** a chunk of 8 where the tail begins (rule short-tail) and a last graph of
    ** 4 ops (56 to 60), the GPU's wait at the synchronize. */
    char *sizes = capture_sizes("slowlong", "12", "1000000");
    cr_assert_str_eq(sizes, "8 8 16 28 16 12 8 4");
    free(sizes);
}

Test(engine, chunks_stop_only_where_the_host_had_little_left_to_issue)
{
    /* twenty-slow-head: 20 ops, a slow host up to op 15, then the last 5 at
    ** once.  The first replay captures chunks of 8 and 8 ops and a last graph
    ** of 4; from the second on the chunk at 16 is dropped (rule chunk-idle:
    ** 4 ops issued in no time after it), and the chunk at 8 stays in every
    ** segment: one graph of 12 more, reused.  Were chunks left off after a
    ** segment that dropped one, the next would go out whole (20). */
    char *sizes = capture_sizes("twenty-slow-head", "12", "1000000");
    cr_assert_str_eq(sizes, "8 8 4 12");
    free(sizes);
}

Test(engine, a_gpu_still_busy_at_the_synchronize_gets_shorter_chunks)
{
    /* slowlong's 60 ops at 20 us of the host's time an op, as above:
    ** SLOWLONG_CHUNKS.  With 15 us of GPU time a kernel (ResNet-18 at batch 1:
    ** 18 against 24) the GPU has run each chunk before the next (rule
    ** chunk-busy cuts them), but is still running the last chunks when the last
    ** graph goes out at the synchronize (rule drain): after two such
    ** synchronizes chunks end every 8 ops, not 16, once their places have seen
    ** the slow host twice: 51 in all here. */
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=15", NULL},
                  SLOWLONG_CHUNKS + 4, SLOWLONG_CHUNKS + 4);
    expect_chunks("slowlong",
                  (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=15", "GRAPHSHIM_TEST_DROP_RULE=drain",
                                   NULL},
                  SLOWLONG_CHUNKS, SLOWLONG_CHUNKS);
    /* The program asks whether the stream is done, then works 20 ms on the host:
    ** the synchronize after that waits for nothing, and chunks stay 16 ops long. */
    expect_chunks("slowlong-polled", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=15", NULL},
                  SLOWLONG_CHUNKS, SLOWLONG_CHUNKS);
    /* The host works 20 ms before the last op of every other iteration: there
    ** the GPU has run the chunks when the last graph goes out, and its vote
    ** ends the run of busy ends, which are never two in a row: chunks stay 16
    ** ops long. */
    expect_chunks("slowlong-idle-odd", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=15", NULL},
                  SLOWLONG_CHUNKS, SLOWLONG_CHUNKS);
    /* A GPU that keeps up (1 us a kernel) waits a moment at the synchronize:
    ** chunks stay 16 ops long. */
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=1", NULL}, SLOWLONG_CHUNKS,
                  SLOWLONG_CHUNKS);
}

Test(engine, a_gpu_still_running_earlier_chunks_gets_longer_chunks)
{
    /* slowlong's host, and 150 us of GPU time a kernel: at each place where the
    ** slow host's chunk would end, the GPU still runs what went out before, so
    ** no chunk ends there (rule chunk-busy); chunks end by count (8, 16, 32, 48
    ** and short-tail's 56 become 8, 16, 32): 30 graph launches in 10 replays,
    ** not 55 (the slow host's 16-op chunks, then drain's 8). */
    expect_chunks("slowlong", (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=150", NULL}, 30, 30);
    expect_chunks("slowlong",
                  (const char *[]){"GRAPHSHIM_BODY_OPS=0", "FAKECUDA_KERNEL_US=150",
                                   "GRAPHSHIM_TEST_DROP_RULE=chunk-busy", NULL},
                  55, 55);
}

ParameterizedTestParameters(engine, a_graph_slower_than_eager_work_runs_eagerly_for_good)
{
    static char scenarios[][16] = {"sync", "ctx-sync"};
    return cr_make_param_array(char[16], scenarios, 2);
}

ParameterizedTest(char (*scenario)[16], engine, a_graph_slower_than_eager_work_runs_eagerly_for_good)
{
    const char *argv[] = {GUARDPROG, *scenario, "40", NULL};
    const char *slow_graphs = "FAKECUDA_GRAPH_LAUNCH_US=3000";
    struct run base, on, off;
    char *report;

    /* Each graph launch takes 3 ms of host time, where a stream or a context
    ** synchronize ends the sequence.  The gain check times the first replay's
    ** followers: after 4 slow ones a trial runs the sequence eagerly and
    ** replayed in turn, and after 8 slow pairs it drops the graph: 1 + 4 + 8
    ** replays.  Without it every iteration from the third on replays. */
    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&on, 1, (const char *[]){"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_MAX_DEFER_US=1000000", slow_graphs, NULL},
             argv, 30);
    cr_assert_eq(on.status, 0, "%s", on.err);
    cr_assert_str_eq(on.out, base.out);
    report = run_file(&on, "report.json");
    cr_assert_eq(total(report, "replays"), 1 + 4 + 8, "%s", report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    free(report);
    run_prog(&off, 1,
             (const char *[]){"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0",
                              "GRAPHSHIM_MAX_DEFER_US=1000000", slow_graphs, NULL},
             argv, 30);
    report = run_file(&off, "report.json");
    cr_assert_eq(total(report, "replays"), 40 - 2, "%s", report);
    free(report);
    run_free(&base), run_free(&on), run_free(&off);
}

Test(engine, a_slow_start_does_not_make_a_slow_graph_look_fast)
{
    char *report;

    /* The first two iterations take 20 ms on the host, eagerly; later ones much
    ** less, but each graph launch takes 3 ms.  Judged against the first eager
    ** times the graph would look fast for good; timed eagerly again after the
    ** first 8 replays, it is found slow and dropped: 1 + 8 replays, then 8
    ** judged against the warm time, 8 more in the trial's pairs. */
    long n = replays_with("cold", (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", "FAKECUDA_GRAPH_LAUNCH_US=3000", NULL},
                          "40", &report);
    cr_assert(strstr(report, "\"no-gain\": 1"), "%s", report);
    cr_assert_lt(n, 40 - 2 - 4, "%s", report);
    /* Learned again, its row still counts every occurrence. */
    cr_assert(strstr(report, "\"sequences\""), "%s", report);
    cr_assert_eq(total(strstr(report, "\"sequences\""), "seen"), 40, "%s", report);
    free(report);
}

Test(engine, a_program_that_slows_down_keeps_its_graph)
{
    char *report;

    /* Each iteration's host work is 6 % longer than the last's, and over the fake
    ** driver a graph is as fast as eager work.  The first window of 8 replays,
    ** judged against the second iteration's eager time, finds them slow (each
    ** 1.06^2 or more times as long).  Eager run then replay, in turn, each pair
    ** 1.06 apart: the trial keeps the graph (1 + 8 + 8 replays).  The next
    ** window is slow too, but passes: a kept trial lets one window pass before
    ** the next trial.  1 + 8 + 8 + 8 + 5 replays in 40 iterations (27 when every
    ** slow window started a trial).  Judged in a window against an eager time
    ** taken once, as before the trial, it would run eagerly after 1 + 8 + 8.
    ** A loaded test machine moves a pair's timing now and then: 28 replays were
    ** seen there, so the bound keeps one replay of slack above 27. */
    long n = replays_with("drift", (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", NULL}, "40", &report);
    cr_assert_null(strstr(report, "no-gain"), "%s", report);
    cr_assert_geq(n, 1 + 8 + 8 + 8 + 3, "%s", report);
    free(report);
}

Test(engine, a_trial_whose_eager_runs_are_held_ends_and_is_not_run_again)
{
    char *report;

    /* Two sequences in turn, the 3-op one the 4-op one's prefix, on a host 3 %
    ** slower each iteration.  Each one's window of replays, judged against an
    ** old eager time, starts a trial; an eager run of the 3-op one is held as
    ** the 4-op one's prefix and issued at the synchronize (a mismatch), untimed,
    ** and the 4-op one's may be held too.  Two untimed eager runs end a trial:
    ** the graph is kept (its replays were not twice as long: rule
    ** gain-unpaired) and asked to run eagerly only at its 32nd and 64th replay
    ** (rule gain-retime).  5 mismatches and 64 replays of 76 in 80 iterations;
    ** a trial that ran 16 replays and started again against the same old eager
    ** time gave 16 mismatches and 50 replays. */
    long n = replays_with("drift-prefix", (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", NULL}, "80", &report);
    cr_assert_null(strstr(report, "no-gain"), "%s", report);
    cr_assert_leq(total(report, "mismatch"), 6, "%s", report);
    cr_assert_geq(n, 64, "%s", report);
    free(report);
}

Test(engine, sequences_that_come_back_too_rarely_are_not_graphed)
{
    char *report;
    long with, without;

    /* 1000 sequences, each seen 3 times in 3000 iterations: stable at its second
    ** time, a sequence is replayed at its third, its graph launched once.  The
    ** budget's second span of 1024 segments sees the first 48 of them, each
    ** launched once for its build: fewer than 2 launches a build pays for
    ** nothing, and the stream's sequences must be seen 64 times from then on
    ** before they are graphed: no more graphs.  Without the budget every sequence gets its
    ** graph.  (No chunks and no loop bodies: graphs of the ops that begin a
    ** segment are shared by many sequences, and pay.  Learning never rests:
    ** with its defaults, below, the first 1000 segments all come for the first
    ** time, and learning rests before most of them.) */
    const char *plain[] = {"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_REST_AFTER=0", NULL};
    const char *dropped[] = {"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_REST_AFTER=0",
                             "GRAPHSHIM_TEST_DROP_RULE=budget", NULL};

    replays_with("rare", plain, "3000", &report);
    with = total(report, "graphs_captured");
    cr_assert_leq(with, 48, "%s", report);
    cr_assert(strstr(report, "\"warmup\": 64"), "%s", report);
    free(report);
    replays_with("rare", dropped, "3000", &report);
    without = total(report, "graphs_captured");
    cr_assert_eq(without, 1000, "%s", report);
    cr_assert(strstr(report, "\"warmup\": 2"), "%s", report);
    free(report);
    /* With learning resting where segments keep coming for the first time: a
    ** sequence learned in one round is gone (rested) or new again in the next;
    ** nothing is graphed, and most segments cost no learning at all. */
    replays_with("rare", (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_BODY_OPS=0", NULL}, "3000", &report);
    cr_assert_eq(total(report, "graphs_captured"), 0, "%s", report);
    cr_assert_gt(total(report, "segments_rested"), 2000, "%s", report);
    free(report);

    /* bench's rare, with the defaults (chunks, patching): its ~525 sequences of
    ** shapes, each back every ~300 iterations with new arguments, made 2496
    ** graphs for 2602 replays and 5559 chunks on the H100 without the budget, and
    ** had to update a graph before each launch.  Every sequence has its graphs
    ** before the budget's first span ends, so a higher warmup alone changes
    ** little: 2425 replays and 5218 chunks on the H100 and the H200 alike (the
    ** fake driver's runs are the same, count for count).  The budget also sends
    ** back the sequences whose graph was built for its last launch (and that the
    ** gain check has not found paying): far fewer launches.  Its graphs are
    ** launched once a build (each launch updates its graph first): after 256
    ** segments the budget judges that early, and raises the warmup to its
    ** most (1168 graphs when it waited for the span's 1024 segments).  Learning
    ** rests where its first 64 segments were all new: the budget's early
    ** judgment comes after 512 learned segments, 127 graphs (42 when an empty
    ** segment, one per iteration here, ended every rest at once). */
    replays_with("rare20", NULL, "3520", &report);
    cr_assert_lt(total(report, "graphs_captured"), 150, "%s", report);
    with = total(report, "replays") + total(report, "chunks");
    free(report);
    replays_with("rare20", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=budget", NULL}, "3520", &report);
    without = total(report, "replays") + total(report, "chunks");
    cr_assert_geq(total(report, "graphs_captured"), 2000, "%s", report);
    cr_assert_lt(with * 3, without, "%s", report);
    free(report);
}

Test(engine, a_graph_updated_for_every_launch_is_not_judged_hopeless)
{
    char *report;

    /* One sequence whose scalar arguments change every iteration: its graph is
    ** updated in place before each launch, and every replay pays for it.  The
    ** budget counts such updates as builds, but judges "nothing pays" on new
    ** executables alone: the warmup stays at GRAPHSHIM_WARMUP, so a sequence the
    ** program starts later is graphed as soon as ever.  (Judged on builds, the
    ** stream's warmup went to 64 after 256 segments, 534 replays of 600: what
    ** cut a resnet18 inference loop from 90 % to 40 % replayed on the H100.) */
    long n = replays_with("scalars", (const char *[]){"GRAPHSHIM_CHUNK_OPS=0", NULL}, "600", &report);
    cr_assert(strstr(report, "\"warmup\": 2"), "%s", report);
    cr_assert_geq(n, 595, "%s", report);
    cr_assert_leq(total(report, "graphs_captured"), 4, "%s", report);
    free(report);
}

Test(engine, learning_rests_where_the_budget_found_that_nothing_pays)
{
    char *report;
    long rested, rested_without, n, n_without;

    /* rare20's sequences come back every 61 iterations or more, with new
    ** arguments: after the budget found nothing pays, learning them walked the
    ** tree at every launch for nothing (on the H100's host, rare ran 0.86x of
    ** eager with 1 % replayed).  Now learning rests there: only a segment back
    ** within 32 rested segments ends the rest.  Without the rule it rests only
    ** before the budget judged (65 segments). */
    replays_with("rare20", NULL, "3520", &report);
    rested = total(report, "segments_rested");
    cr_assert(strstr(report, "\"warmup\": 64"), "%s", report);
    free(report);
    replays_with("rare20", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=hopeless-rest", NULL}, "3520", &report);
    rested_without = total(report, "segments_rested");
    free(report);
    cr_assert_gt(rested, 5000, "rested %ld", rested);
    cr_assert_lt(rested_without, 200, "rested %ld", rested_without);

    /* The same stream then runs one sequence 500 times: a segment back at once
    ** ends the rest, and it is graphed about as soon as without the rest. */
    n = replays_with("rare-then-loop", NULL, "2000", &report);
    free(report);
    n_without = replays_with("rare-then-loop", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=hopeless-rest", NULL},
                             "2000", &report);
    free(report);
    cr_assert_geq(n, 440, "%ld replays", n);
    cr_assert_geq(n + 10, n_without, "%ld replays, %ld without the rest", n, n_without);

    /* So does a loop whose memset's value counts the iterations: a segment's
    ** fingerprint holds its ops' shapes, not their arguments. */
    n = replays_with("rare-then-memsets", NULL, "2000", &report);
    free(report);
    cr_assert_geq(n, 440, "%ld replays", n);
}

Test(engine, the_graphs_a_training_loop_makes_when_it_starts_do_not_count_against_it)
{
    char *report;
    long with, without;

    /* 50 steps of 5 segments, over 4 batches in turn: each sequence captures a
    ** variant for each batch that comes back (up to 3), then sets the nodes of
    ** the nearest one in place.  Its first graphs must not count against it:
    ** the budget judges a span of segments this short run does not fill, and
    ** setting nodes is no build.  (With a span of 32 segments and node sets
    ** counted as builds, 154 replays against 240 without the budget.)  The
    ** replays are compared with the gain check off: its trials judge timings,
    ** which a loaded machine moves (with it on, a trial now and then ran a few
    ** more occurrences eagerly in one of the two runs). */
    replays_with("train4", (const char *[]){"GRAPHSHIM_GAIN_CHECK=1", NULL}, "250", &report);
    cr_assert(strstr(report, "\"warmup\": 2"), "%s", report);
    free(report);
    with = replays_with("train4", NULL, "250", NULL);
    without = replays_with("train4", (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=budget", NULL}, "250", NULL);
    cr_assert_eq(with, without, "%ld replays, %ld without the budget", with, without);
}

Test(engine, a_stall_now_and_then_does_not_stop_holding)
{
    char *report;

    /* The watchdog (1 ms) fires at each of the 10 stalls; between them the
    ** sequence replays (30 iterations less the warm-up, less the ones right after
    ** a stall that the watchdog's flush kept from being counted as a whole). */
    cr_assert_geq(replays_with("stall", (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", NULL}, "40", &report), 20,
                  "%s", report);
    cr_assert(strstr(report, "\"watchdog\": "), "%s", report);
    free(report);
}

#define STALL_ENV ((const char *[]){"GRAPHSHIM_MAX_DEFER_US=10000", "GRAPHSHIM_BODY_OPS=0", NULL})
#define STALL_OFF \
    ((const char *[]){"GRAPHSHIM_MAX_DEFER_US=10000", "GRAPHSHIM_BODY_OPS=0", "GRAPHSHIM_TEST_DROP_RULE=resume", NULL})

Test(engine, after_a_stall_holding_resumes_where_a_chunk_began)
{
    char *report;

    /* slowlong's 60 ops from a slow host, in chunks ending at depths 8, 16, 32,
    ** 48 and 56; in 3 of the 10 replayed iterations the host stalls 20 ms after
    ** op 21, and the watchdog (10 ms: a loaded test machine's pauses stay under
    ** it) issues ops 17-21.  Ops 22-32 go out eagerly, and
    ** holding resumes after the chunk that ended at 32: those iterations replay
    ** the rest, 16 ops eager each (600 - 48 = 552 replayed).  Without the rule
    ** the rest of each of them goes out eagerly (600 - 3 * 44 = 468). */
    cr_assert_eq(replays_with("slowlong-stall", STALL_ENV, "12", &report), 10, "%s", report);
    cr_assert_geq(total(report, "ops_replayed"), 540, "%s", report);
    cr_assert_geq(total(strstr(report, "\"bails\""), "watchdog"), 3, "%s", report);
    cr_assert_geq(total(report, "resumed"), 3, "%s", report);
    free(report);
    cr_assert_eq(replays_with("slowlong-stall", STALL_OFF, "12", &report), 7, "%s", report);
    cr_assert_leq(total(report, "ops_replayed"), 468, "%s", report);
    cr_assert_eq(total(report, "resumed"), 0, "%s", report);
    free(report);
}

ParameterizedTestParameters(engine, a_segment_held_again_builds_no_graph_of_its_own)
{
    static char scenarios[][24] = {"slowlong-stall-late", "slowlong-stall-moved"};
    return cr_make_param_array(char[24], scenarios, 2);
}

ParameterizedTest(char (*scenario)[24], engine, a_segment_held_again_builds_no_graph_of_its_own)
{
    char *on, *off;

    /* slowlong-stall-late: the host stalls after op 41 in every other iteration;
    ** holding resumes after the chunk that ended at 48, and the next chunk ends
    ** 4 ops before the end as in whole segments (rule short-tail's place kept
    ** across the resume).  slowlong-stall-moved: two stalls in a row after op 21
    ** make it a cut, and the chunks after it move; then the host stalls after op
    ** 27, and holding resumes after a place where a chunk ended before they
    ** moved: the resumed segment's held ops go out eagerly rather than as graphs
    ** of its own.  Either way the resumed segments replay more ops, and build no
    ** more graphs than without the rule; before, each resumed segment captured
    ** its last graph anew, and so did the whole segment after it. */
    replays_with(*scenario, STALL_ENV, "16", &on);
    replays_with(*scenario, STALL_OFF, "16", &off);
    cr_assert_geq(total(on, "resumed"), 1, "%s", on);
    cr_assert_gt(total(on, "ops_replayed"), total(off, "ops_replayed"), "%s\n%s", on, off);
    cr_assert_leq(total(on, "recaptures"), total(off, "recaptures"), "%s\n%s", on, off);
    cr_assert_leq(total(on, "graphs_captured"), total(off, "graphs_captured"), "%s\n%s", on, off);
    free(on);
    free(off);
}

Test(engine, two_stalls_in_a_row_at_one_place_make_it_a_cut)
{
    /* slowlong-stall-moved, the watchdog 10 ms away: the chunks' graphs of
    ** slowlong (8 8 16 28, 16 12, 8 4: see a_slow_hosts_last_graph_is_4_ops);
    ** then the host stalls after op 22 in iterations 5 and 6.  Each time the
    ** watchdog issues ops 17-22 and holding resumes after the chunk at 32: a
    ** replay, but not of a whole segment, so the second hit at op 22 follows
    ** the first with no whole replay between, and the place is a cut.  From
    ** then on a chunk ends there (6 ops, 17-22) and the chunks after it move
    ** (22 ops, then 16); the stalls after op 27 later on resume there.  Were a
    ** resumed segment counted whole, the hits would never add up: no cut, no
    ** graph of 6. */
    char *sizes = capture_sizes("slowlong-stall-moved", "16", "10000");
    cr_assert_str_eq(sizes, "8 8 16 28 16 12 8 4 6 22 16 16 22 16 2 4");
    free(sizes);
}

Test(engine, where_the_host_polls_held_work_goes_out_when_it_is_reached)
{
    char *report, *bails;

    /* The host polls for a kernel's flag with no CUDA call.  The watchdog issues
    ** the held work twice (1 ms each); after that, the place is a cut: the work
    ** held up to the flag's kernel goes out as a graph as soon as it is held, and
    ** no later iteration waits for the watchdog or bails. */
    replays_with("watchdog", (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", HOST_CLOCK, NULL}, "12", &report);
    bails = strstr(report, "\"bails\"");
    cr_assert(bails, "%s", report);
    cr_assert_eq(total(bails, "watchdog"), 2, "%s", report);
    cr_assert_leq(total(bails, "mismatch"), 0, "%s", report); /* -1: none listed */
    cr_assert_geq(total(report, "chunks"), 12 - 2 - 2, "%s", report);
    free(report);
}

Test(engine, a_stalled_host_does_not_turn_loop_bodies_off)
{
    char *report;

    /* body-stall: a loop of one kernel held as a loop body, the host stalled
    ** for 20 ms in its middle in iterations 2 and 5 (a descheduled thread).  The
    ** watchdog issues what is held at each stall; the body then runs whole
    ** loops free of hits, so each hit is forgiven and the body replays on: 95 %
    ** of the ops.  Counted for the stream, two hits however far apart
    ** set loop bodies aside for good: 43 % (as the loop_body sample's 37 % in
    ** one GPU run would be).  A busy test machine may add a hit of its own. */
    replays_with("body-stall", (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", NULL}, "12", &report);
    cr_assert_geq(total(strstr(report, "\"bails\""), "watchdog"), 2, "%s", report);
    cr_assert_geq(total(report, "ops_replayed"), total(report, "ops") * 9 / 10, "%s", report);
    free(report);
}

Test(engine, a_host_that_polls_a_loop_body_waits_for_the_watchdog_twice)
{
    /* body-poll: the host polls a count the body's kernels raise, then
    ** synchronizes; body-poll-nosync: the same in one segment, with no
    ** synchronize; body-poll-more: 8 more launches of the body's kernel after
    ** the wait, then a synchronize; body-poll-mid(-nosync): the wait half-way
    ** through each loop, which then goes on.  The host waits for the body in
    ** every loop, so it hits before a whole loop runs free: however many
    ** iterations, it waits for the watchdog about twice.  body-poll-every3 waits
    ** every third iteration, body-poll-loops3 after the third of three loops an
    ** iteration: hits forgiven, but many for the loops run; body-poll-ring's
    ** count moves, a new body each iteration: hits counted for the stream.
    ** Each waited 24 times in 24 iterations (8 for every3) under an earlier
    ** rule: counted once a segment (body-poll-nosync), forgiven at any call of
    ** the program's after the body was found again (-more, -mid, -mid-nosync),
    ** after one loop free of hits (-every3, -loops3), per body (-ring). */
    const char *scenario[8] = {"body-poll", "body-poll-nosync", "body-poll-more", "body-poll-mid",
                               "body-poll-mid-nosync", "body-poll-every3", "body-poll-loops3", "body-poll-ring"};
    for (int i = 0; i < 8; i++) {
        char *report;
        replays_with(scenario[i], (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", HOST_CLOCK, NULL}, "24", &report);
        cr_assert_geq(total(strstr(report, "\"bails\""), "watchdog"), 2, "%s: %s", scenario[i], report);
        cr_assert_leq(total(strstr(report, "\"bails\""), "watchdog"), 4, "%s: %s", scenario[i], report);
        free(report);
    }
}

Test(engine, a_host_that_naps_while_it_polls_a_loop_body_waits_for_the_watchdog_twice)
{
    /* body-poll, the host napping 50 us between its polls: on the virtual
    ** clock each nap is time the watchdog counts (1 ms), and nothing else is,
    ** so the count is exact.  The body is issued by the watchdog in two loops
    ** in a row, and is held no more: twice, not "about twice" (a third wait
    ** would be a rule that waits for three hits). */
    char *report;

    replays_with("body-poll-nap", (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", NULL}, "24", &report);
    cr_assert_eq(total(strstr(report, "\"bails\""), "watchdog"), 2, "%s", report);
    cr_assert_gt(total(report, "body_graphs"), 0, "no body was held, so the test proves nothing: %s", report);
    free(report);
}

/* With nothing held for a while the watchdog sleeps until a stream holds work
** again: the stream wakes it, and held work the host polls for still goes out
** within the watchdog's limit (the program fails a wait over 300 ms; the
** watchdog's own sleep is a second). */
Test(engine, a_sleeping_watchdog_wakes_when_work_is_held, .timeout = 60)
{
    char *report, *bails;

    replays_with("idle-poll", (const char *[]){"GRAPHSHIM_MAX_DEFER_US=1000", HOST_CLOCK, NULL}, "8", &report);
    bails = strstr(report, "\"bails\"");
    cr_assert(bails, "%s", report);
    cr_assert_eq(total(bails, "watchdog"), 2, "%s", report);
    free(report);
}

Test(engine, work_that_never_repeats_costs_bounded_learning)
{
    char *report;
    /* 400 segments of distinct structure (block sizes), then a loop that repeats. */
    long n = replays_with("setup-then-loop", NULL, "400", &report);
    /* The tree stays bounded (its root full, subtrees dropped), and learning
    ** rests through most of the setup. */
    cr_assert_gt(total(report, "learned_dropped"), 32, "%s", report);
    cr_assert_gt(total(report, "segments_rested"), 200, "%s", report);
    cr_assert_gt(n, 0, "the loop after the setup was not learned: %s", report);
    free(report);
}

Test(engine, a_stream_destroy_ends_its_segment)
{
    /* stream-destroy: 8 iterations of one sequence, each ended by an event
    ** record, the last by the stream's destroy.  The destroy is the end of
    ** that segment, which replays its graph like the others (6 replays) and
    ** bails nowhere; flushed as the stream is emptied, it would go out
    ** eagerly, a bail. */
    char *report;

    cr_assert_eq(replays_with("stream-destroy", NULL, "8", &report), 8 - 2, "%s", report);
    cr_assert_null(strstr(report, "\"boundary-stream\""), "%s", report);
    free(report);
}

Test(engine, ops_that_cannot_be_held_go_after_held_ones)
{
    char *report;
    /* The held input and axpb must run before the unholdable launch and copy. */
    cr_assert_gt(replays_with("unholdable", NULL, "12", &report), 0);
    cr_assert_gt(total(report, "ops_held"), 0, "%s", report);
    cr_assert_not_null(strstr(report, "\"unholdable-op\": "), "%s", report);
    free(report);
}

/* The lines of a call log from the first line starting with `from` to the next
** starting with `to`, inclusive. */
static char *between(const char *log, const char *from, const char *to)
{
    const char *a = strstr(log, from), *b = a ? strstr(a, to) : NULL;
    const char *e = b ? strchr(b, '\n') : NULL;
    return a && e ? strndup(a, (size_t)(e - a + 1)) : strdup("");
}

Test(engine, the_programs_own_capture_sees_only_its_own_calls)
{
    /* The real driver fails a global-mode capture on calls it deems unsafe: while
    ** the program captures, graphshim may make no driver call of its own. */
    const char *argv[] = {GUARDPROG, "capture", "6", NULL};
    const char *env[] = {"FAKECUDA_LOG=@/fake.log", NULL};
    struct run base, r;
    char *lb, *lr, *wb, *wr;

    run_prog(&base, 0, env, argv, 20);
    run_prog(&r, 1, env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    lb = run_file(&base, "fake.log");
    lr = run_file(&r, "fake.log");
    wb = between(lb, "cuStreamBeginCapture_v2 ", "cuStreamEndCapture ");
    wr = between(lr, "cuStreamBeginCapture_v2 ", "cuStreamEndCapture ");
    cr_assert(strlen(wb) > 0, "no capture in the log");
    cr_assert_str_eq(wr, wb, "graphshim called the driver during the program's capture");
    free(lb), free(lr), free(wb), free(wr);
    run_free(&base), run_free(&r);
}

/* The driver's calls that refused a handle of the other kind (a CUkernel for a
** CUfunction, or back) in a layout or name query, in scenario's run under
** graphshim; its replays in *replays. */
static int refused_queries(const char *scenario, long *replays)
{
    const char *argv[] = {GUARDPROG, scenario, "6", NULL};
    const char *env[] = {"FAKECUDA_LOG=@/fake.log", "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, r;
    char *log, *report, *line, *save = NULL;
    int refused = 0;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    *replays = total(report, "replays");
    log = run_file(&r, "fake.log");
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        refused += (strstr(line, "GetParamInfo ") || strstr(line, "GetName ")) && strstr(line, "-> 400");
    free(log), free(report);
    run_free(&base), run_free(&r);
    return refused;
}

Test(engine, a_layout_is_asked_of_the_handle_kind_that_served_last)
{
    /* The first call on a kernel costs the same refused or answered (25-34 us on
    ** an H200): a program's handles are all of one kind, the runtime's CUkernels
    ** or the driver API's CUfunctions, so graphshim asks the kind that served
    ** last (CUkernel before any), and is refused once at most. */
    long replays;

    cr_assert_eq(refused_queries("library", &replays), 0);
    cr_assert_eq(replays, 6 - 2);
    cr_assert_eq(refused_queries("sync", &replays), 1); /* the first kernel's first call only */
    cr_assert_eq(replays, 6 - 2);
}

Test(engine, nccl_kernels_are_never_held)
{
    char *report;
    cr_assert_gt(replays_with("nccl", NULL, "12", &report), 0);
    cr_assert_not_null(strstr(report, "\"unholdable-op\": "), "%s", report);
    free(report);
}

Test(engine, public_api_pauses_and_counts)
{
    const char *argv[] = {GUARDPROG, "api", "10", NULL};
    struct run base, r;
    char *report;

    /* Iterations 4 and 5 run paused: 10 - 2 (warm-up) - 2 replays, and their 6
    ** ops pass straight through, unseen: 30 - 6 ops. */
    cr_assert_eq(replays_with("api", NULL, "10", &report), 10 - 2 - 2);
    free(report);
    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, NULL, argv, 20);
    cr_assert_str_empty(base.err, "without graphshim the API is absent: %s", base.err);
    cr_assert_eq(count_lines(r.err, "gs_stats=0 ops=24 replays=6 graphs=1"), 1, "%s", r.err);
    run_free(&base), run_free(&r);
}

/* --- Work that repeats inside a segment, or with other arguments ------------- */

/* guardprog's loop1, body5, scalars and rotate, with the ops each run issues. */
struct repeating {
    char scenario[16], iters[8];
    long ops;
};

static struct repeating repeating[] = {
    {"loop1", "8", 8 * 300}, {"body5", "8", 8 * 1000}, {"scalars", "12", 12 * 20}, {"rotate", "12", 12 * 20},
};

ParameterizedTestParameters(engine, repeating_work_keeps_its_output_under_every_setting)
{
    return cr_make_param_array(struct repeating, repeating, sizeof repeating / sizeof repeating[0]);
}

/* The output under graphshim equals the output without it, under the default
** knobs and under settings that move where held work goes out (warm-up of one,
** no early chunks, a chunk after every op, single ops graphed, one graph kept,
** a watchdog that may fire inside a segment), and the engine saw every launch. */
ParameterizedTest(struct repeating *c, engine, repeating_work_keeps_its_output_under_every_setting, .timeout = 120)
{
    static const char *const settings[] = {
        NULL, "GRAPHSHIM_WARMUP=1", "GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_CHUNK_OPS=1", "GRAPHSHIM_MIN_OPS=1",
        "GRAPHSHIM_MAX_GRAPHS=1", "GRAPHSHIM_MAX_DEFER_US=1",
    };
    const char *argv[] = {GUARDPROG, c->scenario, c->iters, NULL};
    struct run base;

    run_prog(&base, 0, NULL, argv, 20);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", c->scenario, base.err);
    cr_assert_eq(count_lines(base.out, c->scenario), atoi(c->iters), "%s", base.out);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const char *setting = settings[i] ? settings[i] : "defaults";
        struct run on;
        char *report;

        run_prog(&on, 1, (const char *[]){"GRAPHSHIM_REPORT=@/report.json", settings[i], NULL}, argv, 20);
        cr_assert_eq(on.status, 0, "%s, %s: %s", c->scenario, setting, on.err);
        cr_assert_str_eq(on.out, base.out, "%s, %s: graphshim changed the output", c->scenario, setting);
        report = run_file(&on, "report.json");
        cr_assert_eq(total(report, "ops"), c->ops, "%s, %s: %s", c->scenario, setting, report);
        free(report);
        run_free(&on);
    }
    run_free(&base);
}

/* Share of the ops that were replayed as graphs (totals.hit_rate) when guardprog
** runs the scenario under graphshim, with the output checked against a run
** without it.  The gain check is off and the watchdog waits a second, as in
** replays_with. */
static void assert_hit_rate(const char *scenario, const char *iters, double at_least)
{
    char *report;
    replays_with(scenario, NULL, iters, &report);
    cr_assert_geq(total_f(report, "hit_rate"), at_least, "%s %s: %s", scenario, iters, report);
    free(report);
}

/* Four synchronizes apart, so that graphing whole segments alone replays at most
** half of the ops (two warm-up segments): the rest is the loop bodies' work. */
Test(engine, one_kernel_looped_inside_a_segment_is_replayed)
{
    assert_hit_rate("loop1", "4", 0.9);
}

/* The search for loop bodies rests after 1024 launches without one (10000 here)
** and still finds the loops that come after. */
Test(engine, loops_after_long_work_without_loops_are_found)
{
    char *report;
    replays_with("quiet-then-loop", NULL, "8", &report);
    cr_assert_gt(total(report, "body_graphs"), 0, "%s", report);
    free(report);
}

Test(engine, a_body_of_five_kernels_looped_inside_a_segment_is_replayed)
{
    assert_hit_rate("body5", "4", 0.9);
}

/* No two segments are alike byte for byte: only patching the graph's parameters
** replays them. */
Test(engine, segments_whose_scalar_arguments_change_are_replayed)
{
    assert_hit_rate("scalars", "40", 0.9);
}

/* Graphing whole segments byte for byte would replay each of the three sets
** after two warm-up segments of its own: 34 of 40 (0.85). */
Test(engine, segments_whose_buffers_rotate_are_replayed)
{
    assert_hit_rate("rotate", "40", 0.9);
}

/* calls of a row of the profile build's table (policy/base/prof.h), -1 if absent. */
static long profile_calls(const char *err, const char *phase)
{
    char row[64];
    const char *p;
    long n = -1;

    snprintf(row, sizeof row, "\n  %s ", phase);
    if ((p = strstr(err, row)))
        sscanf(p + strlen(row), " %ld", &n);
    return n;
}

/* The profile build (make profile) times every launch the engine sees, and sorts
** each by what op_begin did with it: the counts agree with the report's.  The
** program's output is the normal build's. */
Test(engine, the_profile_build_times_every_launch)
{
    const char *argv[] = {GUARDPROG, "rare20", "300", NULL};
    const char *env[] = {"LD_PRELOAD=" BUILD_DIR "/prof/libgraphshim.so", "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, r;
    char *report;
    long held, learned, issued, rested, passed;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 0, env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report, "the profile build wrote no report");
    cr_assert_eq(profile_calls(r.err, "launch (all of it)"), 300 * 20, "%s", r.err);
    held = profile_calls(r.err, "    held");
    learned = profile_calls(r.err, "    issued, learned");
    issued = profile_calls(r.err, "    issued, not learned");
    rested = profile_calls(r.err, "    resting (shape only)");
    passed = profile_calls(r.err, "    passed through");
    /* Every launch builds its key here but those of a resting stream. */
    cr_assert_eq(profile_calls(r.err, "  key") + (rested > 0 ? rested : 0), 300 * 20, "%s", r.err);
    cr_assert_eq(held, total(report, "ops_held"), "%s\n%s", r.err, report);
    cr_assert_gt(learned, 0, "%s", r.err);
    cr_assert_eq(held + learned + (issued > 0 ? issued : 0) + (rested > 0 ? rested : 0) + (passed > 0 ? passed : 0),
                 profile_calls(r.err, "  op_begin"), "%s", r.err);
    cr_assert_eq(profile_calls(r.err, "synced (after a stream sync)"), 300, "%s", r.err);
    free(report);
    run_free(&base), run_free(&r);
}

/* A stream whose learning rests, where the search for loop bodies rests too,
** builds no key for a launch: its shape alone goes into the segment's
** fingerprint, from its arguments (the profile build counts the keys built).
** The output is the normal build's. */
Test(engine, a_resting_stream_builds_no_keys)
{
    const char *argv[] = {GUARDPROG, "rare20", "1000", NULL};
    const char *env[] = {"LD_PRELOAD=" BUILD_DIR "/prof/libgraphshim.so", "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, r;
    char *report;
    long keys;

    run_prog(&base, 0, NULL, argv, 30);
    run_prog(&r, 0, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report);
    cr_assert_gt(total(report, "segments_rested"), 100, "%s", report);
    cr_assert_eq(profile_calls(r.err, "launch (all of it)"), 1000 * 20, "%s", r.err);
    keys = profile_calls(r.err, "  key");
    cr_assert_lt(keys, 1000 * 20 - 2000, "%ld keys for 20000 launches:\n%s", keys, r.err);
    free(report);
    run_free(&base), run_free(&r);
}
