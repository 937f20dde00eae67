// fakert/cuda_runtime.h: the few CUDA runtime calls bench/xstream_probe.cu makes
// (cudaFree(0), cudaGetDeviceProperties, cudaGetFuncBySymbol), on the driver API,
// so that the probe builds with a host compiler and runs against the fake driver
// (bench/xstream_probe_fake.sh). A kernel is the fake's kernel of its name
// (bench/fakert/xstream_kernels.c), found through the host function's symbol.
#pragma once
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __global__
typedef int cudaError_t;
#define cudaSuccess 0
typedef CUfunction cudaFunction_t;
struct cudaDeviceProp {
    char name[256];
};

static inline const char *cudaGetErrorString(cudaError_t e) { return e ? "error" : "no error"; }

static inline cudaError_t cudaFree(void *p)
{
    CUcontext c;
    (void)p;
    return cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c);
}

static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
    (void)d;
    snprintf(p->name, sizeof p->name, "fake driver (tests/fakecuda)");
    return 0;
}

// sym: a host function whose mangled name is _Z<length><name>...
static inline cudaError_t cudaGetFuncBySymbol(cudaFunction_t *f, const void *sym)
{
    static CUmodule m;
    Dl_info di;
    char name[128], *end;
    if (!dladdr(sym, &di) || !di.dli_sname || strncmp(di.dli_sname, "_Z", 2))
        return 1;
    long n = strtol(di.dli_sname + 2, &end, 10);
    snprintf(name, sizeof name, "%.*s", (int)n, end);
    if (!m && cuModuleLoadData(&m, "fake image"))
        return 1;
    return cuModuleGetFunction(f, m, name) != CUDA_SUCCESS;
}
