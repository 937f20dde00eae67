// two_seqs: two different kernel sequences per iteration, separated by a
// cudaStreamSynchronize:
//   A: the 21-kernel chain on buffer set X (block 256)
//   B: a transfer X -> Y, then a 9-kernel chain on set Y with a different
//      shape (block 64, mix every 3rd step)
#include "common.cuh"

static const char* NAME = "two_seqs";

static const ChainCfg kChainB = {9, 3, 64};

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs X, Y;
    chain_bufs_init(&X, 8);
    chain_bufs_init(&Y, 9);
    int cx = 0, cy = 0;

    for (int it = 0; it < iters; it++) {
        cx = chain_gpu(X.d, cx, it, 6, kChain, s);
        CK(cudaStreamSynchronize(s));

        float pa, pb;
        chain_params(it, 50, 7, &pa, &pb);
        LAUNCH(gsamp_axpb, GS_N / 64, 64, 0, s, X.d[cx], Y.d[cy], pa, pb, GS_N);
        cy = chain_gpu(Y.d, cy, it, 7, kChainB, s);
        CK(cudaStreamSynchronize(s));
    }
    float* outx = (float*)malloc(GS_N * sizeof(float));
    float* outy = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(outx, X.d[cx], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(outy, Y.d[cy], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    int rx = 0, ry = 0;
    for (int it = 0; it < iters; it++) {
        rx = chain_cpu(X.h, rx, it, 6, kChain);
        float pa, pb;
        chain_params(it, 50, 7, &pa, &pb);
        cpu_axpb(X.h[rx], Y.h[ry], pa, pb, GS_N);
        ry = chain_cpu(Y.h, ry, it, 7, kChainB);
    }
    if (rx != cx || ry != cy) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output X", outx, X.h[cx], GS_N);
    check_equal(NAME, "output Y", outy, Y.h[cy], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("outx", outx, GS_N);
    print_floats("outy", outy, GS_N);
    print_launches();

    free(outx); free(outy);
    chain_bufs_free(&X);
    chain_bufs_free(&Y);
    CK(cudaStreamDestroy(s));
    return 0;
}
