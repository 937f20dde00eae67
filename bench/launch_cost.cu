// launch_cost.cu: host-side cost of one kernel launch, in nanoseconds.
//
//   launch_cost [BATCHES]
//
// Launches an empty kernel in batches of 128 on a created stream, timing only the
// launch calls of each batch on the host clock, then synchronizes (so the queue
// never fills and the GPU never throttles the host).  Prints the median cost per
// launch over all batches, for the runtime launch (<<<>>>) and for cuLaunchKernel.
// Run it with and without the shim: the difference is the shim's cost per launch.
#include <cuda.h>
#include <cuda_runtime.h>
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

__global__ void empty_kernel(int) {}

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static const int kBatch = 128;

template <class F> static double median_ns_per_launch(int batches, cudaStream_t s, F launch)
{
    std::vector<double> per;
    for (int b = 0; b < batches + 10; b++) {
        double t0 = now_ns();
        for (int i = 0; i < kBatch; i++)
            launch(i);
        double t1 = now_ns();
        CK(cudaStreamSynchronize(s));
        if (b >= 10) // warm-up batches are not counted
            per.push_back((t1 - t0) / kBatch);
    }
    std::sort(per.begin(), per.end());
    return per[per.size() / 2];
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 2000;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    empty_kernel<<<1, 32, 0, s>>>(0);
    CK(cudaStreamSynchronize(s));

    double rt = median_ns_per_launch(batches, s, [&](int i) { empty_kernel<<<1, 32, 0, s>>>(i); });
    CK(cudaGetLastError());

    cudaFunction_t fn;
    CK(cudaGetFuncBySymbol(&fn, (const void *)empty_kernel));
    double drv = median_ns_per_launch(batches, s, [&](int i) {
        void *args[] = {&i};
        cuLaunchKernel((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, nullptr);
    });
    CK(cudaStreamSynchronize(s));
    printf("runtime_launch_ns %.1f\n", rt);
    printf("driver_launch_ns %.1f\n", drv);
    return 0;
}
