// h2d_pinned: each iteration uploads fresh input from pinned host memory
// (cudaMemcpyAsync H2D), runs the tiny chain, downloads the result into pinned
// memory (cudaMemcpyAsync D2H) and synchronizes; every iteration's output is
// checked against the CPU reference and hashed.
#include "common.cuh"

static const char* NAME = "h2d_pinned";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    const size_t bytes = GS_N * sizeof(float);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs cb;
    chain_bufs_init(&cb, 4);
    float *hin, *hout;
    CK(cudaMallocHost(&hin, bytes));
    CK(cudaMallocHost(&hout, bytes));

    uint64_t hash = FNV_INIT;
    int cur = 0;
    for (int it = 0; it < iters; it++) {
        const int start = cur;
        fill_random(hin, GS_N, 1000 + it);  // previous copy completed: synced
        CK(cudaMemcpyAsync(cb.d[cur], hin, bytes, cudaMemcpyHostToDevice, s));
        cur = chain_gpu(cb.d, cur, it, 3, kChain, s);
        CK(cudaMemcpyAsync(hout, cb.d[cur], bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));

        // CPU reference for this iteration
        memcpy(cb.h[start], hin, bytes);
        int c2 = chain_cpu(cb.h, start, it, 3, kChain);
        if (c2 != cur) fail(NAME, "buffer bookkeeping");
        check_equal(NAME, "iteration output", hout, cb.h[cur], GS_N);
        hash = fnv1a(hout, bytes, hash);
    }

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", hout, GS_N);
    printf("all_iters.fnv1a 0x%016llx\n", (unsigned long long)hash);
    print_launches();

    CK(cudaFreeHost(hin));
    CK(cudaFreeHost(hout));
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
