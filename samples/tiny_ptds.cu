// tiny_ptds: the tiny chain on stream 0 built with --default-stream per-thread
// (stream 0 is the per-thread default stream), cudaStreamSynchronize(0) after
// each iteration.
#include "common.cuh"

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "tiny_ptds must be built with --default-stream per-thread"
#endif

static const char* NAME = "tiny_ptds";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    ChainBufs cb;
    chain_bufs_init(&cb, 3);

    int cur = 0;
    for (int it = 0; it < iters; it++) {
        cur = chain_gpu(cb.d, cur, it, 2, kChain, 0);
        CK(cudaStreamSynchronize(0));
    }
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    int rc = 0;
    for (int it = 0; it < iters; it++) rc = chain_cpu(cb.h, rc, it, 2, kChain);
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    print_launches();

    free(out);
    chain_bufs_free(&cb);
    return 0;
}
