/*
** xsprog.c: steps that fork work to other streams by events and join it back,
** for the tests of groups across streams (policy/stream/xs.h, test_xstream.c).
**
**   xsprog SCENARIO [ITERS]
**
** Each iteration runs 20 steps and synchronizes; then prints a hash of every
** buffer, which depends on every launch and on their order.  Run without
** graphshim it prints the right values; under graphshim it must print the same.
** The streams are non-blocking (but M in legacy); only the events order them.
**
**   fork       a step: O k0(A); O records E1; M waits E1; M k1(B, A), k2(B);
**              M records E2; O waits E2; O k3(A, B)
**   fork2      the same with a second member N beside M (waits E1, k1(C, A),
**              records E3; O waits E3 too)
**   later      fork, then after the 20 steps the host queries O (the group's
**              end; the work may still be pending) and M runs k(C, B): the
**              member's later work, which must see every step's B (ordered
**              after the group's graph by the bridge after its launch); then
**              the host synchronizes M, then O
**   before     fork, and each iteration first runs k(B, C) on M: the member's
**              earlier work, which the first step's k1(B, A) must follow (the
**              bridge before the group's graph)
**   evsync     fork, then after the 20 steps the host synchronizes E2 (the
**              group's end) and reads B: E2's record, made again after the
**              group's graph, must complete after it
**   hostfn     fork, then after the 20 steps a host function on O (the
**              group's end: its graph launched, nothing waited for) and the
**              host synchronizes E2 and reads B: E2's record, made again after
**              the graph (or where that fails, the graph waited for), must
**              complete after it
**   ctx2       fork, then after the 20 steps a second context pushed, two
**              memsets on its legacy stream, the context popped, and the host
**              synchronizes E2 (which issues the second context's held
**              memsets from the first's thread); the memsets' buffer is read
**              at the end
**   msync      fork, but in iterations 2 and 4 the host synchronizes M in the
**              middle of the 10th step (after k1, before E2): the group ends
**   xthread    fork, but in iterations 2 and 4, right after the 10th step's
**              record of E1, another thread waits on E1 on a stream of its own
**              P, runs k(C, A) there and synchronizes P: C must see that
**              step's A (the group's held work goes out before the wait)
**   dsync      fork, then after the 20 steps O records an untimed event D, the
**              host synchronizes D and reads A: D's record, held in the
**              group, made again after its graph, must complete after it
**   legacy     fork with M blocking (O non-blocking: M may not be a member),
**              then after the 20 steps k(C, B) on the legacy stream, which
**              waits for M's work, and a synchronize of the legacy stream
**   args       fork, but M runs k1 alone, with an argument that changes every
**              step (the node set in place must be k1's, not O's k0)
**   fresh      fork, but E1 and E2 are made before their record and destroyed
**              after their wait (as PyTorch's Stream.wait_stream does)
**   fresh2     fork2 so (E3 too)
**   freshsync  msync so, in iteration 5 alone: the group ends where records
**              and waits of events the program destroyed are held
**   legorigin  fresh, with O the legacy stream (PyTorch's current stream)
**   copyflow   no fork step: each of the 20 steps the legacy stream waits for M's
**              previous step, computes, forks M to read its result, and the
**              context is synchronized (events made for each record, as
**              Stream.wait_stream does)
**   ctxread    no fork: each step k(A, A), k(B, A) on the legacy stream; in
**              the 10th, between them, another thread makes the context
**              current (every thread's current context is read again after)
**
** Kernels are fake-driver host functions (tests/fakecuda/fakecuda.h).
*/
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"
#include "cucheck.h"

#define W 8
#define STEPS 20

/* x = mix(x, y, v): depends on both and on the order of calls. */
FAKECUDA_KERNEL(xmix, sizeof(uint64_t *), sizeof(uint64_t *), sizeof(uint64_t))
{
    uint64_t *x = FAKECUDA_ARG(uint64_t *, 0), *y = FAKECUDA_ARG(uint64_t *, 1), v = FAKECUDA_ARG(uint64_t, 2);
    uint64_t t[W];
    for (int i = 0; i < W; i++)
        t[i] = x[i] * 0x100000001b3ull + y[(i + 1) % W] + v * 0x9e3779b97f4a7c15ull + (uint64_t)i;
    for (int i = 0; i < W; i++)
        x[i] = t[i] ^ (t[(i + 3) % W] >> 7);
}

static CUfunction kmix;
static CUstream so, sm, sn, sp;
static CUevent e1, e2, e3, ed;
static CUdeviceptr A, B, C, D; /* D: the second context's (ctx2) */
static CUcontext ctx2, primary;
static uint64_t peek; /* what the host read of B after a member's synchronize (msync) */

static void mix(CUstream s, CUdeviceptr x, CUdeviceptr y, uint64_t v)
{
    CHECK(cuLaunchKernel(kmix, 1, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &y, &v}, NULL));
}

/* Another thread's wait on E1 and its work on P (xthread). */
static void *other_thread(void *ctx)
{
    CHECK(cuCtxSetCurrent((CUcontext)ctx));
    CHECK(cuStreamWaitEvent(sp, e1, 0));
    mix(sp, C, A, 6);
    CHECK(cuStreamSynchronize(sp));
    return NULL;
}

/* A scenario's switches (main's table). */
static struct scenario {
    const char *name;
    int two, msync, xthread, args, fresh;
} sc;

/* Step r of iteration it; msync: the host synchronizes M in its middle;
** xthread: another thread waits on E1 after its record. */
static void step(int it, int r)
{
    /* freshsync's: where the group holds its learned step (an earlier end refuses its forks) */
    int two = sc.two, mid = (sc.fresh ? it == 5 : it == 2 || it == 4) && r == 9, msync = sc.msync && mid,
        xthread = sc.xthread && mid;

    mix(so, A, A, 0);
    if (sc.fresh)
        CHECK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventRecord(e1, so));
    if (xthread) {
        CUcontext ctx;
        pthread_t t;
        CHECK(cuCtxGetCurrent(&ctx));
        if (pthread_create(&t, NULL, other_thread, ctx) != 0 || pthread_join(t, NULL) != 0)
            exit(3);
    }
    CHECK(cuStreamWaitEvent(sm, e1, 0));
    if (two)
        CHECK(cuStreamWaitEvent(sn, e1, 0));
    if (sc.fresh)
        CHECK(cuEventDestroy_v2(e1));
    mix(sm, B, A, sc.args ? 100 + (uint64_t)(it * STEPS + r) : 1);
    if (two)
        mix(sn, C, A, 4);
    if (msync) {
        CHECK(cuStreamSynchronize(sm));
        peek = peek * 31 + *(const uint64_t *)(uintptr_t)B; /* the fake's memory is the host's */
    }
    if (!sc.args)
        mix(sm, B, B, 2);
    if (sc.fresh)
        CHECK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventRecord(e2, sm));
    if (two && sc.fresh)
        CHECK(cuEventCreate(&e3, CU_EVENT_DISABLE_TIMING));
    if (two)
        CHECK(cuEventRecord(e3, sn));
    CHECK(cuStreamWaitEvent(so, e2, 0));
    if (two)
        CHECK(cuStreamWaitEvent(so, e3, 0));
    if (sc.fresh)
        CHECK(cuEventDestroy_v2(e2));
    if (sc.fresh && two)
        CHECK(cuEventDestroy_v2(e3));
    mix(so, A, B, 3);
}

static void print(int it)
{
    uint64_t v[3][W], h = 1469598103934665603ull;
    CHECK(cuMemcpyDtoH_v2(v[0], A, sizeof v[0]));
    CHECK(cuMemcpyDtoH_v2(v[1], B, sizeof v[1]));
    CHECK(cuMemcpyDtoH_v2(v[2], C, sizeof v[2]));
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < W; i++)
            h = (h ^ v[b][i]) * 0x100000001b3ull;
    printf("xsprog %d %016llx %016llx\n", it, (unsigned long long)h, (unsigned long long)peek);
}

static void nop(void *p) { (void)p; }

static void *set_current(void *ctx)
{
    CHECK(cuCtxSetCurrent((CUcontext)ctx));
    return NULL;
}

/* copyflow's steps, a synchronize after each: the legacy stream waits for the
** copy stream M's previous step (an event made for it), computes, and M, forked
** by another such event, reads the result (bench/apps/copy_stream.py's loop). */
static void copy_steps(int it)
{
    for (int r = 0; r < STEPS; r++) {
        CUevent a, b;
        CHECK(cuEventCreate(&a, CU_EVENT_DISABLE_TIMING));
        CHECK(cuEventRecord(a, sm));
        CHECK(cuStreamWaitEvent(CU_STREAM_LEGACY, a, 0));
        CHECK(cuEventDestroy_v2(a));
        mix(CU_STREAM_LEGACY, A, A, (uint64_t)it);
        mix(CU_STREAM_LEGACY, B, A, 1);
        CHECK(cuEventCreate(&b, CU_EVENT_DISABLE_TIMING));
        CHECK(cuEventRecord(b, CU_STREAM_LEGACY));
        CHECK(cuStreamWaitEvent(sm, b, 0));
        CHECK(cuEventDestroy_v2(b));
        mix(sm, C, B, 2);
        CHECK(cuCtxSynchronize());
    }
}

/* ctxread's steps: the legacy stream's, another thread's context call inside. */
static void legacy_steps(void)
{
    for (int r = 0; r < STEPS; r++) {
        mix(CU_STREAM_LEGACY, A, A, 0);
        if (r == 9) {
            pthread_t t;
            if (pthread_create(&t, NULL, set_current, primary) != 0 || pthread_join(t, NULL) != 0)
                exit(3);
        }
        mix(CU_STREAM_LEGACY, B, A, 1);
    }
    CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
}

static void iteration(int it)
{
    const char *name = sc.name;

    if (strcmp(name, "ctxread") == 0) {
        legacy_steps();
        return;
    }
    if (strcmp(name, "copyflow") == 0) {
        copy_steps(it);
        return;
    }
    if (strcmp(name, "before") == 0)
        mix(sm, B, C, 6);
    for (int r = 0; r < STEPS; r++)
        step(it, r);
    if (strcmp(name, "later") == 0) {
        CUresult q = cuStreamQuery(so);
        if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY)
            CHECK(q);
        mix(sm, C, B, 5);
        CHECK(cuStreamSynchronize(sm)); /* before O's: nothing else runs the group's graph first */
    } else if (strcmp(name, "evsync") == 0 || strcmp(name, "hostfn") == 0 || strcmp(name, "ctx2") == 0) {
        CUcontext c;
        if (name[0] == 'h')
            CHECK(cuLaunchHostFunc(so, nop, NULL));
        if (name[0] == 'c') {
            CHECK(cuCtxPushCurrent_v2(ctx2));
            CHECK(cuMemsetD32Async(D, 0x1000u + (unsigned)it, 4, NULL));
            CHECK(cuMemsetD32Async(D + 16, 0x2000u + (unsigned)it, 4, NULL));
            CHECK(cuCtxPopCurrent_v2(&c));
        }
        CHECK(cuEventSynchronize(e2));
        peek = peek * 31 + *(const uint64_t *)(uintptr_t)B;
    } else if (strcmp(name, "dsync") == 0) {
        CHECK(cuEventRecord(ed, so));
        CHECK(cuEventSynchronize(ed));
        peek = peek * 31 + *(const uint64_t *)(uintptr_t)A;
    } else if (strcmp(name, "legacy") == 0) {
        mix(CU_STREAM_LEGACY, C, B, 7);
        CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
    }
    CHECK(cuStreamSynchronize(so));
    if (sc.two)
        CHECK(cuStreamSynchronize(sn));
    CHECK(cuStreamSynchronize(sm));
}

static CUdeviceptr seeded(uint64_t seed) { return seeded_words(seed, W); }

int main(int argc, char **argv)
{
    CUdevice d;
    CUcontext ctx;
    CUmodule m;
    int iters = argc > 2 ? atoi(argv[2]) : 8;

    static const struct scenario table[] = {
        {"fork", 0, 0, 0, 0, 0},  {"fork2", 1, 0, 0, 0, 0},  {"msync", 0, 1, 0, 0, 0}, {"later", 0, 0, 0, 0, 0},
        {"before", 0, 0, 0, 0, 0}, {"evsync", 0, 0, 0, 0, 0}, {"xthread", 0, 0, 1, 0, 0}, {"dsync", 0, 0, 0, 0, 0},
        {"legacy", 0, 0, 0, 0, 0}, {"args", 0, 0, 0, 1, 0},  {"hostfn", 0, 0, 0, 0, 0}, {"ctx2", 0, 0, 0, 0, 0},
        {"ctxread", 0, 0, 0, 0, 0}, {"fresh", 0, 0, 0, 0, 1}, {"fresh2", 1, 0, 0, 0, 1}, {"freshsync", 0, 1, 0, 0, 1},
        {"legorigin", 0, 0, 0, 0, 1}, {"copyflow", 0, 0, 0, 0, 1},
    };
    for (unsigned i = 0; argc >= 2 && i < sizeof table / sizeof *table; i++)
        if (strcmp(argv[1], table[i].name) == 0)
            sc = table[i];
    if (!sc.name) {
        fprintf(stderr, "usage: xsprog SCENARIO [ITERS]\n");
        return 2;
    }
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    primary = ctx;
    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&kmix, m, "xmix"));
    A = seeded(1), B = seeded(2), C = seeded(3);
    CHECK(cuStreamCreate(&so, CU_STREAM_NON_BLOCKING));
    if (strcmp(sc.name, "legorigin") == 0)
        so = CU_STREAM_LEGACY;
    CHECK(cuStreamCreate(&sm, strcmp(sc.name, "legacy") == 0 ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&sn, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&sp, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&e3, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&ed, CU_EVENT_DISABLE_TIMING));
    if (strcmp(argv[1], "ctx2") == 0) {
        CHECK(cuCtxCreate_v2(&ctx2, 0, d));
        CHECK(cuMemAlloc_v2(&D, 32));
        CHECK(cuCtxSetCurrent(ctx)); /* the primary again (cuCtxCreate made the new one current) */
    }
    for (int it = 0; it < iters; it++) {
        iteration(it);
        print(it);
    }
    if (ctx2) {
        uint32_t v[8];
        CHECK(cuCtxSetCurrent(ctx2));
        CHECK(cuCtxSynchronize());
        CHECK(cuMemcpyDtoH_v2(v, D, sizeof v));
        printf("second context %08x %08x\n", v[0], v[4]);
        CHECK(cuCtxSetCurrent(ctx));
    }
    printf("graph_launches %ld\n", fakecuda_count("graph_launches"));
    return 0;
}
