// um_perf: a matrix multiply timed over every kind of memory, the way a
// memory-kind benchmark does it, and the pattern that once crashed graphshim
// inside the driver (cuGraphLaunch, from a device-to-host copy's boundary).
//
// For each matrix size (16 to 512, 4x the elements per round) and, at each size,
// for each allocation kind in turn:
//   - a reference step on the legacy stream: fresh malloc'd inputs and fresh
//     cudaMalloc'd device buffers, two pageable uploads, the multiply, a
//     pageable download, a synchronize, the multiply the other way round,
//     another download, a synchronize; the device buffers are freed again;
//   - the kind's buffers: pageable (cudaMemcpy / cudaMemcpyAsync), pinned
//     (cudaMemcpy / cudaMemcpyAsync), zero-copy mapped (kernels read host
//     memory), managed, managed with prefetches to the device and back to the
//     host (synchronous and asynchronous; the asynchronous one first launches a
//     one-thread kernel that spins on a pinned latch until the host sets it);
//   - ITERS iterations of: host writes the inputs, uploads (or prefetches), the
//     multiply, downloads (or prefetches back), latch set, synchronize, and the
//     result compared bit for bit with the reference step's;
//   - everything freed, so the next kind's and size's buffers land where freed
//     ones of another kind or size were.
// Prints a checksum per (size, kind).  Usage: um_perf [iterations]
#include "common.cuh"

static const char* NAME = "um_perf";

#define TILE 16

// C = A * B, n x n, n a multiple of TILE.  Deterministic: each element is one
// thread's sum in a fixed order.
__global__ void gsamp_matmul(float* c, const float* a, const float* b, int n)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int k = 0; k < n; k += TILE) {
        as[ty][tx] = a[row * n + k + tx];
        bs[ty][tx] = b[(k + ty) * n + col];
        __syncthreads();
        for (int j = 0; j < TILE; j++)
            sum = __fmaf_rn(as[ty][j], bs[j][tx], sum);
        __syncthreads();
    }
    c[row * n + col] = sum;
}

// Spins until *latch is set by the host, for at most about 10 s (then *timed_out).
__global__ void gsamp_spin(volatile unsigned* latch, unsigned* timed_out)
{
    long long start = clock64();
    while (*latch < 1) {
        if (clock64() - start > 20000000000ll) {
            *timed_out = 1;
            return;
        }
    }
}

enum kind {
    PAGEABLE,
    PAGEABLE_ASYNC,
    PINNED,
    PINNED_ASYNC,
    ZERO_COPY,
    MANAGED,
    MANAGED_HINTS,
    MANAGED_HINTS_ASYNC,
    NKINDS
};
static const char* kind_name[NKINDS] = {"pageable",       "pageable-async", "pinned",        "pinned-async",
                                        "zero-copy",      "managed",        "managed-hints", "managed-hints-async"};

static int g_device, g_concurrent_managed;

static void matmul(float* c, const float* a, const float* b, int n, cudaStream_t s)
{
    dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
    LAUNCH(gsamp_matmul, grid, block, 0, s, c, a, b, n);
}

static void prefetch(void* p, size_t size, bool to_device, cudaStream_t s)
{
    cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_device ? g_device : 0;
    CK(cudaMemPrefetchAsync(p, size, loc, 0, s));
}

// One (size, kind): returns the checksum of the last result.
static uint64_t run(int n, int k, int iters)
{
    size_t size = (size_t)n * n * sizeof(float);
    int count = n * n;
    float *x = (float*)malloc(size), *y = (float*)malloc(size);
    float *ref_xy = (float*)malloc(size), *ref_yx = (float*)malloc(size);
    float *da = NULL, *db = NULL, *dc = NULL, *ha = NULL, *hb = NULL, *hc = NULL;
    unsigned *latch = NULL, *timed_out = NULL;
    cudaStream_t s;
    bool copies = k <= PINNED_ASYNC, hints = k == MANAGED_HINTS || k == MANAGED_HINTS_ASYNC;
    bool async = k == PAGEABLE_ASYNC || k == PINNED_ASYNC || k == MANAGED_HINTS_ASYNC;
    uint64_t sum = FNV_INIT;

    if (!x || !y || !ref_xy || !ref_yx)
        fail(NAME, "out of host memory");
    CK(cudaStreamCreate(&s));
    fill_random(x, count, (uint32_t)(n * 7 + 1));
    fill_random(y, count, (uint32_t)(n * 7 + 2));

    // The reference step, on the legacy stream.
    CK(cudaMalloc(&da, size));
    CK(cudaMalloc(&db, size));
    CK(cudaMalloc(&dc, size));
    CK(cudaMemcpyAsync(da, x, size, cudaMemcpyHostToDevice));
    CK(cudaMemcpyAsync(db, y, size, cudaMemcpyHostToDevice));
    matmul(dc, da, db, n, 0);
    CK(cudaMemcpyAsync(ref_xy, dc, size, cudaMemcpyDeviceToHost));
    CK(cudaStreamSynchronize(0));
    matmul(dc, db, da, n, 0);
    CK(cudaMemcpyAsync(ref_yx, dc, size, cudaMemcpyDeviceToHost));
    CK(cudaStreamSynchronize(0));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));

    CK(cudaMallocHost(&latch, sizeof *latch));
    CK(cudaMallocHost(&timed_out, sizeof *timed_out));
    *timed_out = 0;
    switch (k) {
    case PAGEABLE:
    case PAGEABLE_ASYNC:
        ha = (float*)malloc(size);
        hb = (float*)malloc(size);
        hc = (float*)malloc(size);
        if (!ha || !hb || !hc)
            fail(NAME, "out of host memory");
        CK(cudaMalloc(&da, size));
        CK(cudaMalloc(&db, size));
        CK(cudaMalloc(&dc, size));
        break;
    case PINNED:
    case PINNED_ASYNC:
        CK(cudaMallocHost(&ha, size));
        CK(cudaMallocHost(&hb, size));
        CK(cudaMallocHost(&hc, size));
        CK(cudaMalloc(&da, size));
        CK(cudaMalloc(&db, size));
        CK(cudaMalloc(&dc, size));
        break;
    case ZERO_COPY:
        CK(cudaHostAlloc(&ha, size, cudaHostAllocMapped));
        CK(cudaHostAlloc(&hb, size, cudaHostAllocMapped));
        CK(cudaHostAlloc(&hc, size, cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer(&da, ha, 0));
        CK(cudaHostGetDevicePointer(&db, hb, 0));
        CK(cudaHostGetDevicePointer(&dc, hc, 0));
        break;
    default:
        if (hints && !g_concurrent_managed) {
            CK(cudaMallocManaged(&da, size, cudaMemAttachHost));
            CK(cudaMallocManaged(&db, size, cudaMemAttachHost));
            CK(cudaMallocManaged(&dc, size, cudaMemAttachHost));
        } else {
            CK(cudaMallocManaged(&da, size));
            CK(cudaMallocManaged(&db, size));
            CK(cudaMallocManaged(&dc, size));
        }
        if (hints && g_concurrent_managed) {
            prefetch(da, size, false, 0);
            prefetch(db, size, false, 0);
            prefetch(dc, size, false, 0);
        }
        ha = da, hb = db, hc = dc;
        break;
    }
    memset(ha, 0, size);
    memset(hb, 0, size);
    memset(hc, 0, size);

    for (int i = 0; i < iters; i++) {
        bool even = (i & 1) == 0;
        memcpy(ha, even ? x : y, size);
        memcpy(hb, even ? y : x, size);
        if (async && hints) {
            *latch = 0;
            LAUNCH(gsamp_spin, 1, 1, 0, s, latch, timed_out);
        }
        if (copies) {
            if (async) {
                CK(cudaMemcpyAsync(da, ha, size, cudaMemcpyHostToDevice, s));
                CK(cudaMemcpyAsync(db, hb, size, cudaMemcpyHostToDevice, s));
            } else {
                CK(cudaMemcpy(da, ha, size, cudaMemcpyHostToDevice));
                CK(cudaMemcpy(db, hb, size, cudaMemcpyHostToDevice));
            }
        }
        if (hints) {
            if (g_concurrent_managed) {
                prefetch(da, size, true, s);
                prefetch(db, size, true, s);
                prefetch(dc, size, true, s);
            } else {
                CK(cudaStreamAttachMemAsync(s, da, 0, cudaMemAttachGlobal));
                CK(cudaStreamAttachMemAsync(s, db, 0, cudaMemAttachGlobal));
                CK(cudaStreamAttachMemAsync(s, dc, 0, cudaMemAttachGlobal));
            }
            if (!async)
                CK(cudaStreamSynchronize(s));
        }
        matmul(dc, da, db, n, s);
        if (!async)
            CK(cudaStreamSynchronize(s));
        if (hints) {
            if (g_concurrent_managed) {
                prefetch(da, size, false, 0);
                prefetch(db, size, false, 0);
                prefetch(dc, size, false, 0);
            } else {
                CK(cudaStreamAttachMemAsync(s, da, 0, cudaMemAttachHost));
                CK(cudaStreamAttachMemAsync(s, db, 0, cudaMemAttachHost));
                CK(cudaStreamAttachMemAsync(s, dc, 0, cudaMemAttachHost));
            }
            if (!async)
                CK(cudaStreamSynchronize(s));
        }
        if (copies) {
            if (async)
                CK(cudaMemcpyAsync(hc, dc, size, cudaMemcpyDeviceToHost, s));
            else
                CK(cudaMemcpy(hc, dc, size, cudaMemcpyDeviceToHost));
        }
        if (async) {
            if (hints)
                *latch = 1;
            CK(cudaStreamSynchronize(s));
        } else if (k == ZERO_COPY || k == MANAGED) {
            CK(cudaDeviceSynchronize());
        }
        if (*timed_out)
            fail(NAME, "the latch kernel timed out");
        check_equal(NAME, kind_name[k], hc, even ? ref_xy : ref_yx, count);
        if (i == iters - 1)
            sum = fnv1a(hc, size);
    }

    switch (k) {
    case PAGEABLE:
    case PAGEABLE_ASYNC:
        free(ha);
        free(hb);
        free(hc);
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
        break;
    case PINNED:
    case PINNED_ASYNC:
        CK(cudaFreeHost(ha));
        CK(cudaFreeHost(hb));
        CK(cudaFreeHost(hc));
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
        break;
    case ZERO_COPY:
        CK(cudaFreeHost(ha));
        CK(cudaFreeHost(hb));
        CK(cudaFreeHost(hc));
        break;
    default:
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
        break;
    }
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(latch));
    CK(cudaFreeHost(timed_out));
    free(x);
    free(y);
    free(ref_xy);
    free(ref_yx);
    return sum;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 12);
    cudaDeviceProp prop;

    CK(cudaGetDevice(&g_device));
    CK(cudaGetDeviceProperties(&prop, g_device));
    g_concurrent_managed = prop.concurrentManagedAccess;
    printf("sample %s\niters %d\n", NAME, iters);
    for (int n = 16; n <= 512; n *= 2)
        for (int k = 0; k < NKINDS; k++)
            printf("n=%d %s.fnv1a 0x%016llx\n", n, kind_name[k], (unsigned long long)run(n, k, iters));
    print_launches();
    return 0;
}
