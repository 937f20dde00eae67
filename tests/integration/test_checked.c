/*
** test_checked.c: what graphshim does where one of its own driver calls
** fails, call by call (docs/internals.md, "Driver results"): every result of
** a GS_REAL call is checked, or dropped out loud with GS_IGNORE.  Each test
** fails one entry point of the fake driver (FAKECUDA_FAIL) from the call on
** where graphshim's own calls begin (the program's calls of it come first),
** and compares the program's output and exit status with its run without
** graphshim.  Each failed on the library before its results were checked.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"

/* guardprog scenario iters with env, without graphshim and under it: both
** exit 0, print the same, and the fault met a call (the fake says so).
** Returns the run under graphshim, for the caller to look at and free. */
static struct run same_output(const char *scenario, const char *iters, const char *const *env)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    struct run base, on;

    run_prog(&base, RUN_BARE, env, argv, 30);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", scenario, base.err);
    run_prog(&on, RUN_SHIM, env, argv, 30);
    cr_assert_eq(on.status, 0, "%s under graphshim: %s", scenario, on.err);
    cr_assert_str_eq(on.out, base.out, "%s: graphshim changed what the program got; stderr: %s", scenario, on.err);
    cr_assert(strstr(on.err, "fakecuda: injected"), "%s: the fault met no call, so the test proves nothing",
              scenario);
    run_free(&base);
    return on;
}

/* The watchdog's thread has no context: before it issues a stream's held
** work, it makes the stream's current.  Where that fails, nothing goes out
** from there (issued with no context, the work failed and was lost): the
** program's synchronize issues it, on its own thread.  The program's one
** cuCtxSetCurrent is the first call.  The host's clock: the watchdog's own
** thread fires (the virtual clock fires it on the program's), in one of ten
** stalls of 5 ms at least, however busy the machine. */
Test(faults, a_watchdog_that_cannot_make_a_context_current_leaves_the_work_to_the_program, .timeout = 60)
{
    struct run r = same_output("stall", "40",
                               (const char *[]){"FAKECUDA_FAIL=cuCtxSetCurrent:2+:CUDA_ERROR_INVALID_CONTEXT",
                                                "GRAPHSHIM_TEST_CLOCK=host", "FAKECUDA_CLOCK=host",
                                                "GRAPHSHIM_MAX_DEFER_US=1000", "GRAPHSHIM_REPORT=@/report.json",
                                                NULL});
    char *report = run_file(&r, "report.json");

    cr_assert_not_null(report);
    cr_assert_eq(count_lines(r.err, "cuCtxSetCurrent failed"), 1, "one warning: %s", r.err);
    cr_assert_gt(total(report, "replays"), 0, "nothing replayed, so nothing was held: %s", report);
    cr_assert_eq(total(report, "issue_errors"), 0, "%s", report);
    free(report);
    run_free(&r);
}

/* Where the current context cannot be read, the stream's own is made current
** for its work (before, the engine made none current afterwards, and the
** program's next call failed). */
Test(faults, an_unread_current_context_issues_in_the_streams_own, .timeout = 60)
{
    struct run r = same_output("sync", "8",
                               (const char *[]){"FAKECUDA_FAIL=cuCtxGetCurrent:3+:CUDA_ERROR_NOT_INITIALIZED",
                                                "GRAPHSHIM_REPORT=@/report.json", NULL});
    char *report = run_file(&r, "report.json");

    cr_assert_not_null(report);
    cr_assert_gt(total(report, "replays"), 0, "%s", report);
    free(report);
    run_free(&r);
}

/* A per-thread stream's work that another thread issued on the legacy stream
** is waited for by the stream (cuStreamWaitEvent) before its owner's
** synchronize; where that wait fails, the host waits for the event instead
** (before, the synchronize returned before the work ran: stale values). */
Test(faults, a_per_thread_streams_failed_wait_is_the_hosts, .timeout = 60)
{
    struct run r = same_output("ptds-legacy", "8",
                               (const char *[]){"FAKECUDA_PENDING=1000",
                                                "FAKECUDA_FAIL=cuStreamWaitEvent:1+:CUDA_ERROR_NOT_SUPPORTED", NULL});
    run_free(&r);
}

/* A held pageable copy's source goes into a staging buffer that the
** previous replay may still have to read: graphshim waits for its event
** first.  Where that wait fails, the copy is not held (it goes out eagerly)
** and the buffer keeps its bytes (before, they were overwritten: the
** pending graph copied the next iteration's). */
Test(faults, a_staging_buffer_whose_wait_failed_is_not_written, .timeout = 60)
{
    struct run r = same_output("staging-events", "12",
                               (const char *[]){"FAKECUDA_PENDING=1000",
                                                "FAKECUDA_FAIL=cuEventSynchronize:1+:CUDA_ERROR_NOT_SUPPORTED", NULL});
    run_free(&r);
}

/* A driver whose version cannot be read is taken for an old one, and said
** so: every call passes through. */
Test(faults, a_driver_version_not_told_passes_everything_through, .timeout = 60)
{
    struct run r = same_output("sync", "8",
                               (const char *[]){"FAKECUDA_FAIL=cuDriverGetVersion:1:CUDA_ERROR_NOT_INITIALIZED",
                                                "GRAPHSHIM_REPORT=@/report.json", NULL});
    char *report = run_file(&r, "report.json");

    cr_assert_not_null(report);
    cr_assert_eq(count_lines(r.err, "cuDriverGetVersion failed (error 3)"), 1, "stderr: %s", r.err);
    cr_assert_not_null(strstr(report, "\"engine\": false"), "%s", report);
    free(report);
    run_free(&r);
}

/* A result dropped on purpose (GS_IGNORE) is still said, at debug level:
** here the destroys of a destroyed stream's executables, which leak. */
Test(faults, an_ignored_result_is_logged_at_debug_level, .timeout = 60)
{
    struct run r = same_output("stream-destroy", "8",
                               (const char *[]){"FAKECUDA_FAIL=cuGraphExecDestroy:1+:CUDA_ERROR_INVALID_VALUE",
                                                "GRAPHSHIM_LOG=debug", NULL});
    cr_assert_gt(count_lines(r.err, "GS_REAL(cuGraphExecDestroy)(e->x) failed (1); ignored"), 0, "stderr: %s",
                 r.err);
    run_free(&r);
}
