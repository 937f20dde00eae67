// tiny_legacy: the tiny chain on the legacy default stream (stream 0),
// cudaDeviceSynchronize after each iteration.
#include "common.cuh"

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "tiny_legacy must be built without --default-stream per-thread"
#endif

static const char* NAME = "tiny_legacy";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    ChainBufs cb;
    chain_bufs_init(&cb, 2);

    int cur = 0;
    for (int it = 0; it < iters; it++) {
        cur = chain_gpu(cb.d, cur, it, 1, kChain, 0);
        CK(cudaDeviceSynchronize());
    }
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    int rc = 0;
    for (int it = 0; it < iters; it++) rc = chain_cpu(cb.h, rc, it, 1, kChain);
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    print_launches();

    free(out);
    chain_bufs_free(&cb);
    return 0;
}
