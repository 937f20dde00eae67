// mem_pool: stream-ordered allocation (cudaMallocAsync / cudaFreeAsync) inside
// the loop, from the device's default pool and from a pool of the program's
// own, with buffers growing 4x per round (4 KiB to 4 MiB, six rounds).
//   default     cudaMallocAsync; the state is a cudaMalloc buffer
//   own-keep    cudaMallocFromPoolAsync from a created pool whose release
//               threshold keeps freed memory; the state is stream-ordered too
//               (allocated at the round's start, freed at its end)
//   own-trim    the created pool with release threshold 0 (memory goes back
//               at every synchronize); the state a cudaMalloc buffer
// Per iteration: input and output buffers are allocated on the stream, the
// input uploaded from pinned memory, 6 kernels, the input freed on the stream
// before the output is copied back, the output freed, stream synchronize; every
// fourth iteration a scratch buffer of another size is allocated and freed first
// (the next allocations move).  Between rounds the pools are trimmed and the
// state freed, so new buffers land where freed ones of another size and kind
// were.  Every iteration checked against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_pool";
static const int ROUNDS = 6;
static const int K = 4;
static const char* KINDS[3] = {"default", "own-keep", "own-trim"};

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    int dev = 0, pools = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
    if (!pools) fail(NAME, "the device has no stream-ordered memory pools");
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t own, def;
    CK(cudaMemPoolCreate(&own, &props));
    CK(cudaDeviceGetDefaultMemPool(&def, dev));

    uint64_t all = FNV_INIT;
    u32 *hin = nullptr, *hout = nullptr;
    long long allocs = 0;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * r), n = bytes / 4;
        const int kind = r % 3;
        cudaMemPool_t pool = kind == 0 ? def : own;
        uint64_t thr = kind == 1 ? UINT64_MAX : 0;
        CK(cudaMemPoolSetAttribute(own, cudaMemPoolAttrReleaseThreshold, &thr));
        if (hin) {
            CK(cudaFreeHost(hin));
            CK(cudaFreeHost(hout));
        }
        CK(cudaMallocHost(&hin, bytes));
        CK(cudaMallocHost(&hout, bytes));
        u32* x = nullptr;
        if (kind == 1) CK(cudaMallocFromPoolAsync((void**)&x, bytes, pool, s));
        else CK(cudaMalloc(&x, bytes));
        CK(cudaMemsetAsync(x, 0, bytes, s));

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            mk_fill(hin, n, mk_seed(r, it));   // the stream is idle
            if (it % 4 == 3) {
                void* scratch = nullptr;
                CK(cudaMallocFromPoolAsync(&scratch, bytes / 2 + 256, pool, s));
                CK(cudaFreeAsync(scratch, s));
                allocs++;
            }
            u32 *din = nullptr, *dout = nullptr;
            if (kind == 0) {
                CK(cudaMallocAsync((void**)&din, bytes, s));
                CK(cudaMallocAsync((void**)&dout, bytes, s));
            } else {
                CK(cudaMallocFromPoolAsync((void**)&din, bytes, pool, s));
                CK(cudaMallocFromPoolAsync((void**)&dout, bytes, pool, s));
            }
            allocs += 2;
            CK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s));
            mk_gpu(x, din, dout, n, r, it, K, s);
            CK(cudaFreeAsync(din, s));
            CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaFreeAsync(dout, s));
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, hout, rout, n);
            rh = fnv1a(hout, bytes, rh);
        }
        if (kind == 1) CK(cudaFreeAsync(x, s));
        else CK(cudaFree(x));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemPoolTrimTo(own, 0));
        CK(cudaMemPoolTrimTo(def, 0));
        mk_round_line(r, KINDS[kind], bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }

    printf("sample %s\niters %d\n", NAME, iters);
    printf("all.fnv1a 0x%016llx\n", (unsigned long long)all);
    printf("stream_allocs %lld\n", allocs);
    print_launches();

    CK(cudaFreeHost(hin));
    CK(cudaFreeHost(hout));
    CK(cudaMemPoolDestroy(own));
    CK(cudaStreamDestroy(s));
    return 0;
}
