/*
** learning.c: guardprog's scenarios of work that repeats rarely, late or never,
** and sequences of every length: one launch, 20, 100, many shapes, a setup phase
** before a loop, the program's calls that cut a step (the report's bail sites).
*/
#include "guardprog.h"

/* One launch per segment: shorter than GRAPHSHIM_MIN_OPS by default. */
static void single(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
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
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
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
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
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

/* A long sequence: 100 ops per iteration, the shape of a tiny-kernel benchmark;
** twenty: 20 ops (bench's tiny20). */
static void n_ops_of(int iters, int n, int shaped)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
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
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
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

/* ITERS segments that never repeat (a setup phase), then 40 that do (a loop):
** the setup must not keep the loop from being learned. */
static void setup_then_loop(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
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

/* failed-op: the driver refuses an iteration's launch now and then (a test
** sets FAKECUDA_FAIL): the program prints its result instead of stopping.  A
** segment with an op that failed is no occurrence of its sequence. */
static void failed_op(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out, a = 2.0f, b = 1.0f;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        CUresult rc = cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &a, &b, &n}, NULL);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        printf("%d rc %d\n", it, (int)rc);
        show(it, "out", out);
    }
}

const struct gp_scenario gp_learning[] = {
    {"single", single},
    {"rare", rare},
    {"long", long_},
    {"prompt", prompt},
    {"singles", singles},
    {"twenty", twenty},
    {"setup-then-loop", setup_then_loop},
    {"new-then-same", new_then_same},
    {"sites", sites},
    {"new-and-same", new_and_same},
    {"mixed10", mixed10},
    {"mixed5000", mixed5000},
    {"failed-op", failed_op},
    {NULL, NULL},
};
