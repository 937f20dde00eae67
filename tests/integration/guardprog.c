/*
** guardprog.c: one driver-API program per guard rule, for the engine tests.
**
**   guardprog SCENARIO [ITERS]
**
** Each scenario repeats a short op sequence on a stream, so that under graphshim
** the sequence becomes stable and is held, then observes the sequence's result
** in the way the rule is about (a sync, an event, a host function, a free, ...),
** and prints what it observed, every iteration.  Run without graphshim it prints
** the right values; under graphshim it must print the same; with the rule turned
** off (GRAPHSHIM_TEST_DROP_RULE) it prints something else, or hangs.
**
** Four scenarios are about what the engine can graph, not about a rule: work
** that repeats inside one segment (loop1: one kernel 300 times; body5: a body
** of five kernels 200 times) and segments that repeat with other arguments
** (scalars: changed scalar arguments every iteration; rotate: buffers that
** rotate among three sets).  Each prints a hash of its state that depends on
** every launch, on their order and on their count.  ITERS defaults to 8 for
** every scenario; the four above run in a few milliseconds over the fake driver
** even at 40.
**
** Two scenarios are process trees:
**
**   guardprog spawn SCENARIO ITERS
**
** starts two workers that run SCENARIO, each with its RANK (0, 1), as a job's
** launcher does (torchrun, mpirun); the parent makes no CUDA call.  two-proc
** forks a second process that waits for what a held kernel writes.
**
** Kernels are fake-driver host functions (tests/fakecuda/fakecuda.h).  Device
** memory of the fake driver is host memory, and pinned host memory is readable by
** kernels, like mapped memory on a GPU.
*/
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/graphshim.h"
#include "../fakecuda/fakecuda.h"
#include "cucheck.h"

#define N 64

/* The host's pauses (a stall, a slow host's work between launches, a poll's
** nap) are spent on the fake driver's clock: with FAKECUDA_CLOCK=virtual that
** clock moves on by the pause at once, so a test that counts what graphshim
** did about them (its test build reads that clock) counts the same on a busy
** machine; otherwise the host sleeps. */
static int pause_for(const struct timespec *t, struct timespec *rem)
{
    (void)rem;
    fakecuda_advance_ns((unsigned long long)t->tv_sec * 1000000000ull + (unsigned long long)t->tv_nsec);
    return 0;
}
#define nanosleep pause_for
#define usleep(us) pause_for(&(struct timespec){(us) / 1000000, (us) % 1000000 * 1000}, NULL)


FAKECUDA_KERNEL(fill, sizeof(float *), sizeof(float), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0), v = FAKECUDA_ARG(float, 1);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 2); i++)
        x[i] = v + (float)i;
}

FAKECUDA_KERNEL(axpb, sizeof(float *), sizeof(float), sizeof(float), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0), a = FAKECUDA_ARG(float, 1), b = FAKECUDA_ARG(float, 2);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 3); i++)
        x[i] = a * x[i] + b;
}

FAKECUDA_KERNEL(copy, sizeof(float *), sizeof(float *), sizeof(int))
{
    float *dst = FAKECUDA_ARG(float *, 0), *src = FAKECUDA_ARG(float *, 1);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 2); i++)
        dst[i] = src[i];
}

/* Named like an NCCL kernel: its launches must never be held. */
FAKECUDA_KERNEL(ncclDevKernel_copy, sizeof(float *), sizeof(float *), sizeof(int))
{
    float *dst = FAKECUDA_ARG(float *, 0), *src = FAKECUDA_ARG(float *, 1);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 2); i++)
        dst[i] = src[i];
}

/* NCCL's kernels as the driver names them: mangled C++ names, "nccl" inside. */
FAKECUDA_KERNEL(_Z37ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE, sizeof(float *), sizeof(float *), sizeof(int))
{
    float *dst = FAKECUDA_ARG(float *, 0), *src = FAKECUDA_ARG(float *, 1);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 2); i++)
        dst[i] = src[i];
}

FAKECUDA_KERNEL(setflag, sizeof(int *), sizeof(int))
{
    (void)d;
    *(volatile int *)FAKECUDA_ARG(int *, 0) = FAKECUDA_ARG(int, 1);
}

/* Counts its launches in mapped memory. */
FAKECUDA_KERNEL(bump, sizeof(int *))
{
    (void)d;
    (*(volatile int *)FAKECUDA_ARG(int *, 0))++;
}

static CUfunction k_fill, k_axpb, k_copy, k_setflag, k_nccl, k_bump, k_nccl_mangled;
static CUcontext ctx; /* the primary context, current in main */
static int n = N;

static void launch(CUfunction f, CUstream s, void **args)
{
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
}

static void fill(CUstream s, CUdeviceptr x, float v)
{
    launch(k_fill, s, (void *[]){&x, &v, &n});
}

static void axpb(CUstream s, CUdeviceptr x)
{
    float a = 2.0f, b = 1.0f;
    launch(k_axpb, s, (void *[]){&x, &a, &b, &n});
}

/* axpb with blocks of `block` threads: an op of another shape for each block. */
static void axpb_shaped(CUstream s, CUdeviceptr x, unsigned block)
{
    float a = 2.0f, b = 1.0f;
    CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, block, 1, 1, 0, s, (void *[]){&x, &a, &b, &n}, NULL));
}

static void copy(CUstream s, CUdeviceptr dst, CUdeviceptr src)
{
    launch(k_copy, s, (void *[]){&dst, &src, &n});
}

static void show(int it, const char *what, const float *v)
{
    printf("%d %s %g %g\n", it, what, v[0], v[N - 1]);
}

static float *pinned(void)
{
    float *p;
    CHECK(cuMemAllocHost_v2((void **)&p, N * sizeof(float)));
    memset(p, 0, N * sizeof(float));
    return p;
}

static CUdeviceptr dev(void)
{
    CUdeviceptr x;
    CHECK(cuMemAlloc_v2(&x, N * sizeof(float)));
    return x;
}

#define P(ptr) ((CUdeviceptr)(uintptr_t)(ptr))

/* The iteration's input, written by the host into pinned memory that the first
** kernel reads: the op sequence stays the same, the data changes. */
static float *in;
static void input(CUstream s, CUdeviceptr x, int it)
{
    if (!in)
        in = pinned();
    for (int i = 0; i < N; i++)
        in[i] = (float)(it * 10 + i);
    copy(s, x, P(in));
}

/* Stream synchronize: the host reads what the sequence wrote into pinned memory. */
static void sync_(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
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
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, 0));
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

/* The legacy stream waits for the blocking streams' earlier work. */
static void legacy(int iters)
{
    CUstream a;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&a, 0));
    for (int it = 0; it < iters; it++) {
        input(a, x, it);
        axpb(a, x);
        copy(CU_STREAM_LEGACY, P(out), x);
        CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
        show(it, "out", out);
        CHECK(cuStreamSynchronize(a));
    }
}

/* The program's own graph, launched on a stream that holds work. */
static void capture(int iters)
{
    CUstream s, c;
    CUgraph g;
    CUgraphExec ge;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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

/* An entry point graphshim does not know enqueues behind held work: here a
** stream-ordered store of a flag the host then trusts. */
static void unclassified(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    unsigned *flag;
    CHECK(cuMemAllocHost_v2((void **)&flag, sizeof *flag));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        copy(s, P(out), x);
        *(volatile unsigned *)flag = 0;
        CHECK(cuStreamWriteValue32_v2(s, P(flag), 1, 0));
        if (*(volatile unsigned *)flag == 1) /* the work before the store is done */
            show(it, "out", out);
        CHECK(cuStreamSynchronize(s));
    }
}

/* unclassified, with the store fetched as a runtime fetches every entry point:
** through cuGetProcAddress.  hooks.def has no row of that name, so graphshim
** answers with a trampoline, which must guard it as unclassified too. */
static void unclassified_proc(int iters)
{
    CUresult (*write32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    CUdriverProcAddressQueryResult found;
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    unsigned *flag;
    CHECK(cuGetProcAddress_v2("cuStreamWriteValue32", (void **)&write32, 12000, 0, &found));
    CHECK(found == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND);
    CHECK(cuMemAllocHost_v2((void **)&flag, sizeof *flag));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        copy(s, P(out), x);
        *(volatile unsigned *)flag = 0;
        CHECK(write32(s, P(flag), 1, 0));
        if (*(volatile unsigned *)flag == 1) /* the work before the store is done */
            show(it, "out", out);
        CHECK(cuStreamSynchronize(s));
    }
}

/* One launch per segment: shorter than GRAPHSHIM_MIN_OPS by default. */
static void single(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A GPU-bound step (run it with FAKECUDA_KERNEL_US in the milliseconds): three
** launches, the host working 200 us after each, then a synchronize.  Eagerly the
** GPU begins with the first launch; held, only at the synchronize. */
static void gpubound(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 200000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        nanosleep(&nap, NULL);
        axpb(s, x);
        nanosleep(&nap, NULL);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The same step whose products are one kernel four times with the same
** arguments (a GPU-bound step of equal matrix products): in its first
** iterations, before the sequence is stable, the search for loop bodies finds
** the four and holds them.  The host works 200 us before each: held, the GPU
** begins 0.8 ms later (8 % of a step, 11 times as long as the host's part). */
static void gpubound_body(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 200000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int k = 0; k < 4; k++) {
            nanosleep(&nap, NULL);
            axpb(s, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A host that works between launches: held ops wait long for their boundary,
** so they go out early in chunks.  Every fifth iteration the last op differs,
** after the chunks went out. */
static void slow(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 300000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        nanosleep(&nap, NULL);
        axpb(s, x);
        axpb(s, x);
        nanosleep(&nap, NULL);
        axpb(s, x);
        if (it % 5 == 4)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Its first two iterations are slow on the host (a program's first steps: caches,
** allocators, a library tuning itself), the rest fast. */
static void cold(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 20000000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        if (it < 2)
            nanosleep(&nap, NULL);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A host that works 2 ms in the first iteration, and `growth` times as long in
** each next one; every other iteration does one step more where `extra`. */
static void slowing(int iters, double growth, int extra)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    double us = 2000;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++, us *= growth) {
        input(s, x, it);
        axpb(s, x);
        nanosleep(&(struct timespec){(long)us / 1000000, (long)us % 1000000 * 1000}, NULL);
        copy(s, P(out), x);
        if (extra && it % 2)
            axpb(s, x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A program that slows down as it runs (a heap that grows, a busier host): 6 %
** each iteration. */
static void drift(int iters)
{
    slowing(iters, 1.06, 0);
}

/* Two sequences, one the other's prefix, in turn (an iteration that sometimes
** does one step more), on a host that slows down 3 % each iteration: the
** shorter one's eager runs are held as the longer one's prefix. */
static void drift_prefix(int iters)
{
    slowing(iters, 1.03, 1);
}

/* Work that repeats too rarely for its graphs to pay: 1000 different sequences
** (which of 10 ops are an axpb and which a copy), each back every 1000
** iterations. */
static void rare(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int q = it * 37 % 1000;
        input(s, x, it);
        for (int b = 0; b < 10; b++) {
            if (q >> b & 1)
                axpb(s, x);
            else
                copy(s, y, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Work that never repeats for the first half of the iterations (the axpb's
** block size is the iteration's: a grid alone would be an argument the engine
** sets in place), then the same sequence every iteration. */
static void new_then_same(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        unsigned block = it < iters / 2 ? (unsigned)it + 1 : 32;
        input(s, x, it);
        axpb_shaped(s, x, block);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* new-then-same's two kinds of segment in turn: every iteration one that never
** came before (the axpb's block size is the iteration's), then one sequence
** that comes every time.  The work repeats: learning must never rest. */
static void new_and_same(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        unsigned block = (unsigned)it % 1000 + 33; /* never the other segment's 32 */
        input(s, x, it);
        axpb_shaped(s, x, block);
        CHECK(cuStreamSynchronize(s));
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A 60-op sequence from a slow host (tens of microseconds per op, as a Python
** framework issues them): the shape of a model's forward pass.  With stall_at,
** the host stalls for 20 ms after op stall_at + 1 (a garbage collection, a
** descheduled thread) in every `every`-th iteration from the sixth on (the
** tenth on with cut_at), and with cut_at, after op cut_at + 1 in the sixth and
** seventh iterations: a place the watchdog then cuts, which moves the chunks'
** places after it.  Every odd iteration, with odd = ODD_IDLE, the host works
** 20 ms before the last op (the GPU has run the chunks by the time the last
** graph goes out); with odd = ODD_FAST, it issues the ops without a pause, as
** a fast host. */
enum { ODD_SAME, ODD_IDLE, ODD_FAST };
static void slowlong_run(int iters, int polled, int stall_at, int every, int cut_at, int odd)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 20000}, wait = {0, 20000000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 0; j < 58; j++) {
            axpb(s, x);
            if (!(odd == ODD_FAST && it % 2))
                nanosleep(&nap, NULL);
            if ((stall_at && it >= (cut_at ? 9 : 5) && it % every == every - 1 && j == stall_at) ||
                (cut_at && (it == 5 || it == 6) && j == cut_at))
                nanosleep(&wait, NULL);
        }
        if (odd == ODD_IDLE && it % 2)
            nanosleep(&wait, NULL);
        copy(s, P(out), x);
        if (polled) { /* asks once, then waits 20 ms on the host: the GPU is done by then */
            CUresult rc = cuStreamQuery(s);
            if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
                CHECK(rc);
            nanosleep(&wait, NULL);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void slowlong(int iters) { slowlong_run(iters, 0, 0, 0, 0, 0); }
static void slowlong_polled(int iters) { slowlong_run(iters, 1, 0, 0, 0, 0); }
static void slowlong_stall(int iters) { slowlong_run(iters, 0, 20, 3, 0, 0); }
static void slowlong_stall_late(int iters) { slowlong_run(iters, 0, 40, 2, 0, 0); }
static void slowlong_stall_moved(int iters) { slowlong_run(iters, 0, 26, 3, 20, 0); }
static void slowlong_idle_odd(int iters) { slowlong_run(iters, 0, 0, 0, 0, ODD_IDLE); }
static void slowlong_fast_odd(int iters) { slowlong_run(iters, 0, 0, 0, 0, ODD_FAST); }

/* A long sequence: 100 ops per iteration, the shape of a tiny-kernel benchmark;
** twenty: 20 ops (bench's tiny20). */
static void n_ops_of(int iters, int n, int shaped)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 0; j < n - 2; j++) {
            if (shaped)
                axpb_shaped(s, x, 32 + (unsigned)j);
            else
                axpb(s, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void n_ops(int iters, int n) { n_ops_of(iters, n, 0); }

/* A step of n ops of three kinds and a synchronize: kernels of 97 shapes in
** turn (no loop body), a memset every 50th op, a copy within the device every
** 100th; then the result copied to the host.  The report's picture draws it
** (mixed10, mixed5000). */
static void mixed(int iters, int n)
{
    CUstream s;
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 1; j < n - 1; j++) {
            if (j % 100 == 99)
                CHECK(cuMemcpyDtoDAsync_v2(y, x, N * sizeof(float), s));
            else if (j % 50 == 5)
                CHECK(cuMemsetD32Async(y, (unsigned)j, N, s));
            else
                axpb_shaped(s, x, 32 + (unsigned)(j % 97));
        }
        CHECK(cuMemcpyDtoHAsync_v2(out, x, N * sizeof(float), s));
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void mixed10(int iters) { mixed(iters, 10); }
static void mixed5000(int iters) { mixed(iters, 5000); }

/* sites: a step of six ops and a synchronize, cut in some steps by a call of
** the program's in the middle, after a kernel named cut_kernel: every 4th step
** reads a value back (gp_site_item: a synchronize, as PyTorch's .item()) after
** 3 ops, every 6th allocates (gp_site_alloc) after 4.  The two functions are
** global and not inlined, so that dladdr names them (guardprog is linked with
** -rdynamic): the report's bail sites must. */
FAKECUDA_KERNEL(cut_kernel, sizeof(float *), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0);
    x[0] += (float)FAKECUDA_ARG(int, 1);
}

__attribute__((noinline)) void gp_site_item(CUstream s)
{
    CHECK(cuStreamSynchronize(s));
}

__attribute__((noinline)) void gp_site_alloc(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 256));
    CHECK(cuMemFree_v2(p));
}

static void cut(CUstream s, CUdeviceptr x, CUfunction f)
{
    int one = 1;
    launch(f, s, (void *[]){&x, &one});
}

static void sites(int iters)
{
    CUstream s;
    CUmodule m;
    CUfunction f;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "cut_kernel"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        cut(s, x, f);
        if (it % 4 == 3)
            gp_site_item(s);
        axpb(s, x);
        if (it % 6 == 5)
            gp_site_alloc();
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void long_(int iters) { n_ops(iters, 100); }

/* One launch and a synchronize an iteration, of 40 shapes in turn, each three
** times in a row (blocks of 32 to 71 threads): a stream whose tree drops each
** one-op sequence (a root has at most 32 children) before it comes back. */
static void singles(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        axpb_shaped(s, x, 32 + (unsigned)(it / 3) % 40);
        CHECK(cuStreamSynchronize(s));
        CHECK(cuMemcpyDtoH_v2(out, x, 4 * sizeof(float)));
        show(it, "out", out);
    }
}

/* A prompt step (run it with FAKECUDA_KERNEL_US): 100 ops of as many shapes
** (blocks of 32 to 129 threads: no loop body), then a synchronize. */
static void prompt(int iters) { n_ops_of(iters, 100, 1); }

static void twenty(int iters) { n_ops(iters, 20); }

/* twenty from a host that works 20 us after each of its ops 2 to 15, and
** issues the rest at once: its GPU gains by a chunk that ends at 8, not by
** one at 16. */
static void twenty_slow_head(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct timespec nap = {0, 20000};
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 0; j < 18; j++) {
            axpb(s, x);
            if (j < 14) /* after ops 2 to 15 */
                nanosleep(&nap, NULL);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* ITERS segments that never repeat (a setup phase), then 40 that do (a loop):
** the setup must not keep the loop from being learned. */
static void setup_then_loop(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters + 40; it++) {
        float v = it < iters ? (float)it : 0.5f;
        /* a block size of its own each time in the setup: no two segments alike */
        CHECK(cuLaunchKernel(k_fill, 1, 1, 1, it < iters ? 1 + (unsigned)it : 32, 1, 1, 0, s, (void *[]){&x, &v, &n},
                             NULL));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Ops the engine cannot hold, after ops it holds: every third iteration, a launch
** with a launch attribute it does not know and a pinned-to-pinned copy replace the
** sequence's last op (learned from the other iterations). */
static void unholdable(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned(), *out2 = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, &attr, 1};
        CUdeviceptr dst = P(out), src = x;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
        input(s, x, it);
        axpb(s, x);
        if (it % 3 == 2) {
            CHECK(cuLaunchKernelEx(&cfg, k_copy, (void *[]){&dst, &src, &n}, NULL));
            CHECK(cuMemcpyAsync(P(out2), P(out), N * sizeof(float), s));
        } else {
            copy(s, P(out2), x);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out2);
    }
}

/* Segments end at an event record; the last one ends at the stream's destroy,
** which must not lose what the stream held. */
static void stream_destroy(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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

/* A collective-like kernel after held work: it passes through, after them. */
static void nccl(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUdeviceptr dst = P(out);
        input(s, x, it);
        axpb(s, x);
        if (it % 3 == 2)
            launch(k_nccl, s, (void *[]){&dst, &x, &n});
        else
            copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Collectives in the middle of every iteration, as in a tensor-parallel step:
** work, an NCCL kernel (by its mangled name, as the driver gives it), more work, a kernel with a launch attribute graphshim
** cannot hold, more work, a synchronize.  Everything around them repeats, so
** only the rule that such launches are never held keeps them out of graphs. */
static void collectives(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, &attr, 1};
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
        input(s, x, it);
        axpb(s, x);
        axpb(s, x);
        launch(k_nccl_mangled, s, (void *[]){&y, &x, &n});
        axpb(s, y);
        axpb(s, y);
        CHECK(cuLaunchKernelEx(&cfg, k_copy, (void *[]){&x, &y, &n}, NULL));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The public API, looked up at run time: iterations 4 and 5 run paused. */
static void api(int iters)
{
    int (*stats)(struct gs_stats *) = (int (*)(struct gs_stats *))dlsym(RTLD_DEFAULT, "gs_stats");
    void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    struct gs_stats st;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        if (it == 4 && pause)
            pause();
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        if (it == 5 && resume)
            resume();
        show(it, "out", out);
    }
    if (stats) { /* stderr: the output must not depend on graphshim's presence */
        int rc = stats(&st);
        fprintf(stderr, "gs_stats=%d ops=%llu replays=%llu graphs=%llu\n", rc, st.ops, st.replays, st.graphs);
    }
}

/* Kernel pointers alternate between two buffers. */
static void params_sets(int iters, int nsets)
{
    CUstream s;
    CUdeviceptr x[5] = {dev(), dev(), dev(), dev(), dev()};
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        fill(s, x[it % nsets], (float)(1000 * (it % nsets)));
        axpb(s, x[it % nsets]);
        copy(s, P(out), x[it % nsets]);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void params(int iters)
{
    params_sets(iters, 2);
}

/* Five sets in turn: more than a sequence keeps graphs for. */
static void params5(int iters)
{
    params_sets(iters, 5);
}

/* --- Parameter layouts as library kernels have them ------------------------- */

/* Mixes every byte of every parameter (after the output pointer) into *out, in
** order: a launch whose key missed a byte would replay a graph with the wrong one. */
static void mix_params(void **params, int n, const size_t *sizes)
{
    uint64_t *out = FAKECUDA_ARG(uint64_t *, 0), h = *out;
    for (int i = 1; i < n; i++)
        for (size_t b = 0; b < sizes[i]; b++)
            h = (h ^ ((const unsigned char *)params[i])[b]) * 0x100000001b3ull;
    *out = h;
}

#define MANY_SIZES 8, 1, 2, 4, 256, 3, 16, 1, 8, 128, 2, 4, 64, 1, 12, 8, 32, 2, 1, 4, \
                   200, 8, 1, 2, 24, 4, 8, 96, 1, 2, 4, 8, 16, 33, 1, 8, 4, 2, 1, 8
FAKECUDA_KERNEL(many, MANY_SIZES)
{
    static const size_t sizes[] = {MANY_SIZES};
    (void)d;
    mix_params(params, 40, sizes);
}

struct big { unsigned char bytes[4096]; };
FAKECUDA_KERNEL(big, sizeof(uint64_t *), sizeof(struct big))
{
    static const size_t sizes[] = {sizeof(uint64_t *), sizeof(struct big)};
    (void)d;
    mix_params(params, 2, sizes);
}

/* A kernel whose one parameter (after the output) is a 32,000-byte struct, the
** most a launch may pass (32,764 bytes in all); it folds three of its bytes and
** a word of it into the output, so that a launch lost, repeated or given stale
** bytes shows. */
struct huge { unsigned char bytes[32000]; };
FAKECUDA_KERNEL(huge, sizeof(uint64_t *), sizeof(struct huge))
{
    uint64_t *out = FAKECUDA_ARG(uint64_t *, 0);
    const struct huge *h = params[1];
    uint32_t w;
    (void)d;
    memcpy(&w, h->bytes + 20000, sizeof w);
    *out = (*out ^ h->bytes[0] ^ (uint64_t)h->bytes[16000] << 8 ^ (uint64_t)h->bytes[31999] << 16 ^
            (uint64_t)w << 24) * 0x100000001b3ull;
}

/* Three kernels for the module scenario: two of one layout, different code. */
FAKECUDA_KERNEL(mod_add, sizeof(uint64_t *), sizeof(unsigned))
{
    (void)d;
    *FAKECUDA_ARG(uint64_t *, 0) += FAKECUDA_ARG(unsigned, 1);
}
FAKECUDA_KERNEL(mod_mul, sizeof(uint64_t *), sizeof(unsigned))
{
    (void)d;
    *FAKECUDA_ARG(uint64_t *, 0) *= FAKECUDA_ARG(unsigned, 1);
}
FAKECUDA_KERNEL(mod_wide, sizeof(uint64_t *), 1, sizeof(uint64_t), 2)
{
    static const size_t sizes[] = {sizeof(uint64_t *), 1, sizeof(uint64_t), 2};
    (void)d;
    mix_params(params, 4, sizes);
}

static void show64(int it, const char *what, const uint64_t *v)
{
    printf("%d %s %016llx\n", it, what, (unsigned long long)*v);
}

/* A kernel with 40 parameters of 1 to 256 bytes; a parameter among the first 16
** alternates between two values, so two sequences differ only there. */
static void many_params(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    unsigned char args[40][256];
    void *argv[40];
    static const size_t sizes[] = {MANY_SIZES};

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "many"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 40; i++) {
        memset(args[i], 0x11 * (i % 15) + 1, sizes[i]);
        argv[i] = args[i];
    }
    *(uint64_t **)args[0] = out;
    for (int it = 0; it < iters; it++) {
        args[5][1] = (unsigned char)(it % 2);
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, argv, NULL));
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, argv, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* A kernel whose one parameter (after the output) is a 4 KiB struct; its last
** bytes alternate. */
static void big_struct(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    static struct big b;

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "big"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (size_t i = 0; i < sizeof b.bytes; i++)
        b.bytes[i] = (unsigned char)(i * 7);
    for (int it = 0; it < iters; it++) {
        b.bytes[sizeof b.bytes - 1] = (unsigned char)(it % 2);
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &b}, NULL));
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &b}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* 1,000 launches of the 32,000-byte-parameter kernel between two
** synchronizes, the bytes the same within an iteration and different between
** two in a row (as library kernels that pass their arguments as one struct). */
static void huge_loop(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    static struct huge h;

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "huge"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (size_t i = 0; i < sizeof h.bytes; i++)
        h.bytes[i] = (unsigned char)(i * 13);
    for (int it = 0; it < iters; it++) {
        h.bytes[0] = h.bytes[31999] = (unsigned char)(it % 2);
        h.bytes[20000] = (unsigned char)(it % 2 + 7);
        for (int j = 0; j < 1000; j++)
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &h}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* Modules loaded and unloaded in turn, each with one kernel of those named
** (nmods of mod_add, mod_mul, mod_wide): an unloaded module's function handle
** comes back for the next module's kernel, of the same layout and other code
** (mod_add, mod_mul) or of another layout (mod_wide).  each() runs the kernel
** of load r. */
static void modules_in_turn(int iters, int nmods, void (*each)(CUstream, CUfunction, int, uint64_t *))
{
    static const char *const names[] = {"mod_add", "mod_mul", "mod_wide"};
    CUstream s;
    uint64_t *out;

    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int r = 0; r < iters; r++) {
        CUmodule m;
        CUfunction f;
        CHECK(cuModuleLoadData(&m, "image"));
        CHECK(cuModuleGetFunction(&f, m, names[r % nmods]));
        each(s, f, r, out);
        CHECK(cuModuleUnload(m));
    }
}

/* Four iterations of two launches of the module's kernel. */
static void module_each(CUstream s, CUfunction f, int r, uint64_t *out)
{
    unsigned v = 3;
    for (int it = 0; it < 4; it++) {
        if (r % 3 == 2) {
            unsigned char c = 5;
            uint64_t w = 0x0102030405060708ull;
            unsigned short h = 9;
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &c, &w, &h}, NULL));
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &c, &w, &h}, NULL));
        } else {
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        }
        CHECK(cuStreamSynchronize(s));
        show64(r * 4 + it, r % 3 == 0 ? "mod_add" : r % 3 == 1 ? "mod_mul" : "mod_wide", out);
    }
}

static void module(int iters)
{
    modules_in_turn(iters, 3, module_each);
}

/* Kernels of a library, launched by their CUkernel handles as the runtime
** launches its own: an add and a multiply each iteration. */
static void library(int iters)
{
    CUstream s;
    CUlibrary lib;
    CUkernel add, mul;
    uint64_t *out;
    unsigned v = 3;

    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuLibraryLoadData(&lib, "image", NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&add, lib, "mod_add"));
    CHECK(cuLibraryGetKernel(&mul, lib, "mod_mul"));
    for (int it = 0; it < iters; it++) {
        CHECK(cuLaunchKernel((CUfunction)add, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        CHECK(cuLaunchKernel((CUfunction)mul, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* cuLaunchKernelEx with attributes whose unused union bytes are garbage that
** changes every call, as a caller's stack has them. */
static void attrs(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    float a = 2.0f, b = 1.0f;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute at[2];
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, at, 2};
        memset(at, 0x40 + it, sizeof at);
        at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        at[0].value.priority = 0;
        at[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at[1].value.clusterDim.x = at[1].value.clusterDim.y = at[1].value.clusterDim.z = 1;
        input(s, x, it);
        CHECK(cuLaunchKernelEx(&cfg, k_axpb, (void *[]){&x, &a, &b, &n}, NULL));
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* As PyTorch does: a kernel's dynamic shared memory limit set before each of its
** launches to what the launch needs: raised to 64 KiB for the first, lowered to
** 32 KiB for the second (a held first launch must go out before the lowering, or
** it fails), and set again to 32 KiB, its value, before a third.  The preferred
** carveout changes every 5th iteration (a hint), and every 10th iteration a
** cluster attribute changes, a real change. */
static void func_attr(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    float a = 2.0f, b = 1.0f;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
        if (it % 5 == 4)
            CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, it % 10 == 4 ? 50 : 25));
        if (it % 10 == 9)
            CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, it % 20 == 9));
        input(s, x, it);
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 65536, s, (void *[]){&x, &a, &b, &n}, NULL));
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 32768));
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 32768, s, (void *[]){&x, &a, &b, &n}, NULL));
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 32768));
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 32768, s, (void *[]){&x, &a, &b, &n}, NULL));
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The host polls mapped memory that a kernel sets, with no CUDA call, after
** idle_ms with no CUDA call at all.  A flag that takes over limit_ms fails the
** program (exit 3). */
static void poll_flag(int iters, long idle_ms, long limit_ms)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *flag;
    CHECK(cuMemHostAlloc((void **)&flag, sizeof *flag, CU_MEMHOSTALLOC_DEVICEMAP));
    *flag = 0;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int v = 1;
        struct timespec t0, t;
        if (idle_ms)
            nanosleep(&(struct timespec){idle_ms / 1000, idle_ms % 1000 * 1000000}, NULL);
        *flag = 0;
        input(s, x, it);
        axpb(s, x);
        launch(k_setflag, s, (void *[]){&flag, &v});
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (*(volatile int *)flag != v) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > limit_ms) {
                fprintf(stderr, "iteration %d: the flag took over %ld ms\n", it, limit_ms);
                exit(3);
            }
        }
        printf("%d flag %d\n", it, *(volatile int *)flag);
        CHECK(cuStreamSynchronize(s));
    }
}

static void watchdog(int iters)
{
    poll_flag(iters, 0, 3000);
}

/* As watchdog, but the host first does no CUDA call for 30 ms each iteration:
** long enough for the watchdog, with nothing held, to sleep until a stream
** holds again.  Held work must still go out within the watchdog's limit, not
** its sleep (a second). */
static void idle_poll(int iters)
{
    poll_flag(iters, 30, 300);
}

/* Two processes: a kernel of this one sets a flag in host memory shared with
** the other (registered with the driver and mapped, so that the kernel writes
** it), which waits for the flag and then answers through a pipe; this one waits
** for the answer with no CUDA call.  Held work that never went out would keep
** both waiting: each gives up after 2 s (exit 3). */
static void two_proc(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), dflag;
    int *flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int answer[2], st;
    pid_t peer;

    if (flag == MAP_FAILED || pipe(answer) != 0)
        exit(2);
    *flag = 0;
    CHECK(cuMemHostRegister_v2(flag, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(cuMemHostGetDevicePointer_v2(&dflag, flag, 0));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    fflush(stdout);
    peer = fork();
    if (peer == 0) {
        /* The other process makes no CUDA call: it waits for each iteration's
        ** flag and answers. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (int it = 0; it < iters; it++) {
            time_t t0 = time(NULL);
            while (*(volatile int *)flag != it + 1)
                if (time(NULL) - t0 > 2)
                    _exit(3);
            if (write(answer[1], "k", 1) != 1)
                _exit(2);
        }
        _exit(0);
    }
    for (int it = 0; it < iters; it++) {
        int v = it + 1;
        struct pollfd p = {answer[0], POLLIN, 0};
        char c;
        input(s, x, it);
        axpb(s, x);
        launch(k_setflag, s, (void *[]){&dflag, &v});
        if (poll(&p, 1, 2000) != 1 || read(answer[0], &c, 1) != 1) {
            fprintf(stderr, "iteration %d: the other process never answered\n", it);
            kill(peer, SIGKILL);
            exit(3);
        }
        printf("%d answered, flag %d\n", it, *(volatile int *)flag);
        CHECK(cuStreamSynchronize(s));
    }
    if (waitpid(peer, &st, 0) != peer || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "the other process failed\n");
        exit(3);
    }
}

/* Waits, with no CUDA call, until the count is want (iteration it); fails the
** program after 3 s. */
static void wait_count(const int *count, int want, int it)
{
    time_t t0 = time(NULL);
    while (*(const volatile int *)count != want) {
        if (time(NULL) - t0 > 3) {
            fprintf(stderr, "iteration %d: the count stopped at %d\n", it, *(const volatile int *)count);
            exit(3);
        }
    }
}

/* A loop of one kernel, 100 + it launches a synchronize, held as a loop body;
** in iterations 2 and 5 the host stalls for 20 ms in the middle of the loop (a
** descheduled thread, a page fault), and the watchdog issues what is held. */
static void body_stall(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 100 + it; k++) {
            if ((it == 2 || it == 5) && k == 70)
                usleep(20000);
            axpb(s, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* After a loop, the host waits for the count of a kernel launched
** 40 + it times, held as a loop body, with no CUDA call, then synchronizes
** (body-poll); or without a synchronize in the loop (body-poll-nosync: one
** segment); or with 8 more launches of the same kernel after the wait, then a
** synchronize (body-poll-more: the loop goes on after the host waited for it);
** or napping 50 us between its polls (body-poll-nap: on the fake driver's
** virtual clock, each nap is time the watchdog counts). */
static void body_poll_each(int iters, int sync, int more, int nap)
{
    CUstream s;
    int *count;
    CHECK(cuMemHostAlloc((void **)&count, sizeof *count, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        *count = 0;
        for (int k = 0; k < 40 + it; k++)
            launch(k_bump, s, (void *[]){&count});
        if (nap)
            for (int polls = 0; *(const volatile int *)count != 40 + it && polls < 100000; polls++)
                usleep(50);
        wait_count(count, 40 + it, it);
        printf("%d count %d\n", it, *(volatile int *)count);
        for (int k = 0; k < 8 * more; k++)
            launch(k_bump, s, (void *[]){&count});
        if (sync)
            CHECK(cuStreamSynchronize(s));
    }
    CHECK(cuStreamSynchronize(s));
}
static void body_poll(int iters) { body_poll_each(iters, 1, 0, 0); }
static void body_poll_nosync(int iters) { body_poll_each(iters, 0, 0, 0); }
static void body_poll_more(int iters) { body_poll_each(iters, 1, 1, 0); }
static void body_poll_nap(int iters) { body_poll_each(iters, 1, 0, 1); }

/* body-poll's shape, varied: the host waits for the count only every
** `every`-th iteration, after `loops` loops of the body an iteration (another
** kernel between them), and the count moves through `ring` slots (a new
** pointer, so a new body, each iteration). */
static void body_poll_vary(int iters, int every, int loops, int ring)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *slots;
    CHECK(cuMemHostAlloc((void **)&slots, 16 * sizeof *slots, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int *count = slots + it % ring;
        *count = 0;
        for (int l = 0; l < loops; l++) {
            if (l)
                axpb(s, x);
            for (int k = 0; k < 40 + it; k++)
                launch(k_bump, s, (void *[]){&count});
        }
        if (it % every == 0)
            wait_count(count, loops * (40 + it), it);
        CHECK(cuStreamSynchronize(s));
        printf("%d count %d\n", it, *(volatile int *)count);
    }
}
static void body_poll_every3(int iters) { body_poll_vary(iters, 3, 1, 1); }
static void body_poll_loops3(int iters) { body_poll_vary(iters, 1, 3, 1); }
static void body_poll_ring(int iters) { body_poll_vary(iters, 1, 1, 16); }

/* The host waits half-way through a loop of 100 + it launches, with no CUDA
** call, for the count so far (a progress check); the loop then goes on to a
** synchronize (sync 1), or to another kernel (sync 0: one segment). */
static void body_poll_mid_each(int iters, int sync)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *count;
    CHECK(cuMemHostAlloc((void **)&count, sizeof *count, CU_MEMHOSTALLOC_DEVICEMAP));
    *count = 0;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int base = *(volatile int *)count;
        for (int k = 0; k < 100 + it; k++) {
            launch(k_bump, s, (void *[]){&count});
            if (k == 49)
                wait_count(count, base + 50, it);
        }
        if (sync)
            CHECK(cuStreamSynchronize(s));
        else
            axpb(s, x);
        printf("%d ok\n", it);
    }
    CHECK(cuStreamSynchronize(s));
    printf("count %d\n", *(volatile int *)count);
}
static void body_poll_mid(int iters) { body_poll_mid_each(iters, 1); }
static void body_poll_mid_nosync(int iters) { body_poll_mid_each(iters, 0); }

/* 10000 launches that never repeat (a grid of their own each), then loops of
** one kernel, one launch more each time: the search for loop bodies rests during
** the first part, and must find the loops after it. */
static void quiet_then_loop(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int k = 0; k < 10000; k++) {
        float v = (float)k;
        CHECK(cuLaunchKernel(k_fill, 1 + (unsigned)k, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &v, &n}, NULL));
    }
    CHECK(cuStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 100 + it; k++)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A loop of one kernel per module load, one launch more each time: no segment
** repeats, only the loop body.  The functions of mod_add and mod_mul, of one
** layout, get the same handle in turn. */
static void body_module_each(CUstream s, CUfunction f, int r, uint64_t *out)
{
    unsigned v = 3;
    for (int k = 0; k < 40 + r; k++)
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
    CHECK(cuStreamSynchronize(s));
    show64(r, r % 2 ? "mod_mul" : "mod_add", out);
}

static void body_module(int iters)
{
    modules_in_turn(iters, 2, body_module_each);
}

/* Two contexts, each launching on its own default stream d (the legacy stream,
** passed as 0, or the per-thread stream): a function of the second context's
** module is valid only there, so its launches must never go out in the first's,
** and both contexts' sequences are graphed, each in its own context (graphshim
** keeps a default stream's state per context). */
static void two_ctx_on(int iters, CUstream d)
{
    CUcontext b;
    CUmodule mb;
    CUfunction fill_b, axpb_b, copy_b;
    CUdeviceptr xa = dev(), xb;
    float *out_a = pinned(), *out_b = pinned();
    float two = 2.0f, one = 1.0f;

    CHECK(cuCtxCreate_v2(&b, 0, 0)); /* current from here */
    CHECK(cuModuleLoadData(&mb, "image"));
    CHECK(cuModuleGetFunction(&fill_b, mb, "fill"));
    CHECK(cuModuleGetFunction(&axpb_b, mb, "axpb"));
    CHECK(cuModuleGetFunction(&copy_b, mb, "copy"));
    xb = dev();
    for (int it = 0; it < iters; it++) {
        float va = (float)it, vb = (float)(100 + it);
        CUdeviceptr pa = P(out_a), pb = P(out_b);
        CHECK(cuCtxSetCurrent(ctx));
        fill(d, xa, va);
        axpb(d, xa);
        copy(d, pa, xa);
        CHECK(cuCtxSetCurrent(b));
        launch(fill_b, d, (void *[]){&xb, &vb, &n});
        launch(axpb_b, d, (void *[]){&xb, &two, &one, &n});
        launch(axpb_b, d, (void *[]){&xb, &two, &one, &n});
        launch(copy_b, d, (void *[]){&pb, &xb, &n});
        CHECK(cuCtxSynchronize());
        CHECK(cuCtxSetCurrent(ctx));
        CHECK(cuCtxSynchronize());
        show(it, "a", out_a);
        show(it, "b", out_b);
    }
    CHECK(cuCtxSetCurrent(ctx));
}

static void two_ctx(int iters) { two_ctx_on(iters, 0); }
static void two_ctx_pt(int iters) { two_ctx_on(iters, CU_STREAM_PER_THREAD); }

/* A pageable source is rewritten right after the async copy returns.  With
** bail (staging-bail), every fourth iteration one more axpb comes where the
** sequence has its copy to out, and the held ops (the pageable copy and the
** first axpb) bail out, issued one by one after the program rewrote the copy's
** source: they must copy the bytes of the call. */
static void staging_run(int iters, int bail)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned(), *src = malloc(N * sizeof(float));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        for (int i = 0; i < N; i++)
            src[i] = -1.0f; /* allowed: the copy took the bytes at the call */
        axpb(s, x);
        if (bail && it % 4 == 3)
            axpb(s, x); /* a mismatch: the held ops go out eagerly */
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void staging(int iters) { staging_run(iters, 0); }
static void staging_bail(int iters) { staging_run(iters, 1); }

/* Blocks fill_memory() allocated, and their kind. */
static void *filled[256];
static size_t nfilled;
static int filled_pinned;

/* Allocates device (pinned: pinned host) memory until it runs out, in blocks
** of 1 MiB, then 64, 4 and 1/4 KiB, kept until free_memory().  Returns the
** bytes it got. */
static size_t fill_memory(int pinned_kind)
{
    static const size_t sizes[] = {1 << 20, 64 << 10, 4 << 10, 256};
    size_t total = 0;
    filled_pinned = pinned_kind;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (; nfilled < 256; nfilled++) {
            CUdeviceptr d;
            CUresult rc = pinned_kind ? cuMemAllocHost_v2(&filled[nfilled], sizes[k]) : cuMemAlloc_v2(&d, sizes[k]);
            if (rc == CUDA_ERROR_OUT_OF_MEMORY)
                break;
            CHECK(rc);
            if (!pinned_kind)
                filled[nfilled] = (void *)(uintptr_t)d;
            total += sizes[k];
        }
    }
    return total;
}

static void free_memory(void)
{
    while (nfilled-- > 0)
        CHECK(filled_pinned ? cuMemFreeHost(filled[nfilled]) : cuMemFree_v2(P(filled[nfilled])));
    nfilled = 0;
}

/* A loop whose graph (and the staging buffer of its pageable copy) is alive,
** then device memory allocated until none is left; the loop again, then pinned
** host memory until none is left; the loop once more.  The totals reached are
** the program's to have: graphshim's own memory must not lower them.  For a
** small device (FAKECUDA_MEM_MB and FAKECUDA_PINNED_MB). */
static void oom(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned(), *src = malloc(N * sizeof(float));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < 3 * iters; it++) {
        if (it == iters) {
            printf("device memory reached %zu bytes\n", fill_memory(0));
            free_memory();
        }
        if (it == 2 * iters) {
            printf("pinned memory reached %zu bytes\n", fill_memory(1));
            free_memory();
        }
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The staging loop, whose last iteration ends with an allocation of the
** program's, not a synchronize: under FAKECUDA_PENDING the replayed graph
** still has to read the staging buffer of its pageable copy when the
** allocation fails (FAKECUDA_FAIL=cuMemAlloc_v2:2:2, the program's second
** call), and graphshim frees its memory.  The program does not care whether
** its allocation got memory, only that its results are right. */
static void oom_pending(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), d;
    float *out = pinned(), *src = malloc(N * sizeof(float));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        for (int i = 0; i < N; i++)
            src[i] = -1.0f;
        axpb(s, x);
        copy(s, P(out), x);
        if (it == iters - 1) {
            CUresult rc = cuMemAlloc_v2(&d, 1 << 20);
            if (rc == CUDA_SUCCESS)
                CHECK(cuMemFree_v2(d));
            else if (rc != CUDA_ERROR_OUT_OF_MEMORY)
                CHECK(rc);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The loop's graph, freed when the program took all device memory, is built
** again while the device is still full: graphshim gives it up (the sequence
** goes eagerly), and the program's memory stays the program's. */
static void oom_full(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < 3 * iters; it++) {
        if (it == iters)
            printf("device memory reached %zu bytes\n", fill_memory(0));
        if (it == 2 * iters)
            free_memory();
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Copies between pinned host memory and device memory, in rounds of four
** iterations; after each round every buffer is freed and allocated again, at
** the same addresses (same sizes), as programs that allocate per phase do.  A
** graph's copy nodes bind the allocations they were made with: after the
** frees they must not run again (the real driver faults, or crashes). */
static void host_bind(int iters)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round * 4 < iters; round++) {
        CUdeviceptr x = dev();
        float *src = pinned(), *out = pinned();
        for (int it = round * 4; it < iters && it < round * 4 + 4; it++) {
            for (int i = 0; i < N; i++)
                src[i] = (float)(it * 10 + i);
            CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
            axpb(s, x);
            CHECK(cuMemcpyDtoHAsync_v2(out, x, N * sizeof(float), s));
            CHECK(cuStreamSynchronize(s));
            show(it, "out", out);
        }
        CHECK(cuMemFreeHost(src));
        CHECK(cuMemFreeHost(out));
        CHECK(cuMemFree_v2(x));
    }
}

/* host-bind with a device-to-host copy as the graph's only host copy (the
** input comes from a kernel): its node binds the pinned buffer and the device
** buffer it was made with, freed and allocated again, at the same addresses,
** every 4 iterations. */
static void host_bind_d2h(int iters)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round * 4 < iters; round++) {
        CUdeviceptr x = dev();
        float *out = pinned();
        for (int it = round * 4; it < iters && it < round * 4 + 4; it++) {
            fill(s, x, (float)(it % 4)); /* the same bytes each round: one sequence */
            axpb(s, x);
            CHECK(cuMemcpyDtoHAsync_v2(out, x, N * sizeof(float), s));
            CHECK(cuStreamSynchronize(s));
            show(it, "out", out);
        }
        CHECK(cuMemFreeHost(out));
        CHECK(cuMemFree_v2(x));
    }
}

/* Four threads, each its own stream and sequence.  Memory is allocated before the
** threads start: an allocation resolves every stream's held work, which would
** cut the other threads' sequences at random places. */
struct worker {
    int id, iters;
    CUdeviceptr x;
    float *out;
    float result[64];
};
static void *thread_main(void *arg)
{
    struct worker *w = arg;
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < w->iters && it < 64; it++) {
        fill(s, w->x, (float)(w->id * 1000 + it % 3));
        axpb(s, w->x);
        copy(s, P(w->out), w->x);
        CHECK(cuStreamSynchronize(s));
        w->result[it] = w->out[N - 1];
    }
    CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

static void *thread_entry(void *arg)
{
    CHECK(cuCtxSetCurrent(ctx));
    return thread_main(arg);
}

static void threads(int iters)
{
    pthread_t th[4];
    struct worker w[4];
    for (int t = 0; t < 4; t++) {
        w[t].id = t;
        w[t].iters = iters;
        w[t].x = dev();
        w[t].out = pinned();
    }
    for (int t = 0; t < 4; t++) {
        pthread_create(&th[t], NULL, thread_entry, &w[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++)
        for (int it = 0; it < iters && it < 64; it++)
            printf("thread %d %d %g\n", t, it, w[t].result[it]);
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

/* Pure queries between the ops of a sequence (occupancy, loading state, as
** libraries ask before a launch): they neither resolve held work nor cut the
** sequence. */
static void queries(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int blocks = 0;
        CUfunctionLoadingState st;
        input(s, x, it);
        CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_axpb, 32, 0));
        CHECK(cuFuncIsLoaded(&st, k_axpb));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        printf("%d blocks %d loaded %d\n", it, blocks, st == CU_FUNCTION_LOADING_STATE_LOADED);
        show(it, "out", out);
    }
}

/* An event polled mid-sequence, as PyTorch's allocator and NCCL's watchdog poll
** theirs: each iteration's four ops on s, the host spinning on the event that
** the previous iteration recorded after its second op.  The record issued what
** s held before it, so the poll has nothing to wait for: the four ops stay one
** sequence. */
static void event_poll(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        CUresult rc;
        input(s, x, it);
        axpb(s, x);
        while ((rc = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
            ;
        CHECK(rc);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
        CHECK(cuEventRecord(e, s));
    }
}

/* Waits for e as a host that polls does: no synchronize, only queries. */
static void spin_on(CUevent e)
{
    CUresult rc;
    while ((rc = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
        ;
    CHECK(rc);
}

/* event on the per-thread default stream, as a program built with
** --default-stream per-thread records it: cuEventRecord_ptsz (cuda.h declares
** it only for such builds), stream 0 naming the calling thread's stream.  The
** host spins on the event, then reads what the work before it wrote. */
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
static void event_pt(int iters)
{
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        input(CU_STREAM_PER_THREAD, x, it);
        axpb(CU_STREAM_PER_THREAD, x);
        copy(CU_STREAM_PER_THREAD, P(out), x);
        CHECK(cuEventRecord_ptsz(e, 0));
        spin_on(e);
        show(it, "out", out);
        CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD)); /* ends the sequence where the record does not */
    }
}

/* Work on one stream, an event recorded on another that orders after it, the
** host spinning on the event and then reading what the work wrote, in pinned
** memory.  A record on the legacy stream orders after the blocking streams'
** earlier work (a created blocking stream's, the per-thread stream's), and a
** record on a blocking stream after the legacy stream's; a non-blocking stream
** records its own.  Each record must issue the work held before it on those
** streams: the event is complete only once that work is done. */
static void event_legacy(int iters)
{
    CUstream blocking, nonblocking;
    CUevent e;
    CUdeviceptr x = dev();
    float *out[4] = {pinned(), pinned(), pinned(), pinned()};
    CHECK(cuStreamCreate(&blocking, 0));
    CHECK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        struct {
            CUstream work, record;
        } pair[4] = {{blocking, CU_STREAM_LEGACY},
                     {CU_STREAM_PER_THREAD, CU_STREAM_LEGACY},
                     {nonblocking, nonblocking},
                     {CU_STREAM_LEGACY, blocking}};
        for (int p = 0; p < 4; p++) {
            input(pair[p].work, x, it + p);
            axpb(pair[p].work, x);
            copy(pair[p].work, P(out[p]), x);
            if (p % 2)
                CHECK(cuEventRecordWithFlags(e, pair[p].record, 0));
            else
                CHECK(cuEventRecord(e, pair[p].record));
            spin_on(e);
            show(it, "out", out[p]);
        }
    }
}

/* Another thread's launch on the legacy stream, with the primary context. */
static void *legacy_nudge(void *arg)
{
    CUdeviceptr y = *(CUdeviceptr *)arg;
    CHECK(cuCtxSetCurrent(ctx));
    fill(CU_STREAM_LEGACY, y, 1.0f);
    return NULL;
}

/* The main thread's work on its per-thread stream, held; another thread then
** launches on the legacy stream, which first issues what blocking streams hold
** (the per-thread stream's work, which that thread can only issue on the
** legacy stream); then the main thread synchronizes its per-thread stream and
** reads the result.  On a GPU that synchronize does not wait for legacy work
** issued after the stream's last op (bench/ptds_legacy_probe.cu): run with
** FAKECUDA_PENDING, it shows stale values unless the stream was made to wait
** for the work issued for it. */
static void ptds_legacy(int iters)
{
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    for (int it = 0; it < iters; it++) {
        pthread_t t;
        input(CU_STREAM_PER_THREAD, x, it);
        axpb(CU_STREAM_PER_THREAD, x);
        copy(CU_STREAM_PER_THREAD, P(out), x);
        pthread_create(&t, NULL, legacy_nudge, &y);
        pthread_join(t, NULL);
        CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
        show(it, "out", out);
        CHECK(cuCtxSynchronize());
    }
}

/* A context synchronize of another thread while the engine captures a graph: it
** must neither fail (900) nor invalidate the capture.  The main thread runs two
** sequences in turn (with GRAPHSHIM_MAX_GRAPHS=1, a capture every time) while a
** second thread synchronizes the context every 0.2 ms and counts its failures. */
struct racer {
    atomic_int done;
    long failed;
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    struct timespec nap = {0, 200000};
    CHECK(cuCtxSetCurrent(ctx));
    while (!atomic_load(&r->done)) {
        CUresult rc = cuCtxSynchronize();
        if (rc != CUDA_SUCCESS) {
            fprintf(stderr, "cuCtxSynchronize: %d\n", (int)rc);
            r->failed++;
        }
        nanosleep(&nap, NULL);
    }
    return NULL;
}

static void race_ctx_sync(int iters)
{
    struct racer r = {0, 0};
    pthread_t th;
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    pthread_create(&th, NULL, racer_main, &r);
    for (int it = 0; it < iters; it++) {
        input(s, x, it % 4);
        axpb(s, x);
        if (it % 2)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
    atomic_store(&r.done, 1);
    pthread_join(th, NULL);
    printf("second thread: %ld failed calls\n", r.failed);
}


/* --- Work that repeats inside a segment, or with other arguments ----------- */

/* Five different steps on a state of W words, each a bijection and no two of
** them commuting: the state after a run of launches depends on every launch,
** on their order and on their count, so a dropped, repeated or reordered launch
** shows in the printed hash. */
#define W 4

static void step(void **params, int op)
{
    uint64_t *x = FAKECUDA_ARG(uint64_t *, 0), v = FAKECUDA_ARG(uint64_t, 1);
    for (int i = 0; i < W; i++) {
        uint64_t y = x[i];
        switch (op) {
        case 0: y = (y ^ (v + (uint64_t)i)) * 0x100000001b3ull; break;
        case 1: y += v * 0x9e3779b97f4a7c15ull + (uint64_t)i; break;
        case 2: y *= 2 * v + 3; break;
        case 3: y = (y << 13 | y >> 51) ^ v; break;
        default: y ^= (y >> 29) ^ (v << 7); break;
        }
        x[i] = y;
    }
}

FAKECUDA_KERNEL(step0, sizeof(uint64_t *), sizeof(uint64_t)) { step(params, 0); }
FAKECUDA_KERNEL(step1, sizeof(uint64_t *), sizeof(uint64_t)) { step(params, 1); }
FAKECUDA_KERNEL(step2, sizeof(uint64_t *), sizeof(uint64_t)) { step(params, 2); }
FAKECUDA_KERNEL(step3, sizeof(uint64_t *), sizeof(uint64_t)) { step(params, 3); }
FAKECUDA_KERNEL(step4, sizeof(uint64_t *), sizeof(uint64_t)) { step(params, 4); }

/* step0 with the launch's grid mixed in: its result shows the grid it ran with. */
FAKECUDA_KERNEL(stepg, sizeof(uint64_t *), sizeof(uint64_t))
{
    uint64_t *x = FAKECUDA_ARG(uint64_t *, 0), v = FAKECUDA_ARG(uint64_t, 1);
    for (int i = 0; i < W; i++)
        x[i] = (x[i] ^ (v + d->grid[0] * 0x9e3779b97f4a7c15ull + d->grid[1] + (uint64_t)i)) * 0x100000001b3ull;
}

/* dst = mix of dst and src, word by word. */
FAKECUDA_KERNEL(fold, sizeof(uint64_t *), sizeof(uint64_t *))
{
    uint64_t *dst = FAKECUDA_ARG(uint64_t *, 0), *src = FAKECUDA_ARG(uint64_t *, 1);
    for (int i = 0; i < W; i++)
        dst[i] = (dst[i] ^ src[i]) * 0x100000001b3ull + 1;
}

static CUfunction k_step[5], k_fold, k_stepg, k_stepb;

/* Loads the step kernels and creates nx states, each with its own seed.  Then,
** each iteration: the scenario's launches on a stream of its own (launches
** returns the state to show), the stream's synchronize, and the hash of that
** state, read with a synchronous copy. */
static void steps_loop(int iters, const char *name, int nx, CUdeviceptr (*launches)(CUstream, const CUdeviceptr *, int))
{
    CUmodule m;
    CUstream s;
    CUdeviceptr x[8];
    char fn[8];
    CHECK(cuModuleLoadData(&m, "image"));
    for (int op = 0; op < 5; op++) {
        snprintf(fn, sizeof fn, "step%d", op);
        CHECK(cuModuleGetFunction(&k_step[op], m, fn));
    }
    CHECK(cuModuleGetFunction(&k_fold, m, "fold"));
    CHECK(cuModuleGetFunction(&k_stepg, m, "stepg"));
    CHECK(cuModuleGetFunction(&k_stepb, m, "stepb"));
    for (int i = 0; i < nx && i < 8; i++) {
        uint64_t seed[W];
        for (int w = 0; w < W; w++)
            seed[w] = 0x0123456789abcdefull * (uint64_t)(i * W + w + 1);
        CHECK(cuMemAlloc_v2(&x[i], sizeof seed));
        CHECK(cuMemcpyHtoD_v2(x[i], seed, sizeof seed));
    }
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        uint64_t h[W], sum = 0;
        CUdeviceptr shown = launches(s, x, it);
        CHECK(cuStreamSynchronize(s));
        CHECK(cuMemcpyDtoH_v2(h, shown, sizeof h));
        for (int w = 0; w < W; w++)
            sum = (sum ^ h[w]) * 0x100000001b3ull;
        printf("%d %s %016llx\n", it, name, (unsigned long long)sum);
    }
}

static void launch_step(CUstream s, int op, CUdeviceptr x, uint64_t v)
{
    launch(k_step[op], s, (void *[]){&x, &v});
}

/* One kernel, with the same arguments, 300 times between synchronizes: a
** timing loop, or a solver's inner loop. */
static CUdeviceptr loop1_launches(CUstream s, const CUdeviceptr *x, int it)
{
    (void)it;
    for (int j = 0; j < 300; j++)
        launch_step(s, 0, x[0], 7);
    return x[0];
}

/* scalars, but every fourth iteration its 18th kernel asks for shared memory of
** a size never asked for before: that segment, held up to there (its early
** chunks gone out), continues no learned sequence (mismatch) and ends as no
** replay. */
static CUdeviceptr scalars_cut_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int j = 0; j < 20; j++) {
        CUdeviceptr p = x[0];
        uint64_t v = (uint64_t)it * 1000003 + (uint64_t)j;
        unsigned shmem = it % 4 == 3 && j == 17 ? 16u * (unsigned)(it + 1) : 0;
        CHECK(cuLaunchKernel(k_step[j % 5], 1, 1, 1, 32, 1, 1, shmem, s, (void *[]){&p, &v}, NULL));
    }
    return x[0];
}

/* A body of five different kernels, 200 times back to back, then a synchronize. */
static CUdeviceptr body5_launches(CUstream s, const CUdeviceptr *x, int it)
{
    (void)it;
    for (int r = 0; r < 200; r++)
        for (int op = 0; op < 5; op++)
            launch_step(s, op, x[0], (uint64_t)op + 1);
    return x[0];
}

/* 20 kernels a synchronize apart, the same every iteration but for their scalar
** arguments, which change every iteration (an optimizer's step count and
** learning rate) and differ within one (no run repeats inside a segment). */
static CUdeviceptr scalars_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int j = 0; j < 20; j++)
        launch_step(s, j % 5, x[0], (uint64_t)it * 1000003 + (uint64_t)j);
    return x[0];
}

/* 20 kernels a synchronize apart, the same every iteration but for their
** buffers, which rotate among three sets of two (a caching allocator's
** addresses): 19 steps on the set's two buffers in turn, then a fold of one
** into the other. */
static CUdeviceptr rotate_launches(CUstream s, const CUdeviceptr *x, int it)
{
    CUdeviceptr a = x[2 * (it % 3)], b = x[2 * (it % 3) + 1];
    for (int j = 0; j < 19; j++)
        launch_step(s, j % 5, j % 2 ? b : a, (uint64_t)j);
    launch(k_fold, s, (void *[]){&b, &a});
    return b;
}

/* A training step as a framework issues it: five segments (forward, loss,
** backward, optimizer, metrics), each ended by a synchronize, each reading one of
** four batches in turn: more buffer sets than a sequence keeps graphs for, so
** every replay updates one. */
static CUdeviceptr train4_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static const int len[5] = {11, 24, 9, 6, 8};
    CUdeviceptr batch = x[it / 5 % 4], w = x[4];
    for (int j = 0; j < len[it % 5]; j++)
        launch_step(s, (j + it % 5) % 5, j % 3 ? w : batch, (uint64_t)j);
    return w;
}

static void train4(int iters) { steps_loop(iters, "train4", 5, train4_launches); }

/* A token of generation with a growing KV cache: 20 kernels a synchronize
** apart, the same every iteration, but four of them copy the cache, whose
** length grows by one each token, and their grids grow with it; once, one of
** them has a grid the driver refuses. */
static CUdeviceptr grow_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int j = 0; j < 20; j++) {
        CUdeviceptr p = x[0];
        uint64_t v = (uint64_t)j;
        if (j % 5 == 2 && it == 7 && j == 7) /* a grid the driver refuses: its error, at its call */
            printf("%d grow rc %d\n", it,
                   (int)cuLaunchKernel(k_stepg, 1, 0, 1, 32, 1, 1, 0, s, (void *[]){&p, &v}, NULL));
        else if (j % 5 == 2)
            CHECK(cuLaunchKernel(k_stepg, 1 + (unsigned)it, 1 + (unsigned)j / 5, 1, 32, 1, 1, 0, s,
                                 (void *[]){&p, &v}, NULL));
        else
            launch_step(s, j % 5, p, v);
    }
    return x[0];
}

static void grow(int iters) { steps_loop(iters, "grow", 1, grow_launches); }

/* Device copies and memsets whose arguments change every iteration, four of
** each a synchronize apart, each folded into the state shown: a copy into a
** scratch buffer from one of five states in turn (a caching allocator's
** buffers, more sets than a sequence keeps graphs for), a memset whose value
** counts the iterations (a step count), and a step.  At iteration 9 one copy
** goes into stream-ordered pool memory instead, where the driver cannot move a
** copy node of cuMemAlloc memory. */
static CUdeviceptr copies_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static CUdeviceptr pool;
    if (!pool)
        CHECK(cuMemAllocAsync(&pool, W * sizeof(uint64_t), s));
    for (int j = 0; j < 4; j++) {
        CUdeviceptr x0 = x[0], to = it == 9 && j == 1 ? pool : x[5], set = x[6];
        CHECK(cuMemcpyDtoDAsync_v2(to, x[(it + j) % 5], W * sizeof(uint64_t), s));
        launch(k_fold, s, (void *[]){&x0, &to});
        CHECK(cuMemsetD32Async(set, (unsigned)(it * 31 + j), 2 * W, s));
        launch(k_fold, s, (void *[]){&x0, &set});
        launch_step(s, j, x0, (uint64_t)j);
    }
    return x[0];
}

static void copies(int iters) { steps_loop(iters, "copies", 7, copies_launches); }

/* A framework's readback: 19 steps on one of five states in turn (the caching
** allocator's latest buffer), then a copy of it into one pinned buffer, read
** after the synchronize (a token, a loss).  Shown at the next iteration. */
static CUdeviceptr readback_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static uint64_t *pin;
    CUdeviceptr src = x[it % 5];
    if (!pin)
        CHECK(cuMemAllocHost_v2((void **)&pin, W * sizeof(uint64_t)));
    else
        printf("%d readback %016llx %016llx\n", it - 1, (unsigned long long)pin[0], (unsigned long long)pin[W - 1]);
    for (int j = 0; j < 19; j++)
        launch_step(s, j % 5, src, (uint64_t)j);
    CHECK(cuMemcpyDtoHAsync_v2(pin, src, W * sizeof(uint64_t), s));
    return src;
}

static void readback(int iters) { steps_loop(iters, "readback", 5, readback_launches); }

/* A batch uploaded: the host writes one pinned buffer, which is copied into one
** of five device buffers in turn (the caching allocator's), and 19 steps run on
** it. */
static CUdeviceptr upload_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static uint64_t *pin;
    CUdeviceptr dst = x[it % 5];
    if (!pin)
        CHECK(cuMemAllocHost_v2((void **)&pin, W * sizeof(uint64_t)));
    for (int w = 0; w < W; w++)
        pin[w] = (uint64_t)it * 0x9E3779B97F4A7C15ull + (uint64_t)w;
    CHECK(cuMemcpyHtoDAsync_v2(dst, pin, W * sizeof(uint64_t), s));
    for (int j = 0; j < 19; j++)
        launch_step(s, j % 5, dst, (uint64_t)j);
    return dst;
}

static void upload(int iters) { steps_loop(iters, "upload", 5, upload_launches); }

/* Copies and memsets that move, once to where the driver refuses them: a memset
** of a state and a copy of it into another, then steps, every iteration with
** the memset's value counting up; at iteration 5 the memset's address is not
** aligned to its 4-byte elements and the copy reads past its buffer's end.  Each
** call's result is shown: the driver answers at the call. */
static CUdeviceptr copy_range_launches(CUstream s, const CUdeviceptr *x, int it)
{
    CUdeviceptr set = x[1] + (it == 5 ? 2 : 0), x0 = x[0], x2 = x[2];
    size_t bytes = W * sizeof(uint64_t) * (it == 5 ? 4 : 1);
    printf("%d memset rc %d\n", it, (int)cuMemsetD32Async(set, (unsigned)it, 2, s));
    printf("%d copy rc %d\n", it, (int)cuMemcpyDtoDAsync_v2(x2, x[1], bytes, s));
    launch(k_fold, s, (void *[]){&x0, &x2});
    for (int j = 0; j < 4; j++)
        launch_step(s, j, x0, (uint64_t)j);
    return x0;
}

static void copy_range(int iters) { steps_loop(iters, "copy-range", 3, copy_range_launches); }

/* A copy whose destination alternates between cuMemAlloc and pool memory, where
** the driver refuses to move its node, and whose source rotates among three
** states; a fold of the destination and steps. */
static CUdeviceptr kinds_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static CUdeviceptr pool;
    CUdeviceptr x0 = x[0], to;
    if (!pool)
        CHECK(cuMemAllocAsync(&pool, W * sizeof(uint64_t), s));
    to = it % 2 ? pool : x[1];
    CHECK(cuMemcpyDtoDAsync_v2(to, x[2 + it % 3], W * sizeof(uint64_t), s));
    launch(k_fold, s, (void *[]){&x0, &to});
    for (int j = 0; j < 4; j++)
        launch_step(s, j, x0, (uint64_t)j);
    return x0;
}

static void kinds(int iters) { steps_loop(iters, "kinds", 5, kinds_launches); }

/* bench's rare: 20 launches whose block sizes follow a sequence of low
** discrepancy (about 525 different sequences of shapes in 3500 iterations, each
** back every ~300), and whose argument never repeats.  (bench varies grids,
** which the engine now sets in place; here the shapes must stay shapes.) */
static CUdeviceptr rare20_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int j = 0; j < 20; j++) {
        uint64_t n = (uint64_t)it * 20 + (uint64_t)j;
        unsigned block = 32 * (1 + (unsigned)((n * 0x9E3779B97F4A7C15ull) >> 59));
        CUdeviceptr p = x[0];
        CHECK(cuLaunchKernel(k_step[j % 5], 1, 1, 1, block, 1, 1, 0, s, (void *[]){&p, &n}, NULL));
    }
    return x[0];
}

static void rare20(int iters) { steps_loop(iters, "rare20", 1, rare20_launches); }

/* rare20 for the first three quarters of the iterations, then one sequence of
** 20 launches, the same every time: work that starts to repeat on a stream whose
** earlier work never paid for its graphs. */
static int rare_then_loop_iters;
static int rare_then_loop_memset; /* the loop's first op: a memset of a counting value */
static CUdeviceptr rare_then_loop_launches(CUstream s, const CUdeviceptr *x, int it)
{
    if (it < rare_then_loop_iters / 4 * 3)
        return rare20_launches(s, x, it);
    if (rare_then_loop_memset)
        CHECK(cuMemsetD32Async(x[0], (unsigned)it, 2, s));
    for (int j = rare_then_loop_memset; j < 20; j++)
        launch_step(s, j % 5, x[0], (uint64_t)j);
    return x[0];
}

static void rare_then_loop(int iters)
{
    rare_then_loop_iters = iters;
    steps_loop(iters, "rare-then-loop", 1, rare_then_loop_launches);
}

/* rare-then-loop whose loop starts with a memset of a value that counts the
** iterations (an argument, as a launch's scalar). */
static void rare_then_memsets(int iters)
{
    rare_then_loop_memset = 1;
    rare_then_loop(iters);
}
/* --- What a segment's life must keep ------------------------------------
** Cases a change of the hold path could break while the rest still passes:
** each prints what the device computed, read as the program reads it. */

/* step0 with a 1-byte last parameter mixed in (parameter bytes 0-16): a
** change of that byte alone changes the result. */
FAKECUDA_KERNEL(stepb, sizeof(uint64_t *), sizeof(uint64_t), sizeof(uint8_t))
{
    uint64_t *x = FAKECUDA_ARG(uint64_t *, 0), v = FAKECUDA_ARG(uint64_t, 1);
    uint8_t c = FAKECUDA_ARG(uint8_t, 2);
    for (int i = 0; i < W; i++)
        x[i] = (x[i] ^ (v + (uint64_t)c * 0x9e3779b97f4a7c15ull + (uint64_t)i)) * 0x100000001b3ull;
}

static void launch_stepb(CUstream s, CUdeviceptr x, uint64_t v, uint8_t c)
{
    launch(k_stepb, s, (void *[]){&x, &v, &c});
}

static void launch_stepg(CUstream s, CUdeviceptr x, unsigned grid, uint64_t v)
{
    CHECK(cuLaunchKernel(k_stepg, grid, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &v}, NULL));
}

/* The state's hash as the host sees it after a synchronize alone: fake device
** memory is host memory, so no CUDA call of the reading's own ends the segment. */
static void show_state(int it, const char *what, CUdeviceptr x)
{
    const uint64_t *h = (const uint64_t *)(uintptr_t)x;
    uint64_t sum = 0;
    for (int w = 0; w < W; w++)
        sum = (sum ^ h[w]) * 0x100000001b3ull;
    printf("%d %s %016llx\n", it, what, (unsigned long long)sum);
}

/* A loop body of five kernels, 40 times, cut after 1 to 4 ops of its next
** period by a synchronize, after which the host reads the state; then the rest
** of that period and 40 bodies more.  Held whole bodies must go out before the
** period's held head, and all of them before the synchronize returns. */
static CUdeviceptr body_cut_launches(CUstream s, const CUdeviceptr *x, int it)
{
    int cut = 40 * 5 + 1 + it % 4;
    for (int j = 0; j < 81 * 5; j++) {
        launch_step(s, j % 5, x[0], (uint64_t)(j % 5) + 1);
        if (j + 1 == cut) {
            CHECK(cuStreamSynchronize(s));
            show_state(it, "cut", x[0]);
        }
    }
    return x[0];
}

/* A parameter's last byte alone changes: in a sequence of 20 kernels (its
** 8th kernel's, every iteration) and in a loop of one kernel 200 times (from
** the 100 + it-th launch on). */
static CUdeviceptr last_byte_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int j = 0; j < 20; j++)
        if (j == 7)
            launch_stepb(s, x[0], 7, (uint8_t)(it % 3));
        else
            launch_step(s, j % 5, x[0], (uint64_t)j);
    CHECK(cuStreamSynchronize(s));
    show_state(it, "sequence", x[0]);
    for (int r = 0; r < 200; r++)
        launch_stepb(s, x[1], 7, (uint8_t)(r >= 100 + it));
    CHECK(cuStreamSynchronize(s));
    show_state(it, "loop", x[1]);
    return x[0];
}

/* A grid alone changes: in a loop of one kernel 200 times (from the 100 +
** it-th launch on), and in a sequence of 24 kernels, two of them with a grid
** that changes every iteration (chunked with GRAPHSHIM_CHUNK_OPS). */
static CUdeviceptr grid_only_launches(CUstream s, const CUdeviceptr *x, int it)
{
    for (int r = 0; r < 200; r++)
        launch_stepg(s, x[1], 1 + (r >= 100 + it), 5);
    CHECK(cuStreamSynchronize(s));
    show_state(it, "loop", x[1]);
    for (int j = 0; j < 24; j++)
        if (j == 5 || j == 17)
            launch_stepg(s, x[0], 1 + (unsigned)(it % 3), (uint64_t)j);
        else
            launch_step(s, j % 5, x[0], (uint64_t)j);
    return x[0];
}

/* A batch uploaded from pageable memory: the host writes new bytes into it
** every iteration, copies it to the device asynchronously and scribbles on it
** as soon as the call returns (allowed: the copy took the bytes at the call);
** steps run on the copy.  What is shown is the device's buffer. */
static CUdeviceptr pageable_h2d_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static uint64_t *src;
    if (!src)
        src = malloc(W * sizeof(uint64_t));
    for (int w = 0; w < W; w++)
        src[w] = (uint64_t)it * 0x9E3779B97F4A7C15ull + (uint64_t)w;
    CHECK(cuMemcpyHtoDAsync_v2(x[1], src, W * sizeof(uint64_t), s));
    memset(src, 0xa5, W * sizeof(uint64_t));
    for (int j = 0; j < 9; j++)
        launch_step(s, j % 5, x[1], (uint64_t)j);
    return x[1];
}

/* pageable-h2d in a loop: 24 batches a segment, each uploaded from one
** pageable buffer (rewritten before each copy, scribbled on after it) and
** folded into a state: a period of two ops that repeats, but whose copy must
** take its bytes at each call. */
static CUdeviceptr pageable_loop_launches(CUstream s, const CUdeviceptr *x, int it)
{
    static uint64_t *src;
    CUdeviceptr x0 = x[0], x1 = x[1];
    if (!src)
        src = malloc(W * sizeof(uint64_t));
    for (int j = 0; j < 24; j++) {
        for (int w = 0; w < W; w++)
            src[w] = (uint64_t)(it * 24 + j) * 0x9E3779B97F4A7C15ull + (uint64_t)w;
        CHECK(cuMemcpyHtoDAsync_v2(x1, src, W * sizeof(uint64_t), s));
        memset(src, 0xa5, W * sizeof(uint64_t));
        launch(k_fold, s, (void *[]){&x0, &x1});
    }
    return x0;
}

static void body_cut(int iters) { steps_loop(iters, "body-cut", 1, body_cut_launches); }
static void pageable_loop(int iters) { steps_loop(iters, "pageable-loop", 2, pageable_loop_launches); }
static void last_byte(int iters) { steps_loop(iters, "last-byte", 2, last_byte_launches); }
static void grid_only(int iters) { steps_loop(iters, "grid-only", 2, grid_only_launches); }
static void pageable_h2d(int iters) { steps_loop(iters, "pageable-h2d", 2, pageable_h2d_launches); }

static void loop1(int iters) { steps_loop(iters, "loop1", 1, loop1_launches); }
static void body5(int iters) { steps_loop(iters, "body5", 1, body5_launches); }
static void scalars(int iters) { steps_loop(iters, "scalars", 1, scalars_launches); }
static void scalars_cut(int iters) { steps_loop(iters, "scalars-cut", 1, scalars_cut_launches); }
static void rotate(int iters) { steps_loop(iters, "rotate", 6, rotate_launches); }

static const struct {
    const char *name;
    void (*fn)(int);
} scenarios[] = {
    {"sync", sync_},       {"ctx-sync", ctx_sync}, {"stall", stall}, {"event", event},       {"hostfn", hostfn},       {"alloc", alloc},
    {"syncop", syncop},    {"pageable-d2h", pageable_d2h}, {"legacy", legacy}, {"capture", capture},
    {"unclassified", unclassified}, {"params", params}, {"params5", params5}, {"watchdog", watchdog}, {"idle-poll", idle_poll}, {"two-proc", two_proc}, {"two-ctx", two_ctx}, {"two-ctx-pt", two_ctx_pt}, {"quiet-then-loop", quiet_then_loop}, {"body-poll", body_poll}, {"body-stall", body_stall}, {"body-poll-nosync", body_poll_nosync}, {"body-poll-more", body_poll_more}, {"body-poll-mid", body_poll_mid}, {"body-poll-mid-nosync", body_poll_mid_nosync}, {"body-poll-every3", body_poll_every3}, {"body-poll-loops3", body_poll_loops3}, {"body-poll-ring", body_poll_ring}, {"body-module", body_module}, {"staging", staging}, {"host-bind", host_bind}, {"oom", oom}, {"oom-full", oom_full}, {"oom-pending", oom_pending},
    {"threads", threads},  {"single", single},  {"gpubound", gpubound},  {"gpubound-body", gpubound_body},  {"slow", slow},  {"cold", cold},  {"drift", drift},  {"drift-prefix", drift_prefix},  {"rare", rare},  {"long", long_}, {"prompt", prompt}, {"singles", singles}, {"twenty", twenty}, {"slowlong", slowlong}, {"setup-then-loop", setup_then_loop},
    {"unholdable", unholdable}, {"nccl", nccl}, {"collectives", collectives},
    {"stream-destroy", stream_destroy}, {"api", api},
    {"many-params", many_params}, {"big-struct", big_struct}, {"huge-loop", huge_loop}, {"module", module}, {"library", library},
    {"attrs", attrs},      {"func-attr", func_attr}, {"new-then-same", new_then_same},      {"race-ctx-sync", race_ctx_sync}, {"teardown", teardown}, {"queries", queries}, {"event-poll", event_poll}, {"event-legacy", event_legacy}, {"ptds-legacy", ptds_legacy},
    {"sites", sites},      {"loop1", loop1},      {"body5", body5},       {"scalars", scalars}, {"scalars-cut", scalars_cut}, {"rotate", rotate},
    {"train4", train4},    {"grow", grow},         {"copies", copies}, {"readback", readback}, {"upload", upload}, {"copy-range", copy_range}, {"slowlong-polled", slowlong_polled}, {"slowlong-stall", slowlong_stall}, {"slowlong-stall-late", slowlong_stall_late}, {"slowlong-stall-moved", slowlong_stall_moved}, {"kinds", kinds},         {"rare20", rare20},     {"rare-then-loop", rare_then_loop}, {"rare-then-memsets", rare_then_memsets},
    {"unclass-proc", unclassified_proc}, {"callback", callback}, {"syncop-memset", syncop_memset}, {"host-bind-d2h", host_bind_d2h}, {"event-pt", event_pt}, {"staging-bail", staging_bail}, {"new-and-same", new_and_same}, {"slowlong-idle-odd", slowlong_idle_odd}, {"slowlong-fast-odd", slowlong_fast_odd}, {"twenty-slow-head", twenty_slow_head}, {"pageable-loop", pageable_loop}, {"body-poll-nap", body_poll_nap},
    {"body-cut", body_cut}, {"last-byte", last_byte}, {"grid-only", grid_only}, {"pageable-h2d", pageable_h2d},
    {"mixed10", mixed10}, {"mixed5000", mixed5000},
};

/* guardprog spawn SCENARIO ITERS: a launcher's process tree.  The parent
** makes no CUDA call; it starts two workers with exec (a forked process that
** does not exec runs without graphshim's engine), each with its RANK, as
** torchrun does, and waits for them.  Their output goes to the parent's, and
** may interleave.  Exit status: 0 if both workers succeeded. */
static int spawn(char **argv)
{
    pid_t pid[2];
    int failed = 0;

    fflush(stdout);
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            char rank[16];
            snprintf(rank, sizeof rank, "%d", r);
            setenv("RANK", rank, 1);
            execv("/proc/self/exe", (char *[]){argv[0], argv[2], argv[3], NULL});
            _exit(127);
        }
    }
    for (int r = 0; r < 2; r++) {
        int st;
        if (pid[r] < 0 || waitpid(pid[r], &st, 0) != pid[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "worker %d failed\n", r);
            failed = 1;
        }
    }
    return failed;
}

int main(int argc, char **argv)
{
    CUdevice d;
    CUmodule m;
    int iters = argc > 2 ? atoi(argv[2]) : 8;

    if (argc == 4 && strcmp(argv[1], "spawn") == 0)
        return spawn(argv);

    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&k_fill, m, "fill"));
    CHECK(cuModuleGetFunction(&k_axpb, m, "axpb"));
    CHECK(cuModuleGetFunction(&k_copy, m, "copy"));
    CHECK(cuModuleGetFunction(&k_setflag, m, "setflag"));
    CHECK(cuModuleGetFunction(&k_nccl, m, "ncclDevKernel_copy"));
    CHECK(cuModuleGetFunction(&k_bump, m, "bump"));
    CHECK(cuModuleGetFunction(&k_nccl_mangled, m, "_Z37ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"));
    for (size_t i = 0; argc > 1 && i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn(iters);
            CHECK(cuCtxSynchronize());
            return 0;
        }
    }
    fprintf(stderr, "usage: guardprog SCENARIO [ITERS]\n");
    return 2;
}
