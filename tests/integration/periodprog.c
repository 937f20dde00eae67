/*
** periodprog.c: loops that repeat a step many times between synchronizes, for
** the tests of steps (rules/step.h, test_period.c).
**
**   periodprog SCENARIO [ITERS]
**
** Each iteration runs a scenario's steps back to back on one stream, then
** synchronizes and prints a hash of its buffers that depends on every launch,
** on their order and on their count.  Run without graphshim it prints the right
** values; under graphshim it must print the same.
**
**   step36x100   a 36-op training step (six kernels on three buffers, 4 of its
**                ops with a scalar that changes every step, as an optimizer's
**                step count), 100 steps a synchronize
**   step36x10    the same, 10 steps a synchronize
**   step36-head  step36x10 after 5 ops of other shapes each iteration
**   step1        one kernel, the same every time, 500 times a synchronize
**   step2000     a 2000-op step (five kernels of one shape in turn, each op's
**                scalar its place in the step), 4 steps a synchronize
**   step36-break step36x100, but in iterations 3 and 5 the 21st op of the
**                51st step asks for shared memory: the step breaks there
**   step36-events step36x100, each step ended as a JAX step is: an event record,
**                a second stream waits for it and runs a host function there
**   step36-query step36x100, each step followed by a query of an event long done
**   step36-poll  step36x100, the host polling the stream with cuStreamQuery
**                after each step until it is idle (then PERIODPROG_AFTER_US
**                of host work, below)
**   step36-evsync step36x100, each step followed by an event recorded on a
**                second stream and its cuEventSynchronize (a synchronize of
**                no stream: it ends the first stream's segment too; then
**                PERIODPROG_AFTER_US of host work)
**   step1-record one kernel and an event record, 50 times, then the kernel
**                again before the synchronize: a one-op sequence learned where
**                the synchronize ends it, replayed where the records do
**   step2x10     a 2-op step (the first op takes the step count), 10 steps a
**                synchronize: segments of 8 ops end at the next step, and the
**                4 ops before the synchronize, a prefix of those 8, are a
**                sequence of their own
**   phases       step36x100 three times, then 50 ops of 50 shapes a synchronize:
**                the loop ends, and so do its steps
**   phases-unload  phases, with a module loaded and unloaded before the 50 ops:
**                every stream's learning is forgotten there, its step too
**   layers       eight layers of three kernels, each layer on its own weights,
**                then a synchronize: a period of shape alone, no step
**
** Kernels are fake-driver host functions (tests/fakecuda/fakecuda.h).
*/
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"
#include "cucheck.h"

#define W 8     /* words of a buffer */
#define NBUF 3  /* buffers a step works on */
#define NK 6    /* kernels */

static void mix(void **params, const struct fakecuda_dims *d, uint64_t k)
{
    uint64_t *x = FAKECUDA_ARG(uint64_t *, 0), v = FAKECUDA_ARG(uint64_t, 1);
    for (int i = 0; i < W; i++)
        x[i] = (x[i] ^ (v + k * 0x9e3779b97f4a7c15ull + d->grid[0] * 131u + (uint64_t)i)) * 0x100000001b3ull;
}

FAKECUDA_KERNEL(pmix0, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 0); }
FAKECUDA_KERNEL(pmix1, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 1); }
FAKECUDA_KERNEL(pmix2, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 2); }
FAKECUDA_KERNEL(pmix3, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 3); }
FAKECUDA_KERNEL(pmix4, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 4); }
FAKECUDA_KERNEL(pmix5, sizeof(uint64_t *), sizeof(uint64_t)) { mix(params, d, 5); }

static CUfunction k[NK];
static CUstream st, st2;
static CUevent ev, ev_done;
static int hostfn_calls;

static void CUDA_CB count_call(void *arg)
{
    (void)arg;
    hostfn_calls++;
}
static CUdeviceptr buf[NBUF + 8];
static uint64_t nstep; /* steps run so far: the optimizer's step count */

static void launch_sh(int kern, unsigned grid, unsigned shmem, CUdeviceptr x, uint64_t v)
{
    CHECK(cuLaunchKernel(k[kern], grid, 1, 1, 32, 1, 1, shmem, st, (void *[]){&x, &v}, NULL));
}

static void launch(int kern, unsigned grid, CUdeviceptr x, uint64_t v)
{
    launch_sh(kern, grid, 0, x, v);
}

/* One training step of 36 ops: op j runs kernel j % 6 with a grid of 1 + j / 6
** (36 shapes) on buffer j % 3; ops 0, 9, 18 and 27 take the step count, the
** others their place.  broken: op 20 asks for shared memory (another shape). */
static void step36(int broken)
{
    nstep++;
    for (unsigned j = 0; j < 36; j++)
        launch_sh((int)(j % NK), 1u + j / 6, broken && j == 20 ? 64u : 0u, buf[j % NBUF],
                  j % 9 == 0 ? nstep : j);
}

/* One step of 2000 ops: kernel j % 5, one grid, on buffer j % 3, its scalar j. */
static void step2000(void)
{
    for (unsigned j = 0; j < 2000; j++)
        launch((int)(j % 5), 1, buf[j % NBUF], j);
}

/* PERIODPROG_AFTER_US=n: the host's own work after each step's wait (poll
** and evsync), n us on the fake driver's clock: what a step's time to the
** wait's return leaves out, and its time to the next op takes in. */
static void host_after(void)
{
    static long us = -1;
    if (us < 0)
        us = getenv("PERIODPROG_AFTER_US") ? atol(getenv("PERIODPROG_AFTER_US")) : 0;
    if (us > 0)
        fakecuda_advance_ns((uint64_t)us * 1000);
}

/* reps steps after a head of `head` ops of other work; where `breaks`, the
** 51st step of iterations 3 and 5 is broken. */
static void steps36(int it, int reps, int head, int breaks)
{
    for (int h = 0; h < head; h++)
        launch_sh(h % 2, 7, 128, buf[h % NBUF], (uint64_t)h);
    for (int r = 0; r < reps; r++)
        step36(breaks && (it == 3 || it == 5) && r == 50);
}

static void scenario(const char *name, int it)
{
    if (strcmp(name, "step36x100") == 0)
        steps36(it, 100, 0, 0);
    else if (strcmp(name, "step36x10") == 0)
        steps36(it, 10, 0, 0);
    else if (strcmp(name, "step36-head") == 0)
        steps36(it, 10, 5, 0);
    else if (strcmp(name, "step36-break") == 0)
        steps36(it, 100, 0, 1);
    else if (strcmp(name, "step1") == 0)
        for (int r = 0; r < 500; r++)
            launch(0, 1, buf[0], 7);
    else if (strcmp(name, "step2000") == 0)
        for (int r = 0; r < 4; r++)
            step2000();
    else if (strcmp(name, "step36-events") == 0)
        for (int r = 0; r < 100; r++) {
            step36(0);
            CHECK(cuEventRecord(ev, st));
            CHECK(cuStreamWaitEvent(st2, ev, 0));
            CHECK(cuLaunchHostFunc(st2, count_call, NULL));
        }
    else if (strcmp(name, "step36-query") == 0)
        for (int r = 0; r < 100; r++) {
            step36(0);
            if (cuEventQuery(ev_done) != CUDA_SUCCESS)
                exit(3); /* recorded before the loop: done long ago */
        }
    else if (strcmp(name, "step36-poll") == 0)
        for (int r = 0; r < 100; r++) {
            step36(0);
            CUresult rc;
            while ((rc = cuStreamQuery(st)) == CUDA_ERROR_NOT_READY)
                ;
            CHECK(rc);
            host_after();
        }
    else if (strcmp(name, "step36-evsync") == 0)
        for (int r = 0; r < 100; r++) {
            step36(0);
            CHECK(cuEventRecord(ev, st2));
            CHECK(cuEventSynchronize(ev));
            host_after();
        }
    else if (strcmp(name, "step1-record") == 0) {
        for (int r = 0; r < 50; r++) {
            launch(0, 1, buf[0], 7);
            CHECK(cuEventRecord(ev, st));
        }
        launch(0, 1, buf[0], 7);
    } else if (strcmp(name, "step2x10") == 0)
        for (int r = 0; r < 10; r++) {
            launch(0, 1, buf[0], ++nstep);
            launch(1, 1, buf[1], 7);
        }
    else if (strcmp(name, "phases") == 0 && it < 3)
        steps36(it, 100, 0, 0);
    else if (strcmp(name, "phases-unload") == 0 && it < 3)
        steps36(it, 100, 0, 0);
    else if (strcmp(name, "phases") == 0 || strcmp(name, "phases-unload") == 0) {
        if (it == 3 && name[6]) {
            CUmodule other;
            CHECK(cuModuleLoadData(&other, "image"));
            CHECK(cuModuleUnload(other));
        }
        for (unsigned j = 0; j < 50; j++)
            launch_sh((int)(j % NK), 1, 16u * (j / NK), buf[j % NBUF], j);
    } else if (strcmp(name, "layers") == 0)
        for (int l = 0; l < 8; l++)
            for (int j = 0; j < 3; j++)
                launch(j, 1, buf[NBUF + l], (uint64_t)j);
    else {
        fprintf(stderr, "usage: periodprog SCENARIO [ITERS]\n");
        exit(2);
    }
}

static CUdeviceptr seeded(uint64_t seed) { return seeded_words(seed, W); }

int main(int argc, char **argv)
{
    CUdevice d;
    CUcontext ctx;
    CUmodule m;
    int iters = argc > 2 ? atoi(argv[2]) : 8;

    if (argc < 2)
        return 2;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&m, "image"));
    for (int i = 0; i < NK; i++) {
        char fn[8];
        snprintf(fn, sizeof fn, "pmix%d", i);
        CHECK(cuModuleGetFunction(&k[i], m, fn));
    }
    for (int i = 0; i < NBUF + 8; i++)
        buf[i] = seeded((uint64_t)i);
    CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&st2, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&ev_done, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventRecord(ev_done, st));
    CHECK(cuStreamSynchronize(st));
    for (int it = 0; it < iters; it++) {
        uint64_t h[W], sum = 0;
        scenario(argv[1], it);
        CHECK(cuStreamSynchronize(st));
        CHECK(cuStreamSynchronize(st2));
        for (int i = 0; i < NBUF + 8; i++) {
            CHECK(cuMemcpyDtoH_v2(h, buf[i], sizeof h));
            for (int w = 0; w < W; w++)
                sum = (sum ^ h[w]) * 0x100000001b3ull;
        }
        printf("%d %s %016llx %d\n", it, argv[1], (unsigned long long)sum, hostfn_calls);
    }
    return 0;
}
