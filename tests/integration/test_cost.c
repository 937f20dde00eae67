/*
** test_cost.c: what a sequence's replays cost and saved, in the report
** (docs/report.md, sequences[]): its graph launches (its replayed segments'
** early chunks and last graphs), the nodes set before them and the host time in
** the driver; its eager and replayed times where the gain check measured them,
** and the estimate of what its replays saved.
**
** scalars and scalars-cut launch 20 kernels whose scalar arguments change every
** iteration: every graph launch sets nodes first.  With GRAPHSHIM_CHUNK_OPS=2
** and the rule chunk-idle dropped (the test build), each held segment sends
** early chunks at depths 2, 4, 8 and 16: a replay is 5 graph launches.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"

/* Runs guardprog SCENARIO ITERS under graphshim with env (NULL-terminated, at
** most 8), checks its output against a run without graphshim, and returns its
** JSON report (GRAPHSHIM_REPORT is set here) and in *text, where not NULL, its
** text report (GRAPHSHIM_LOG=info, on stderr).  The watchdog waits a second: a
** test process descheduled on a busy machine must not bail. */
static char *report_with(const char *scenario, const char *iters, const char *const *env, char **text)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    const char *e[12] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_MAX_DEFER_US=1000000", "GRAPHSHIM_LOG=info"};
    struct run base, r;
    char *report;

    for (int i = 0; env && env[i] && i < 8; i++)
        e[i + 3] = env[i];
    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, run_lib(e), e, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out, "%s: graphshim changed the output", scenario);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report);
    if (text)
        *text = strdup(r.err);
    run_free(&base), run_free(&r);
    return report;
}

/* The row of the report's sequence of ops ops, up to its closing brace (for
** total() and strstr), or NULL.  Freed by the caller. */
static char *seq_row(const char *report, int ops)
{
    char pat[32];
    const char *p, *e;

    snprintf(pat, sizeof pat, "{\"ops\": %d, \"seen\"", ops);
    p = strstr(report, pat);
    e = p ? strchr(p, '}') : NULL;
    return e ? strndup(p, (size_t)(e - p + 1)) : NULL;
}

/* The report's first stream, up to its sequences (for total()). */
static char *stream_of(const char *report)
{
    const char *p = strstr(report, "\"streams\""), *e = p ? strstr(p, "\"sequences\"") : NULL;

    cr_assert_not_null(e, "%s", report);
    return strndup(p, (size_t)(e - p));
}

/* Early chunks at depths 2, 4, 8 and 16 of every held segment, the gain check
** off (which replays are tried eagerly is not what these counts are about). */
#define CHUNKED "GRAPHSHIM_CHUNK_OPS=2", "GRAPHSHIM_TEST_DROP_RULE=chunk-idle", "GRAPHSHIM_BODY_OPS=0", \
                "GRAPHSHIM_GAIN_CHECK=0"

/* No segment bails: every graph launch of the stream is its one sequence's, each
** replay 4 chunks and a last graph, and every node set is the sequence's. */
Test(cost, a_sequences_graph_launches_are_its_replays_and_their_chunks, .timeout = 60)
{
    char *report = report_with("scalars", "40", (const char *[]){CHUNKED, NULL}, NULL);
    char *st = stream_of(report), *row = seq_row(report, 20);
    long replays = total(st, "replays"), chunks = total(st, "chunks");

    cr_assert_not_null(row, "%s", report);
    cr_assert(strstr(st, "\"bails\": {}"), "a segment bailed: %s", report);
    cr_assert_eq(replays, 38, "%s", report);
    cr_assert_eq(chunks, 4 * replays, "not the chunks this test is about: %s", report);
    cr_assert_eq(total(row, "replays"), replays, "%s", report);
    cr_assert_eq(total(row, "graph_launches"), replays + chunks, "%s", report);
    cr_assert_gt(total(st, "nodes_patched"), 0, "%s", report);
    cr_assert_eq(total(row, "nodes_set"), total(st, "nodes_patched"), "%s", report);
    cr_assert_gt(total_f(row, "graph_host_us"), 0, "%s", report);
    free(row), free(st), free(report);
}

/* Every fourth iteration the segment bails (mismatch) after its 4 chunks went
** out: those launches, and the nodes set for them, go to no sequence, not to the
** next replay. */
Test(cost, a_segment_that_bails_after_its_chunks_gives_them_to_no_sequence, .timeout = 60)
{
    char *report = report_with("scalars-cut", "40", (const char *[]){CHUNKED, NULL}, NULL);
    char *st = stream_of(report), *row = seq_row(report, 20);
    long cut = total(strstr(st, "\"bails\""), "mismatch");

    cr_assert_not_null(row, "%s", report);
    cr_assert_gt(cut, 0, "no segment bailed: %s", report);
    cr_assert_eq(total(row, "graph_launches"), 5 * total(row, "replays"), "%s", report);
    cr_assert_eq(total(st, "replays") + total(st, "chunks") - total(row, "graph_launches"), 4 * cut, "%s", report);
    cr_assert_lt(total(row, "nodes_set"), total(st, "nodes_patched"), "%s", report);
    cr_assert_gt(total(row, "nodes_set"), 0, "%s", report);
    free(row), free(st), free(report);
}

/* Eager launches that cost the host 5 us each: the gain check times the
** sequence's eager runs and its replays, and the report gives both, and what
** the replays saved by them (rounded to 0.1 us each). */
Test(cost, a_sequences_times_are_those_the_gain_check_measured, .timeout = 60)
{
    char *report = report_with("scalars", "40", (const char *[]){"FAKECUDA_LAUNCH_US=5", NULL}, NULL);
    char *row = seq_row(report, 20);
    double eager, replay, replays;

    cr_assert_not_null(row, "%s", report);
    eager = total_f(row, "eager_us"), replay = total_f(row, "replay_us"), replays = total_f(row, "replays");
    cr_assert_gt(eager, 0, "%s", row);
    cr_assert_gt(replay, 0, "%s", row);
    cr_assert(strstr(row, "\"saved_us\": "), "%s", row);
    cr_assert_leq(fabs(total_f(row, "saved_us") - replays * (eager - replay)), 0.1 * replays + 0.1, "%s", row);
    free(row), free(report);
}

/* The replay that built the graph is not timed: its capture and instantiation
** are no part of what a replay costs.  sync's 3 ops (5 us a launch eagerly,
** about 15 us a run) and a capture that costs 2 ms, on the virtual clock: the
** graph, built once, replays in well under a microsecond each time.  Timed,
** that first replay would make the mean replay 50 us or more. */
Test(cost, the_replay_that_built_the_graph_is_not_timed, .timeout = 60)
{
    char *report = report_with("sync", "40",
                               (const char *[]){"FAKECUDA_LAUNCH_US=5", "FAKECUDA_CAPTURE_US=2000",
                                                "GRAPHSHIM_TEST_CLOCK=fake", "FAKECUDA_CLOCK=virtual", NULL},
                               NULL);
    char *row = seq_row(report, 3);

    cr_assert_not_null(row, "%s", report);
    cr_assert_eq(total(report, "graphs_captured"), 1, "%s", report);
    cr_assert_gt(total_f(row, "replay_us"), 0, "%s", row);
    cr_assert_lt(total_f(row, "replay_us"), total_f(row, "eager_us"), "%s", row);
    free(row), free(report);
}

/* No gain check, nothing timed: no time is reported, not even a 0. */
Test(cost, no_time_is_reported_that_was_not_measured, .timeout = 60)
{
    char *report = report_with("scalars", "40", (const char *[]){"FAKECUDA_LAUNCH_US=5", "GRAPHSHIM_GAIN_CHECK=0", NULL},
                               NULL);
    char *row = seq_row(report, 20);

    cr_assert_not_null(row, "%s", report);
    cr_assert_gt(total(row, "graph_launches"), 0, "%s", row);
    cr_assert_null(strstr(report, "eager_us"), "%s", report);
    cr_assert_null(strstr(report, "replay_us"), "%s", report);
    cr_assert_null(strstr(report, "saved_us"), "%s", report);
    free(row), free(report);
}

/* The time in us that text gives as "N us" or "N ms" after word (a ", " after
** it), or -1. */
static double text_time(const char *text, const char *word)
{
    const char *p = strstr(text, word);
    double v;
    char unit[3];

    if (!p || sscanf(p + strlen(word), "%lf %2s", &v, unit) != 2)
        return -1;
    return strcmp(unit, "ms") == 0 ? v * 1e3 : strcmp(unit, "us") == 0 ? v : -1;
}

/* The text report's line of the sequence: the same counts, and its times where
** measured (to the 0.1 us or ms it shows), "-" where not. */
Test(cost, the_text_report_shows_what_a_sequence_cost, .timeout = 60)
{
    char *text, *report = report_with("scalars", "40", (const char *[]){"FAKECUDA_LAUNCH_US=5", NULL}, &text);
    char *row = seq_row(report, 20), line[200];
    const char *p;

    cr_assert_not_null(row, "%s", report);
    snprintf(line, sizeof line, "sequence of   20 ops: seen     40, replayed %6ld, graph; %ld graph launches (%.1f a replay), "
             "%ld nodes set, ", total(row, "replays"), total(row, "graph_launches"),
             (double)total(row, "graph_launches") / (double)total(row, "replays"), total(row, "nodes_set"));
    p = strstr(text, line);
    cr_assert_not_null(p, "no '%s' in:\n%s", line, text);
    /* What its graphs took to build, a capture and an instantiation at least. */
    cr_assert_gt(total_f(row, "build_us"), 0, "%s", row);
    cr_assert_leq(fabs(text_time(p, ", built in ") - total_f(row, "build_us")), 0.051 * total_f(row, "build_us") + 0.1,
                  "%s\n%s", p, row);
    for (int i = 0; i < 2; i++) {
        double us = total_f(row, i ? "replay_us" : "eager_us");
        cr_assert_leq(fabs(text_time(p, i ? ", replay " : "; eager ") - us), 0.051 * us + 0.1, "%s\n%s", p, row);
    }
    /* An estimate, and the word says which way: a negative saving is a loss. */
    cr_assert(strstr(p, total_f(row, "saved_us") < 0 ? ", lost ~" : ", saved ~"), "%s\n%s", p, row);
    free(text), free(row), free(report);

    report = report_with("scalars", "40", (const char *[]){"GRAPHSHIM_GAIN_CHECK=0", NULL}, &text);
    cr_assert(strstr(text, "; eager -, replay -, saved -\n"), "%s", text);
    free(text), free(report);
}

/* A sequence whose context went away before exit (a runtime's teardown) keeps
** what its replays cost in its row. */
Test(cost, a_dropped_sequence_keeps_its_cost, .timeout = 60)
{
    char *report = report_with("teardown", "8", (const char *[]){"GRAPHSHIM_GAIN_CHECK=0", NULL}, NULL);
    char *p = strstr(report, "\"graph\": \"dropped\"");

    cr_assert_not_null(p, "no sequence dropped: %s", report);
    while (p > report && *p != '{')
        p--;
    cr_assert_gt(total(p, "replays"), 0, "%s", report);
    cr_assert_geq(total(p, "graph_launches"), total(p, "replays"), "%s", report);
    free(report);
}
