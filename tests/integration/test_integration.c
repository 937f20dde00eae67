/*
** test_integration.c: driver-API programs over the fake driver, with and without
** graphshim preloaded.
**
** drvprog obtains the driver three ways (direct linking, dlsym, cuGetProcAddress)
** in both stream variants; every run must print the same bytes as the run without
** the shim, make the same driver calls with the same arguments and results (the
** fake driver's call log), and the trace must see every launch.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define DRVPROG BUILD_DIR "/tests/drvprog"

/* Inline strings: criterion passes parameters to another process. */
struct mode {
    char path[8], variant[8];
};

static struct mode modes[] = {
    {"direct", "legacy"}, {"direct", "ptsz"}, {"dlsym", "legacy"},
    {"dlsym", "ptsz"},    {"proc", "legacy"}, {"proc", "ptsz"},
};

ParameterizedTestParameters(integration, same_calls_same_results)
{
    return cr_make_param_array(struct mode, modes, sizeof modes / sizeof modes[0]);
}

/* Calls graphshim makes itself: once at start it asks the driver's version. */
static const char *const shim_calls[] = {"cuDriverGetVersion", NULL};
/* With the trace on, it also asks for kernel names. */
static const char *const shim_trace_calls[] = {"cuDriverGetVersion", "cuFuncGetName", "cuKernelGetName", NULL};

static void expect_same_calls(const struct run *base, const struct run *r, const char *const *shim_made)
{
    char *a = run_file(base, "fake.log"), *b = run_file(r, "fake.log");
    char *fa, *fb;

    cr_assert_not_null(a, "the fake driver wrote no call log");
    cr_assert_not_null(b);
    fa = drop_lines(a, shim_made);
    fb = drop_lines(b, shim_made);
    cr_assert(strlen(fa) > 1000, "call log too short to mean anything");
    cr_assert_str_eq(fb, fa, "the driver saw different calls under the shim");
    free(a), free(b), free(fa), free(fb);
}

ParameterizedTest(struct mode *m, integration, same_calls_same_results)
{
    const char *argv[] = {DRVPROG, m->path, m->variant, NULL};
    const char *base_env[] = {"FAKECUDA_LOG=@/fake.log", NULL};
    const char *off_env[] = {"FAKECUDA_LOG=@/fake.log", "GRAPHSHIM=0", NULL};
    const char *on_env[] = {"FAKECUDA_LOG=@/fake.log", NULL};
    struct run base, off, on;

    run_prog(&base, 0, base_env, argv, 20);
    cr_assert_eq(base.status, 0, "%s %s failed without the shim: %s", m->path, m->variant, base.err);
    cr_assert(count_lines(base.out, "launches ") == 1);

    run_prog(&off, 1, off_env, argv, 20);
    cr_assert_eq(off.status, 0, "GRAPHSHIM=0: %s", off.err);
    cr_assert_str_eq(off.out, base.out);
    cr_assert_str_empty(off.err, "the shim printed: %s", off.err);
    expect_same_calls(&base, &off, shim_calls);

    /* With the engine on the driver's calls legitimately differ (graphs); the
    ** program's output may not. */
    run_prog(&on, 1, on_env, argv, 20);
    cr_assert_eq(on.status, 0, "engine on: %s", on.err);
    cr_assert_str_eq(on.out, base.out);
    run_free(&base), run_free(&off), run_free(&on);
}

ParameterizedTestParameters(integration, trace_sees_every_launch)
{
    return cr_make_param_array(struct mode, modes, sizeof modes / sizeof modes[0]);
}

ParameterizedTest(struct mode *m, integration, trace_sees_every_launch)
{
    const char *argv[] = {DRVPROG, m->path, m->variant, "5", NULL};
    const char *env[] = {"GRAPHSHIM=0", "GRAPHSHIM_TRACE=@/trace", "FAKECUDA_LOG=@/fake.log", NULL};
    struct run base, r;
    int pt = strcmp(m->variant, "ptsz") == 0, launches = 0;
    const char *l;
    char *trace, *fbase, *fr;

    run_prog(&base, 0, (const char *[]){"FAKECUDA_LOG=@/fake.log", NULL}, argv, 20);
    run_prog(&r, 1, env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    l = strstr(r.out, "launches ");
    cr_assert_not_null(l);
    launches = atoi(l + 9);
    cr_assert_eq(launches, 5 * 5);
    trace = run_file(&r, "trace");
    cr_assert_not_null(trace);
    /* Four cuLaunchKernel and one cuLaunchKernelEx per iteration, plus the
    ** invalid launch, each under the variant's own entry point. */
    cr_assert_eq(count_lines(trace, pt ? " cuLaunchKernel_ptsz " : " cuLaunchKernel "), 4 * 5 + 1);
    cr_assert_eq(count_lines(trace, pt ? " cuLaunchKernelEx_ptsz " : " cuLaunchKernelEx "), 5);
    cr_assert_eq(count_lines(trace, pt ? " cuLaunchKernel " : " cuLaunchKernel_ptsz "), 0);
    cr_assert_eq(count_lines(trace, " kernel=axpb grid=2,1,1 block=128,1,1"), 4 * 5);
    /* The Ex launch went to the variant's default stream. */
    cr_assert_eq(count_lines(trace, pt ? "stream=0x2 rc=0 kernel=axpb grid=1,1,1" : "stream=0x1 rc=0 kernel=axpb grid=1,1,1"), 5);
    cr_assert_eq(count_lines(trace, " rc=1 kernel=axpb grid=1,1,1 block=0,1,1"), 1);
    /* Other calls are traced with their class. */
    cr_assert_eq(count_lines(trace, " cuGraphCreate stream=- rc=0 class=unclassified"), 1);
    cr_assert_geq(count_lines(trace, pt ? " cuStreamSynchronize_ptsz " : " cuStreamSynchronize "), 5);
    /* Tracing adds only its own name queries to the driver's calls. */
    fbase = drop_lines(run_file(&base, "fake.log"), shim_trace_calls);
    fr = drop_lines(run_file(&r, "fake.log"), shim_trace_calls);
    cr_assert_str_eq(fr, fbase);
    free(trace), free(fbase), free(fr);
    run_free(&base), run_free(&r);
}

ParameterizedTestParameters(integration, unclassified_calls_reach_the_hook_point)
{
    return cr_make_param_array(struct mode, modes, sizeof modes / sizeof modes[0]);
}

ParameterizedTest(struct mode *m, integration, unclassified_calls_reach_the_hook_point)
{
    const char *argv[] = {DRVPROG, m->path, m->variant, "3", NULL};
    struct run r;
    char *report;

    run_prog(&r, 1, (const char *[]){"GRAPHSHIM_REPORT=@/report.json", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report, "no report written");
    /* cuGraphCreate and cuGraphGetNodes are not in hooks.def. */
    cr_assert_not_null(strstr(report, "\"unclassified\": 2"), "report: %s", report);
    free(report);
    run_free(&r);
}

/* A tool preloaded before graphshim that interposes dlopen and looks up dlsym
** from inside it (as compute-sanitizer does) must not be entered again by
** graphshim's dlsym: the tool would wait on itself forever. */
Test(integration, a_tool_that_interposes_dlopen_runs_on_top, .timeout = 30)
{
    const char *argv[] = {DRVPROG, "dlsym", "legacy", NULL};
    const char *env[] = {"LD_PRELOAD=" BUILD_DIR "/tests/dlopen_tool.so:" BUILD_DIR "/libgraphshim.so",
                         "GRAPHSHIM_REPORT=@/report.json", NULL};
    struct run base, r;
    char *report;

    run_prog(&base, 0, NULL, argv, 10);
    cr_assert_eq(base.status, 0, "%s", base.err);
    run_prog(&r, 0, env, argv, 10);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_str_eq(r.out, base.out);
    report = run_file(&r, "report.json");
    cr_assert_not_null(report, "graphshim did not run under the tool");
    free(report);
    run_free(&base), run_free(&r);
}

/* Loaded by a program that runs already (dlopen, as Python's ctypes does), not
** preloaded: its thread-local variables, initial-exec for a cheap launch path,
** must fit the static TLS that glibc keeps for libraries loaded late (glibc
** refuses the library otherwise: "cannot allocate memory in static TLS block"). */
Test(integration, the_library_loads_into_a_running_program)
{
    void *h = dlopen(BUILD_DIR "/libgraphshim.so", RTLD_NOW | RTLD_LOCAL);

    cr_assert_not_null(h, "dlopen: %s", dlerror());
}

Test(integration, old_driver_passes_everything_through)
{
    const char *argv[] = {DRVPROG, "dlsym", "legacy", "3", NULL};
    const char *env[] = {"FAKECUDA_DRIVER_VERSION=12000", "FAKECUDA_LOG=@/fake.log", "GRAPHSHIM_REPORT=@/r.json",
                         NULL};
    struct run base, r;
    char *report;

    run_prog(&base, 0, env, argv, 20);
    cr_assert_eq(base.status, 0, "%s", base.err);
    run_prog(&r, 1, env, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    cr_assert_eq(count_lines(r.err, "older than 12.4"), 1, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err, "graphshim:"), 1, "stderr: %s", r.err);
    report = run_file(&r, "r.json");
    cr_assert_not_null(strstr(report, "\"engine\": false"));
    expect_same_calls(&base, &r, shim_calls);
    free(report);
    run_free(&base), run_free(&r);
}

Test(integration, bad_knobs_warn_once_each_and_run_on)
{
    const char *argv[] = {DRVPROG, "dlsym", "legacy", "2", NULL};
    const char *env[] = {"GRAPHSHIM_WARMUP=abc", "GRAPHSHIM_MAX_DEFER_US=-1", NULL};
    struct run base, r;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, env, argv, 20);
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.out, base.out);
    cr_assert_eq(count_lines(r.err, "GRAPHSHIM_WARMUP=\"abc\" is not valid"), 1, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err, "(expected an integer from 1 to 1000000); using the default, 2"), 1);
    cr_assert_eq(count_lines(r.err, "GRAPHSHIM_MAX_DEFER_US=\"-1\" is not valid"), 1);
    cr_assert_eq(count_lines(r.err, "graphshim:"), 2);
    run_free(&base), run_free(&r);
}

Test(integration, unwritable_trace_warns_and_runs_on)
{
    const char *argv[] = {DRVPROG, "direct", "legacy", "2", NULL};
    struct run base, r;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, (const char *[]){"GRAPHSHIM_TRACE=/nonexistent/dir/trace", NULL}, argv, 20);
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.out, base.out);
    cr_assert_eq(count_lines(r.err, "cannot open GRAPHSHIM_TRACE=/nonexistent/dir/trace"), 1, "%s", r.err);
    run_free(&base), run_free(&r);
}

Test(integration, debug_log_prints_every_setting)
{
    const char *argv[] = {DRVPROG, "direct", "legacy", "1", NULL};
    struct run r;

    run_prog(&r, 1, (const char *[]){"GRAPHSHIM_LOG=debug", "GRAPHSHIM_WARMUP=7", NULL}, argv, 20);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(count_lines(r.err, "graphshim: setting GRAPHSHIM_WARMUP=7"), 1, "%s", r.err);
    {
        /* One line per knob: as many as docs/knobs.md lists. */
        FILE *f = fopen("docs/knobs.md", "r");
        char line[2048];
        int knobs = 0;
        cr_assert_not_null(f);
        while (fgets(line, sizeof line, f))
            knobs += strncmp(line, "| `GRAPHSHIM", 12) == 0;
        fclose(f);
        cr_assert_gt(knobs, 8);
        cr_assert_eq(count_lines(r.err, "graphshim: setting GRAPHSHIM"), knobs);
    }
    run_free(&r);
}

Test(integration, program_without_cuda_is_left_alone)
{
    /* The shim must not load the driver into a process that never uses it. */
    const char *argv[] = {"/bin/cat", "/proc/self/maps", NULL};
    struct run r;

    run_prog(&r, 1, (const char *[]){"GRAPHSHIM_LOG=debug", NULL}, argv, 20);
    cr_assert_eq(r.status, 0);
    cr_assert_geq(count_lines(r.out, "libgraphshim.so"), 1, "the shim was not preloaded");
    cr_assert_eq(count_lines(r.out, "libcuda"), 0);
    cr_assert_str_empty(r.err);
    run_free(&r);
}

Test(integration, fork_after_init_does_not_hang)
{
    const char *argv[] = {DRVPROG, "proc", "legacy", "4", NULL};
    struct run base, r;

    run_prog(&base, 0, (const char *[]){"DRVPROG_FORK=1", NULL}, argv, 20);
    cr_assert_eq(base.status, 0, "%s", base.err);
    run_prog(&r, 1, (const char *[]){"DRVPROG_FORK=1", "GRAPHSHIM_TRACE=@/trace", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, base.out);
    cr_assert_eq(count_lines(r.out, "child exited 0"), 1);
    run_free(&base), run_free(&r);
}

Test(integration, a_forked_child_writes_no_report)
{
    const char *argv[] = {DRVPROG, "proc", "legacy", "4", NULL};
    struct run r, whole;
    char *report, *full;

    /* The child of a fork without exec holds nothing and has the parent's
    ** counters: a report of its own, written at its exit, took the report's
    ** name, and the parent's whole report went to r.PID.json with a warning. */
    run_prog(&r, 1, (const char *[]){"DRVPROG_FORK=exit", "GRAPHSHIM_REPORT=@/r.json", NULL}, argv, 20);
    run_prog(&whole, 1, (const char *[]){"GRAPHSHIM_REPORT=@/r.json", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count_lines(r.out, "child exited 0"), 1);
    cr_assert_eq(count_lines(r.err, "holds the report of another process"), 0, "%s", r.err);
    report = run_file(&r, "r.json");
    full = run_file(&whole, "r.json");
    cr_assert_eq(total(report, "ops"), total(full, "ops"), "%s", report);
    free(report), free(full);
    run_free(&r), run_free(&whole);
}
