/*
** memory.c: guardprog's scenarios of memory: pageable sources rewritten after
** their copy, device and pinned memory run out while graphs are alive, buffers
** freed and allocated again under a graph's copy nodes.
*/
#include "guardprog.h"

/* A pageable source is rewritten right after the async copy returns.  With
** bail (staging-bail), every fourth iteration one more axpb comes where the
** sequence has its copy to out, and the held ops (the pageable copy and the
** first axpb) bail out, issued one by one after the program rewrote the copy's
** source: they must copy the bytes of the call. */
static void staging_run(int iters, int bail)
{
    CUstream s;
    CUdeviceptr x;
    float *out, *src = malloc(N * sizeof(float));
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        for (int i = 0; i < N; i++)
            src[i] = -1.0f; /* allowed: the copy took the bytes at the call */
        axpb(s, x);
        if (bail && it % 4 == 3)
            axpb(s, x); /* a mismatch: the held ops go out eagerly */
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void staging(int iters) { staging_run(iters, 0); }
static void staging_bail(int iters) { staging_run(iters, 1); }

/* staging's sequence, each iteration ended by an event record, not by a
** synchronize: iteration it + 1's copy is held (its source staged) while
** iteration it's graph may not have run yet (FAKECUDA_PENDING), and must not
** overwrite the bytes that graph has still to copy.  Each iteration's result
** goes to a slot of its own of pinned memory, shown after one synchronize. */
static void staging_events(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x = dev();
    float *slots, *src = malloc(N * sizeof(float));
    CHECK(cuMemAllocHost_v2((void **)&slots, (size_t)iters * N * sizeof(float)));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        for (int i = 0; i < N; i++)
            src[i] = -1.0f;
        axpb(s, x);
        copy(s, P(slots + (size_t)it * N), x);
        CHECK(cuEventRecord(e, s));
    }
    CHECK(cuStreamSynchronize(s));
    for (int it = 0; it < iters; it++)
        show(it, "out", slots + (size_t)it * N);
}

/* Blocks fill_memory() allocated, and their kind. */
static void *filled[256];
static size_t nfilled;
static int filled_pinned;

/* Allocates device (pinned: pinned host) memory until it runs out, in blocks
** of 1 MiB, then 64, 4 and 1/4 KiB, kept until free_memory().  Returns the
** bytes it got. */
static size_t fill_memory(int pinned_kind)
{
    static const size_t sizes[] = {1 << 20, 64 << 10, 4 << 10, 256};
    size_t total = 0;
    filled_pinned = pinned_kind;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (; nfilled < 256; nfilled++) {
            CUdeviceptr d;
            CUresult rc = pinned_kind ? cuMemAllocHost_v2(&filled[nfilled], sizes[k]) : cuMemAlloc_v2(&d, sizes[k]);
            if (rc == CUDA_ERROR_OUT_OF_MEMORY)
                break;
            CHECK(rc);
            if (!pinned_kind)
                filled[nfilled] = (void *)(uintptr_t)d;
            total += sizes[k];
        }
    }
    return total;
}

static void free_memory(void)
{
    while (nfilled-- > 0)
        CHECK(filled_pinned ? cuMemFreeHost(filled[nfilled]) : cuMemFree_v2(P(filled[nfilled])));
    nfilled = 0;
}

/* A loop whose graph (and the staging buffer of its pageable copy) is alive,
** then device memory allocated until none is left; the loop again, then pinned
** host memory until none is left; the loop once more.  The totals reached are
** the program's to have: graphshim's own memory must not lower them.  For a
** small device (FAKECUDA_MEM_MB and FAKECUDA_PINNED_MB). */
static void oom(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out, *src = malloc(N * sizeof(float));
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < 3 * iters; it++) {
        if (it == iters) {
            printf("device memory reached %zu bytes\n", fill_memory(0));
            free_memory();
        }
        if (it == 2 * iters) {
            printf("pinned memory reached %zu bytes\n", fill_memory(1));
            free_memory();
        }
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The staging loop, whose last iteration ends with an allocation of the
** program's, not a synchronize: under FAKECUDA_PENDING the replayed graph
** still has to read the staging buffer of its pageable copy when the
** allocation fails (FAKECUDA_FAIL=cuMemAlloc_v2:2:2, the program's second
** call), and graphshim frees its memory.  The program does not care whether
** its allocation got memory, only that its results are right. */
static void oom_pending(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), d;
    float *out = pinned(), *src = malloc(N * sizeof(float));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            src[i] = (float)(it * 10 + i);
        CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
        for (int i = 0; i < N; i++)
            src[i] = -1.0f;
        axpb(s, x);
        copy(s, P(out), x);
        if (it == iters - 1) {
            CUresult rc = cuMemAlloc_v2(&d, 1 << 20);
            if (rc == CUDA_SUCCESS)
                CHECK(cuMemFree_v2(d));
            else if (rc != CUDA_ERROR_OUT_OF_MEMORY)
                CHECK(rc);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The loop's graph, freed when the program took all device memory, is built
** again while the device is still full: graphshim gives it up (the sequence
** goes eagerly), and the program's memory stays the program's. */
static void oom_full(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < 3 * iters; it++) {
        if (it == iters)
            printf("device memory reached %zu bytes\n", fill_memory(0));
        if (it == 2 * iters)
            free_memory();
        input(s, x, it);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Copies between pinned host memory and device memory, in rounds of four
** iterations; after each round every buffer is freed and allocated again, at
** the same addresses (same sizes), as programs that allocate per phase do.  A
** graph's copy nodes bind the allocations they were made with: after the
** frees they must not run again (the real driver faults, or crashes). */
static void host_bind(int iters)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round * 4 < iters; round++) {
        CUdeviceptr x = dev();
        float *src = pinned(), *out = pinned();
        for (int it = round * 4; it < iters && it < round * 4 + 4; it++) {
            for (int i = 0; i < N; i++)
                src[i] = (float)(it * 10 + i);
            CHECK(cuMemcpyHtoDAsync_v2(x, src, N * sizeof(float), s));
            axpb(s, x);
            CHECK(cuMemcpyDtoHAsync_v2(out, x, N * sizeof(float), s));
            CHECK(cuStreamSynchronize(s));
            show(it, "out", out);
        }
        CHECK(cuMemFreeHost(src));
        CHECK(cuMemFreeHost(out));
        CHECK(cuMemFree_v2(x));
    }
}

/* host-bind with a device-to-host copy as the graph's only host copy (the
** input comes from a kernel): its node binds the pinned buffer and the device
** buffer it was made with, freed and allocated again, at the same addresses,
** every 4 iterations. */
static void host_bind_d2h(int iters)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round * 4 < iters; round++) {
        CUdeviceptr x = dev();
        float *out = pinned();
        for (int it = round * 4; it < iters && it < round * 4 + 4; it++) {
            fill(s, x, (float)(it % 4)); /* the same bytes each round: one sequence */
            axpb(s, x);
            CHECK(cuMemcpyDtoHAsync_v2(out, x, N * sizeof(float), s));
            CHECK(cuStreamSynchronize(s));
            show(it, "out", out);
        }
        CHECK(cuMemFreeHost(out));
        CHECK(cuMemFree_v2(x));
    }
}

const struct gp_scenario gp_memory[] = {
    {"staging", staging},
    {"host-bind", host_bind},
    {"oom", oom},
    {"oom-full", oom_full},
    {"oom-pending", oom_pending},
    {"host-bind-d2h", host_bind_d2h},
    {"staging-bail", staging_bail},
    {"staging-events", staging_events},
    {NULL, NULL},
};
