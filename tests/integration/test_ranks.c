/*
** test_ranks.c: what a rank of a multi-GPU job relies on, over the fake driver.
**
** A rank must never be stranded at a collective: graphshim holds no collective
** (NCCL's kernels, and any launch it cannot hold), whatever the knobs, and
** issues everything it holds before one, in order.  The work between a
** stream's collectives is still learned and graphed: a collective ends the
** segment as an event record does.  On a GPU the same promise is tested with
** the test build's failing graph calls (GRAPHSHIM_TEST_FAULT), which are
** checked here against the fake driver first.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"

/* The knobs under which collectives are checked: defaults, early chunks, loop
** bodies, time-based chunks, a watchdog that fires at once, no patching,
** learning that rests at once, the gain check on. */
static const char *const settings[][4] = {
    {NULL},
    {"GRAPHSHIM_CHUNK_OPS=2", "GRAPHSHIM_WARMUP=1", "GRAPHSHIM_MIN_OPS=1", NULL},
    {"GRAPHSHIM_BODY_OPS=2", "GRAPHSHIM_WARMUP=1", NULL},
    {"GRAPHSHIM_CHUNK_US=1", "GRAPHSHIM_CHUNK_OPS=0", NULL},
    {"GRAPHSHIM_MAX_DEFER_US=1", NULL},
    {"GRAPHSHIM_PATCH=0", NULL},
    {"GRAPHSHIM_REST_AFTER=1", NULL},
    {"GRAPHSHIM_GAIN_CHECK=1", "GRAPHSHIM_MIN_OPS=1", NULL},
};

/* Lines of the call log between a capture's begin and its end that launch
** function fn (a substring of the log's "f=" field). */
static int captured_launches_of(const char *log, const char *fn)
{
    int in = 0, n = 0;
    for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        if (!strncmp(l, "cuStreamBeginCapture", 20))
            in = 1;
        else if (!strncmp(l, "cuStreamEndCapture", 18))
            in = 0;
        else if (in && !strncmp(l, "cuLaunch", 8) && memmem(l, len, fn, strlen(fn)))
            n++;
    }
    return n;
}

/* How the fake driver's call log names a launch of the scenario's collective. */
#define COLLECTIVE "cuLaunchKernel f=f7:_Z37ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"

/* guardprog collectives ITERS (or another scenario) with graphshim under
** settings env; its report and fake call log into r's directory. */
static void run_collectives(struct run *r, const char *scenario, const char *iters, const char *const *env)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    const char *e[12] = {"GRAPHSHIM_REPORT=@/report.json", "FAKECUDA_LOG=@/fake.log"};
    int n = 2;
    for (int i = 0; env && env[i] && n < 11; i++)
        e[n++] = env[i];
    e[n] = NULL;
    run_prog(r, RUN_SHIM, e, argv, 30);
}

Test(ranks, collectives_are_never_held_whatever_the_knobs)
{
    const char *argv[] = {GUARDPROG, "collectives", "12", NULL};
    struct run base;

    run_prog(&base, RUN_BARE, (const char *[]){"FAKECUDA_LOG=@/fake.log", NULL}, argv, 30);
    cr_assert_eq(base.status, 0, "%s", base.err);
    char *blog = run_file(&base, "fake.log");
    int nccl = count_lines(blog, COLLECTIVE), ex = count_lines(blog, "cuLaunchKernelEx");
    cr_assert_eq(nccl, 12, "the scenario launches one collective an iteration: %d", nccl);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        struct run r;
        run_collectives(&r, "collectives", "12", settings[i]);
        const char *k = settings[i][0] ? settings[i][0] : "defaults";
        cr_assert_eq(r.status, 0, "[%s] %s", k, r.err);
        cr_assert_str_eq(r.out, base.out, "[%s] the output differs from the run without graphshim", k);
        char *log = run_file(&r, "fake.log"), *report = run_file(&r, "report.json");
        cr_assert_not_null(report, "[%s] no report", k);
        cr_assert_eq(captured_launches_of(log, "ncclDevKernel"), 0, "[%s] a collective was captured into a graph", k);
        cr_assert_eq(captured_launches_of(log, "cuLaunchKernelEx"), 0,
                     "[%s] a launch graphshim cannot hold was captured", k);
        /* Each collective reached the driver once, as the program's own call. */
        cr_assert_eq(count_lines(log, COLLECTIVE), nccl, "[%s] collectives issued: %d, %d without", k,
                     count_lines(log, COLLECTIVE), nccl);
        cr_assert_eq(count_lines(log, "cuLaunchKernelEx"), ex, "[%s] unholdable launches issued", k);
        free(log), free(report);
        run_free(&r);
    }
    free(blog);
    run_free(&base);
}

/* A kernel whose name the driver refuses to give may be a collective: its
** launches pass through.  Taken for no collective, NCCL's kernel was held and
** captured (the fuzzer's seed 242 under FAKECUDA_FAIL=cuFuncGetName:1:801).
** A refusal by CUDA_ERROR_INVALID_HANDLE, the code the other kind of handle
** gives, was taken for "no name to be had" (the fuzzer's seed 2130, loop
** setting collective, graphshim's own cuKernelGetName failing so). */
Test(ranks, a_kernel_whose_name_is_refused_is_never_held)
{
    static const char *const faults[] = {"FAKECUDA_FAIL=cuFuncGetName:1+:CUDA_ERROR_OUT_OF_MEMORY",
                                         "FAKECUDA_FAIL=cuFuncGetName:1+:CUDA_ERROR_NOT_SUPPORTED,"
                                         "cuKernelGetName:1+:CUDA_ERROR_NOT_SUPPORTED",
                                         "FAKECUDA_FAIL=cuFuncGetName:1+:CUDA_ERROR_INVALID_HANDLE,"
                                         "cuKernelGetName:1+:CUDA_ERROR_INVALID_HANDLE"};
    const char *argv[] = {GUARDPROG, "collectives", "12", NULL};
    struct run base;

    run_prog(&base, RUN_BARE, NULL, argv, 30);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        struct run r;
        run_collectives(&r, "collectives", "12",
                        (const char *[]){faults[i], "GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_MAX_DEFER_US=1000000", NULL});
        cr_assert_eq(r.status, 0, "[%s] %s", faults[i], r.err);
        cr_assert_str_eq(r.out, base.out, "[%s] the output differs from the run without graphshim", faults[i]);
        char *log = run_file(&r, "fake.log");
        cr_assert_eq(captured_launches_of(log, "ncclDevKernel"), 0, "[%s] a collective was captured into a graph",
                     faults[i]);
        free(log);
        run_free(&r);
    }
    run_free(&base);
}

Test(ranks, the_work_between_a_streams_collectives_is_graphed)
{
    struct run r;
    /* Three segments an iteration (before the collective, between it and the
    ** unholdable launch, after that), each replayed once learned: 3 * (12 - 2).
    ** Were a collective's segment left unlearned, nothing would replay. */
    run_collectives(&r, "collectives", "12",
                    (const char *[]){"GRAPHSHIM_GAIN_CHECK=0", "GRAPHSHIM_MAX_DEFER_US=1000000", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *report = run_file(&r, "report.json");
    cr_assert_eq(total(report, "replays"), 3 * (12 - 2), "%s", report);
    free(report);
    run_free(&r);
}

/* guardprog sync 10 under lib (RUN_TEST_BUILD, or RUN_SHIM: the library users
** run) with GRAPHSHIM_TEST_FAULT=fault (interpose/test_fault.c; NULL: none):
** the same output as base_out, exit status 0; returns the report, *err its
** stderr.  Where rank is given, as the process of that RANK, the faults meant
** for rank 1 only (GRAPHSHIM_TEST_FAULT_RANK=1). */
static char *with_test_fault_on(int lib, const char *fault, const char *rank, const char *base_out, char **err)
{
    const char *argv[] = {GUARDPROG, "sync", "10", NULL};
    char spec[200], rk[32];
    struct run r;

    snprintf(spec, sizeof spec, "GRAPHSHIM_TEST_FAULT=%s", fault ? fault : "");
    snprintf(rk, sizeof rk, "RANK=%s", rank ? rank : "");
    run_prog(&r, lib,
             (const char *[]){spec, "GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0",
                              "GRAPHSHIM_MAX_DEFER_US=1000000", rk,
                              rank ? "GRAPHSHIM_TEST_FAULT_RANK=1" : NULL, NULL},
             argv, 30);
    cr_assert_eq(r.status, 0, "%s: %s", fault, r.err);
    cr_assert_str_eq(r.out, base_out, "%s: the output differs from the run without graphshim", fault);
    char *report = run_file(&r, "report.json");
    cr_assert_not_null(report, "%s: no report", fault);
    *err = strdup(r.err);
    run_free(&r);
    return report;
}

static char *with_test_fault(int lib, const char *fault, const char *base_out, char **err)
{
    return with_test_fault_on(lib, fault, NULL, base_out, err);
}

Test(ranks, the_test_builds_failing_graph_calls_change_nothing_the_program_sees)
{
    const char *argv[] = {GUARDPROG, "sync", "10", NULL};
    struct run base;
    char *report, *err;

    run_prog(&base, RUN_BARE, NULL, argv, 30);
    cr_assert_eq(base.status, 0, "%s", base.err);
    /* The control: the test build replays as the library does. */
    report = with_test_fault(RUN_TEST_BUILD, NULL, base.out, &err);
    cr_assert_eq(total(report, "replays"), 10 - 2, "%s", report);
    free(report), free(err);
    /* Every capture fails: nothing replays, the report says why. */
    report = with_test_fault(RUN_TEST_BUILD, "cuStreamEndCapture:1+:901", base.out, &err);
    cr_assert_eq(total(report, "replays"), 0, "%s", report);
    cr_assert_gt(total(report, "graph_failures"), 0, "%s", report);
    free(report), free(err);
    /* Every graph launch fails: its work goes out eagerly, a graph-failed bail. */
    report = with_test_fault(RUN_TEST_BUILD, "cuGraphLaunch:1+:999", base.out, &err);
    cr_assert_gt(total(report, "graph-failed"), 0, "%s", report);
    free(report), free(err);
    /* Instantiation fails from the second on. */
    report = with_test_fault(RUN_TEST_BUILD, "cuGraphInstantiateWithFlags:1-3:2", base.out, &err);
    cr_assert_gt(total(report, "graph_failures"), 0, "%s", report);
    free(report), free(err);
    /* Faults meant for rank 1: rank 0 has none, rank 1 has them. */
    report = with_test_fault_on(RUN_TEST_BUILD, "cuStreamEndCapture:1+:901", "0", base.out, &err);
    cr_assert_eq(total(report, "replays"), 10 - 2, "rank 0: %s", report);
    free(report), free(err);
    report = with_test_fault_on(RUN_TEST_BUILD, "cuStreamEndCapture:1+:901", "1", base.out, &err);
    cr_assert_eq(total(report, "replays"), 0, "rank 1: %s", report);
    free(report), free(err);
    /* The library users run has no such switch: it replays, and names the
    ** variable as no setting of its own. */
    report = with_test_fault(RUN_USERS_LIB, "cuStreamEndCapture:1+:901", base.out, &err);
    cr_assert_eq(total(report, "replays"), 10 - 2, "%s", report);
    cr_assert_not_null(strstr(err, "GRAPHSHIM_TEST_FAULT is not a graphshim setting"), "%s", err);
    free(report), free(err);
    run_free(&base);
}
