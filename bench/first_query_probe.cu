// first_query_probe.cu: what a kernel's first parameter-layout query costs
// against its first launch, and whether the kind of handle asked first matters.
//
// graphshim asks the driver for a kernel's parameter layout (and its name) at
// the kernel's first launch, before the launch.  The runtime launches a
// CUkernel; the driver refuses a handle of the other kind (CUfunction calls on
// a CUkernel, CUkernel calls on a CUfunction: CUDA_ERROR_INVALID_HANDLE).  Per
// process (the costs are the first call's), for two kernels in turn, the time
// of each step before the launch, the launch, and the total, in us:
//   eager   the launch alone
//   func    the old order: cuFuncGetName (refused), cuKernelGetName,
//           cuFuncGetParamInfo (refused), cuKernelGetParamInfo to the end
//   kernel  the kind that serves first: cuKernelGetParamInfo to the end, then
//           cuKernelGetName
// `refused CUBIN` checks that the driver refuses a module's CUfunction (k2,
// from this file built as a cubin) in the CUkernel calls, as it refuses the
// runtime's CUkernel in the CUfunction ones (H200: 400 for all four).
// On an H200 (driver 580.159.04, 6 processes a mode, measured with these calls
// before this file took its form): the first kernel 57-88 eager, 88-136 func,
// 78-116 kernel; the second 12-17, 16-28, 16-23; a refused cuFuncGetName on a
// kernel never asked before 25-34 (docs/PERFORMANCE.md).
//
//   nvcc -O2 -arch=sm_90 -o first_query_probe first_query_probe.cu -lcuda
//   for r in 1 2 3 4 5 6; do for m in eager func kernel; do ./first_query_probe $m; done; done
//   nvcc -cubin -arch=sm_90 -o first_query_probe.cubin first_query_probe.cu
//   ./first_query_probe refused first_query_probe.cubin
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

extern "C" __global__ void k1(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1;
}

extern "C" __global__ void k2(float *x, int n, float s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}

static int params(CUkernel k)
{
    size_t o, s;
    int n = 0;
    while (cuKernelGetParamInfo(k, n, &o, &s) == CUDA_SUCCESS)
        n++;
    return n;
}

// The CUkernel calls on a module's CUfunction, and the CUfunction calls on the
// runtime's CUkernel: each should say 400 (CUDA_ERROR_INVALID_HANDLE).
static int refused(const char *cubin)
{
    cudaKernel_t rk;
    CUmodule m;
    CUfunction f;
    CUkernel k;
    const char *name;
    size_t o, s;
    CUresult a, b, c, d;

    if (cudaGetKernel(&rk, k2) != cudaSuccess || cuModuleLoad(&m, cubin) != CUDA_SUCCESS ||
        cuModuleGetFunction(&f, m, "k2") != CUDA_SUCCESS) {
        fprintf(stderr, "refused: no kernel, or no module from %s\n", cubin);
        return 1;
    }
    k = (CUkernel)rk;
    a = cuKernelGetParamInfo((CUkernel)f, 0, &o, &s);
    b = cuKernelGetName(&name, (CUkernel)f);
    c = cuFuncGetParamInfo((CUfunction)k, 0, &o, &s);
    d = cuFuncGetName(&name, (CUfunction)k);
    printf("CUfunction as CUkernel: cuKernelGetParamInfo %d, cuKernelGetName %d\n", a, b);
    printf("CUkernel as CUfunction: cuFuncGetParamInfo %d, cuFuncGetName %d\n", c, d);
    return !(a == CUDA_ERROR_INVALID_HANDLE && b == CUDA_ERROR_INVALID_HANDLE && c == CUDA_ERROR_INVALID_HANDLE &&
             d == CUDA_ERROR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cudaKernel_t ks[2];
    float *x;

    if (strcmp(mode, "eager") && strcmp(mode, "func") && strcmp(mode, "kernel") &&
        (strcmp(mode, "refused") || argc < 3)) {
        fprintf(stderr, "usage: %s eager|func|kernel|refused CUBIN\n", argv[0]);
        return 2;
    }
    cudaMalloc(&x, 1 << 20);
    cudaDeviceSynchronize();
    if (!strcmp(mode, "refused"))
        return refused(argv[2]);
    cudaGetKernel(&ks[0], k1);
    cudaGetKernel(&ks[1], k2);
    printf("%-6s", mode);
    for (int i = 0; i < 2; i++) {
        CUkernel k = (CUkernel)ks[i];
        CUfunction f = (CUfunction)k;
        const char *name;
        size_t o, s;
        double t0 = now_us(), t1, t2, t3, t4;

        t1 = t2 = t3 = t4 = t0;
        if (!strcmp(mode, "func")) {
            cuFuncGetName(&name, f);
            t1 = now_us();
            cuKernelGetName(&name, k);
            t2 = now_us();
            cuFuncGetParamInfo(f, 0, &o, &s);
            t3 = now_us();
            params(k);
            t4 = now_us();
            printf("  k%d fname %.1f kname %.1f fparam %.1f kparam %.1f", i + 1, t1 - t0, t2 - t1, t3 - t2, t4 - t3);
        } else if (!strcmp(mode, "kernel")) {
            params(k);
            t1 = now_us();
            cuKernelGetName(&name, k);
            t4 = now_us();
            printf("  k%d kparam %.1f kname %.1f", i + 1, t1 - t0, t4 - t1);
        } else {
            printf("  k%d", i + 1);
        }
        if (i == 0)
            k1<<<1, 32>>>(x, 32);
        else
            k2<<<1, 32>>>(x, 32, 2.f);
        double t5 = now_us();
        printf(" launch %.1f total %.1f", t5 - t4, t5 - t0);
    }
    cudaDeviceSynchronize();
    printf("\n");
    return 0;
}
