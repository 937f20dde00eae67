// bench.cu: one workload, timed, in one of two modes.
//
//   bench WORKLOAD eager|graph [ITERS] [REPS]
//
//   eager  the plain program: launches each iteration (run it with and without
//          graphshim preloaded)
//   graph  the same work as a hand-written CUDA graph: one iteration captured once
//          with cudaStreamBeginCapture, then replayed each iteration
//
// Every iteration ends with cudaStreamSynchronize.  Prints
// `us_per_iter <median over REPS>` and a checksum of the result (the two modes
// and graphshim must agree; it goes to stdout with the time, one line each).
//
// Workloads:
//   tiny1 tiny5 tiny20 tiny100  K tiny dependent kernels (1024 floats)
//   large20                     20 kernels over 16M floats each (no gain to expect)
//   norepeat                    20 tiny kernels whose arguments change every
//                               iteration: nothing ever repeats (the worst case)
//   h2d_pinned h2d_pageable     4 KiB H2D copy in, 20 tiny kernels, D2H out (pinned)
//   cublas                      cublasSgemm 128x128x128 + an elementwise kernel
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

__global__ void bench_axpb(float *x, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = a * x[i] + b;
}

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct Work {
    std::string name;
    int k = 20;
    int n = 1024;
    bool copies = false, pageable = false, norepeat = false, gemm = false;
    cudaStream_t s;
    float *x = nullptr, *hin = nullptr, *hout = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    cublasHandle_t h = nullptr;
    long iter = 0;

    void setup()
    {
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(cudaMalloc(&x, (size_t)n * sizeof(float)));
        std::vector<float> init(n);
        for (int i = 0; i < n; i++)
            init[i] = (float)(i % 97) / 97.0f;
        CK(cudaMemcpy(x, init.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
        if (copies) {
            size_t bytes = 1024 * sizeof(float);
            if (pageable)
                hin = (float *)malloc(bytes);
            else
                CK(cudaMallocHost(&hin, bytes));
            CK(cudaMallocHost(&hout, bytes));
            for (int i = 0; i < 1024; i++)
                hin[i] = (float)i / 1024.0f;
        }
        if (gemm) {
            const int m = 128;
            CK(cudaMalloc(&a, m * m * sizeof(float)));
            CK(cudaMalloc(&b, m * m * sizeof(float)));
            CK(cudaMalloc(&c, m * m * sizeof(float)));
            std::vector<float> v(m * m);
            for (int i = 0; i < m * m; i++)
                v[i] = (float)((i * 37) % 101) / 101.0f;
            CK(cudaMemcpy(a, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(b, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemset(c, 0, v.size() * 4));
            if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "cublas setup failed\n");
                exit(1);
            }
        }
    }

    // One iteration's work, without the final synchronize.
    void body()
    {
        int blocks = n > 4096 ? 1024 : (n + 255) / 256;
        if (copies)
            CK(cudaMemcpyAsync(x, hin, 1024 * sizeof(float), cudaMemcpyHostToDevice, s));
        if (gemm) {
            const int m = 128;
            const float one = 1.0f, zero = 0.0f;
            if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m) !=
                CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "cublasSgemm failed\n");
                exit(1);
            }
            bench_axpb<<<(m * m + 255) / 256, 256, 0, s>>>(c, 0.5f, 0.25f, m * m);
        }
        for (int j = 0; j < k; j++) {
            if (norepeat) // every launch's argument differs from every earlier one
                bench_axpb<<<blocks, 256, 0, s>>>(x, 0.5f, (float)((iter * k + j) % 8388608), n);
            else
                bench_axpb<<<blocks, 256, 0, s>>>(x, 0.999f, 0.001f * (float)(j % 3), n);
        }
        if (copies)
            CK(cudaMemcpyAsync(hout, x, 1024 * sizeof(float), cudaMemcpyDeviceToHost, s));
        iter++;
    }

    unsigned checksum()
    {
        std::vector<float> v(std::min(n, 4096));
        CK(cudaMemcpy(v.data(), x, v.size() * sizeof(float), cudaMemcpyDeviceToHost));
        unsigned hsh = 2166136261u;
        for (float f : v) {
            unsigned u;
            memcpy(&u, &f, 4);
            hsh = (hsh ^ u) * 16777619u;
        }
        return hsh;
    }
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench WORKLOAD eager|graph [ITERS] [REPS]\n");
        return 2;
    }
    Work w;
    w.name = argv[1];
    bool graph = std::string(argv[2]) == "graph";
    int iters = argc > 3 ? atoi(argv[3]) : 500, reps = argc > 4 ? atoi(argv[4]) : 7;
    const std::string &n = w.name;
    if (n.rfind("tiny", 0) == 0)
        w.k = atoi(n.c_str() + 4);
    else if (n == "large20")
        w.n = 16 << 20;
    else if (n == "norepeat")
        w.norepeat = true;
    else if (n == "h2d_pinned")
        w.copies = true;
    else if (n == "h2d_pageable")
        w.copies = w.pageable = true;
    else if (n == "cublas")
        w.gemm = true, w.k = 0;
    else {
        fprintf(stderr, "unknown workload %s\n", n.c_str());
        return 2;
    }
    if (graph && w.norepeat) {
        printf("us_per_iter nan\n"); // a graph of work that never repeats does not exist
        return 0;
    }
    w.setup();

    cudaGraphExec_t ge = nullptr;
    if (graph) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(w.s, cudaStreamCaptureModeThreadLocal));
        w.body();
        CK(cudaStreamEndCapture(w.s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphDestroy(g));
    }
    auto one = [&]() {
        if (graph)
            CK(cudaGraphLaunch(ge, w.s));
        else
            w.body();
        CK(cudaStreamSynchronize(w.s));
    };
    for (int i = 0; i < 20; i++) // warm-up: lazy loading, and graphshim's learning
        one();
    std::vector<double> per;
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        for (int i = 0; i < iters; i++)
            one();
        per.push_back((now_us() - t0) / iters);
    }
    std::sort(per.begin(), per.end());
    CK(cudaGetLastError());
    printf("us_per_iter %.3f\n", per[per.size() / 2]);
    printf("checksum %08x\n", w.norepeat || w.gemm ? 0u : w.checksum());
    return 0;
}
