// graph_mem_release.cu: does destroying graph executables give their device
// memory back?  Free device memory (cudaMemGetInfo) from the start, in MiB,
// after: a non-blocking stream; one 20-kernel graph instantiated; launched;
// 30 more executables of it launched; all destroyed; the stream destroyed;
// cudaDeviceGraphMemTrim.
//   nvcc -O2 -arch=native -o graph_mem_release bench/graph_mem_release.cu && ./graph_mem_release
#include <cstdio>
#include <cuda_runtime.h>

__global__ void bump(float *x) { x[threadIdx.x] += 1.0f; }

static double free_mib(size_t f0)
{
    size_t f, t;
    cudaDeviceSynchronize();
    cudaMemGetInfo(&f, &t);
    return ((double)f - (double)f0) / (1 << 20);
}

int main()
{
    float *x;
    size_t f0, t;
    cudaMalloc(&x, 4096);
    cudaDeviceSynchronize();
    cudaMemGetInfo(&f0, &t);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    double stream = free_mib(f0);
    cudaGraph_t g;
    cudaGraphExec_t e, es[30];
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < 20; i++)
        bump<<<1, 32, 0, s>>>(x);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    double inst = free_mib(f0);
    cudaGraphLaunch(e, s);
    double launched = free_mib(f0);
    for (int j = 0; j < 30; j++) {
        cudaGraphInstantiate(&es[j], g, 0);
        cudaGraphLaunch(es[j], s);
    }
    double more = free_mib(f0);
    for (int j = 0; j < 30; j++)
        cudaGraphExecDestroy(es[j]);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    double destroyed = free_mib(f0);
    cudaStreamDestroy(s);
    double sdestroyed = free_mib(f0);
    cudaDeviceGraphMemTrim(0);
    double trimmed = free_mib(f0);
    printf("free MiB from the start: stream %+.2f, instantiated %+.2f, launched %+.2f, 31 launched %+.2f, "
           "all destroyed %+.2f, stream destroyed %+.2f, trimmed %+.2f (%s)\n",
           stream, inst, launched, more, destroyed, sdestroyed, trimmed, cudaGetErrorString(cudaGetLastError()));
    return 0;
}
