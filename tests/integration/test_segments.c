/*
** test_segments.c: what a segment's life must keep, over the fake driver.
**
** Each case runs a guardprog scenario without graphshim and with it under a few
** settings: the output (what the device computed, read by the program) must be
** the same, and the report must show that the engine really did what the case
** is about (held loop bodies, early chunks, replays), or the case proves
** nothing.  The cases are those a change of the hold path could break while the
** rest of the suite still passes: a loop body cut mid-period by a synchronize;
** a parameter whose last byte alone changes; a grid alone that changes, under
** loop bodies and under chunks; a pageable source rewritten every iteration,
** and every batch of a loop.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"

/* Runs scenario for iters iterations without graphshim and with it under the
** NULL-terminated settings env (the gain check off, the watchdog a second away,
** as test_engine.c's replays_with), asserts the same output, and returns the
** report (free it). */
static char *same_output(const char *scenario, const char *iters, const char *const *env)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    const char *e[12] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_MAX_DEFER_US=1000000"};
    struct run base, r;
    char *report;
    int n = 3;

    for (int i = 0; env && env[i] && n < 11; i++)
        e[n++] = env[i];
    e[n] = NULL;
    run_prog(&base, 0, NULL, argv, 30);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", scenario, base.err);
    cr_assert_eq(count_lines(base.out, scenario), atoi(iters), "%s", base.out);
    run_prog(&r, 1, e, argv, 30);
    cr_assert_eq(r.status, 0, "%s under graphshim: %s", scenario, r.err);
    cr_assert_str_eq(r.out, base.out, "%s (%s): graphshim changed what the device computed", scenario,
                     env && env[0] ? env[0] : "defaults");
    report = run_file(&r, "report.json");
    cr_assert_not_null(report, "%s: no report", scenario);
    run_free(&base), run_free(&r);
    return report;
}

#define NO_BODIES "GRAPHSHIM_BODY_OPS=0"
#define CHUNKS "GRAPHSHIM_CHUNK_OPS=4"

/* Held whole bodies and a held head of the next period: both go out, in order,
** before the synchronize returns. */
Test(segments, a_loop_body_cut_mid_period_by_a_synchronize)
{
    char *report = same_output("body-cut", "8", NULL);
    cr_assert_gt(total(report, "body_graphs"), 0, "no loop body was replayed: %s", report);
    free(report);
    report = same_output("body-cut", "8", (const char *[]){CHUNKS, NULL});
    cr_assert_gt(total(report, "body_graphs"), 0, "no loop body was replayed: %s", report);
    free(report);
}

/* The held op whose last parameter byte alone differs from its node's goes
** out with its own bytes: in the tree (patched; with patching off, another
** sequence) and in a loop body (the body ends there). */
Test(segments, a_kernel_whose_last_parameter_byte_alone_changes)
{
    static const char *const settings[][3] = {{NULL}, {"GRAPHSHIM_PATCH=0", NULL}, {NO_BODIES, NULL}, {CHUNKS, NULL}};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *report = same_output("last-byte", "8", settings[i]);
        cr_assert_gt(total(report, "ops_held"), 0, "%s", report);
        if (i == 0) {
            cr_assert_gt(total(report, "body_graphs"), 0, "no loop body was replayed: %s", report);
            cr_assert_gt(total(report, "nodes_patched"), 0, "no node was set: %s", report);
        }
        free(report);
    }
}

/* A launch whose grid alone changes: a loop body ends there; a chunk's or a
** segment's graph gets the new grid. */
Test(segments, a_grid_only_change_under_loop_bodies_and_under_chunks)
{
    char *report = same_output("grid-only", "8", NULL);
    cr_assert_gt(total(report, "body_graphs"), 0, "no loop body was replayed: %s", report);
    free(report);
    report = same_output("grid-only", "8", (const char *[]){NO_BODIES, CHUNKS, NULL});
    cr_assert_gt(total(report, "chunks"), 0, "no early chunk: %s", report);
    cr_assert_gt(total(report, "nodes_patched"), 0, "no node was set: %s", report);
    free(report);
    report = same_output("grid-only", "8", (const char *[]){CHUNKS, "GRAPHSHIM_PATCH=0", NULL});
    cr_assert_gt(total(report, "replays"), 0, "%s", report);
    free(report);
}

/* A held pageable copy goes out with the bytes its source had at the call. */
Test(segments, a_pageable_copy_whose_source_changes_every_iteration)
{
    static const char *const settings[][3] = {{NULL}, {CHUNKS, "GRAPHSHIM_MIN_OPS=2", NULL}, {NO_BODIES, NULL}};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *report = same_output("pageable-h2d", "8", settings[i]);
        cr_assert_gt(total(report, "replays"), 0, "the copy was never replayed: %s", report);
        free(report);
    }
}

/* A stream's learning forgotten (a module unloaded) while the graph of the
** segment just ended still reads its staging buffers: they are waited for
** before they go (rules/resolve.c, the staging room).  Without the wait the
** fake driver's pending graph reads freed host memory: its launch fails. */
Test(segments, staging_buffers_outlive_a_forgotten_learning)
{
    static const char *const settings[][3] = {{"FAKECUDA_PENDING=4", NULL},
                                              {"FAKECUDA_PENDING=4", "GRAPHSHIM_WARMUP=1", NULL}};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *report = same_output("pageable-unload", "16", settings[i]);
        cr_assert_gt(total(report, "replays"), 0, "the copy was never replayed: %s", report);
        free(report);
    }
}

/* A pageable copy repeated in a loop inside one segment is never held as a
** loop body (whose graph would read the source when it runs): the tree holds
** it, staged, once the segment repeats. */
Test(segments, a_pageable_copy_in_a_loop)
{
    static const char *const settings[][3] = {{NULL}, {CHUNKS, NULL}};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *report = same_output("pageable-loop", "8", settings[i]);
        cr_assert_gt(total(report, "replays"), 0, "the loop was never replayed: %s", report);
        free(report);
    }
}

/* A launch the driver refuses (the 5th cuLaunchKernel: the second iteration's
** axpb, issued eagerly while its sequence is learned) makes its segment no
** occurrence of the sequence: the sequence is stable after the first and the
** third iteration, not the first two, so one replay fewer.  Without the rule
** (the segment's room hears of a failed op, rules/resolve.c) the failed segment
** counts, and 8 - 2 replays come. */
Test(segments, a_segment_with_a_failed_op_is_no_occurrence)
{
    const char *argv[] = {GUARDPROG, "failed-op", "8", NULL};
    const char *fail = "FAKECUDA_FAIL=cuLaunchKernel:5:CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    const char *e[] = {"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_MAX_DEFER_US=1000000",
                       fail, NULL};
    struct run base, r;
    char *report;

    run_prog(&base, 0, (const char *[]){fail, NULL}, argv, 30);
    cr_assert(strstr(base.out, "1 rc 701"), "the launch did not fail: %s", base.out);
    run_prog(&r, run_lib(e), e, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    cr_assert_eq(total(report, "replays"), 8 - 3, "%s", report);
    free(report), run_free(&base), run_free(&r);
}
