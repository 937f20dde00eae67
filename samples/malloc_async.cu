// malloc_async: cudaMallocAsync/cudaFreeAsync inside the loop.  Each iteration
// allocates 3 scratch buffers from the stream-ordered pool, copies the
// persistent state into them (kernels), runs the tiny chain on the scratch
// buffers, copies the state back and frees the scratch asynchronously;
// cudaStreamSynchronize per iteration.
#include "common.cuh"

static const char* NAME = "malloc_async";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    const size_t bytes = GS_N * sizeof(float);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs st;  // persistent state: d[0] = current, d[2] = previous
    chain_bufs_init(&st, 40);
    const int grid = GS_N / 256;

    long long allocs = 0;
    for (int it = 0; it < iters; it++) {
        float* tmp = nullptr;
        CK(cudaMallocAsync((void**)&tmp, 3 * bytes, s));
        allocs++;
        float* t[3] = {tmp, tmp + GS_N, tmp + 2 * GS_N};
        LAUNCH(gsamp_axpb, grid, 256, 0, s, st.d[0], t[0], 1.0f, 0.0f, GS_N);
        LAUNCH(gsamp_axpb, grid, 256, 0, s, st.d[2], t[2], 1.0f, 0.0f, GS_N);
        int c = chain_gpu(t, 0, it, 14, kChain, s);
        if (c != 0) fail(NAME, "chain does not end on its start buffer");
        LAUNCH(gsamp_axpb, grid, 256, 0, s, t[0], st.d[0], 1.0f, 0.0f, GS_N);
        LAUNCH(gsamp_axpb, grid, 256, 0, s, t[2], st.d[2], 1.0f, 0.0f, GS_N);
        CK(cudaFreeAsync(tmp, s));
        CK(cudaStreamSynchronize(s));
    }
    float* out = (float*)malloc(bytes);
    CK(cudaMemcpy(out, st.d[0], bytes, cudaMemcpyDeviceToHost));

    float* h[3];
    for (int j = 0; j < 3; j++) h[j] = (float*)malloc(bytes);
    for (int it = 0; it < iters; it++) {
        cpu_axpb(st.h[0], h[0], 1.0f, 0.0f, GS_N);
        cpu_axpb(st.h[2], h[2], 1.0f, 0.0f, GS_N);
        chain_cpu(h, 0, it, 14, kChain);
        cpu_axpb(h[0], st.h[0], 1.0f, 0.0f, GS_N);
        cpu_axpb(h[2], st.h[2], 1.0f, 0.0f, GS_N);
    }
    check_equal(NAME, "output", out, st.h[0], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    printf("mallocs %lld\n", allocs);
    print_launches();

    for (int j = 0; j < 3; j++) free(h[j]);
    free(out);
    chain_bufs_free(&st);
    CK(cudaStreamDestroy(s));
    return 0;
}
