/*
** fuzz_loop.c: the loop programs of fuzzrun's time oracles (fuzzprog loop SEED),
** and its step programs (fuzzprog steps SEED, at the end).
**
** One thread, one stream, one sequence of ops repeated: the shape whose cost
** with and without graphshim can be derived from the fake driver's virtual
** clock (tests/fuzz/README.md, "Time").  The seed draws the sequence: 2 to 12
** launches (or, one program in eight, 50 to 70), each of a kernel of its own
** (no two ops alike, so no loop body or step forms inside it), now and then a
** memset first and a device copy last; the boundary that ends each iteration
** (a stream or context synchronize, an event record, an event record and its
** synchronize, a host function); 40 to 80 iterations; and whether the
** launches' arguments change each iteration (graphshim then sets nodes).  FUZZ_LOOP_HOST_NS
** (the runner's setting) is host work the program does before each op.  It
** prints the seed, the shape and a digest of its buffer; the fake's clock at
** exit (FAKECUDA_STATS) is its time.  Before the loop the program captures a
** memset of its own (the graph destroyed uninstantiated); half of the loops
** launch CUkernels of a library, the others CUfunctions of a module.
*/
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"

#define LOOP_MAX_OPS 72

/* FUZZ_LOOP_MODE (the runner's setting): what the loop does besides, for the
** claims of one rule each (fuzz_oracle.h):
**   pause  each iteration ends at an event record or a host function, then
**          graphshim is paused (gs_pause, where it is loaded) while the host
**          works 20 ms after an iteration that launched a graph;
**   stall  the host works 1 ms (polls) after the middle launch of each iteration,
**          and in the second half of the iterations after the first launch too;
**   slow   16 to 55 launches, the host takes 2 us before each: a slow host;
**   chunks 21 to 30 launches; before each of the first 16 the host takes 2 us
**          in even iterations, 0.5 us in odd ones (slow and fast in turn), and
**          no time before the rest;
**   new    each iteration is followed by a segment of one launch of a kernel
**          never launched before, and a synchronize;
**   legacy the loop's ops go to the legacy stream, and before its boundary a
**          blocking stream copies what they wrote (ordered after them by the
**          legacy stream's implicit synchronization alone);
**   unlisted  after the loop's launches, cuStreamWriteValue32 (an entry point
**          graphshim has no row for, fetched with cuGetProcAddress) writes the
**          word they write;
**   collective  after the middle launch, a kernel whose name says NCCL's (a
**          collective, never to be held or captured);
**   destroy  the last iteration ends at the stream's destroy, not at its
**          boundary;
**   oom    after the loop, an allocation of the device memory that was free
**          before it less 2112 KiB (the fake's memory for graphs, and 64 KiB):
**          it fits where graphshim gives back its executables' memory; and
**          each iteration copies a word of pageable memory first (staged);
**   drain  33 launches and a stream synchronize; 2 us of host work before
**          each of the first 24, and before the rest none in even iterations
**          (the GPU still runs the last chunk when the last graph goes out), 10
**          us in odd ones (it ran dry);
**   limit  the middle launch asks 64 KiB of dynamic shared memory, its kernel's
**          limit raised to 64 KiB before the loop, lowered to 32 KiB before the
**          4th iteration from the end (from then the launch fails) and raised
**          again before the 2nd from the end;
**   drift  the host takes 20 us before each op, 6 % more each iteration: a
**          program that slows down as it runs. */
enum { M_NONE, M_PAUSE, M_STALL, M_SLOW, M_CHUNKS, M_NEW, M_LEGACY, M_UNLISTED, M_COLLECTIVE, M_DESTROY, M_OOM,
       M_DRAIN, M_LIMIT, M_DRIFT, M_COUNT };
static const char *const mode_name[M_COUNT] = {"none",   "pause",    "stall",      "slow",    "chunks", "new",
                                               "legacy", "unlisted", "collective", "destroy", "oom",    "drain",
                                               "limit",  "drift"};

/* The host's time before the op at depth d (from 0) of iteration it. */
static unsigned long long host_time(int mode, unsigned long long host_ns, int it, int d)
{
    if (mode == M_CHUNKS)
        return d >= 16 ? 0 : it % 2 ? 500 : 2000;
    if (mode == M_DRAIN)
        return d < 24 ? 2000 : it % 2 ? 10000 : 0;
    if (mode == M_DRIFT) {
        unsigned long long ns = 20000;
        for (int i = 0; i < it; i++)
            ns = ns * 106 / 100;
        return ns;
    }
    return mode == M_SLOW ? 2000 : host_ns;
}

static int loop_mode(void)
{
    const char *m = getenv("FUZZ_LOOP_MODE");
    for (int i = 1; m && i < M_COUNT; i++)
        if (strcmp(m, mode_name[i]) == 0)
            return i;
    return M_NONE;
}

/* After an iteration that began with glaunch graph launches: the pause of
** mode pause (nothing without graphshim, which has no gs_pause). */
static void loop_pause(long glaunch)
{
    void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
    if (!pause || !resume)
        return;
    pause();
    if (fakecuda_count("graph_launches") > glaunch)
        fakecuda_advance_ns(20000000);
    resume();
}

static uint64_t loop_rand(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every kernel mixes its index and its argument into the buffer's first word. */
static void loop_kernel(void **params, const struct fakecuda_dims *d)
{
    uint64_t *out = (uint64_t *)(uintptr_t)FAKECUDA_ARG(CUdeviceptr, 0);
    *out = *out * 1000003u + (uint64_t)FAKECUDA_ARG(int, 1) + d->grid[0];
}

static void loop_hostfn(void *p)
{
    (*(unsigned long *)p)++;
}

enum { B_SYNC, B_CTX_SYNC, B_RECORD, B_RECORD_SYNC, B_HOSTFN, B_COUNT };
static const char *const boundary_name[B_COUNT] = {"sync", "ctx-sync", "record", "record-sync", "hostfn"};

/* The boundary b at the end of an iteration on stream s. */
static int loop_boundary(int b, CUstream s, CUevent ev, unsigned long *calls)
{
    switch (b) {
    case B_SYNC: return cuStreamSynchronize(s);
    case B_CTX_SYNC: return cuCtxSynchronize();
    case B_RECORD: return cuEventRecord(ev, s);
    case B_RECORD_SYNC: return cuEventRecord(ev, s) || cuEventSynchronize(ev);
    default: return cuLaunchHostFunc(s, loop_hostfn, calls);
    }
}

/* A loop program: its shape (drawn from the seed), its driver objects, and
** what its mode needs besides. */
struct loop {
    int n, memset_first, copy_last, b, iters, vary, mode, lib;
    int refused; /* a capture of the legacy stream begun first (refused) */
    unsigned long long host_ns;
    unsigned long calls;
    CUfunction f[LOOP_MAX_OPS], fnew[80], nccl;
    CUmodule mod;
    CUlibrary libh;
    CUstream s, blocking;
    CUevent ev;
    CUdeviceptr buf, side;
    CUresult (*write_value)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    size_t mem_free;
    uint64_t host_word;
};

/* The shape of the loop of seed x, and its mode's changes to it. */
static void loop_draw(struct loop *L, uint64_t *x)
{
    L->n = loop_rand(x) % 8 == 0 ? 50 + (int)(loop_rand(x) % 21) : 2 + (int)(loop_rand(x) % 11);
    L->memset_first = loop_rand(x) % 3 == 0, L->copy_last = loop_rand(x) % 3 == 0;
    L->b = (int)(loop_rand(x) % B_COUNT), L->iters = 40 + (int)(loop_rand(x) % 41);
    L->vary = (int)(loop_rand(x) % 2); /* the launches' arguments change each iteration */
    L->host_ns = getenv("FUZZ_LOOP_HOST_NS") ? strtoull(getenv("FUZZ_LOOP_HOST_NS"), NULL, 10) : 0;
    L->mode = loop_mode();
    L->host_word = 1;
    if (L->mode == M_PAUSE)
        L->b = L->b % 2 ? B_RECORD : B_HOSTFN; /* a step the gain check times to the next op */
    if (L->mode == M_SLOW)
        L->n = 16 + L->n % 40; /* long enough for chunks of 4 between those by count */
    if (L->mode == M_CHUNKS)
        L->n = 21 + L->n % 10, L->memset_first = L->copy_last = 0; /* chunks by count at depths 2, 4, 8, 16 */
    if (L->mode == M_DRAIN)
        L->n = 33, L->memset_first = L->copy_last = 0, L->b = B_SYNC;
}

/* Kernel name of L's module, or (L->lib) of its library, into *f; 0 or -1. */
static int loop_get(struct loop *L, const char *name, CUfunction *f)
{
    CUkernel k = NULL;
    if (fakecuda_define_kernel(name, loop_kernel, (const size_t[]){sizeof(CUdeviceptr), sizeof(int), 0}) ||
        (L->lib ? cuLibraryGetKernel(&k, L->libh, name) : cuModuleGetFunction(f, L->mod, name)))
        return fprintf(stderr, "fuzzprog loop: no kernel %s\n", name), -1;
    if (L->lib)
        *f = (CUfunction)k;
    return 0;
}

/* The context, stream, event, buffers and kernels; 0 or -1. */
static int loop_setup(struct loop *L, uint64_t *x)
{
    CUdevice dev;
    CUcontext ctx;
    char name[32];

    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&L->mod, "loop") || cuStreamCreate(&L->s, (unsigned)(loop_rand(x) % 2)) ||
        cuEventCreate(&L->ev, CU_EVENT_DEFAULT) || cuMemAlloc(&L->buf, 4096) || cuMemAlloc(&L->side, 4096) ||
        cuMemsetD8(L->buf, 0, 4096) || cuMemsetD8(L->side, 0, 4096))
        return fprintf(stderr, "fuzzprog loop: driver setup failed\n"), -1;
    /* half of the loops launch their kernels as the runtime does, CUkernels of a library */
    L->lib = (int)(loop_rand(x) % 2);
    if (L->lib && cuLibraryLoadData(&L->libh, "loop", NULL, NULL, 0, NULL, NULL, 0))
        return fprintf(stderr, "fuzzprog loop: no library\n"), -1;
    for (int i = 0; i < L->n; i++) {
        snprintf(name, sizeof name, "fuzz_loop_k%d", i);
        if (loop_get(L, name, &L->f[i]))
            return -1;
    }
    if (L->mode == M_COLLECTIVE && loop_get(L, "_Z18ncclDevKernel_Loopv", &L->nccl))
        return -1;
    for (int i = 0; L->mode == M_NEW && i < L->iters; i++) {
        snprintf(name, sizeof name, "fuzz_loop_new%d", i);
        if (fakecuda_define_kernel(name, loop_kernel, (const size_t[]){sizeof(CUdeviceptr), sizeof(int), 0}) ||
            cuModuleGetFunction(&L->fnew[i], L->mod, name))
            return fprintf(stderr, "fuzzprog loop: no kernel %s\n", name), -1;
    }
    return 0;
}

/* Mode limit: the dynamic shared memory limit of the middle kernel set to
** bytes, as its kind is set; the driver's error. */
static int loop_limit(const struct loop *L, int bytes)
{
    CUfunction f = L->f[L->n / 2];
    if (L->lib)
        return (int)cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, (CUkernel)f, 0);
    return (int)cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

/* What the modes need before the loop, and a capture of the program's own (a
** memset, the graph destroyed uninstantiated): graphshim holds nothing during
** it, and holds again after it; in programs of odd seeds a begin of the legacy
** stream's capture first, which the driver refuses and after which graphshim
** holds as before (rule capture-refused); 0 or -1. */
static int loop_before(struct loop *L)
{
    CUdriverProcAddressQueryResult found;
    size_t total = 0;
    CUgraph own = NULL;

    if (L->mode == M_UNLISTED && (cuGetProcAddress_v2("cuStreamWriteValue32", (void **)&L->write_value, 12080,
                                                      CU_GET_PROC_ADDRESS_DEFAULT, &found) ||
                                  !L->write_value))
        return fprintf(stderr, "fuzzprog loop: no cuStreamWriteValue32\n"), -1;
    if (L->mode == M_OOM && cuMemGetInfo(&L->mem_free, &total))
        return fprintf(stderr, "fuzzprog loop: no memory info\n"), -1;
    if (L->mode == M_LEGACY && cuStreamCreate(&L->blocking, CU_STREAM_DEFAULT))
        return fprintf(stderr, "fuzzprog loop: no blocking stream\n"), -1;
    if (L->mode == M_LIMIT && loop_limit(L, 65536))
        return fprintf(stderr, "fuzzprog loop: the limit not raised\n"), -1;
    if (L->refused && cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS)
        return fprintf(stderr, "fuzzprog loop: the legacy stream's capture begun\n"), -1;
    if (cuStreamBeginCapture(L->s, CU_STREAM_CAPTURE_MODE_RELAXED) || cuMemsetD32Async(L->side + 128, 7, 4, L->s) ||
        cuStreamEndCapture(L->s, &own) || cuGraphDestroy(own))
        return fprintf(stderr, "fuzzprog loop: the program's own capture failed\n"), -1;
    if (L->mode == M_LEGACY)
        L->s = CU_STREAM_LEGACY;
    return 0;
}

/* The ops of iteration it, up to its boundary; the driver's errors or'ed. */
static int loop_ops(struct loop *L, int it)
{
    int rc = 0, m = L->mode;
    if (L->memset_first)
        fakecuda_advance_ns(host_time(m, L->host_ns, it, 0)), rc |= cuMemsetD32Async(L->side, (unsigned)it, 16, L->s);
    if (m == M_OOM) { /* a staged copy in the loop's graph */
        rc |= cuMemcpyHtoDAsync(L->side + 128, &L->host_word, 8, L->s);
        L->host_word = L->host_word * 31 + 7;
    }
    for (int i = 0; i < L->n; i++) {
        int arg = i * 7 + (L->vary ? it : 0);
        void *kp[] = {&L->buf, &arg};
        fakecuda_advance_ns(host_time(m, L->host_ns, it, L->memset_first + i));
        unsigned smem = m == M_LIMIT && i == L->n / 2 ? 65536 : 0;
        rc |= cuLaunchKernel(L->f[i], 1 + (unsigned)(i % 3), 1, 1, 32, 1, 1, smem, L->s, kp, NULL);
        if (m == M_COLLECTIVE && i == L->n / 2)
            rc |= cuLaunchKernel(L->nccl, 1, 1, 1, 32, 1, 1, 0, L->s, kp, NULL);
        if (m == M_STALL && (i == L->n / 2 || (i == 0 && 2 * it >= L->iters)))
            fakecuda_advance_ns(1000000);
    }
    if (L->copy_last)
        fakecuda_advance_ns(host_time(m, L->host_ns, it, L->memset_first + L->n)),
            rc |= cuMemcpyDtoDAsync(L->side + 64, L->buf, 8, L->s);
    if (m == M_LEGACY)
        rc |= cuMemcpyDtoDAsync(L->side + 64, L->buf, 8, L->blocking);
    if (m == M_UNLISTED)
        rc |= L->write_value(L->s, L->buf, 0x5eed0000u + (unsigned)it, 0);
    return rc;
}

/* Iteration it: its ops, its boundary (the last one of mode destroy: the
** stream's destroy) and what the mode does after it. */
static int loop_iteration(struct loop *L, int it)
{
    long glaunch = fakecuda_count("graph_launches");
    int rc = L->mode == M_LIMIT && (it == L->iters - 4 || it == L->iters - 2)
                 ? loop_limit(L, it == L->iters - 4 ? 32768 : 65536)
                 : 0;

    rc |= loop_ops(L, it);

    if (L->mode == M_DESTROY && it == L->iters - 1) {
        rc |= cuStreamDestroy(L->s);
        L->s = NULL; /* the rest on the legacy stream */
        return rc;
    }
    rc |= loop_boundary(L->b, L->s, L->ev, &L->calls);
    if (L->mode == M_PAUSE)
        loop_pause(glaunch);
    if (L->mode == M_NEW) {
        int arg = it;
        void *kp[] = {&L->side, &arg};
        rc |= cuLaunchKernel(L->fnew[it], 1, 1, 1, 32, 1, 1, 0, L->s, kp, NULL) || cuStreamSynchronize(L->s);
    }
    return rc;
}

int fuzz_loop_main(int argc, char **argv)
{
    uint64_t x = strtoull(argc > 2 ? argv[2] : "1", NULL, 0) * 0x2545F4914F6CDD1Dull + 7;
    static struct loop loop;
    struct loop *L = &loop;

    loop_draw(L, &x);
    L->refused = strtoull(argc > 2 ? argv[2] : "1", NULL, 0) % 2; /* not drawn: the loops stay their seeds' */
    if (loop_setup(L, &x) || loop_before(L))
        return 2;
    printf("loop seed %s ops %d%s%s boundary %s iterations %d args %s mode %s kernels %s%s\n",
           argc > 2 ? argv[2] : "1", L->n, L->memset_first ? " memset" : "", L->copy_last ? " copy" : "",
           boundary_name[L->b], L->iters, L->vary ? "vary" : "same", mode_name[L->mode], L->lib ? "library" : "module",
           L->refused ? " legacy-capture-refused" : "");
    for (int it = 0; it < L->iters; it++)
        if (loop_iteration(L, it))
            printf("iteration %d: an error\n", it);
    if (L->mode == M_OOM && L->mem_free > (2112u << 10)) {
        CUdeviceptr big = 0;
        int r = (int)cuMemAlloc(&big, L->mem_free - (2112u << 10));
        printf("allocation after the loop: %d\n", r);
        if (!r)
            cuMemFree(big);
    }
    uint64_t word[2] = {0, 0};
    if (cuCtxSynchronize() || cuMemcpyDtoH(&word[0], L->buf, 8) || cuMemcpyDtoH(&word[1], L->side + 64, 8))
        printf("readback failed\n");
    printf("digest %016llx %016llx host functions %lu collectives captured %lu\n", (unsigned long long)word[0],
           (unsigned long long)word[1], L->calls, fakecuda_captured("nccl"));
    return 0;
}

/*
** The step programs of fuzzrun's step claims (fuzzprog steps SEED).
**
** One thread, one stream.  Each of 30 to 50 iterations is a head of 0 to 6
** ops (kernels of their own; in half of the programs of kind step followed by
** the step's last 1 to P - 1 ops, a part of a step), then R repetitions of a step of P ops (3 to 24
** kernels of their own), then a synchronize: the shape of a training loop
** that reads its loss once an iteration (rule steps, docs/engine.md).  Kind
** "step": one op of the step takes the repetition's number as its argument,
** the others the same arguments every time, so more than half of the ops
** repeat byte for byte a step later (a step; not a loop body, which repeats
** whole).  Kind "layers": every op of a repetition writes at the repetition's
** own offset (layers of one shape on their own weights: no step).  R makes
** the repetitions cover twice the unit (P, or as many steps as make 8 ops) or
** more, and half of the sequence.  Then the loop ends: 30 iterations of other
** work (Q kernels of their own, no period, Q > head + 3 units) and a
** synchronize.  It prints its shape and a digest on stdout, and on stderr the
** driver's graph launches when the loop ended (fakecuda_count), which the
** claims split the run's at (fuzz_oracle.c, oracle_steps).  FUZZ_STEPS_POLL
** (the runner's steps-poll): the host polls, works 1 ms, in the middle of 10
** iterations of one kernel 16 times (a loop body) before the loop, and after
** the first step of each iteration.
*/

#define STEPS_MAX_KERNELS 128

/* Every kernel mixes its argument into the word its pointer names. */
static void steps_kernel(void **params, const struct fakecuda_dims *d)
{
    uint64_t *out = (uint64_t *)(uintptr_t)FAKECUDA_ARG(CUdeviceptr, 0);
    *out = *out * 1000003u + (uint64_t)FAKECUDA_ARG(int, 1) + d->grid[0];
}

/* Launches kernel f on s: out at offset off of buf, argument arg. */
static int steps_launch(CUfunction f, CUdeviceptr buf, unsigned off, int arg, CUstream s)
{
    CUdeviceptr p = buf + 8u * off;
    void *kp[] = {&p, &arg};
    return cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, kp, NULL);
}

static int g_poll;

/* One iteration of the loop: the head (its last part ops the step's last
** ones), R steps of P ops, a synchronize. */
static int steps_iteration(const CUfunction *head, int h, int part, const CUfunction *step, int p, int r, int layers,
                           CUdeviceptr buf, CUstream s)
{
    int rc = 0;
    for (int i = 0; i < h; i++)
        rc |= steps_launch(head[i], buf, 0, i, s);
    for (int i = p - part; i < p; i++)
        rc |= steps_launch(step[i], buf, 1, i, s);
    for (int j = 0; j < r; j++)
        for (int i = 0; i < p; i++) {
            rc |= layers ? steps_launch(step[i], buf, 1 + (unsigned)j, i, s)
                         : steps_launch(step[i], buf, 1, i == 0 ? j : i, s);
            if (g_poll && j == 0 && i == p - 1)
                fakecuda_advance_ns(1000000);
        }
    return rc | cuStreamSynchronize(s);
}

int fuzz_steps_main(int argc, char **argv)
{
    uint64_t x = strtoull(argc > 2 ? argv[2] : "1", NULL, 0) * 0x2545F4914F6CDD1Dull + 11;
    int h = (int)(loop_rand(&x) % 7), p = 3 + (int)(loop_rand(&x) % 22), layers = loop_rand(&x) % 3 == 0;
    int unit = p * ((8 + p - 1) / p), r = (2 * unit + p - 1) / p + (int)(loop_rand(&x) % 4);
    int iters = 30 + (int)(loop_rand(&x) % 21), q = h + 3 * unit + 1 + (int)(loop_rand(&x) % 8), rc = 0;
    /* one step program in two: the head ends with the step's last ops (a part of a step) */
    int part = !layers && loop_rand(&x) % 2 ? 1 + (int)(loop_rand(&x) % (unsigned)(p - 1)) : 0;
    CUfunction f[STEPS_MAX_KERNELS];
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUstream s;
    CUdeviceptr buf;
    char name[32];

    if (r * p < h)
        r = (h + p - 1) / p;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, "steps") || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&buf, 4096) ||
        cuMemsetD8(buf, 0, 4096))
        return fprintf(stderr, "fuzzprog steps: driver setup failed\n"), 2;
    for (int i = 0; i < h + p + q + 1; i++) {
        snprintf(name, sizeof name, "fuzz_steps_k%d", i);
        if (fakecuda_define_kernel(name, steps_kernel, (const size_t[]){sizeof(CUdeviceptr), sizeof(int), 0}) ||
            cuModuleGetFunction(&f[i], mod, name))
            return fprintf(stderr, "fuzzprog steps: no kernel %s\n", name), 2;
    }
    printf("steps seed %s head %d part %d step %d unit %d repeats %d kind %s iterations %d then %d ops 30 times\n",
           argc > 2 ? argv[2] : "1", h, part, p, unit, r, layers ? "layers" : "step", iters, q);
    g_poll = getenv("FUZZ_STEPS_POLL") != NULL;
    for (int it = 0; g_poll && it < 10; it++) {
        for (int i = 0; i < 16; i++) {
            rc |= steps_launch(f[h + p + q], buf, 40, 1, s);
            if (i == 7)
                fakecuda_advance_ns(1000000);
        }
        rc |= cuStreamSynchronize(s);
    }
    for (int it = 0; it < iters; it++) {
        if (it == iters / 2)
            fprintf(stderr, "steps: graph launches at the loop's half %ld\n", fakecuda_count("graph_launches"));
        rc |= steps_iteration(f, h, part, f + h, p, r, layers, buf, s);
    }
    fprintf(stderr, "steps: graph launches when the loop ended %ld\n", fakecuda_count("graph_launches"));
    for (int it = 0; it < 30; it++)
        rc |= steps_iteration(f + h + p, q, 0, NULL, 0, 0, 0, buf, s);
    uint64_t word[34] = {0};
    if (rc || cuCtxSynchronize() || cuMemcpyDtoH(word, buf, sizeof word))
        printf("an error\n");
    uint64_t dig = 0;
    for (int i = 0; i < 34; i++)
        dig = dig * 31 + word[i];
    printf("digest %016llx\n", (unsigned long long)dig);
    return 0;
}
