// events_timing: the tiny chain loop on a created stream with cudaEventRecord
// before and after the loop for timing; elapsed time goes to stderr only.
#include "common.cuh"

static const char* NAME = "events_timing";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    ChainBufs cb;
    chain_bufs_init(&cb, 10);

    int cur = 0;
    double t0 = now_s();
    CK(cudaEventRecord(e0, s));
    for (int it = 0; it < iters; it++) {
        cur = chain_gpu(cb.d, cur, it, 8, kChain, s);
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    double t1 = now_s();
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (!(ms >= 0.0f)) fail(NAME, "negative elapsed time");
    fprintf(stderr, "%s: %d iterations: gpu %.3f ms (%.2f us/iter), host %.3f ms\n", NAME, iters,
            ms, 1000.0 * ms / iters, 1000.0 * (t1 - t0));

    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
    int rc = 0;
    for (int it = 0; it < iters; it++) rc = chain_cpu(cb.h, rc, it, 8, kChain);
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    print_launches();

    free(out);
    chain_bufs_free(&cb);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return 0;
}
