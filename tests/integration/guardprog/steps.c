/*
** steps.c: guardprog's scenarios of work that repeats inside a segment, or with
** other arguments: the step kernels, steps_loop (which the scenarios of life.c use
** too) and the scenarios built on them.
*/
#include "guardprog.h"

/* --- Work that repeats inside a segment, or with other arguments ----------- */

/* Five different steps on a state of W words, each a bijection and no two of
** them commuting: the state after a run of launches depends on every launch,
** on their order and on their count, so a dropped, repeated or reordered launch
** shows in the printed hash. */
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

CUfunction k_step[5], k_fold, k_stepg, k_stepb;

/* Loads the step kernels and creates nx states, each with its own seed.  Then,
** each iteration: the scenario's launches on a stream of its own (launches
** returns the state to show), the stream's synchronize, and the hash of that
** state, read with a synchronous copy. */
void steps_loop(int iters, const char *name, int nx, CUdeviceptr (*launches)(CUstream, const CUdeviceptr *, int))
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

void launch_step(CUstream s, int op, CUdeviceptr x, uint64_t v)
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

static void loop1(int iters) { steps_loop(iters, "loop1", 1, loop1_launches); }
static void body5(int iters) { steps_loop(iters, "body5", 1, body5_launches); }
static void scalars(int iters) { steps_loop(iters, "scalars", 1, scalars_launches); }
static void scalars_cut(int iters) { steps_loop(iters, "scalars-cut", 1, scalars_cut_launches); }
static void rotate(int iters) { steps_loop(iters, "rotate", 6, rotate_launches); }

const struct gp_scenario gp_steps[] = {
    {"loop1", loop1},
    {"body5", body5},
    {"scalars", scalars},
    {"scalars-cut", scalars_cut},
    {"rotate", rotate},
    {"train4", train4},
    {"grow", grow},
    {"copies", copies},
    {"readback", readback},
    {"upload", upload},
    {"copy-range", copy_range},
    {"kinds", kinds},
    {"rare20", rare20},
    {"rare-then-loop", rare_then_loop},
    {"rare-then-memsets", rare_then_memsets},
    {NULL, NULL},
};
