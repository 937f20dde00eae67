/*
** fuzz_period.c: the fuzz program's period programs (fuzzprog periods SEED):
** steps that repeat back to back with no synchronize between them, of any
** length, ended as real loops end them.
**
** One thread, a stream s and a second stream s2.  A step is P ops (1 to 600:
** a step of one kernel, an optimizer's few dozen, a model's hundreds), kernels
** of their own but for a step longer than STEPS_KERNELS (those reuse them
** with another grid); its first op takes the step's number (a step counter),
** the others the same arguments every step.  Each step ends in one way for the
** whole program:
**   none     nothing: the next step runs into it
**   record   an event record on s
**   hostfn   a host function on s
**   jax      two event records on s, s2's wait on the first and a host
**            function there, then the host waits on the second event
**   query    the host polls s with cuStreamQuery until it is idle
**   evsync   an event record and its cuEventSynchronize
**   evsync2  an event recorded on s2 and its cuEventSynchronize, which ends
**            s's step too (a synchronize of no stream)
** and the host synchronizes s after every M steps (M: 10, 100, or only at the
** end), about 2,000 to 8,000 ops in all.  Then it reads the buffer back and
** prints a digest of it and the host functions' count: ops that went missing,
** ran twice or out of order change the digest.  The runner compares it with
** the run without graphshim, and the report's accounts with the fake driver's
** counts (fuzz_oracle.c); no claim of time but under periods-lose.
** FUZZ_PERIOD_SHORT (periods-lose): half the programs are steps of 1 to 4 ops
** ended by nothing, 10 a synchronize, where a step's segments and the prefix
** before each synchronize hold each other's eager runs.
*/
#include "fuzzprog.h"

#define PERIOD_KERNELS 64 /* a program's kernels, most often */
#define PERIOD_MAX_OPS 600

enum period_end { END_NONE, END_RECORD, END_HOSTFN, END_JAX, END_QUERY, END_EVSYNC, END_EVSYNC2, NENDS };
static const char *const end_names[NENDS] = {"none", "record", "hostfn", "jax", "query", "evsync", "evsync2"};

struct period {
    CUfunction f[PERIOD_MAX_OPS];
    int nk; /* kernels: PERIOD_KERNELS, or one for each op of a long step (a layout table past 512) */
    CUstream s, s2;
    CUevent e1, e2;
    CUdeviceptr buf;
    int p, every, end;
    int early; /* the synchronize comes before the step's end, not after it */
    long steps;
    volatile long calls; /* host functions run */
};

/* Every kernel mixes its argument and its grid into the word its pointer names. */
static void period_kernel(void **params, const struct fakecuda_dims *d)
{
    uint64_t *out = (uint64_t *)(uintptr_t)FAKECUDA_ARG(CUdeviceptr, 0);
    *out = *out * 1000003u + (uint64_t)FAKECUDA_ARG(int, 1) * 31u + d->grid[0];
}

static void period_hostfn(void *arg)
{
    ((struct period *)arg)->calls++;
}

/* Op i of step n: kernel i of its own, or, past P->nk, kernel i % P->nk with
** a grid of its own; the first takes n. */
static int period_op(struct period *P, int i, long n)
{
    CUdeviceptr out = P->buf + 8u * (unsigned)(i % 32);
    int arg = i == 0 ? (int)n : i;
    void *kp[] = {&out, &arg};
    unsigned grid = 1 + (unsigned)(i / P->nk);
    return cuLaunchKernel(P->f[i % P->nk], grid, 1, 1, 32, 1, 1, 0, P->s, kp, NULL);
}

/* The step's end (enum period_end). */
static int period_end(struct period *P)
{
    CUresult q;

    switch (P->end) {
    case END_RECORD: return cuEventRecord(P->e1, P->s);
    case END_HOSTFN: return cuLaunchHostFunc(P->s, period_hostfn, (void *)P);
    case END_JAX:
        return cuEventRecord(P->e1, P->s) || cuEventRecord(P->e2, P->s) || cuStreamWaitEvent(P->s2, P->e1, 0) ||
               cuLaunchHostFunc(P->s2, period_hostfn, (void *)P) || cuEventSynchronize(P->e2);
    case END_QUERY:
        while ((q = cuStreamQuery(P->s)) == CUDA_ERROR_NOT_READY)
            ;
        return q;
    case END_EVSYNC: return cuEventRecord(P->e1, P->s) || cuEventSynchronize(P->e1);
    case END_EVSYNC2: return cuEventRecord(P->e1, P->s2) || cuEventSynchronize(P->e1);
    default: return 0;
    }
}

static int period_setup(struct period *P)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    char name[32];

    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, "periods") || cuStreamCreate(&P->s, CU_STREAM_NON_BLOCKING) ||
        cuStreamCreate(&P->s2, CU_STREAM_NON_BLOCKING) || cuEventCreate(&P->e1, CU_EVENT_DISABLE_TIMING) ||
        cuEventCreate(&P->e2, CU_EVENT_DISABLE_TIMING) || cuMemAlloc_v2(&P->buf, 4096) || cuMemsetD8_v2(P->buf, 0, 4096))
        return 1;
    for (int i = 0; i < P->nk; i++) {
        snprintf(name, sizeof name, "fuzz_period_k%d", i);
        if (fakecuda_define_kernel(name, period_kernel, (const size_t[]){sizeof(CUdeviceptr), sizeof(int), 0}) ||
            cuModuleGetFunction(&P->f[i], mod, name))
            return 1;
    }
    return 0;
}

int fuzz_periods_main(int argc, char **argv)
{
    static struct period P;
    uint64_t x = strtoull(argc > 2 ? argv[2] : "1", NULL, 0) * 0x9E3779B97F4A7C15ull + 29;
    static const int everies[] = {10, 100, 0};
    int rc = 0;

    /* Short steps most often, long ones now and then. */
    P.p = chance(&x, 60) ? 1 + (int)rnd(&x, 40) : 41 + (int)rnd(&x, PERIOD_MAX_OPS - 40);
    P.end = (int)rnd(&x, NENDS);
    P.every = everies[rnd(&x, 3)];
    /* steps of 1 to 4 ops, 10 a synchronize, ended by nothing; or by a record,
    ** with the synchronize before it: the steps' sequence, shorter than
    ** GRAPHSHIM_MIN_OPS, is learned where the synchronize ends it and
    ** replayed where the records do */
    if (getenv("FUZZ_PERIOD_SHORT") && chance(&x, 50)) {
        P.p = 1 + (int)rnd(&x, 4), P.end = END_NONE, P.every = 10;
        if (chance(&x, 50))
            P.end = END_RECORD, P.early = 1;
    }
    P.steps = (2000 + (long)rnd(&x, 6000)) / P.p + 8;
    P.nk = P.p > 520 && chance(&x, 50) ? P.p : PERIOD_KERNELS;
    if (period_setup(&P))
        return fprintf(stderr, "fuzzprog periods: driver setup failed\n"), 2;
    printf("periods seed %s step %d end %s%s synchronize every %d steps %ld kernels %d\n", argc > 2 ? argv[2] : "1",
           P.p, end_names[P.end], P.early ? " (after the synchronize)" : "", P.every, P.steps, P.nk);
    for (long n = 0; n < P.steps; n++) {
        for (int i = 0; i < P.p; i++)
            rc |= period_op(&P, i, n);
        int sync = P.every && n % P.every == P.every - 1;
        if (sync && P.early)
            rc |= cuStreamSynchronize(P.s);
        rc |= period_end(&P);
        if (sync && !P.early)
            rc |= cuStreamSynchronize(P.s);
    }
    uint64_t word[32] = {0}, dig = 0;
    if (rc || cuCtxSynchronize() || cuMemcpyDtoH_v2(word, P.buf, sizeof word))
        printf("an error\n");
    for (int i = 0; i < 32; i++)
        dig = dig * 31 + word[i];
    printf("digest %016llx host functions %ld\n", (unsigned long long)dig, P.calls);
    return 0;
}
