// slow.cuh: a kernel of a fixed length, for the benchmark programs (bench.cu,
// step_shape.cu).
#pragma once

// x = a * x + b, then thread 0 waits until ns nanoseconds have passed since the
// block began (the GPU's global timer): a kernel of a fixed length.
__global__ void bench_slow(float *x, float a, float b, int n, long long ns)
{
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = a * x[i] + b;
    if (threadIdx.x == 0)
        do
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        while (t - t0 < ns);
}
