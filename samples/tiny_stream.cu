// tiny_stream: a loop of 21 tiny dependent kernels on a created stream,
// cudaStreamSynchronize after each iteration, D2H at the end.
#include "common.cuh"

static const char* NAME = "tiny_stream";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs cb;
    chain_bufs_init(&cb, 1);

    int cur = 0;
    for (int it = 0; it < iters; it++) {
        cur = chain_gpu(cb.d, cur, it, 0, kChain, s);
        CK(cudaStreamSynchronize(s));
    }
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    int rc = 0;
    for (int it = 0; it < iters; it++) rc = chain_cpu(cb.h, rc, it, 0, kChain);
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    print_launches();

    free(out);
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
