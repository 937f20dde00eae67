/*
** stepprog.c: a step that no synchronize ends, shaped as a JAX jit loop's, for
** the gain check's tests (test_steps.c).
**
**   stepprog WAIT [ITERS]
**
** Each step, the host does some work of its own before each of four launches
** (cuLaunchKernelEx; three of them take the step's number, so a replay sets
** three nodes), then records two events on its compute stream, makes a second
** stream wait on the first and launches a host function there (a buffer
** released), and waits for the step: WAIT is "event" (cuEventSynchronize on the
** second event), "stream" (cuStreamSynchronize of the compute stream after
** the records) or "sync" (that synchronize right after the launches: no
** record, no second stream; a step that a synchronize ends).  It prints a hash of its state every step, and on stderr the
** fake driver's clock over the loop's second half ("loop_ns N"), what the
** program sees of a step.  With STEPPROG_PAUSE_US=n, after each step the
** program pauses graphshim (gs_pause, where it is loaded), spends n us and
** resumes it, as a benchmark's eager half does.  With STEPPROG_SAME_ARGS set,
** every step takes the same arguments (a replay sets no node).
**
** The host's own work is spent on the fake driver's clock (fakecuda_advance_ns):
** with FAKECUDA_CLOCK=virtual and FAKECUDA_KERNEL_US, held work starts on the
** GPU later than eager work would have, by the host time spent holding it.
*/
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"
#include "cucheck.h"

#define N 64
#define HOST_NS 2000ull /* the host's own work before each launch */

/* x = a * x + b * y: a small product's stand-in. */
FAKECUDA_KERNEL(mix, sizeof(float *), sizeof(float *), sizeof(float), sizeof(float), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0), *y = FAKECUDA_ARG(float *, 1);
    float a = FAKECUDA_ARG(float, 2), b = FAKECUDA_ARG(float, 3);
    (void)d;
    for (int i = 0; i < FAKECUDA_ARG(int, 4); i++)
        x[i] = a * x[i] + b * y[i];
}

static volatile int released; /* the host function's count */

static void release(void *arg)
{
    (void)arg;
    released++;
}

/* A hash of n floats and the host function's count. */
static uint64_t hash(const float *v, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        h = (h ^ u) * 1099511628211ull;
    }
    return h ^ (uint64_t)released;
}

/* One step on stream s: four launches, the host's work before each; same:
** every step's arguments the same (no node is set a replay). */
static void step(CUfunction f, CUstream s, CUdeviceptr *buf, int it, int same)
{
    CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, NULL, 0};
    int n = N;

    for (int k = 0; k < 4; k++) {
        float a = 0.5f, b = k && !same ? 0.001f * (float)(it % 97) : 0.25f; /* three take the step's number */
        fakecuda_advance_ns(HOST_NS);
        CHECK(cuLaunchKernelEx(&cfg, f, (void *[]){&buf[(k + 1) % 4], &buf[k], &a, &b, &n}, NULL));
    }
}

/* STEPPROG_PAUSE_US: graphshim paused for that long after a step. */
static void paused_between_steps(void)
{
    const char *us = getenv("STEPPROG_PAUSE_US");
    void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");

    if (!us)
        return;
    if (pause)
        pause();
    fakecuda_advance_ns(strtoull(us, NULL, 10) * 1000ull);
    if (resume)
        resume();
}

int main(int argc, char **argv)
{
    CUdevice d;
    CUcontext ctx;
    CUmodule m;
    CUfunction f;
    CUstream s, s2;
    CUevent e1, e2;
    CUdeviceptr buf[4];
    float host[N];
    int iters = argc > 2 ? atoi(argv[2]) : 40, by_event, sync_only, same = getenv("STEPPROG_SAME_ARGS") != NULL;
    unsigned long long t0 = 0;

    if (argc < 2 || (strcmp(argv[1], "event") && strcmp(argv[1], "stream") && strcmp(argv[1], "sync"))) {
        fprintf(stderr, "usage: stepprog event|stream|sync [ITERS]\n");
        return 2;
    }
    by_event = strcmp(argv[1], "event") == 0;
    sync_only = strcmp(argv[1], "sync") == 0;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "mix"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    for (int i = 0; i < N; i++)
        host[i] = 1.0f + (float)i / N;
    for (int k = 0; k < 4; k++) {
        CHECK(cuMemAlloc(&buf[k], sizeof host));
        CHECK(cuMemcpyHtoD(buf[k], host, sizeof host));
    }
    for (int it = 0; it < iters; it++) {
        if (it == iters / 2)
            t0 = fakecuda_clock_ns();
        step(f, s, buf, it, same);
        if (!sync_only) {
            CHECK(cuEventRecord(e1, s));
            CHECK(cuEventRecord(e2, s));
            CHECK(cuStreamWaitEvent(s2, e1, 0));
            CHECK(cuLaunchHostFunc(s2, release, NULL));
        }
        CHECK(by_event ? cuEventSynchronize(e2) : cuStreamSynchronize(s));
        CHECK(cuMemcpyDtoH(host, buf[0], sizeof host));
        printf("%d %016llx\n", it, (unsigned long long)hash(host, N));
        paused_between_steps();
    }
    fprintf(stderr, "loop_ns %llu\n", fakecuda_clock_ns() - t0);
    CHECK(cuCtxSynchronize());
    return 0;
}
