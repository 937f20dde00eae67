/*
** drvprog.c: a small driver-API program for the integration tests.
**
**   drvprog PATH VARIANT [ITERS]
**     PATH     direct (linked with -lcuda), dlsym (dlopen + dlsym of ABI names) or
**              proc (cuGetProcAddress_v2, self-lookup first)
**     VARIANT  legacy or ptsz (the per-thread-default-stream entry points)
**
** It runs the same workload whichever way it obtained the driver: module and
** library kernels, launches through cuLaunchKernel and cuLaunchKernelEx (with
** kernelParams and with a packed `extra` buffer), async and sync copies and
** memsets, events, a host function, an invalid launch, and exactly two calls of
** entry points hooks.def does not list (cuGraphCreate, cuGraphGetNodes).  It prints
** every result and return code to stdout, and `launches N`.
*/
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fakecuda/fakecuda.h"
#include "cucheck.h"

#define N 256

FAKECUDA_KERNEL(axpb, sizeof(float *), sizeof(float), sizeof(float), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0);
    float a = FAKECUDA_ARG(float, 1), b = FAKECUDA_ARG(float, 2);
    int n = FAKECUDA_ARG(int, 3);
    (void)d;
    for (int i = 0; i < n; i++)
        x[i] = a * x[i] + b;
}

/* The entry points the workload uses, however they were obtained. */
struct api {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*LibraryLoadData)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                void **, unsigned);
    CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*CtxSynchronize)(void);
    CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *);
    CUresult (*GraphCreate)(CUgraph *, unsigned);
    CUresult (*GraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*GraphDestroy)(CUgraph);
    CUresult (*GetErrorName)(CUresult, const char **);
};

/* Name, legacy ABI symbol, per-thread ABI symbol, version that introduced it.
** cuGetProcAddress is asked as a CUDA 12.8 program would (12080). */
#define API_LIST(X)                                                                       \
    X(Init, "cuInit", "cuInit", "cuInit", 2000)                                           \
    X(DeviceGet, "cuDeviceGet", "cuDeviceGet", "cuDeviceGet", 2000)                       \
    X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain",           \
      "cuDevicePrimaryCtxRetain", 7000)                                                   \
    X(CtxSetCurrent, "cuCtxSetCurrent", "cuCtxSetCurrent", "cuCtxSetCurrent", 4000)       \
    X(ModuleLoadData, "cuModuleLoadData", "cuModuleLoadData", "cuModuleLoadData", 2000)   \
    X(ModuleGetFunction, "cuModuleGetFunction", "cuModuleGetFunction",                    \
      "cuModuleGetFunction", 2000)                                                        \
    X(LibraryLoadData, "cuLibraryLoadData", "cuLibraryLoadData", "cuLibraryLoadData", 12000) \
    X(LibraryGetKernel, "cuLibraryGetKernel", "cuLibraryGetKernel", "cuLibraryGetKernel", 12000) \
    X(StreamCreate, "cuStreamCreate", "cuStreamCreate", "cuStreamCreate", 2000)           \
    X(StreamDestroy, "cuStreamDestroy", "cuStreamDestroy_v2", "cuStreamDestroy_v2", 4000) \
    X(MemAlloc, "cuMemAlloc", "cuMemAlloc_v2", "cuMemAlloc_v2", 3020)                     \
    X(MemFree, "cuMemFree", "cuMemFree_v2", "cuMemFree_v2", 3020)                         \
    X(MemAllocHost, "cuMemAllocHost", "cuMemAllocHost_v2", "cuMemAllocHost_v2", 3020)     \
    X(MemFreeHost, "cuMemFreeHost", "cuMemFreeHost", "cuMemFreeHost", 2000)               \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2",                       \
      "cuMemcpyHtoDAsync_v2_ptsz", 3020)                                                  \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2",                       \
      "cuMemcpyDtoHAsync_v2_ptsz", 3020)                                                  \
    X(MemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", 3020)        \
    X(MemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", 3020)        \
    X(MemsetD32Async, "cuMemsetD32Async", "cuMemsetD32Async", "cuMemsetD32Async_ptsz", 3020) \
    X(LaunchKernel, "cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel_ptsz", 4000)      \
    X(LaunchKernelEx, "cuLaunchKernelEx", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", 11060) \
    X(EventCreate, "cuEventCreate", "cuEventCreate", "cuEventCreate", 2000)               \
    X(EventRecord, "cuEventRecord", "cuEventRecord", "cuEventRecord_ptsz", 2000)          \
    X(EventSynchronize, "cuEventSynchronize", "cuEventSynchronize", "cuEventSynchronize", 2000) \
    X(EventDestroy, "cuEventDestroy", "cuEventDestroy_v2", "cuEventDestroy_v2", 4000)     \
    X(StreamWaitEvent, "cuStreamWaitEvent", "cuStreamWaitEvent", "cuStreamWaitEvent_ptsz", 3020) \
    X(StreamSynchronize, "cuStreamSynchronize", "cuStreamSynchronize",                    \
      "cuStreamSynchronize_ptsz", 2000)                                                   \
    X(CtxSynchronize, "cuCtxSynchronize", "cuCtxSynchronize", "cuCtxSynchronize", 2000)   \
    X(LaunchHostFunc, "cuLaunchHostFunc", "cuLaunchHostFunc", "cuLaunchHostFunc_ptsz", 10000) \
    X(GraphCreate, "cuGraphCreate", "cuGraphCreate", "cuGraphCreate", 10000)              \
    X(GraphGetNodes, "cuGraphGetNodes", "cuGraphGetNodes", "cuGraphGetNodes", 10000)      \
    X(GraphDestroy, "cuGraphDestroy", "cuGraphDestroy", "cuGraphDestroy", 10000)          \
    X(GetErrorName, "cuGetErrorName", "cuGetErrorName", "cuGetErrorName", 6000)

static void load_direct(struct api *a, int pt)
{
    /* Taking the address resolves through the dynamic linker, as a call would. */
    a->Init = cuInit;
    a->DeviceGet = cuDeviceGet;
    a->PrimaryCtxRetain = cuDevicePrimaryCtxRetain;
    a->CtxSetCurrent = cuCtxSetCurrent;
    a->ModuleLoadData = cuModuleLoadData;
    a->ModuleGetFunction = cuModuleGetFunction;
    a->LibraryLoadData = cuLibraryLoadData;
    a->LibraryGetKernel = cuLibraryGetKernel;
    a->StreamCreate = cuStreamCreate;
    a->StreamDestroy = cuStreamDestroy_v2;
    a->MemAlloc = cuMemAlloc_v2;
    a->MemFree = cuMemFree_v2;
    a->MemAllocHost = cuMemAllocHost_v2;
    a->MemFreeHost = cuMemFreeHost;
    a->MemcpyHtoDAsync = pt ? cuMemcpyHtoDAsync_v2_ptsz : cuMemcpyHtoDAsync_v2;
    a->MemcpyDtoHAsync = pt ? cuMemcpyDtoHAsync_v2_ptsz : cuMemcpyDtoHAsync_v2;
    a->MemcpyHtoD = pt ? cuMemcpyHtoD_v2_ptds : cuMemcpyHtoD_v2;
    a->MemcpyDtoH = pt ? cuMemcpyDtoH_v2_ptds : cuMemcpyDtoH_v2;
    a->MemsetD32Async = pt ? cuMemsetD32Async_ptsz : cuMemsetD32Async;
    a->LaunchKernel = pt ? cuLaunchKernel_ptsz : cuLaunchKernel;
    a->LaunchKernelEx = pt ? cuLaunchKernelEx_ptsz : cuLaunchKernelEx;
    a->EventCreate = cuEventCreate;
    a->EventRecord = pt ? cuEventRecord_ptsz : cuEventRecord;
    a->EventSynchronize = cuEventSynchronize;
    a->EventDestroy = cuEventDestroy_v2;
    a->StreamWaitEvent = pt ? cuStreamWaitEvent_ptsz : cuStreamWaitEvent;
    a->StreamSynchronize = pt ? cuStreamSynchronize_ptsz : cuStreamSynchronize;
    a->CtxSynchronize = cuCtxSynchronize;
    a->LaunchHostFunc = pt ? cuLaunchHostFunc_ptsz : cuLaunchHostFunc;
    a->GraphCreate = cuGraphCreate;
    a->GraphGetNodes = cuGraphGetNodes;
    a->GraphDestroy = cuGraphDestroy;
    a->GetErrorName = cuGetErrorName;
}

static int load_dlsym(struct api *a, int pt)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return fprintf(stderr, "dlopen: %s\n", dlerror()), -1;
#define DLSYM(field, name, legacy, ptsz, ver)                                    \
    if (!(*(void **)&a->field = dlsym(h, pt ? ptsz : legacy)))                   \
        return fprintf(stderr, "dlsym %s failed\n", pt ? ptsz : legacy), -1;
    API_LIST(DLSYM)
#undef DLSYM
    return 0;
}

static int load_proc(struct api *a, int pt)
{
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    CUdriverProcAddressQueryResult st;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    void *self = NULL;

    if (!h || !(*(void **)&gpa = dlsym(h, "cuGetProcAddress_v2")))
        return fprintf(stderr, "no cuGetProcAddress_v2\n"), -1;
    /* As the CUDA runtime does: ask cuGetProcAddress for itself, then use that. */
    if (gpa("cuGetProcAddress", &self, 12000, 0, &st) != CUDA_SUCCESS || !self)
        return fprintf(stderr, "self-lookup failed\n"), -1;
    *(void **)&gpa = self;
#define PROC(field, name, legacy, ptsz, ver)                                                         \
    if (gpa(name, (void **)&a->field, 12080,                                                       \
            pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT, &st) != \
            CUDA_SUCCESS || !a->field)                                                               \
        return fprintf(stderr, "cuGetProcAddress(%s) failed\n", name), -1;
    API_LIST(PROC)
#undef PROC
    return 0;
}

static char order[64];
static int norder;
static void host_fn(void *data)
{
    if (norder < (int)sizeof order - 1)
        order[norder++] = (char)(intptr_t)data;
}

static unsigned checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned h = 2166136261u;
    while (n--)
        h = (h ^ *b++) * 16777619u;
    return h;
}

/* The workload's objects (setup()), and its count of launches. */
struct prog {
    struct api a;
    CUfunction f;
    CUkernel k;
    CUstream s;
    CUevent e;
    CUdeviceptr dx;
    float *pinned;
    int launches;
};

/* The kernels' scalar arguments, passed by address. */
static float a1 = 1.5f, b1 = 0.25f, a2 = 0.5f, b2 = -1.0f;
static int n = N;

/* The context, the kernels of a module and a library, a stream, an event, and
** the buffers: dx on the device, pinned its input. */
static void setup(struct prog *p)
{
    struct api *a = &p->a;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUlibrary lib;

    CHECK(a->Init(0));
    CHECK(a->DeviceGet(&dev, 0));
    CHECK(a->PrimaryCtxRetain(&ctx, dev));
    CHECK(a->CtxSetCurrent(ctx));
    CHECK(a->ModuleLoadData(&mod, "image"));
    CHECK(a->ModuleGetFunction(&p->f, mod, "axpb"));
    CHECK(a->LibraryLoadData(&lib, "image", NULL, NULL, 0, NULL, NULL, 0));
    CHECK(a->LibraryGetKernel(&p->k, lib, "axpb"));
    CHECK(a->StreamCreate(&p->s, CU_STREAM_NON_BLOCKING));
    CHECK(a->EventCreate(&p->e, 0));
    CHECK(a->MemAlloc(&p->dx, N * sizeof(float)));
    CHECK(a->MemAllocHost((void **)&p->pinned, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        p->pinned[i] = (float)i * 0.125f + 1.0f;
}

/* Iteration it: the input copied up, launches of every kind on the stream and
** on the variant's default stream, ordered by events, a host function, the
** result copied back; printed after the stream's synchronize. */
static void iteration(struct prog *p, int it)
{
    struct api *a = &p->a;
    void *p1[] = {&p->dx, &a1, &b1, &n};
    struct { CUdeviceptr x; float a, b; int n; } packed = {p->dx, a2, b2, n};
    size_t psize = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                     CU_LAUNCH_PARAM_END};
    CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = 0};

    CHECK(a->MemcpyHtoDAsync(p->dx, p->pinned, N * sizeof(float), p->s));
    for (int j = 0; j < 3; j++, p->launches++)
        CHECK(a->LaunchKernel(p->f, 2, 1, 1, 128, 1, 1, 0, p->s, p1, NULL));
    CHECK(a->LaunchKernel((CUfunction)p->k, 2, 1, 1, 128, 1, 1, 0, p->s, p1, NULL));
    p->launches++;
    CHECK(a->EventRecord(p->e, p->s));
    CHECK(a->StreamWaitEvent(0, p->e, 0));
    CHECK(a->LaunchKernelEx(&cfg, p->f, NULL, extra)); /* on the variant's default stream */
    p->launches++;
    CHECK(a->EventRecord(p->e, 0));
    CHECK(a->StreamWaitEvent(p->s, p->e, 0));
    CHECK(a->LaunchHostFunc(p->s, host_fn, (void *)(intptr_t)('a' + it % 26)));
    CHECK(a->MemcpyDtoHAsync(p->pinned, p->dx, N * sizeof(float), p->s));
    CHECK(a->StreamSynchronize(p->s));
    printf("iter %d: x[0]=%a x[%d]=%a sum=%08x\n", it, p->pinned[0], N - 1, p->pinned[N - 1],
           checksum(p->pinned, N * sizeof(float)));
}

/* A child that touches the driver's entry points (not the GPU) and exits:
** with _exit, or with exit (DRVPROG_FORK=exit: its atexit handlers run,
** graphshim's too). */
static void fork_child(const struct api *a)
{
    const char *name = NULL;
    int st = -1, rc;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        a->GetErrorName(CUDA_ERROR_INVALID_VALUE, &name);
        rc = name && strcmp(name, "CUDA_ERROR_INVALID_VALUE") == 0 ? 0 : 3;
        if (strcmp(getenv("DRVPROG_FORK"), "exit") == 0)
            exit(rc);
        _exit(rc);
    }
    waitpid(pid, &st, 0);
    printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* After the iterations: a memset, synchronous copies from pageable memory,
** the event's and the context's synchronize, an invalid launch (the same error
** code must reach the program), two entry points hooks.def does not list, and
** the objects destroyed. */
static void finish(struct prog *p)
{
    struct api *a = &p->a;
    float pageable[N];
    const char *ename = NULL;
    void *p1[] = {&p->dx, &a1, &b1, &n};
    size_t nnodes = 99;
    CUresult rc;
    CUgraph g;

    CHECK(a->MemsetD32Async(p->dx, 0x3f800000u, N, p->s));
    CHECK(a->StreamSynchronize(p->s));
    CHECK(a->MemcpyDtoH(pageable, p->dx, sizeof pageable));
    printf("memset: %a %a\n", pageable[0], pageable[N - 1]);
    for (int i = 0; i < N; i++)
        pageable[i] = (float)(N - i);
    CHECK(a->MemcpyHtoD(p->dx, pageable, sizeof pageable));
    CHECK(a->EventSynchronize(p->e));
    CHECK(a->CtxSynchronize());
    CHECK(a->MemcpyDtoH(p->pinned, p->dx, N * sizeof(float)));
    printf("sync copy: sum=%08x\n", checksum(p->pinned, N * sizeof(float)));
    printf("host functions ran in order: %s\n", order);

    rc = a->LaunchKernel(p->f, 1, 1, 1, 0, 1, 1, 0, p->s, p1, NULL);
    a->GetErrorName(rc, &ename);
    printf("invalid launch: %d %s\n", (int)rc, ename ? ename : "?");
    CHECK(a->GraphCreate(&g, 0));
    CHECK(a->GraphGetNodes(g, NULL, &nnodes));
    printf("empty graph has %zu nodes\n", nnodes);
    CHECK(a->GraphDestroy(g));

    CHECK(a->EventDestroy(p->e));
    CHECK(a->StreamDestroy(p->s));
    CHECK(a->MemFreeHost(p->pinned));
    CHECK(a->MemFree(p->dx));
}

int main(int argc, char **argv)
{
    struct prog p;
    int pt, iters;

    if (argc < 3) {
        fprintf(stderr, "usage: drvprog direct|dlsym|proc legacy|ptsz [iters]\n");
        return 2;
    }
    pt = strcmp(argv[2], "ptsz") == 0;
    iters = argc > 3 ? atoi(argv[3]) : 8;
    memset(&p, 0, sizeof p);
    if (strcmp(argv[1], "direct") == 0)
        load_direct(&p.a, pt);
    else if ((strcmp(argv[1], "dlsym") == 0 ? load_dlsym(&p.a, pt) : load_proc(&p.a, pt)) != 0)
        return 1;
    setup(&p);
    for (int it = 0; it < iters; it++) {
        iteration(&p, it);
        if (it == 0 && getenv("DRVPROG_FORK"))
            fork_child(&p.a);
    }
    finish(&p);
    printf("launches %d\n", p.launches);
    return 0;
}
