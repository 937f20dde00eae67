// h2d_pageable: each iteration uploads input from PAGEABLE host memory with
// cudaMemcpyAsync and REWRITES the host buffer right after the call returns
// (with the next iteration's data).  CUDA semantics: a pageable H2D
// cudaMemcpyAsync returns once the source has been staged, so the kernels must
// see the value at call time.  Two uploads per iteration: a 4 KiB vector (the
// chain input) and a 1 MiB vector (4 slices of it are added in).  The result
// goes back through a pageable D2H cudaMemcpyAsync; every iteration is checked.
#include "common.cuh"

static const char* NAME = "h2d_pageable";

static const int NBIG = 1 << 18;  // 1 MiB of floats

__global__ void gsamp_add4(float* x, const float* big, int nbig, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        v = __fadd_rn(v, big[i]);
        v = __fadd_rn(v, big[nbig / 3 + i]);
        v = __fadd_rn(v, big[2 * (nbig / 3) + i]);
        v = __fadd_rn(v, big[nbig - n + i]);
        x[i] = v;
    }
}

static void cpu_add4(float* x, const float* big, int nbig, int n)
{
    for (int i = 0; i < n; i++) {
        float v = x[i];
        v = v + big[i];
        v = v + big[nbig / 3 + i];
        v = v + big[2 * (nbig / 3) + i];
        v = v + big[nbig - n + i];
        x[i] = v;
    }
}

static void fill_big(float* v, int it)
{
    fill_random(v, NBIG, 5000 + it);
    for (int i = 0; i < NBIG; i++) v[i] *= 0.125f;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 100);
    const size_t bytes = GS_N * sizeof(float);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs cb;
    chain_bufs_init(&cb, 5);
    float* dbig;
    CK(cudaMalloc(&dbig, NBIG * sizeof(float)));

    // pageable host buffers (plain malloc)
    float* hin = (float*)malloc(bytes);
    float* hbig = (float*)malloc(NBIG * sizeof(float));
    float* hout = (float*)malloc(bytes);
    float* refin = (float*)malloc(bytes);            // CPU copies of what was
    float* refbig = (float*)malloc(NBIG * sizeof(float));  // current at call time
    if (!hin || !hbig || !hout || !refin || !refbig) fail(NAME, "malloc");

    fill_random(hin, GS_N, 2000);
    fill_big(hbig, 0);

    uint64_t hash = FNV_INIT;
    int cur = 0;
    for (int it = 0; it < iters; it++) {
        const int start = cur;
        memcpy(refin, hin, bytes);
        memcpy(refbig, hbig, NBIG * sizeof(float));

        CK(cudaMemcpyAsync(cb.d[cur], hin, bytes, cudaMemcpyHostToDevice, s));
        fill_random(hin, GS_N, 2000 + it + 1);  // rewrite right after the call
        CK(cudaMemcpyAsync(dbig, hbig, NBIG * sizeof(float), cudaMemcpyHostToDevice, s));
        fill_big(hbig, it + 1);                 // rewrite right after the call

        LAUNCH(gsamp_add4, GS_N / 256, 256, 0, s, cb.d[cur], dbig, NBIG, GS_N);
        cur = chain_gpu(cb.d, cur, it, 4, kChain, s);
        CK(cudaMemcpyAsync(hout, cb.d[cur], bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));

        memcpy(cb.h[start], refin, bytes);
        cpu_add4(cb.h[start], refbig, NBIG, GS_N);
        int c2 = chain_cpu(cb.h, start, it, 4, kChain);
        if (c2 != cur) fail(NAME, "buffer bookkeeping");
        check_equal(NAME, "iteration output", hout, cb.h[cur], GS_N);
        hash = fnv1a(hout, bytes, hash);
    }

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", hout, GS_N);
    printf("all_iters.fnv1a 0x%016llx\n", (unsigned long long)hash);
    print_launches();

    free(hin); free(hbig); free(hout); free(refin); free(refbig);
    CK(cudaFree(dbig));
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
