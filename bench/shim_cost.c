/*
** shim_cost.c: graphshim's own host cost per launch, without a GPU.
**
** The real driver is swapped for stubs that return at once (the same table the
** shim calls through), so what is timed is graphshim alone:
**   direct       the stub called straight (the floor: a call)
**   pass-through cuLaunchKernel through the shim with the engine off (GRAPHSHIM=0)
**   held         cuLaunchKernel through the shim while the engine holds it: a
**                20-launch sequence repeated between cuStreamSynchronize calls,
**                replayed as a (stub) graph; the boundary is timed apart
**   patched      the same with new parameter bytes every time: each held launch
**                keeps its own key, and each replay sets the graph's 20 kernel
**                nodes in place first (stub set-params)
**   rotate       the same with parameter bytes of three sets in turn (buffers in
**                rotation): each replay launches the variant that holds them
**   learning     launches of a new shape each time (their dynamic shared memory;
**                grids are arguments, set in place): nothing repeats, every launch
**                is issued and learned (tree and loop-body detection)
**   shapes       launches of one of 32 shapes, at random: no sequence repeats, but
**                every op is one the tree has seen before at that place, and the
**                tree grows wide (bench's norepeat)
**   rare         bench's rare: the 20 launches' shapes follow a sequence of low
**                discrepancy (each sequence of shapes back every 61 segments or
**                more) and their arguments never repeat; the capture budget finds
**                that nothing pays, and learning rests; again with that rest
**                turned off (rule hopeless-rest), learning every launch: a row
**                of the test build's alone (its objects: make BUILD=build/test
**                GS_TEST_BUILD=1 build/test/bench/shim_cost)
**   steps        a 36-launch step 100 times a synchronize, one scalar of each
**                step changed (an optimizer's step count): the segment ends at
**                every step, each replayed as its graph with that node set
**                (rules/step.h)
**   cut          the held sequence, but its 11th launch has a new shape each
**                time: a bail (mismatch) every sequence, ten ops issued eagerly,
**                and the bail sampled for its call site (GRAPHSHIM_BAIL_SITES:
**                a counter check, and a stack one time in 64); again with the
**                knob off
**   single       one launch, then a synchronize (bench's tiny1), per pair: the
**                segment's learning, the synchronize's resolve and the gain
**                check's clock reads; beside the two stub calls made directly;
**                and again with the engine paused (gs_pause), the half of
**                bench's AB= pairs that graphshim's active half is judged by
** then a clock read and an atomic compare-and-swap with an exchange (the host's
** own costs); and, with caches cold, direct, learning, shapes and single again:
** there the stub touches 16 KiB of memory a launch, as a real launch's
** microseconds of driver work evict the engine's data between two ops (with them
** warm, a stub's figures hide the cache misses a real program pays: bench's
** norepeat cost 500-700 ns a launch on the H100's host against +88 ns here).
** Prints nanoseconds per launch, the median of several rounds.
**
**   shim_cost [[cold-]held|patched|rotate|learning|shapes|rare|steps|cut|single]
**
** With a mode, times only that one, ten times as long: a run to profile (perf
** record), whose figure is printed alone; cold-: with caches cold.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../interpose/interpose.h"
#include "../policy/base/config.h"
#include "../policy/entry/engine.h"
#include "mix64.h"

/* Bytes each stub launch touches (0: none), walking a 64 MiB buffer. */
#define COLD_BYTES (16u << 10)
#define COLD_SPAN (64u << 20)
static size_t cold_bytes;
static unsigned char *cold_buf;
static size_t cold_at;

static CUresult stub_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned sh, CUstream s, void **p, void **e)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)s, (void)p, (void)e;
    for (size_t i = 0; i < cold_bytes; i += 64, cold_at = (cold_at + 64) % COLD_SPAN)
        cold_buf[cold_at]++;
    __asm__ volatile("" ::: "memory");
    return CUDA_SUCCESS;
}
static CUresult stub_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    (void)f;
    if (i >= 3)
        return CUDA_ERROR_INVALID_VALUE;
    *off = i * 8;
    *size = 8;
    return CUDA_SUCCESS;
}
static CUresult stub_ctx(CUcontext *c)
{
    *c = (CUcontext)0x10;
    return CUDA_SUCCESS;
}
static CUresult stub_stream_ctx(CUstream s, CUcontext *c)
{
    (void)s;
    *c = (CUcontext)0x10;
    return CUDA_SUCCESS;
}
static CUresult stub_flags(CUstream s, unsigned *f)
{
    (void)s;
    *f = CU_STREAM_NON_BLOCKING;
    return CUDA_SUCCESS;
}
static CUresult stub_stream(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}
static CUresult stub_create(CUstream *s, unsigned f)
{
    (void)f;
    *s = (CUstream)0x20;
    return CUDA_SUCCESS;
}
static CUresult stub_begin(CUstream s, CUstreamCaptureMode m)
{
    (void)s, (void)m;
    return CUDA_SUCCESS;
}
static CUresult stub_end(CUstream s, CUgraph *g)
{
    (void)s;
    *g = (CUgraph)0x30;
    return CUDA_SUCCESS;
}
static CUresult stub_inst(CUgraphExec *x, CUgraph g, unsigned long long f)
{
    (void)g, (void)f;
    *x = (CUgraphExec)0x40;
    return CUDA_SUCCESS;
}
static CUresult stub_graph(CUgraph g)
{
    (void)g;
    return CUDA_SUCCESS;
}
static CUresult stub_glaunch(CUgraphExec x, CUstream s)
{
    (void)x, (void)s;
    return CUDA_SUCCESS;
}

/* The capture tells each op's node (a new one each time), and a kernel node
** is set in place: the path a replay with new arguments takes. */
static CUgraphNode stub_node = (CUgraphNode)0x1000;
static CUresult stub_capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
                                  const CUgraphNode **deps, size_t *nd)
{
    (void)s, (void)id, (void)g;
    *st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    stub_node = (CUgraphNode)((uintptr_t)stub_node + 16);
    *deps = &stub_node;
    *nd = 1;
    return CUDA_SUCCESS;
}
static CUresult stub_node_type(CUgraphNode n, CUgraphNodeType *t)
{
    (void)n;
    *t = CU_GRAPH_NODE_TYPE_KERNEL;
    return CUDA_SUCCESS;
}
static CUresult stub_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
    (void)n;
    memset(p, 0, sizeof *p);
    p->func = (CUfunction)0x99;
    p->blockDimX = 32;
    p->blockDimY = p->blockDimZ = 1;
    return CUDA_SUCCESS;
}
static CUresult stub_kernel_set(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    (void)x, (void)n, (void)p;
    __asm__ volatile("" ::: "memory");
    return CUDA_SUCCESS;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define K_SEQ 20
#define ROUNDS 21
static int ITERS = 20000;

static CUresult stub_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    (void)x, (void)g;
    memset(info, 0, sizeof *info);
    return CUDA_SUCCESS;
}

enum { DIRECT, SHIM, PATCHED, ROTATE, LEARNING, SHAPES, RARE, STEPS, CUT, DIRECT1, SINGLE, PAUSED1 };
#define K_STEP 36
#define K_STEPS (K_STEP * 100)

/* Median over rounds of ns per launch, in one of the modes above; DIRECT1,
** SINGLE and PAUSED1: ns per launch and synchronize, one launch between
** synchronizes (bench's tiny1), straight to the stubs, through the shim, or
** through it paused (the caller pauses it). */
static double time_launches(int mode, double *boundary_ns)
{
    int through_shim = mode != DIRECT && mode != DIRECT1, k = mode >= DIRECT1 ? 1 : mode == STEPS ? K_STEPS : K_SEQ;
    double per[ROUNDS], bnd[ROUNDS];
    /* A stream of its own for each mode, hot or cold, rule dropped or not: what
    ** one run learned (a wide tree, a rest) does not change what the next costs. */
    CUstream s = (CUstream)(uintptr_t)(0x1000 + 0x100 * mode + (cold_bytes ? 0x80 : 0) + (GS_DROPPED(GS_RULE_HOPELESS_REST) ? 0x40 : 0) +
                                       (gs__cfg.bail_sites ? 0 : 0x20));
    long args[3] = {1, 2, 3};

    for (int r = 0; r < ROUNDS; r++) {
        double tl = 0, tb = 0;
        for (int it = 0; it < ITERS / k; it++) {
            double t0 = now_ns(), t1;
            for (int i = 0; i < k; i++) {
                void *p[] = {&args[0], &args[1], &args[2]};
                unsigned long n = (unsigned long)r * ITERS + (unsigned long)it * k + (unsigned long)i;
                /* Shapes differ in the dynamic shared memory: a grid would be an
                ** argument the engine sets in place, not a shape. */
                unsigned shape = mode == LEARNING ? (unsigned)(n % 65536)
                                 : mode == SHAPES ? (unsigned)(mix64(n) >> 59)
                                 : mode == RARE   ? (unsigned)((n * 0x9E3779B97F4A7C15ull) >> 59)
                                 : mode == CUT && i == K_SEQ / 2 ? (unsigned)(it % 65536) + 1
                                                  : 0;
                args[0] = mode == STEPS ? i % K_STEP : i; /* the sequence's ops differ from each other, and repeat */
                args[1] = mode == PATCHED ? it : mode == ROTATE ? it % 3 : mode == RARE ? (long)n
                          : mode == STEPS && i % K_STEP == 0 ? (long)n : 2;
                if (through_shim)
                    cuLaunchKernel((CUfunction)0x99, 1, 1, 1, 32, 1, 1, shape, s, p, NULL);
                else
                    stub_launch((CUfunction)0x99, 1, 1, 1, 32, 1, 1, 0, s, p, NULL);
            }
            t1 = now_ns();
            if (through_shim)
                cuStreamSynchronize(s);
            else if (mode == DIRECT1)
                stub_stream(s);
            if (k == 1)
                t1 = now_ns(); /* the pair is what is timed */
            tl += t1 - t0;
            tb += now_ns() - t1;
        }
        per[r] = tl / ((ITERS / k) * k);
        bnd[r] = tb / (ITERS / k);
    }
    qsort(per, ROUNDS, sizeof per[0], cmp);
    qsort(bnd, ROUNDS, sizeof bnd[0], cmp);
    if (boundary_ns)
        *boundary_ns = bnd[ROUNDS / 2];
    return per[ROUNDS / 2];
}

/* The rare rows: as the engine runs it, then with its rest for streams where
** nothing pays turned off (each on a stream of its own). */
static void rare_rows(double *rests, double *kept)
{
    *rests = time_launches(RARE, NULL);
    *kept = -1; /* the library users run has no rule to drop */
#ifdef GS_TEST
    gs__dropped_rule = GS_RULE_HOPELESS_REST;
    *kept = time_launches(RARE, NULL);
    gs__dropped_rule = GS_RULE_NONE;
#endif
}

/* Two of the host's own costs, ns each (median over rounds): a clock read, as the
** engine reads it, and a compare-and-swap with an exchange, what taking and
** freeing a lock costs where it is not biased. */
static atomic_int word;
static void host_costs(double *clock_ns, double *rmw_ns)
{
    double c[ROUNDS], a[ROUNDS];
    volatile uint64_t sink = 0;

    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns(), t1;
        for (int i = 0; i < ITERS; i++) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            sink += (uint64_t)t.tv_nsec;
        }
        t1 = now_ns();
        for (int i = 0; i < ITERS; i++) {
            int z = 0;
            atomic_compare_exchange_strong(&word, &z, 1);
            atomic_exchange(&word, 0);
        }
        c[r] = (t1 - t0) / ITERS;
        a[r] = (now_ns() - t1) / ITERS;
    }
    qsort(c, ROUNDS, sizeof c[0], cmp);
    qsort(a, ROUNDS, sizeof a[0], cmp);
    *clock_ns = c[ROUNDS / 2];
    *rmw_ns = a[ROUNDS / 2];
}

/* A thread that sleeps: a CUDA program always has the driver's threads, and
** graphshim its watchdog.  With one thread alone glibc's locks leave out their
** atomic instructions, and the figures would hide what those cost. */
static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    double direct, pass, held, bnd, patched, pbnd, rotate, rbnd, learning, shapes, rare, rare_kept, direct1, single, paused1;
    double cut, cut_off, steps, sbnd;
    double clock_ns, rmw_ns;
    double cdirect, clearning, cshapes, crare, crare_kept, cdirect1, csingle;

    pthread_t idle;

    if (pthread_create(&idle, NULL, idle_thread, NULL) != 0)
        fprintf(stderr, "shim_cost: no second thread: lock costs are left out\n");
    gs__config_load();
    gs__cfg.gain_check = 0; /* stub timings say nothing of a graph's gain */
    atomic_store(&gs__ready, 1);
    gs__real[GS_ID_cuLaunchKernel] = (void *)stub_launch;
    gs__real[GS_ID_cuFuncGetParamInfo] = (void *)stub_param_info;
    gs__real[GS_ID_cuCtxGetCurrent] = (void *)stub_ctx;
    gs__real[GS_ID_cuCtxSetCurrent] = (void *)stub_stream; /* same shape: one pointer */
    gs__real[GS_ID_cuStreamGetCtx] = (void *)stub_stream_ctx;
    gs__real[GS_ID_cuStreamGetFlags] = (void *)stub_flags;
    gs__real[GS_ID_cuStreamSynchronize] = (void *)stub_stream;
    gs__real[GS_ID_cuStreamQuery] = (void *)stub_stream; /* a stub GPU is never busy */
    gs__real[GS_ID_cuStreamCreate] = (void *)stub_create;
    gs__real[GS_ID_cuStreamBeginCapture_v2] = (void *)stub_begin;
    gs__real[GS_ID_cuStreamEndCapture] = (void *)stub_end;
    gs__real[GS_ID_cuGraphInstantiateWithFlags] = (void *)stub_inst;
    gs__real[GS_ID_cuGraphDestroy] = (void *)stub_graph;
    gs__real[GS_ID_cuGraphLaunch] = (void *)stub_glaunch;
    gs__real[GS_ID_cuGraphExecDestroy] = (void *)stub_graph; /* same shape: one handle */
    gs__real[GS_ID_cuGraphExecUpdate_v2] = (void *)stub_update;
    gs__real[GS_ID_cuStreamGetCaptureInfo_v2] = (void *)stub_capture_info;
    gs__real[GS_ID_cuGraphNodeGetType] = (void *)stub_node_type;
    gs__real[GS_ID_cuGraphKernelNodeGetParams_v2] = (void *)stub_kernel_get;
    gs__real[GS_ID_cuGraphExecKernelNodeSetParams_v2] = (void *)stub_kernel_set;

    if (argc > 1) {
        static const char *names[] = {[SHIM] = "held", [PATCHED] = "patched", [ROTATE] = "rotate", [LEARNING] = "learning",
                                      [SHAPES] = "shapes", [RARE] = "rare", [STEPS] = "steps", [CUT] = "cut",
                                      [SINGLE] = "single"};
        const char *mode = argv[1];
        if (strncmp(mode, "cold-", 5) == 0 && (cold_buf = calloc(1, COLD_SPAN))) {
            cold_bytes = COLD_BYTES;
            mode += 5;
        }
        for (int m = SHIM; m <= SINGLE; m++)
            if (names[m] && strcmp(mode, names[m]) == 0) {
                ITERS *= 10;
                printf("%s: %.1f ns per launch\n", names[m], time_launches(m, NULL));
                return 0;
            }
        fprintf(stderr, "usage: shim_cost [[cold-]held|patched|rotate|learning|shapes|rare|steps|cut|single]\n");
        return 2;
    }
    direct = time_launches(DIRECT, NULL);
    gs__passthrough = 1;
    pass = time_launches(SHIM, NULL);
    gs__passthrough = 0;
    held = time_launches(SHIM, &bnd);
    patched = time_launches(PATCHED, &pbnd);
    rotate = time_launches(ROTATE, &rbnd);
    learning = time_launches(LEARNING, NULL);
    shapes = time_launches(SHAPES, NULL);
    rare_rows(&rare, &rare_kept);
    steps = time_launches(STEPS, &sbnd);
    cut = time_launches(CUT, NULL);
    gs__cfg.bail_sites = 0;
    cut_off = time_launches(CUT, NULL);
    gs__cfg.bail_sites = 1;
    gs__cfg.gain_check = 1; /* as in a real run: its clock reads are part of the cost */
    direct1 = time_launches(DIRECT1, NULL);
    single = time_launches(SINGLE, NULL);
    gs__engine_pause();
    paused1 = time_launches(PAUSED1, NULL);
    gs__engine_resume();
    gs__cfg.gain_check = 0;
    printf("graphshim's own host cost, ns per launch (median of %d rounds, %d-launch sequences)\n", ROUNDS, K_SEQ);
    printf("  %-44s %8.1f\n", "direct call of the driver stub", direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "pass-through (GRAPHSHIM=0)", pass, pass - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "held by the engine", held, held - direct);
    printf("  %-44s %8.1f\n", "boundary: replay of the 20-op graph", bnd);
    printf("  %-44s %8.1f  (+%.1f)\n", "held, new parameters each time", patched, patched - direct);
    printf("  %-44s %8.1f\n", "boundary: update and replay of that graph", pbnd);
    printf("  %-44s %8.1f  (+%.1f)\n", "held, parameters of 3 sets in turn", rotate, rotate - direct);
    printf("  %-44s %8.1f\n", "boundary: the variant that holds them", rbnd);
    printf("  %-44s %8.1f  (+%.1f)\n", "issued and learned (nothing repeats)", learning, learning - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "issued and learned (32 shapes, no sequence repeats)", shapes, shapes - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "rare (budget: nothing pays; learning rests)", rare, rare - direct);
    if (rare_kept >= 0)
        printf("  %-44s %8.1f  (+%.1f)\n", "rare, learning kept (rule hopeless-rest off)", rare_kept, rare_kept - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "a 36-op step 100 times a synchronize", steps, steps - direct);
    printf("  %-44s %8.1f\n", "boundary: the last step's replay", sbnd);
    printf("  %-44s %8.1f  (+%.1f)\n", "a bail every sequence, its site sampled", cut, cut - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "the same, GRAPHSHIM_BAIL_SITES=0", cut_off, cut_off - direct);
    printf("  %-44s %8.1f  (+%.1f)\n", "one launch and a synchronize (per pair)", single, single - direct1);
    printf("  %-44s %8.1f  (+%.1f)\n", "the same, paused (gs_pause: bench's AB=)", paused1, paused1 - direct1);
    host_costs(&clock_ns, &rmw_ns);
    printf("the host's own, ns each\n");
    printf("  %-44s %8.1f\n", "a clock read (clock_gettime)", clock_ns);
    printf("  %-44s %8.1f\n", "compare-and-swap + exchange (a lock, unbiased)", rmw_ns);
    fflush(stdout);
    if (!(cold_buf = calloc(1, COLD_SPAN)))
        return 0;
    cold_bytes = COLD_BYTES;
    cdirect = time_launches(DIRECT, NULL);
    clearning = time_launches(LEARNING, NULL);
    cshapes = time_launches(SHAPES, NULL);
    rare_rows(&crare, &crare_kept);
    gs__cfg.gain_check = 1;
    cdirect1 = time_launches(DIRECT1, NULL);
    csingle = time_launches(SINGLE, NULL);
    printf("caches cold (the stub touches %u KiB a launch, as a real launch evicts the engine's data)\n",
           COLD_BYTES >> 10);
    printf("  %-44s %8.1f\n", "direct call of the driver stub", cdirect);
    printf("  %-44s %8.1f  (+%.1f)\n", "issued and learned (nothing repeats)", clearning, clearning - cdirect);
    printf("  %-44s %8.1f  (+%.1f)\n", "issued and learned (32 shapes, no sequence repeats)", cshapes,
           cshapes - cdirect);
    printf("  %-44s %8.1f  (+%.1f)\n", "rare (budget: nothing pays; learning rests)", crare, crare - cdirect);
    if (crare_kept >= 0)
        printf("  %-44s %8.1f  (+%.1f)\n", "rare, learning kept (rule hopeless-rest off)", crare_kept,
               crare_kept - cdirect);
    printf("  %-44s %8.1f  (+%.1f)\n", "one launch and a synchronize (per pair)", csingle, csingle - cdirect1);
    return 0;
}
