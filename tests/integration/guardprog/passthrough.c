/*
** passthrough.c: guardprog's scenarios of what graphshim never holds, or lets
** through as it comes: entry points it does not know, launch attributes it cannot
** hold, collectives, the public API's pause, pure queries between ops.
*/
#include "guardprog.h"

/* An entry point graphshim does not know enqueues behind held work: here a
** stream-ordered store of a flag the host then trusts. */
static void unclassified(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    unsigned *flag;
    CHECK(cuMemAllocHost_v2((void **)&flag, sizeof *flag));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        copy(s, P(out), x);
        *(volatile unsigned *)flag = 0;
        CHECK(cuStreamWriteValue32_v2(s, P(flag), 1, 0));
        if (*(volatile unsigned *)flag == 1) /* the work before the store is done */
            show(it, "out", out);
        CHECK(cuStreamSynchronize(s));
    }
}

/* unclassified, with the store fetched as a runtime fetches every entry point:
** through cuGetProcAddress.  hooks.def has no row of that name, so graphshim
** answers with a trampoline, which must guard it as unclassified too. */
static void unclassified_proc(int iters)
{
    CUresult (*write32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    CUdriverProcAddressQueryResult found;
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned();
    unsigned *flag;
    CHECK(cuGetProcAddress_v2("cuStreamWriteValue32", (void **)&write32, 12000, 0, &found));
    CHECK(found == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND);
    CHECK(cuMemAllocHost_v2((void **)&flag, sizeof *flag));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        copy(s, P(out), x);
        *(volatile unsigned *)flag = 0;
        CHECK(write32(s, P(flag), 1, 0));
        if (*(volatile unsigned *)flag == 1) /* the work before the store is done */
            show(it, "out", out);
        CHECK(cuStreamSynchronize(s));
    }
}

/* Ops the engine cannot hold, after ops it holds: every third iteration, a launch
** with a launch attribute it does not know and a pinned-to-pinned copy replace the
** sequence's last op (learned from the other iterations). */
static void unholdable(int iters)
{
    CUstream s;
    CUdeviceptr x = dev();
    float *out = pinned(), *out2 = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, &attr, 1};
        CUdeviceptr dst = P(out), src = x;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
        input(s, x, it);
        axpb(s, x);
        if (it % 3 == 2) {
            CHECK(cuLaunchKernelEx(&cfg, k_copy, (void *[]){&dst, &src, &n}, NULL));
            CHECK(cuMemcpyAsync(P(out2), P(out), N * sizeof(float), s));
        } else {
            copy(s, P(out2), x);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out2);
    }
}

/* A collective-like kernel after held work: it passes through, after them. */
static void nccl(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        CUdeviceptr dst = P(out);
        input(s, x, it);
        axpb(s, x);
        if (it % 3 == 2)
            launch(k_nccl, s, (void *[]){&dst, &x, &n});
        else
            copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Collectives in the middle of every iteration, as in a tensor-parallel step:
** work, an NCCL kernel (by its mangled name, as the driver gives it), more work, a kernel with a launch attribute graphshim
** cannot hold, more work, a synchronize.  Everything around them repeats, so
** only the rule that such launches are never held keeps them out of graphs. */
static void collectives(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute attr;
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, &attr, 1};
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
        input(s, x, it);
        axpb(s, x);
        axpb(s, x);
        launch(k_nccl_mangled, s, (void *[]){&y, &x, &n});
        axpb(s, y);
        axpb(s, y);
        CHECK(cuLaunchKernelEx(&cfg, k_copy, (void *[]){&x, &y, &n}, NULL));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The public API, looked up at run time: iterations 4 and 5 run paused. */
static void api(int iters)
{
    int (*stats)(struct gs_stats *) = (int (*)(struct gs_stats *))dlsym(RTLD_DEFAULT, "gs_stats");
    void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct gs_stats st;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        if (it == 4 && pause)
            pause();
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        if (it == 5 && resume)
            resume();
        show(it, "out", out);
    }
    if (stats) { /* stderr: the output must not depend on graphshim's presence */
        int rc = stats(&st);
        fprintf(stderr, "gs_stats=%d ops=%llu replays=%llu graphs=%llu\n", rc, st.ops, st.replays, st.graphs);
    }
}

/* Pure queries between the ops of a sequence (occupancy, loading state, as
** libraries ask before a launch): they neither resolve held work nor cut the
** sequence. */
static void queries(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        int blocks = 0;
        CUfunctionLoadingState st;
        input(s, x, it);
        CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_axpb, 32, 0));
        CHECK(cuFuncIsLoaded(&st, k_axpb));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        printf("%d blocks %d loaded %d\n", it, blocks, st == CU_FUNCTION_LOADING_STATE_LOADED);
        show(it, "out", out);
    }
}

const struct gp_scenario gp_passthrough[] = {
    {"unclassified", unclassified},
    {"unholdable", unholdable},
    {"nccl", nccl},
    {"collectives", collectives},
    {"api", api},
    {"queries", queries},
    {"unclass-proc", unclassified_proc},
    {NULL, NULL},
};
