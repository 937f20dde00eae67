/*
** test_steps.c: steps that no synchronize ends (tests/integration/stepprog.c, a
** JAX jit loop's shape: four launches, two event records, a second stream's
** wait and host function, then the program waits on an event or the stream).
**
** The fake driver's GPU model makes held work start late: a kernel takes
** FAKECUDA_KERNEL_US of GPU time from when it is issued, and an event's
** synchronize waits for the GPU's work before the record
** (tests/fakecuda/README.md).  With the host's own work before each launch, a
** held step's kernels start on the GPU only at its graph launch, after all of
** it: a step the GPU bounds is slower replayed.  The gain check times such a
** step to the stream's next op (rule gain-step) and runs it eagerly for good;
** without the rule nothing judges it.  Its replays save no driver call, so a
** replay slower at all counts as slow (rule gain-calls).  The programs' clock is the fake's
** virtual one, so the figures are the same on a busy machine.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define STEPPROG BUILD_DIR "/tests/stepprog"

/* A GPU that bounds the step: 4 us a kernel, 3 us of host time a launch, 2 us a
** graph launch, and the program's own 2 us before each launch. */
#define GPU_BOUND "FAKECUDA_CLOCK=virtual", "FAKECUDA_KERNEL_US=4", "FAKECUDA_LAUNCH_US=3", "FAKECUDA_GRAPH_LAUNCH_US=2"
/* Kernels of 20 us, the same arguments every step (a replay sets no node). */
#define LONG_SAME_ARGS                                                                                           \
    "FAKECUDA_CLOCK=virtual", "FAKECUDA_KERNEL_US=20", "FAKECUDA_LAUNCH_US=3", "FAKECUDA_GRAPH_LAUNCH_US=2", \
        "STEPPROG_SAME_ARGS=1"

struct step_run {
    unsigned long long loop_ns; /* the program's clock over the loop's second half */
    char *report;               /* the JSON report (NULL without graphshim) */
    char *text;                 /* graphshim's stderr: its text report */
};

/* Runs stepprog WAIT 200 without graphshim, or with it (shim) and the extra
** env (NULL-terminated, at most 4), with the costs in costs; checks that it
** succeeded and printed what the run without graphshim printed (base_out, where
** not NULL).  *out gets its stdout where out is not NULL. */
static struct step_run step_run(const char *wait, int shim, const char *const *costs, const char *const *extra,
                                const char *base_out, char **out)
{
    const char *argv[] = {STEPPROG, wait, "200", NULL};
    const char *env[16] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_LOG=info", "GRAPHSHIM_MAX_DEFER_US=1000000"};
    int n = 3;
    struct step_run sr = {0};
    struct run r;
    const char *p;

    for (int i = 0; costs[i] && n < 10; i++)
        env[n++] = costs[i];
    for (int i = 0; extra && extra[i] && n < 15; i++)
        env[n++] = extra[i];
    run_prog(&r, shim ? run_lib(env) : RUN_BARE, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    if (base_out)
        cr_assert_str_eq(r.out, base_out, "graphshim changed the output");
    p = strstr(r.err, "loop_ns ");
    cr_assert_not_null(p, "%s", r.err);
    sr.loop_ns = strtoull(p + 8, NULL, 10);
    if (shim)
        sr.report = run_file(&r, "report.json"), sr.text = strdup(r.err);
    if (out)
        *out = strdup(r.out);
    run_free(&r);
    return sr;
}

static void step_free(struct step_run *sr)
{
    free(sr->report), free(sr->text);
}

/* The step under graphshim (extra: its test switches) against the step without:
** their loop times' ratio, eager over graphshim (above 1: graphshim faster). */
static double step_ratio(const char *wait, const char *const *costs, const char *const *extra, struct step_run *shim)
{
    char *out;
    struct step_run base = step_run(wait, 0, costs, NULL, NULL, &out);

    *shim = step_run(wait, 1, costs, extra, out, NULL);
    free(out);
    cr_assert_gt(shim->loop_ns, 0);
    return (double)base.loop_ns / (double)shim->loop_ns;
}

/* The step with rule off (the test build's GRAPHSHIM_TEST_DROP_RULE) and on:
** off, the held step loses (eager over graphshim below `below`); on, it runs
** eagerly for good (one no-gain) and loses nothing. */
static void judged(const char *wait, const char *const *costs, const char *rule, double below, struct step_run *off,
                   struct step_run *on)
{
    char drop[64];
    double lost, kept;

    snprintf(drop, sizeof drop, "GRAPHSHIM_TEST_DROP_RULE=%s", rule);
    lost = step_ratio(wait, costs, (const char *[]){drop, NULL}, off);
    kept = step_ratio(wait, costs, NULL, on);
    cr_assert_lt(lost, below, "the held step did not lose without rule %s: %.3f\n%s", rule, lost, off->text);
    cr_assert_gt(total(off->report, "replays"), 150, "%s", off->report);
    cr_assert_geq(kept, 0.999, "the held step still loses: %.3f\n%s", kept, on->text);
    cr_assert_eq(total(strstr(on->report, "\"bails\""), "no-gain"), 1, "%s", on->report);
}

/* Waited on by an event: graphed and replayed, the step that the GPU bounds
** loses (the fake shows it without the rule); timed to the next step, it runs
** eagerly for good (no-gain) and is as fast as without graphshim. */
Test(steps, an_event_ended_step_that_loses_runs_eagerly, .timeout = 90)
{
    struct step_run off, on;

    judged("event", (const char *[]){GPU_BOUND, NULL}, "gain-step", 0.95, &off, &on);
    /* The report says what ended the step and what the check found. */
    cr_assert(strstr(on.report, "\"graph\": false, "), "%s", on.report);
    cr_assert(strstr(on.report, "\"ended_by\": \"event\", \"gain\": \"no-gain\""), "%s", on.report);
    cr_assert(strstr(on.text, "no graph; "), "%s", on.text);
    cr_assert(strstr(on.text, "; ended by event, gain no-gain; eager "), "%s", on.text);
    cr_assert(strstr(off.report, "\"ended_by\": \"event\", \"gain\": \"untimed\""), "%s", off.report);
    step_free(&off), step_free(&on);
}

/* The same step, waited on by a synchronize of its stream after the records:
** the segment that the synchronize ends has no op, and the step is timed to its
** return. */
Test(steps, a_step_a_stream_synchronize_waits_for_after_its_records_is_judged, .timeout = 90)
{
    struct step_run off, on;

    judged("stream", (const char *[]){GPU_BOUND, NULL}, "gain-step", 0.95, &off, &on);
    step_free(&off), step_free(&on);
}

/* Longer kernels (20 us): the held step loses 7-8 %, within the 10 % any graph
** may lose to noise.  Its replays save no driver call (a graph launch and three
** node sets against four launches): judged strictly, it runs eagerly for good
** (rule gain-calls); without the rule its graph is kept, unless the trial after
** its first window finds it (rule gain-pairs): both are off there, and
** gain-calls alone (gain-pairs off) must run it eagerly too. */
Test(steps, a_step_whose_replays_save_no_call_is_judged_strictly, .timeout = 90)
{
    const char *costs[] = {"FAKECUDA_CLOCK=virtual", "FAKECUDA_KERNEL_US=20", "FAKECUDA_LAUNCH_US=3",
                           "FAKECUDA_GRAPH_LAUNCH_US=2", NULL};
    struct step_run off, on;

    judged("event", costs, "gain-calls,gain-pairs", 0.97, &off, &on);
    cr_assert(strstr(off.report, "\"gain\": \"pays\""), "%s", off.report);
    cr_assert(strstr(on.report, "\"gain\": \"no-gain\""), "%s", on.report);
    step_free(&off), step_free(&on);
    /* rule gain-calls alone (gain-pairs' trial would find the loss too) */
    struct step_run calls;
    double alone = step_ratio("event", costs, (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=gain-pairs", NULL}, &calls);
    cr_assert_geq(alone, 0.999, "rule gain-calls alone kept a losing graph: %.3f\n%s", alone, calls.text);
    cr_assert(strstr(calls.report, "\"gain\": \"no-gain\""), "%s", calls.report);
    step_free(&calls);
}

/* The same step with the same arguments every step: its replays set no node and
** save three driver calls of four, so windows allow them the 10 % any graph
** may lose to noise, and the held step loses 7-8 % for good.  The trial after
** its first window judges each replay strictly against the eager runs around it
** (rule gain-pairs) and runs it eagerly for good, with gain-strict or without. */
Test(steps, a_step_that_loses_less_than_windows_allow_is_found_by_its_trial, .timeout = 90)
{
    struct step_run off, on;

    judged("event", (const char *[]){LONG_SAME_ARGS, NULL}, "gain-pairs", 0.97, &off, &on);
    cr_assert(strstr(off.report, "\"gain\": \"pays\""), "%s", off.report);
    cr_assert_eq(total(off.report, "nodes_patched"), 0, "%s", off.report);
    step_free(&off), step_free(&on);
    /* The warm trial after the first window finds it alone: a window's 3 of 4
    ** replays longer at all (rule gain-strict) would start a trial too. */
    double alone = step_ratio("event", (const char *[]){LONG_SAME_ARGS, NULL},
                              (const char *[]){"GRAPHSHIM_TEST_DROP_RULE=gain-strict", NULL}, &on);
    cr_assert_geq(alone, 0.999, "without gain-strict the warm trial kept a losing graph: %.3f\n%s", alone, on.text);
    cr_assert_eq(total(strstr(on.report, "\"bails\""), "no-gain"), 1, "%s", on.report);
    step_free(&on);
}

/* The same four launches ended by a synchronize (no record, no second stream),
** the same arguments every step: the held step starts the GPU late and loses
** about 6 %, within the 10 % a window allows, and its issue time is too large a
** part of its time for a busy GPU's (rule busy-gpu): without rule gain-strict
** every window passes and the graph is kept for good.  With it, windows whose
** replays took longer at all in 3 of 4 start a trial, and the trial's pairs run
** it eagerly for good. */
Test(steps, a_synchronized_step_that_loses_a_little_is_tried_and_runs_eagerly, .timeout = 90)
{
    struct step_run off, on;

    judged("sync", (const char *[]){LONG_SAME_ARGS, NULL}, "gain-strict", 0.97, &off, &on);
    cr_assert(strstr(off.report, "\"ended_by\": \"sync\", \"gain\": \"pays\""), "%s", off.report);
    cr_assert(strstr(on.report, "\"ended_by\": \"sync\", \"gain\": \"no-gain\""), "%s", on.report);
    step_free(&off), step_free(&on);
}

/* A step the host bounds (5 us a launch, 1 us a kernel) pays replayed: timed to
** the next step, its graph is kept, and graphshim is faster. */
Test(steps, an_event_ended_step_that_pays_keeps_its_graph, .timeout = 90)
{
    const char *costs[] = {"FAKECUDA_CLOCK=virtual", "FAKECUDA_KERNEL_US=1", "FAKECUDA_LAUNCH_US=5",
                           "FAKECUDA_GRAPH_LAUNCH_US=2", NULL};
    struct step_run on;
    double gain = step_ratio("event", costs, NULL, &on);

    cr_assert_gt(gain, 1.2, "%.3f\n%s", gain, on.text);
    cr_assert_eq(total(strstr(on.report, "\"bails\""), "no-gain"), -1, "%s", on.report);
    cr_assert_gt(total(on.report, "replays"), 150, "%s", on.report);
    cr_assert(strstr(on.report, "\"ended_by\": \"event\", \"gain\": \"pays\""), "%s", on.report);
    cr_assert(strstr(on.text, "; ended by event, gain pays; eager "), "%s", on.text);
    step_free(&on);
}

/* A sequence that a synchronize ends says so in the report. */
Test(steps, the_report_says_a_synchronize_ended_a_sequence, .timeout = 60)
{
    const char *argv[] = {BUILD_DIR "/tests/guardprog", "sync", "40", NULL};
    const char *env[] = {"GRAPHSHIM_REPORT=@/report.json", "FAKECUDA_LAUNCH_US=5", NULL};
    struct run r;
    char *report;

    run_prog(&r, RUN_SHIM, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report);
    cr_assert(strstr(report, "\"ended_by\": \"sync\", \"gain\": \"pays\""), "%s", report);
    free(report), run_free(&r);
}

/* A pause of graphshim after every step (gs_pause, 1 ms): the step before it
** is not timed across the pause, which would give it the pause's time.  It
** is timed to the event's synchronize before the pause (rule
** gain-event-sync), and without that rule not at all: every time the report
** gives is far below the pause's.  (With gain-event-sync alone the pause
** would not show: the rule is dropped in a second run.) */
Test(steps, a_step_before_a_pause_is_not_timed_across_it, .timeout = 60)
{
    const char *costs[] = {GPU_BOUND, NULL};
    const char *drop[] = {NULL, "GRAPHSHIM_TEST_DROP_RULE=gain-event-sync"};

    for (int i = 0; i < 2; i++) {
        struct step_run on =
            step_run("event", 1, costs, (const char *[]){"STEPPROG_PAUSE_US=1000", drop[i], NULL}, NULL, NULL);
        const char *seq = strstr(on.report, "\"ended_by\": \"event\"");

        cr_assert_not_null(seq, "%s", on.report);
        for (const char *k = on.report; (k = strstr(k, "_us\": ")) != NULL; k++) {
            double us = strtod(k + 6, NULL);
            cr_assert_lt(us, 500, "[%s] a time of %.1f us: a step was timed across a pause: %s",
                         drop[i] ? drop[i] : "all rules", us, on.report);
        }
        step_free(&on);
    }
}
