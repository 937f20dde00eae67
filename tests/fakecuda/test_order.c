/* test_order.c - FAKECUDA_ORDER=deps: pending work completes in any order the
 * real driver's rules allow (stream order, event waits, the legacy stream's
 * implicit synchronization, a graph launch as one unit), not in issue order.
 * Each test's expected order differs from the FIFO's (FAKECUDA_ORDER unset). */
#include <criterion/criterion.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

static int g_ran[64], g_nran;
FAKECUDA_KERNEL(omark, sizeof(int))
{
    g_ran[g_nran++] = FAKECUDA_ARG(int, 0);
}

#define CK(x) cr_assert_eq((x), CUDA_SUCCESS, "%s -> %d", #x, (int)(x))

static void deps0(void) { setenv("FAKECUDA_ORDER", "deps", 1); }
static void deps7(void)
{
    setenv("FAKECUDA_ORDER", "deps", 1);
    setenv("FAKECUDA_ORDER_SEED", "7", 1);
}

static CUfunction setup(void)
{
    CUcontext ctx;
    CUmodule m;
    CUfunction f;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&m, "fake image"));
    CK(cuModuleGetFunction(&f, m, "omark"));
    return f;
}

static void mark(CUfunction f, int v, CUstream s)
{
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&v}, NULL));
}

/* What ran so far, as "1 2 3". */
static const char *ran(void)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < g_nran; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d", i ? " " : "", g_ran[i]);
    return buf;
}

#define RAN(want) cr_assert_str_eq(ran(), want, "ran: %s, want %s", ran(), want)

Test(order, independent_streams_complete_out_of_issue_order, .init = deps0)
{
    CUfunction f = setup();
    CUstream a, b;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    mark(f, 1, a);
    mark(f, 2, b);
    mark(f, 3, b);
    CK(cuStreamSynchronize(b));
    RAN("2 3"); /* a's earlier work is no part of b's */
    CK(cuStreamSynchronize(a));
    RAN("2 3 1");
    mark(f, 4, a);
    mark(f, 5, b);
    mark(f, 6, a);
    CK(cuCtxSynchronize());
    RAN("2 3 1 5 4 6"); /* the latest ready first: b's 5, then a's in order */
}

Test(order, a_seed_keeps_each_streams_order, .init = deps7)
{
    CUfunction f = setup();
    CUstream s[3];
    for (int i = 0; i < 3; i++)
        CK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 30; i++)
        mark(f, i, s[i % 3]);
    CK(cuCtxSynchronize());
    cr_assert_eq(g_nran, 30);
    int last[3] = {-1, -1, -1}, inversions = 0;
    for (int i = 0; i < 30; i++) {
        int v = g_ran[i];
        cr_assert_gt(v, last[v % 3], "stream %d out of order: %s", v % 3, ran());
        last[v % 3] = v;
        inversions += i > 0 && v < g_ran[i - 1];
    }
    cr_assert_gt(inversions, 0, "issue order across streams: %s", ran());
}

Test(order, an_event_wait_orders_after_the_record_as_of_the_wait, .init = deps0)
{
    CUfunction f = setup();
    CUstream a, b, c;
    CUevent e;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    mark(f, 1, a);
    CK(cuEventRecord(e, a));
    mark(f, 3, a);              /* after the record: b does not wait for it */
    CK(cuStreamWaitEvent(b, e, 0));
    mark(f, 5, c);
    CK(cuEventRecord(e, c));    /* recorded again after the wait: not waited for */
    mark(f, 2, b);
    CK(cuStreamSynchronize(b));
    RAN("1 2");
    CK(cuEventSynchronize(e));  /* its last record, on c */
    RAN("1 2 5");
    CK(cuStreamSynchronize(a));
    RAN("1 2 5 3");
}

Test(order, the_legacy_stream_is_a_barrier_for_blocking_streams, .init = deps0)
{
    CUfunction f = setup();
    CUstream a, b, n;
    CK(cuStreamCreate(&a, 0));
    CK(cuStreamCreate(&b, 0));
    CK(cuStreamCreate(&n, CU_STREAM_NON_BLOCKING));
    mark(f, 1, a);
    mark(f, 4, n);              /* non-blocking: no part of the barrier */
    mark(f, 2, CU_STREAM_LEGACY);
    mark(f, 3, b);
    mark(f, 6, a);              /* issued after the legacy op: not its work */
    CK(cuStreamSynchronize(b));
    RAN("1 2 3");
    CK(cuStreamSynchronize(CU_STREAM_PER_THREAD)); /* nothing of its own: nothing runs */
    RAN("1 2 3");
    mark(f, 7, CU_STREAM_PER_THREAD);  /* blocking too: after the legacy's 2, not after a's 6 */
    CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    RAN("1 2 3 7");
    CK(cuCtxSynchronize());
    RAN("1 2 3 7 6 4");
}

/* Two non-blocking streams *a, *b and an executable of nmarks marks 10, 11, ... */
static CUgraphExec marks_graph(CUfunction f, int nmarks, CUstream *a, CUstream *b)
{
    CUstream cap;
    CUgraph g;
    CUgraphExec x;
    CK(cuStreamCreate(a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING));
    CK(cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int i = 0; i < nmarks; i++)
        mark(f, 10 + i, cap);
    CK(cuStreamEndCapture(cap, &g));
    CK(cuGraphInstantiate(&x, g, 0));
    return x;
}

Test(order, a_graph_launch_runs_as_one_unit_of_its_stream, .init = deps7)
{
    CUfunction f = setup();
    CUstream a, b;
    CUgraphExec x = marks_graph(f, 2, &a, &b);
    for (int i = 0; i < 8; i++) {
        CK(cuGraphLaunch(x, a));
        mark(f, 12, a);
        mark(f, 20 + i, b);
    }
    CK(cuCtxSynchronize());
    cr_assert_eq(g_nran, 32, "%s", ran());
    char fifo[256];
    size_t n = 0;
    for (int i = 0; i < 8; i++)
        n += (size_t)snprintf(fifo + n, sizeof fifo - n, "%s10 11 12 %d", i ? " " : "", 20 + i);
    cr_assert_str_neq(ran(), fifo, "issue order: %s", ran());
    int k = 0;
    for (int i = 0; i < 32; i++) {
        if (g_ran[i] >= 20)
            continue;
        cr_assert_eq(g_ran[i], k == 0 ? 10 : k == 1 ? 11 : 12, "a's order: %s", ran());
        if (k == 0)
            cr_assert_eq(g_ran[i + 1], 11, "the graph's nodes apart: %s", ran());
        k = (k + 1) % 3;
    }
}

Test(order, launches_of_one_executable_follow_each_other_across_streams, .init = deps0)
{
    CUfunction f = setup();
    CUstream a, b;
    CUgraphExec x = marks_graph(f, 1, &a, &b);
    mark(f, 1, a);
    CK(cuGraphLaunch(x, a));
    CK(cuGraphLaunch(x, b)); /* after a's launch, so after a's 1 too */
    mark(f, 2, b);
    CK(cuStreamSynchronize(b));
    RAN("1 10 10 2");
}

/* A graph's independent branches run in any order its edges allow, as on a
 * GPU: a fork to b and a join back, the latest added ready node first. */
Test(order, a_graphs_branches_run_in_an_order_its_edges_allow, .init = deps0)
{
    CUfunction f = setup();
    CUstream a, b;
    CUevent e1, e2;
    CUgraph g;
    CUgraphExec x;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    CK(cuStreamBeginCapture_v2(a, CU_STREAM_CAPTURE_MODE_RELAXED));
    mark(f, 1, a);
    CK(cuEventRecord(e1, a));
    CK(cuStreamWaitEvent(b, e1, 0));
    mark(f, 2, b);
    mark(f, 3, a);
    CK(cuEventRecord(e2, b));
    CK(cuStreamWaitEvent(a, e2, 0));
    mark(f, 4, a);
    CK(cuStreamEndCapture(a, &g));
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    CK(cuGraphLaunch(x, a));
    CK(cuStreamSynchronize(a));
    RAN("1 3 2 4");
}
