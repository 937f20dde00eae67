// mem_pinned: pinned host memory of three kinds, freed and allocated again
// between rounds and inside them.  Six rounds with buffers growing 4x per round
// (4 KiB to 4 MiB); the kind changes every round:
//   mallochost   cudaMallocHost input and output; H2D and D2H cudaMemcpyAsync
//   mapped       cudaHostAlloc(cudaHostAllocMapped): the first kernel reads the
//                input straight from host memory through its device pointer;
//                the output comes back by D2H cudaMemcpyAsync
//   wc           cudaHostAlloc(Portable | WriteCombined) input, Portable output
// Pinned memory is read when the copy executes, so the host writes an input
// only while the stream is idle (after the last synchronize).  Half-way through
// each round the input is freed and allocated again with another size.
// Per iteration: H2D (or none), 6 kernels, D2H, stream synchronize; every
// iteration checked against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_pinned";
static const int ROUNDS = 6;
static const int K = 4;
static const char* KINDS[3] = {"mallochost", "mapped", "wc"};

static u32* alloc_in(int kind, size_t bytes)
{
    void* p = nullptr;
    if (kind == 0) CK(cudaMallocHost(&p, bytes));
    else if (kind == 1) CK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
    else CK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocWriteCombined));
    return (u32*)p;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int can_map = 0;
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    if (!can_map) fail(NAME, "the device cannot map host memory");

    uint64_t all = FNV_INIT;
    int same_in = 0, same_out = 0;
    u32 *hin = nullptr, *hout = nullptr, *x = nullptr, *din = nullptr, *dout = nullptr;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * r), n = bytes / 4;
        const int kind = r % 3;
        void* oi = hin;
        void* oo = hout;
        if (hin) {
            CK(cudaFreeHost(hin));
            CK(cudaFreeHost(hout));
            CK(cudaFree(x));
            CK(cudaFree(din));
            CK(cudaFree(dout));
        }
        hin = alloc_in(kind, bytes);
        void* p = nullptr;
        if (kind == 0) CK(cudaMallocHost(&p, bytes));
        else CK(cudaHostAlloc(&p, bytes, kind == 1 ? cudaHostAllocMapped : cudaHostAllocPortable));
        hout = (u32*)p;
        same_in += (void*)hin == oi;
        same_out += (void*)hout == oo;
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&din, bytes));
        CK(cudaMalloc(&dout, bytes));
        CK(cudaMemsetAsync(x, 0, bytes, s));
        CK(cudaStreamSynchronize(s));

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            if (it == iters / 2) {
                // the stream is idle: free the input, allocate one a page larger
                CK(cudaFreeHost(hin));
                hin = alloc_in(kind, bytes + 4096);
            }
            mk_fill(hin, n, mk_seed(r, it));
            const u32* src = din;
            if (kind == 1) {
                void* dp = nullptr;
                CK(cudaHostGetDevicePointer(&dp, hin, 0));
                src = (const u32*)dp;
            } else {
                CK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s));
            }
            mk_gpu(x, src, dout, n, r, it, K, s);
            CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, hout, rout, n);
            rh = fnv1a(hout, bytes, rh);
        }
        mk_round_line(r, KINDS[kind], bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }
    fprintf(stderr, "%s: same address again between rounds: input %d, output %d of %d\n", NAME, same_in,
            same_out, ROUNDS);

    mk_summary(NAME, iters, all);

    CK(cudaFreeHost(hin));
    CK(cudaFreeHost(hout));
    CK(cudaFree(x));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaStreamDestroy(s));
    return 0;
}
