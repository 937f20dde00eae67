/*
** boundaries.c: guardprog's scenarios of what ends a segment: the host reading
** after a stream or context synchronize, an event another stream waits on, host
** code in stream order, a free, synchronous copies and memsets, the legacy stream,
** the program's own graph, a stream's destroy, a runtime's teardown.
*/
#include "guardprog.h"

/* Stream synchronize: the host reads what the sequence wrote into pinned memory. */
static void sync_(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuEventCreate(&e, 0));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
        CHECK(cuEventRecord(e, s)); /* also ends the sequence when syncs do not */
    }
}

/* sync's sequence, each iteration ended by end(s, it); returns the stream. */
static CUstream three_ops_loop(int iters, void (*end)(CUstream, int))
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        end(s, it);
        show(it, "out", out);
    }
    return s;
}

/* Ended by a context synchronize (as torch.cuda.synchronize does). */
static void end_ctx_sync(CUstream s, int it)
{
    (void)s, (void)it;
    CHECK(cuCtxSynchronize());
}

static void ctx_sync(int iters) { three_ops_loop(iters, end_ctx_sync); }

/* Every fourth iteration the host stalls 5 ms before its synchronize, as a
** descheduled thread does: the watchdog issues the held work then, and the
** sequence goes on replaying between stalls. */
static void end_stall(CUstream s, int it)
{
    struct timespec nap = {0, 5000000};
    if (it % 4 == 3)
        nanosleep(&nap, NULL);
    CHECK(cuStreamSynchronize(s));
}

static void stall(int iters) { three_ops_loop(iters, end_stall); }

/* Event record / stream wait: stream b orders on a's event. */
static void event(int iters)
{
    CUstream a, b;
    CUevent e;
    CUdeviceptr x;
    float *out;
    prepare(&a, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        input(a, x, it);
        axpb(a, x);
        CHECK(cuEventRecord(e, a));
        CHECK(cuStreamWaitEvent(b, e, 0));
        copy(b, P(out), x);
        CHECK(cuStreamSynchronize(b));
        show(it, "out", out);
        CHECK(cuStreamSynchronize(a));
    }
}

static float seen_by_host;
static void host_fn(void *p)
{
    seen_by_host = *(float *)p;
}

/* cuStreamAddCallback's callback: the older way to run host code in stream
** order (it also gets the stream and a status). */
static void callback_fn(CUstream s, CUresult status, void *p)
{
    (void)s, (void)status;
    seen_by_host = *(float *)p;
}

/* A host function (or, with callback, a stream callback) runs after the
** stream's earlier work. */
static void host_code(int iters, int callback)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        copy(s, P(out), x);
        if (callback)
            CHECK(cuStreamAddCallback(s, callback_fn, out, 0));
        else
            CHECK(cuLaunchHostFunc(s, host_fn, out));
        CHECK(cuStreamSynchronize(s));
        printf("%d %s saw %g\n", it, callback ? "callback" : "host function", seen_by_host);
    }
}

static void hostfn(int iters) { host_code(iters, 0); }
static void callback(int iters) { host_code(iters, 1); }

/* A free of memory the held work uses: the work must run before it. */
static void alloc(int iters)
{
    CUstream s;
    float *out = pinned(), init[N];
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUdeviceptr x = dev(); /* the same address each time: first fit */
        for (int i = 0; i < N; i++)
            init[i] = (float)(it * 100 + i);
        CHECK(cuMemcpyHtoD_v2(x, init, sizeof init));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuMemFree_v2(x));
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A synchronous copy completes, with the work before it, before it returns. */
static void syncop(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float host[N];
    CHECK(cuStreamCreate(&s, 0)); /* blocking: ordered with the legacy stream */
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        CHECK(cuMemcpyDtoH_v2(host, x, sizeof host));
        show(it, "host", host);
        CHECK(cuStreamSynchronize(s));
    }
}

/* syncop with a synchronous byte memset: it clears x's first float after the
** held input and axpb wrote it, so the copy after it reads 0 there.  The
** stream is blocking: a synchronous memset orders after it (legacy stream). */
static void syncop_memset(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, 0);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        CHECK(cuMemsetD8_v2(x, 0, sizeof(float)));
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* An async copy into pageable memory completes before it returns. */
static void pageable_d2h(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float host[N];
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        CHECK(cuMemcpyDtoHAsync_v2(host, x, sizeof host, s));
        show(it, "host", host);
        CHECK(cuStreamSynchronize(s));
    }
}

/* The legacy stream waits for the blocking streams' earlier work: it copies
** every iteration, or (late) is met first near the end, once a's iteration is
** learned and held (test_faults.c fails each of graphshim's allocations in
** turn, the legacy stream's state's among them). */
static void legacy_copies(int iters, int late)
{
    CUstream a;
    CUdeviceptr x;
    float *out;
    prepare(&a, &x, &out, 0);
    for (int it = 0; it < iters; it++) {
        input(a, x, it);
        axpb(a, x);
        if (!late || it == iters - 2) {
            copy(CU_STREAM_LEGACY, P(out), x);
            CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
            show(it, "out", out);
        }
        CHECK(cuStreamSynchronize(a));
    }
}
static void legacy(int iters) { legacy_copies(iters, 0); }
static void legacy_late(int iters) { legacy_copies(iters, 1); }

/* The other way round: the legacy stream holds the iteration, and a blocking
** stream's copy reads what it wrote, ordered after it by the implicit
** synchronization alone.  Where graphshim cannot tell the blocking stream's
** flags or context (test_faults.c fails its own calls that ask), the copy
** must still wait for what the legacy stream holds. */
static void legacy_holds(int iters)
{
    CUstream b;
    CUdeviceptr x;
    float *out;
    prepare(&b, &x, &out, 0);
    for (int it = 0; it < iters; it++) {
        input(CU_STREAM_LEGACY, x, it);
        axpb(CU_STREAM_LEGACY, x);
        copy(b, P(out), x);
        CHECK(cuStreamSynchronize(b));
        show(it, "out", out);
    }
}

/* The program's own graph, launched on a stream that holds work. */
static void capture(int iters)
{
    CUstream s, c;
    CUgraph g;
    CUgraphExec ge;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamBeginCapture_v2(c, CU_STREAM_CAPTURE_MODE_GLOBAL));
    copy(c, P(out), x);
    CHECK(cuStreamEndCapture(c, &g));
    CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        CHECK(cuGraphLaunch(ge, s));
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A begin of a capture that the driver refuses (of the legacy stream:
** unsupported), and a second begin on a capturing stream (refused: the first
** capture stays open until its end): graphshim holds nothing while a capture
** is open, and holds again after each. */
static void capture_refused(int iters)
{
    CUstream s, c;
    CUgraph g;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        if (it == 1)
            printf("legacy begin: %d\n", (int)cuStreamBeginCapture_v2(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL));
        if (it == 2) {
            CHECK(cuStreamBeginCapture_v2(c, CU_STREAM_CAPTURE_MODE_RELAXED));
            printf("second begin: %d\n", (int)cuStreamBeginCapture_v2(c, CU_STREAM_CAPTURE_MODE_RELAXED));
        }
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        if (it == 2) {
            CHECK(cuStreamEndCapture(c, &g));
            CHECK(cuGraphDestroy(g));
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Segments end at an event record; the last one ends at the stream's destroy,
** which must not lose what the stream held. */
static void stream_destroy(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuEventCreate(&e, 0));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        if (it < iters - 1) {
            CHECK(cuEventRecord(e, s));
            CHECK(cuEventSynchronize(e));
        } else {
            CHECK(cuStreamDestroy_v2(s));
            CHECK(cuCtxSynchronize());
        }
        show(it, "out", out);
    }
}

static void end_stream_sync(CUstream s, int it)
{
    (void)it;
    CHECK(cuStreamSynchronize(s));
}

/* sync's loop, then what a CUDA runtime's teardown does before the program's
** exit handlers run: its stream destroyed, the primary context released.  The
** report written at exit must still list the sequences that were replayed. */
static void teardown(int iters)
{
    CUdevice d;
    CUstream s = three_ops_loop(iters, end_stream_sync);
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRelease_v2(d));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d)); /* main synchronizes it at the end */
}

const struct gp_scenario gp_boundaries[] = {
    {"sync", sync_},
    {"ctx-sync", ctx_sync},
    {"stall", stall},
    {"event", event},
    {"hostfn", hostfn},
    {"alloc", alloc},
    {"syncop", syncop},
    {"pageable-d2h", pageable_d2h},
    {"legacy", legacy},
    {"legacy-late", legacy_late},
    {"legacy-holds", legacy_holds},
    {"capture", capture},
    {"capture-refused", capture_refused},
    {"stream-destroy", stream_destroy},
    {"teardown", teardown},
    {"callback", callback},
    {"syncop-memset", syncop_memset},
    {NULL, NULL},
};
