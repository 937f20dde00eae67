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
** env (NULL-terminated, up to 6 settings); checks that the outputs are the same
** and returns the driver's graph launches under graphshim. */
static long launches(const char *scenario, const char *const *env)
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
    cr_assert_str_eq(b, a, "%s: graphshim changed the output", scenario);
    const char *g = strstr(r.out, "graph_launches ");
    n = g ? atol(g + strlen("graph_launches ")) : -1;
    free(a), free(b);
    run_free(&base), run_free(&r);
    return n;
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

/* Without the joins in the capture (rule xs-join off) every capture fails
** (CUDA_ERROR_STREAM_CAPTURE_UNJOINED): the held ops go out eagerly, the same
** output, no graph of the group. */
Test(xstream, a_capture_without_its_joins_fails, .timeout = 60)
{
    long on = launches("fork", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "GRAPHSHIM_TEST_DROP_RULE=xs-join", NULL});
    cr_assert(on == 0 || on > 8, "without joins: %ld graph launches", on);
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

/* The member's later work after the group's graph (FIFO order in the fake:
** the bridge after the launch is not seen here, see the fake's README). */
Test(xstream, a_members_later_work_sees_the_graph, .timeout = 60)
{
    launches("later", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
}

/* Another thread's wait on an event the group holds the record of ends the
** group first: without that, its wait would find the event's previous record
** and its work would run before the step's. */
Test(xstream, another_threads_wait_on_a_held_record_ends_the_group, .timeout = 60)
{
    launches("xthread", (const char *const[]){"GRAPHSHIM_XSTREAM=1", NULL});
    launches("xthread", (const char *const[]){"GRAPHSHIM_XSTREAM=1", "FAKECUDA_PENDING=2", NULL});
}
