/*
** life.c: guardprog's scenarios of what a segment's life must keep, on steps.c's
** kernels.
*/
#include "guardprog.h"

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

/* pageable-h2d whose every fourth segment ends not at a synchronize but at a
** module's load and unload, with the segment's graph (and its staging copy)
** still running: the unload forgets every learned sequence, and the staging
** buffers the graph reads must not go (or be written) before it has read them. */
static CUdeviceptr pageable_unload_launches(CUstream s, const CUdeviceptr *x, int it)
{
    CUdeviceptr shown = pageable_h2d_launches(s, x, it);
    if (it % 4 == 3) {
        CUmodule m;
        CHECK(cuModuleLoadData(&m, "image"));
        CHECK(cuModuleUnload(m));
    }
    return shown;
}

static void body_cut(int iters) { steps_loop(iters, "body-cut", 1, body_cut_launches); }
static void pageable_loop(int iters) { steps_loop(iters, "pageable-loop", 2, pageable_loop_launches); }
static void last_byte(int iters) { steps_loop(iters, "last-byte", 2, last_byte_launches); }
static void grid_only(int iters) { steps_loop(iters, "grid-only", 2, grid_only_launches); }
static void pageable_h2d(int iters) { steps_loop(iters, "pageable-h2d", 2, pageable_h2d_launches); }
static void pageable_unload(int iters) { steps_loop(iters, "pageable-unload", 2, pageable_unload_launches); }

const struct gp_scenario gp_life[] = {
    {"pageable-loop", pageable_loop},
    {"body-cut", body_cut},
    {"last-byte", last_byte},
    {"grid-only", grid_only},
    {"pageable-h2d", pageable_h2d},
    {"pageable-unload", pageable_unload},
    {NULL, NULL},
};
