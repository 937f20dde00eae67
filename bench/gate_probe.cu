// gate_probe.cu: would launching a token's whole graph at its first op, with
// device-side gates between its chunks that the host opens as it sees the ops,
// beat graphshim's chunks (each captured piece launched once its ops are seen)?
// (issue 50, item 4: a measured trial before any engine change.)
//
// A token is CHUNKS chunks of KERNELS tiny kernels (or kernels of GPU_US us), the
// host working HOST_US us before each kernel (a program issuing its ops, whose
// every op graphshim must see before it may run it), then a copy of the result
// to pinned memory and a synchronize.  Five ways, in turn, ROUNDS rounds of
// TOKENS tokens each (200), microseconds a token (median over rounds):
//   eager    each kernel launched as the host reaches it
//   chunks   each chunk's graph launched once the host reached its end
//            (graphshim's early chunks, at their best: no capture, no checks)
//   gates    the token's one graph launched before the host's work; before each
//            chunk a wait on a flag in mapped host memory, which the host sets
//            once it reached that chunk's end (the gate opens); the graph's last
//            nodes close every gate again
//   whole    the token's one graph launched after all of the host's work (an
//            engine's own one-graph-a-token integration)
//   gates0   as gates, every gate opened before the launch: the gated graph's
//            own cost on the GPU (its wait nodes), the host's work aside
// Every way computes the same values: each token checks the result.
//
//   nvcc -O2 -arch=sm_90 -o gate_probe bench/gate_probe.cu -lcuda && ./gate_probe [GPU_US [TOKENS]]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "check.cuh"

#define CHUNKS 7
#define KERNELS 50
#define HOST_US 1.0
#define ROUNDS 5

__global__ void step(unsigned *x, unsigned salt, long long spin)
{
    long long t0 = clock64();
    if (threadIdx.x == 0)
        x[0] = x[0] * 2654435761u + salt;
    while (clock64() - t0 < spin)
        ;
}

static double now_us()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void host_work(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        ;
}

static unsigned *x, *out;
static long long spin;
static volatile unsigned *gate; // CHUNKS flags in mapped pinned memory
static CUdeviceptr gate_dev;
static cudaStream_t st;

static void kernels_of(int c, cudaStream_t s)
{
    for (int k = 0; k < KERNELS; k++)
        step<<<1, 32, 0, s>>>(x, (unsigned)(c * KERNELS + k), spin);
}

// The graph of chunk c, or of the whole token; gated: a wait before each chunk,
// a write closing every gate at the end.
static cudaGraphExec_t capture(int first, int last, bool gated)
{
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int c = first; c < last; c++) {
        if (gated)
            CU(cuStreamWaitValue32((CUstream)st, gate_dev + 4 * c, 1, CU_STREAM_WAIT_VALUE_EQ));
        kernels_of(c, st);
    }
    if (gated)
        for (int c = first; c < last; c++)
            CU(cuStreamWriteValue32((CUstream)st, gate_dev + 4 * c, 0, CU_STREAM_WRITE_VALUE_DEFAULT));
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphDestroy(g));
    return e;
}

enum { EAGER, CHUNKED, GATES, WHOLE, GATES0, NWAYS };
static const char *names[NWAYS] = {"eager", "chunks", "gates", "whole", "gates0"};

static unsigned expect_after(unsigned v)
{
    for (int i = 0; i < CHUNKS * KERNELS; i++)
        v = v * 2654435761u + (unsigned)i;
    return v;
}

int main(int argc, char **argv)
{
    double gpu_us = argc > 1 ? atof(argv[1]) : 0;
    const int TOKENS = argc > 2 ? atoi(argv[2]) : 200;
    cudaDeviceProp p;
    int khz = 0;
    CK(cudaGetDeviceProperties(&p, 0));
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    spin = (long long)(gpu_us * khz / 1e3);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&x, 4));
    CK(cudaMemset(x, 0, 4));
    CK(cudaMallocHost(&out, 4));
    unsigned *g;
    CK(cudaHostAlloc(&g, 4 * CHUNKS, cudaHostAllocMapped));
    memset(g, 0, 4 * CHUNKS);
    gate = g;
    CK(cudaHostGetDevicePointer((void **)&gate_dev, g, 0));

    cudaGraphExec_t chunk[CHUNKS], whole = capture(0, CHUNKS, false), gated = capture(0, CHUNKS, true);
    for (int c = 0; c < CHUNKS; c++)
        chunk[c] = capture(c, c + 1, false);

    std::vector<double> us[NWAYS];
    unsigned v = 0;
    for (int r = 0; r < ROUNDS + 1; r++) { // round 0 warms up
        for (int w = 0; w < NWAYS; w++) {
            double t0 = now_us();
            for (int t = 0; t < TOKENS; t++) {
                if (w == GATES0)
                    for (int c = 0; c < CHUNKS; c++)
                        gate[c] = 1;
                if (w == GATES || w == GATES0)
                    CK(cudaGraphLaunch(gated, st));
                for (int c = 0; c < CHUNKS; c++) {
                    for (int k = 0; k < KERNELS; k++) {
                        host_work(HOST_US);
                        if (w == EAGER)
                            step<<<1, 32, 0, st>>>(x, (unsigned)(c * KERNELS + k), spin);
                    }
                    if (w == CHUNKED)
                        CK(cudaGraphLaunch(chunk[c], st));
                    if (w == GATES) {
                        __sync_synchronize();
                        gate[c] = 1;
                    }
                }
                if (w == WHOLE)
                    CK(cudaGraphLaunch(whole, st));
                CK(cudaMemcpyAsync(out, x, 4, cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
                v = expect_after(v);
                if (*out != v) {
                    fprintf(stderr, "gate_probe: %s: token %d computed %u, not %u\n", names[w], t, *out, v);
                    return 1;
                }
            }
            if (r)
                us[w].push_back((now_us() - t0) / TOKENS);
        }
    }
    printf("gate_probe: %s, %d chunks of %d kernels (%.0f us of GPU time each), the host %.1f us a kernel\n", p.name,
           CHUNKS, KERNELS, gpu_us, HOST_US);
    printf("%-8s %12s %14s %12s\n", "way", "us/token", "spread", "vs chunks");
    std::sort(us[CHUNKED].begin(), us[CHUNKED].end());
    double ref = us[CHUNKED][ROUNDS / 2];
    for (int w = 0; w < NWAYS; w++) {
        std::sort(us[w].begin(), us[w].end());
        double m = us[w][ROUNDS / 2];
        printf("%-8s %12.1f %6.1f-%-7.1f %12.3f\n", names[w], m, us[w][0], us[w][ROUNDS - 1], ref / m);
    }
    return 0;
}
