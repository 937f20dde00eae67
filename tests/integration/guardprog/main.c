/*
** guardprog: one driver-API program per guard rule, for the engine tests.
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
**
** This file holds the program: its kernels, the helpers the scenarios share
** and the lookup of a scenario by name; the scenarios are in one file a subject
** (guardprog.h lists them).
*/
#include "guardprog.h"

/* The host's pauses (a stall, a slow host's work between launches, a poll's
** nap) are spent on the fake driver's clock: with FAKECUDA_CLOCK=virtual that
** clock moves on by the pause at once, so a test that counts what graphshim
** did about them (its test build reads that clock) counts the same on a busy
** machine; otherwise the host sleeps. */
int pause_for(const struct timespec *t, struct timespec *rem)
{
    (void)rem;
    fakecuda_advance_ns((unsigned long long)t->tv_sec * 1000000000ull + (unsigned long long)t->tv_nsec);
    return 0;
}

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

CUfunction k_fill, k_axpb, k_copy, k_setflag, k_nccl, k_bump, k_nccl_mangled;
CUcontext ctx; /* the primary context, current in main */
int n = N;

void launch(CUfunction f, CUstream s, void **args)
{
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
}

void fill(CUstream s, CUdeviceptr x, float v)
{
    launch(k_fill, s, (void *[]){&x, &v, &n});
}

void axpb(CUstream s, CUdeviceptr x)
{
    float a = 2.0f, b = 1.0f;
    launch(k_axpb, s, (void *[]){&x, &a, &b, &n});
}

/* axpb with blocks of `block` threads: an op of another shape for each block. */
void axpb_shaped(CUstream s, CUdeviceptr x, unsigned block)
{
    float a = 2.0f, b = 1.0f;
    CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, block, 1, 1, 0, s, (void *[]){&x, &a, &b, &n}, NULL));
}

void copy(CUstream s, CUdeviceptr dst, CUdeviceptr src)
{
    launch(k_copy, s, (void *[]){&dst, &src, &n});
}

void show(int it, const char *what, const float *v)
{
    printf("%d %s %g %g\n", it, what, v[0], v[N - 1]);
}

float *pinned(void)
{
    float *p;
    CHECK(cuMemAllocHost_v2((void **)&p, N * sizeof(float)));
    memset(p, 0, N * sizeof(float));
    return p;
}

CUdeviceptr dev(void)
{
    CUdeviceptr x;
    CHECK(cuMemAlloc_v2(&x, N * sizeof(float)));
    return x;
}

/* The iteration's input, written by the host into pinned memory that the first
** kernel reads: the op sequence stays the same, the data changes. */
static float *in;
void input(CUstream s, CUdeviceptr x, int it)
{
    if (!in)
        in = pinned();
    for (int i = 0; i < N; i++)
        in[i] = (float)(it * 10 + i);
    copy(s, x, P(in));
}

/* The preamble of most scenarios, in their order: a device buffer *x, pinned
** output *out (zeroed), and a stream *s created with flags. */
void prepare(CUstream *s, CUdeviceptr *x, float **out, unsigned flags)
{
    *x = dev();
    *out = pinned();
    CHECK(cuStreamCreate(s, flags));
}

/* The scenarios, by subject (guardprog.h). */
static const struct gp_scenario *const subjects[] = {
    gp_boundaries, gp_passthrough, gp_pace, gp_learning, gp_params,
    gp_polling, gp_memory, gp_threads, gp_steps, gp_life,
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
    for (size_t t = 0; argc > 1 && t < sizeof subjects / sizeof subjects[0]; t++) {
        for (const struct gp_scenario *sc = subjects[t]; sc->name; sc++) {
            if (strcmp(argv[1], sc->name) == 0) {
                sc->fn(iters);
                CHECK(cuCtxSynchronize());
                return 0;
            }
        }
    }
    fprintf(stderr, "usage: guardprog SCENARIO [ITERS]\n");
    return 2;
}
