// pingpong: two buffer sets; iteration it works on set it%2, taking its input
// from the other set's result, so the kernel pointer arguments alternate
// between two values every iteration (a graphing layer must not replay stale
// pointers).  cudaStreamSynchronize after each iteration.
#include "common.cuh"

static const char* NAME = "pingpong";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs set[2];
    chain_bufs_init(&set[0], 6);
    chain_bufs_init(&set[1], 7);
    int cur[2] = {0, 0};

    for (int it = 0; it < iters; it++) {
        int a = it & 1, o = a ^ 1;
        float pa, pb;
        chain_params(it, 99, 5, &pa, &pb);
        // input of this set = transformed result of the other set
        LAUNCH(gsamp_axpb, GS_N / 256, 256, 0, s, set[o].d[cur[o]], set[a].d[cur[a]], pa, pb, GS_N);
        cur[a] = chain_gpu(set[a].d, cur[a], it, 5, kChain, s);
        CK(cudaStreamSynchronize(s));
    }
    int last = (iters - 1) & 1;
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, set[last].d[cur[last]], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    int rc[2] = {0, 0};
    for (int it = 0; it < iters; it++) {
        int a = it & 1, o = a ^ 1;
        float pa, pb;
        chain_params(it, 99, 5, &pa, &pb);
        cpu_axpb(set[o].h[rc[o]], set[a].h[rc[a]], pa, pb, GS_N);
        rc[a] = chain_cpu(set[a].h, rc[a], it, 5, kChain);
    }
    if (rc[last] != cur[last]) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, set[last].h[cur[last]], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    print_launches();

    free(out);
    chain_bufs_free(&set[0]);
    chain_bufs_free(&set[1]);
    CK(cudaStreamDestroy(s));
    return 0;
}
