/*
** test_xstream.c: groups across streams (GRAPHSHIM_XSTREAM=1,
** policy/stream/xs.h) over the fake driver: xsprog's steps that fork work to
** other streams by events and join it back, each run without graphshim and
** under it (the output must be the same), and the driver's count of graph
** launches.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define XSPROG BUILD_DIR "/tests/xsprog"

/* Runs scenario (8 iterations of 20 steps) without graphshim and under it with
** env (NULL-terminated, up to 6 settings, the same for both runs); *same: are
** the outputs the same.  Returns the driver's graph launches under graphshim. */
static long compare(const char *scenario, const char *const *env, int *same)
{
    const char *argv[] = {XSPROG, scenario, "8", NULL};
    const char *e[10] = {"GRAPHSHIM_MAX_DEFER_US=1000000"};
    struct run base, r;
    long n;

    for (int i = 0; env && env[i] && i < 6; i++)
        e[i + 1] = env[i];
    run_prog(&base, RUN_BARE, e, argv, 30);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", scenario, base.err);
    run_prog(&r, run_lib(e), e, argv, 30);
    cr_assert_eq(r.status, 0, "%s under graphshim: %s", scenario, r.err);
    char *a = drop_lines(base.out, (const char *const[]){"graph_launches", NULL});
    char *b = drop_lines(r.out, (const char *const[]){"graph_launches", NULL});
    cr_assert_eq(count_lines(a, "xsprog"), 8, "%s", base.out);
    *same = strcmp(a, b) == 0;
    const char *g = strstr(r.out, "graph_launches ");
    n = g ? atol(g + strlen("graph_launches ")) : -1;
    free(a), free(b);
    run_free(&base), run_free(&r);
    return n;
}

/* The same, where the outputs must be the same. */
static long launches(const char *scenario, const char *const *env)
{
    int same;
    long n = compare(scenario, env, &same);

    cr_assert(same, "%s: graphshim changed the output", scenario);
    return n;
}

/* Under the fake's order of the driver's rules alone (FAKECUDA_ORDER=deps,
** tests/fakecuda/README.md): the output is the same with rule's switch on,
** and, with a group graph launched, differs with the rule dropped. */
static void guarded(const char *scenario, const char *rule, const char *seed)
{
    char drop[64];
    int same;

    snprintf(drop, sizeof drop, "GRAPHSHIM_TEST_DROP_RULE=%s", rule);
    long on = launches(scenario, (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", seed, NULL});
    cr_assert_geq(on, 1, "%s: no graph launch", scenario);
    compare(scenario, (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", seed, drop, NULL}, &same);
    cr_assert(!same, "%s: the same output without rule %s", scenario, rule);
}

/* 8 synchronizes of 20 steps each: after the warm-up, one graph a synchronize
** for all of it, where without groups every step's pieces are graphs of
** their own. */
Test(xstream, a_fork_and_join_is_one_graph_a_segment, .timeout = 60)
{
    long off = launches("fork", (const char *const[]){"GRAPHSHIM_XSTREAM=0", NULL});
    long on = launches("fork", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});

    cr_assert_gt(off, 100, "without groups: %ld graph launches", off);
    cr_assert(on >= 1 && on <= 8, "with groups: %ld graph launches (8 synchronizes)", on);
}

Test(xstream, two_members_are_one_graph_a_segment, .timeout = 60)
{
    long on = launches("fork2", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    cr_assert(on >= 1 && on <= 8, "with groups: %ld graph launches", on);
}

/* Events made before their record and destroyed after their wait, every step
** (PyTorch's Stream.wait_stream): the same step every time (an event is matched
** by its slot in the group), one graph a segment, with one member or two.
** Without rule xs-destroy each destroy ends the group (a graph a stream's
** piece of each step, as without groups). */
Test(xstream, events_made_each_step_are_one_graph_a_segment, .timeout = 60)
{
    long off = launches("fresh", (const char *const[]){"GRAPHSHIM_XSTREAM=0", NULL});
    long on = launches("fresh", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    long two = launches("fresh2", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    long dropped = launches("fresh", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "GRAPHSHIM_TEST_DROP_RULE=xs-destroy", NULL});

    cr_assert_gt(off, 100, "without groups: %ld graph launches", off);
    cr_assert(on >= 1 && on <= 8, "with groups: %ld graph launches (8 synchronizes)", on);
    cr_assert(two >= 1 && two <= 8, "two members: %ld graph launches", two);
    cr_assert_gt(dropped, 100, "without rule xs-destroy: %ld graph launches", dropped);
}

/* The legacy stream as the origin (PyTorch's current stream, forking to a
** stream of its pool by Stream.wait_stream): one graph a segment; without rule
** xs-legacy, none of the group's. */
Test(xstream, the_legacy_stream_is_an_origin, .timeout = 60)
{
    long on = launches("legorigin", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    long dropped = launches("legorigin", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "GRAPHSHIM_TEST_DROP_RULE=xs-legacy", NULL});

    cr_assert(on >= 1 && on <= 8, "with groups: %ld graph launches (8 synchronizes)", on);
    cr_assert_gt(dropped, 100, "without rule xs-legacy: %ld graph launches", dropped);
}

/* bench/apps/copy_stream's loop (xsprog copyflow): the copy stream is joined at
** the next step, after the step's synchronize, so its group is refused; then
** the program runs as without groups, though the driver (and the fake, as it)
** gives the destroyed events' handles to the next ones: a new event forks by the
** rule of new events alone, not by a learned fork's handle that it has again.
** (With it taken by handle: a group opened at every step and ended outside the
** narrow case, every op eager; on an H100, PyTorch's copy stream: 590 groups.) */
Test(xstream, a_refused_stream_stays_refused_where_handles_come_back, .timeout = 60)
{
    const char *gain = "GRAPHSHIM_GAIN_CHECK=0"; /* the fake's times are noise */
    long off = launches("copyflow", (const char *const[]){"GRAPHSHIM_XSTREAM=0", gain, NULL});
    long on = launches("copyflow", (const char *const[]){"GRAPHSHIM_XSTREAM=1", gain, NULL});

    cr_assert_gt(off, 100, "without groups: %ld graph launches", off);
    cr_assert_geq(on, off - 8, "with groups: %ld graph launches, %ld without (a group at every step?)", on, off);
}

/* A member's synchronize where the group holds records and waits of events the
** program destroyed (freshsync, iteration 5): they go out on those events,
** whose destroy waited for it; had the driver destroyed them at the program's
** call, the records and waits would fail and the member's work run unordered. */
Test(xstream, a_destroyed_events_held_records_go_out_before_it_goes, .timeout = 60)
{
    static const char *const seeds[] = {"FAKECUDA_ORDER_SEED=0", "FAKECUDA_ORDER_SEED=1", "FAKECUDA_ORDER_SEED=5"};

    for (unsigned j = 0; j < 3; j++) {
        long on = launches("freshsync", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", seeds[j], NULL});
        cr_assert(on < 100, "freshsync: %ld graph launches (no group held before iteration 5)", on);
    }
}

/* Without the program's joins in the capture (rule xs-join off) the capture
** joins its members at its end alone: the origin's work after a join no
** longer waits for the member's inside the graph, and in an order the
** driver's rules allow the output differs. */
Test(xstream, a_capture_without_its_joins_differs, .timeout = 60)
{
    guarded("fork", "xs-join", "FAKECUDA_ORDER_SEED=0");
}

/* A member's synchronize in the middle of a group ends it: its held ops go
** out in the order the program issued them across the streams (work that
** completes later, FAKECUDA_PENDING, runs in that order), then no group. */
Test(xstream, a_members_sync_flushes_in_program_order, .timeout = 60)
{
    launches("msync", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    launches("msync", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
    launches("fork", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
}

/* The member's later work, issued after the group's graph and synchronized
** first, must follow the graph (the bridge after the launch).  In the fake's
** issue order (FIFO) it does with or without the bridge. */
Test(xstream, a_members_later_work_sees_the_graph, .timeout = 60)
{
    launches("later", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
    guarded("later", "xs-bridge", "FAKECUDA_ORDER_SEED=0");
}

/* The member's work before the group (its first op waits on the fork) must
** precede the graph's member nodes (the bridge before the launch). */
Test(xstream, a_members_earlier_work_precedes_the_graph, .timeout = 60)
{
    guarded("before", "xs-bridge", "FAKECUDA_ORDER_SEED=0");
    guarded("before", "xs-bridge", "FAKECUDA_ORDER_SEED=3");
}

/* An event a member recorded in the group, synchronized after the graph's
** launch, completes after the graph: recorded again on the origin, not on the
** member (the host reads B at once). */
Test(xstream, a_groups_event_completes_after_the_graph, .timeout = 60)
{
    guarded("evsync", "xs-rerecord", "FAKECUDA_ORDER_SEED=0");
}

/* Every scenario, in a seeded order of the driver's rules. */
Test(xstream, every_scenario_in_seeded_orders, .timeout = 120)
{
    static const char *const sc[] = {"fork", "fork2", "msync", "later", "before", "evsync", "fresh", "fresh2", "freshsync", "legorigin", "copyflow"};
    static const char *const seeds[] = {"FAKECUDA_ORDER_SEED=1", "FAKECUDA_ORDER_SEED=2"};

    for (unsigned i = 0; i < sizeof sc / sizeof *sc; i++)
        for (unsigned j = 0; j < 2; j++)
            launches(sc[i], (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", seeds[j], NULL});
}

/* A group's event records and waits are ops of its sequence, but no work of
** the program's: the report's ops_replayed is what the driver ran in
** graphshim's graph launches (the fake's count), and each replayed group
** sequence says it spans 2 streams. */
Test(xstream, the_reports_ops_are_the_drivers, .timeout = 60)
{
    const char *argv[] = {XSPROG, "fork", "8", NULL};
    const char *env[] = {"GRAPHSHIM_XSTREAM=1", "GRAPHSHIM_MAX_DEFER_US=1000000", "GRAPHSHIM_REPORT=@/report.json",
                         "FAKECUDA_STATS=@/stats", NULL};
    struct run r;

    run_prog(&r, RUN_SHIM, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *report = run_file(&r, "report.json"), *stats = run_file(&r, "stats");
    cr_assert(report && stats);
    const char *g = strstr(stats, "graph_ops ");
    long ran = g ? atol(g + strlen("graph_ops ")) : -1;
    cr_assert_gt(ran, 0, "%s", stats);
    cr_assert_eq(total(report, "ops_replayed"), ran, "the driver ran %ld ops in graphs: %s", ran, report);
    cr_assert(strstr(report, "\"streams\": 2") && strstr(report, "\"group_streams_max\": 2"), "%s", report);
    free(report), free(stats);
    run_free(&r);
}

/* A capture of a group whose member's work runs on past the sequence (a
** chunk, a step that joins it later) joins every member before it ends: the
** driver refuses it otherwise (CUDA_ERROR_STREAM_CAPTURE_UNJOINED), and the
** sequence ran eagerly for good.  Two generated programs of that shape
** (fuzzprog xs 47 and 60; each failed its one capture before). */
Test(xstream, a_capture_joins_members_whose_work_runs_on, .timeout = 60)
{
    const char *env[] = {"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", "GRAPHSHIM_TEST_CLOCK=fake",
                         "FAKECUDA_CLOCK=virtual", "GRAPHSHIM_REPORT=@/report.json", NULL};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {BUILD_DIR "/tests/fuzzprog", "xs", i ? "60" : "47", NULL};
        struct run base, r;
        run_prog(&base, RUN_BARE, env, argv, 30);
        run_prog(&r, RUN_SHIM, env, argv, 30);
        cr_assert(base.status == 0 && r.status == 0 && strcmp(base.out, r.out) == 0, "xs %s: %s", argv[2], r.err);
        char *report = run_file(&r, "report.json");
        cr_assert(report);
        cr_assert_eq(total(report, "graph_failures"), 0, "xs %s: %s", argv[2], report);
        cr_assert_gt(total(report, "replays"), 10, "xs %s: %s", argv[2], report);
        free(report);
        run_free(&base), run_free(&r);
    }
}

/* Where the current context cannot be read after a call of the thread's that
** may have moved it (cuCtxGetCurrent failing from its 730th call on), a default
** stream's state is one of no context, whose ops pass through: every stream's
** held work goes out first (rule current).  Without that, the per-thread
** stream's ops passed what the same stream's state of the known context held
** (fuzzprog xs 4294968964, with groups and without: other bytes). */
Test(xstream, a_default_streams_ops_pass_no_held_work_where_the_context_cannot_be_read, .timeout = 60)
{
    for (int x = 0; x < 2; x++) {
        const char *env[] = {x ? "GRAPHSHIM_XSTREAM=1" : "GRAPHSHIM_XSTREAM=0", "FAKECUDA_ORDER=deps",
                             "GRAPHSHIM_TEST_CLOCK=fake", "FAKECUDA_CLOCK=virtual",
                             "FAKECUDA_FAIL=cuCtxGetCurrent:730+:CUDA_ERROR_NOT_SUPPORTED", NULL};
        const char *argv[] = {BUILD_DIR "/tests/fuzzprog", "xs", "4294968964", NULL};
        struct run base, r;
        run_prog(&base, RUN_BARE, env, argv, 30);
        run_prog(&r, RUN_SHIM, env, argv, 30);
        cr_assert(base.status == 0 && r.status == 0, "%s", r.err);
        cr_assert_str_eq(r.out, base.out, "groups %d", x);
        run_free(&base), run_free(&r);
    }
}

/* Another thread's wait on an event the group holds the record of ends the
** group first: without that, its wait would find the event's previous record
** and its work would run before the step's. */
Test(xstream, another_threads_wait_on_a_held_record_ends_the_group, .timeout = 60)
{
    launches("xthread", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    launches("xthread", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
}

/* An untimed event the origin records inside a group (not a fork event) is
** recorded again after the group's graph: its synchronize then waits for the
** graph (FAKECUDA_PENDING: the graph's work is still pending), and the host
** reads what the steps wrote. */
Test(xstream, an_origin_event_completes_after_the_groups_graph, .timeout = 60)
{
    launches("dsync", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
}

/* A blocking stream never joins a non-blocking origin's group: the legacy
** stream's next op must wait for its work, which the legacy rule could not
** see held in the origin's group. */
Test(xstream, a_blocking_stream_is_no_member_of_a_non_blocking_origin, .timeout = 60)
{
    launches("legacy", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
}

/* A member's one kernel whose argument changes every step: the node set in
** place before each replay is its own, not the origin's kernel before it. */
Test(xstream, a_members_changed_argument_sets_its_own_node, .timeout = 60)
{
    long on = launches("args", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    cr_assert(on >= 1, "the group was never replayed (%ld graph launches): the test tests nothing", on);
}

/* The number of the cuEventRecord call in log (a fake driver's call log) that
** records again, right after a graph launch of graphshim's, the event the
** program synchronizes first; 0 if none. */
static long rerecord_call(const char *log)
{
    const char *sync = strstr(log, "\ncuEventSynchronize event=");
    char ev[32] = "", want[96];
    long n = 0, launched = 0;

    cr_assert(sync && sscanf(sync + 1, "cuEventSynchronize event=%31s", ev) == 1, "no event synchronize: %s", log);
    snprintf(want, sizeof want, "cuEventRecord event=%s ", ev);
    for (const char *p = log; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        int record = strncmp(p, "cuEventRecord ", 14) == 0;
        n += record;
        if (launched && record && strncmp(p, want, strlen(want)) == 0)
            return n;
        launched = strncmp(p, "cuGraphLaunch ", 14) == 0 || (launched && record);
    }
    return 0;
}

/* A group's event whose record after the graph's launch fails (graphshim's
** own call): the host, synchronizing the event right after a host function
** ended the group, must still find the graph's work done (the host read of B
** is the program's eager one).  Without the wait for the graph where that
** record fails, the event's last record, an earlier one, completes first. */
Test(xstream, a_failed_record_after_the_graph_waits_for_it, .timeout = 60)
{
    const char *argv[] = {XSPROG, "hostfn", "8", NULL};
    const char *env[] = {"GRAPHSHIM_MAX_DEFER_US=1000000", "GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps",
                         "FAKECUDA_ORDER_SEED=0", "FAKECUDA_LOG=@/calls.log", NULL, NULL};
    struct run base, logged, r;
    char fail[96];

    run_prog(&base, RUN_BARE, env, argv, 30);
    run_prog(&logged, RUN_SHIM, env, argv, 30);
    char *log = run_file(&logged, "calls.log");
    cr_assert(log && base.status == 0 && logged.status == 0, "%s%s", base.err, logged.err);
    long n = rerecord_call(log);
    cr_assert_gt(n, 0, "no record again after a group's graph launch");
    snprintf(fail, sizeof fail, "FAKECUDA_FAIL=cuEventRecord:%ld:2", n);
    env[4] = fail;
    run_prog(&r, RUN_SHIM, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "fakecuda: injected error 2"), "the fault met no call: %s", r.err);
    char *a = drop_lines(base.out, (const char *const[]){"graph_launches", NULL});
    char *b = drop_lines(r.out, (const char *const[]){"graph_launches", NULL});
    cr_assert_str_eq(b, a, "the host read what the graph had not written yet (call %ld)", n);
    free(a), free(b);
    free(log);
    run_free(&base), run_free(&logged), run_free(&r);
}

/* The number of graphshim's cuCtxGetCurrent call in log (a fake driver's call
** log) after which it made the second context current: where it issues that
** context's held work from the first's thread; 0 if none. */
static long ctx_enter_call(const char *log)
{
    long n = 0;

    for (const char *p = log; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "cuCtxGetCurrent ", 16) != 0)
            continue;
        n++;
        const char *next = strchr(p, '\n');
        if (!strncmp(p, "cuCtxGetCurrent out=c1 ", 23) && next && !strncmp(next + 1, "cuCtxSetCurrent ctx=c2 ", 23))
            return n;
    }
    return 0;
}

/* Where the current context cannot be read (graphshim's cuCtxGetCurrent
** fails, from its call before it first issues the second context's work on),
** a stream's held work of another context goes out with that context pushed
** and popped after, so the program's own stays current: xsprog ctx2's
** synchronize of E2 issues the second context's held memsets from the first's
** thread.  Before, the second context was made current and left so, and the
** program's next calls went to it (failed). */
Test(xstream, an_unread_current_context_comes_back_after_another_contexts_work, .timeout = 60)
{
    const char *argv[] = {XSPROG, "ctx2", "8", NULL};
    const char *env[] = {"GRAPHSHIM_MAX_DEFER_US=1000000", "GRAPHSHIM_XSTREAM=1", "FAKECUDA_LOG=@/calls.log", NULL};
    struct run logged;
    char fail[96];
    int same;

    run_prog(&logged, RUN_SHIM, env, argv, 30);
    char *log = run_file(&logged, "calls.log");
    cr_assert(log && logged.status == 0, "%s", logged.err);
    long n = ctx_enter_call(log);
    cr_assert_gt(n, 0, "graphshim never issued the second context's work from the first's thread");
    snprintf(fail, sizeof fail, "FAKECUDA_FAIL=cuCtxGetCurrent:%ld+:CUDA_ERROR_NOT_INITIALIZED", n);
    compare("ctx2", (const char *const[]){"GRAPHSHIM_XSTREAM=1", fail, NULL}, &same);
    cr_assert(same, "ctx2: graphshim changed the output");
    free(log);
    run_free(&logged);
}

/* Where graphshim's read of the current context fails once (any one of the
** first 30), the legacy stream keeps one state: xsprog ctxread's ops on it,
** another thread's context call among them, come out in program order.
** Before, a failed read gave the stream a second state (keyed by no context)
** whose ops passed those held in the first: 9 of these 30 differed. */
Test(xstream, a_failed_read_of_the_current_context_keeps_one_legacy_state, .timeout = 120)
{
    char fail[64];
    int same;

    for (int n = 1; n <= 30; n++) {
        snprintf(fail, sizeof fail, "FAKECUDA_FAIL=cuCtxGetCurrent:%d:801", n);
        compare("ctxread", (const char *const[]){"FAKECUDA_ORDER=deps", fail, NULL}, &same);
        cr_assert(same, "ctxread: graphshim changed the output where its read %d of the current context failed", n);
    }
}
