// node_update_cost.cu: the host cost of what the engine does to a graph whose
// launches come back with other arguments: setting kernel nodes in place
// (cudaGraphExecKernelNodeSetParams, what graphshim does now) against
// capturing the sequence again and updating the whole executable
// (cudaGraphExecUpdate, what it did before), beside an eager launch, a graph
// launch, a capture and an instantiation.  A set is timed twice: with the
// node's parameters read before it (as graphshim did), and with them kept from
// an earlier read (as it does).  For kernels with a 16-byte, a 4,096-byte (the
// size of PyTorch's multi-tensor kernels' lists, its optimizers') and a
// 32,000-byte parameter list.
//
//   nvcc -O2 -arch=sm_90 -o node_update_cost node_update_cost.cu && ./node_update_cost
//
// Prints one line per cost: microseconds, the median of 9 repetitions (each
// averaged over N nodes or launches), with min and max.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "check.cuh"

static const int N = 100;   // nodes per graph
static const int REPS = 9;

struct Big {
    unsigned w[8000];
};
struct Mid {
    unsigned w[1024];
};

__global__ void small_k(float *p, float a, int i) { p[i] += a; }
__global__ void big_k(float *p, Big b, int i) { p[i] += (float)(b.w[i] + b.w[7999]); }
__global__ void mid_k(float *p, Mid b, int i) { p[i] += (float)(b.w[i] + b.w[1023]); }

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct Row {
    const char *what;
    std::vector<double> v;
};

static void print(const char *kernel, Row &r)
{
    std::sort(r.v.begin(), r.v.end());
    printf("%-6s %-44s %8.2f us  (min %.2f, max %.2f)\n", kernel, r.what, r.v[r.v.size() / 2], r.v.front(),
           r.v.back());
}

static Big big_arg;
static Mid mid_arg;

enum Size { SMALL, MID, BIG };

static void launch(Size big, cudaStream_t s, float *p, int i, float a)
{
    if (big == BIG) {
        big_arg.w[0] = (unsigned)a;
        big_k<<<1, 32, 0, s>>>(p, big_arg, i);
    } else if (big == MID) {
        mid_arg.w[0] = (unsigned)a;
        mid_k<<<1, 32, 0, s>>>(p, mid_arg, i);
    } else {
        small_k<<<1, 32, 0, s>>>(p, a, i);
    }
}

static void run(Size big)
{
    const char *name = big == BIG ? "32000B" : big == MID ? "4096B" : "16B";
    cudaStream_t s;
    float *p;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&p, N * sizeof(float)));
    CK(cudaMemset(p, 0, N * sizeof(float)));
    Row eager{"eager launch (per launch)", {}}, capture{"capture (per node)", {}}, inst{"instantiate (per node)", {}},
        glaunch{"graph launch (whole graph of 100)", {}}, setp{"exec kernel node set-params (per node)", {}},
        setk{"the same, parameters kept from a first get", {}}, recap{"capture + whole-graph update (per node)", {}};
    for (int r = 0; r < REPS; r++) {
        CK(cudaStreamSynchronize(s));
        double t0 = now_us();
        for (int i = 0; i < N; i++)
            launch(big, s, p, i, (float)r);
        eager.v.push_back((now_us() - t0) / N);
        CK(cudaStreamSynchronize(s));

        cudaGraph_t g, g2;
        cudaGraphExec_t x;
        std::vector<cudaGraphNode_t> nodes(N);
        t0 = now_us();
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < N; i++)
            launch(big, s, p, i, 1.0f);
        CK(cudaStreamEndCapture(s, &g));
        capture.v.push_back((now_us() - t0) / N);
        t0 = now_us();
        CK(cudaGraphInstantiate(&x, g, 0));
        inst.v.push_back((now_us() - t0) / N);
        CK(cudaGraphLaunch(x, s));
        CK(cudaStreamSynchronize(s));
        t0 = now_us();
        CK(cudaGraphLaunch(x, s));
        glaunch.v.push_back(now_us() - t0);
        CK(cudaStreamSynchronize(s));

        size_t n = N;
        CK(cudaGraphGetNodes(g, nodes.data(), &n));
        // Sets each node's argument a to the value av, as a replay with a
        // changed scalar does: from the node's parameters fetched just before
        // (kept NULL), or from those read once and kept (as graphshim does from
        // a node's second set on: the set alone).  Microseconds a node.
        // The struct arguments are copied once, outside the timed loop.
        static Big b;
        static Mid m;
        b = big_arg;
        m = mid_arg;
        auto set_all = [&](float av, const cudaKernelNodeParams *kept) {
            double t = now_us();
            for (size_t i = 0; i < n; i++) {
                cudaKernelNodeParams kp;
                if (kept)
                    kp = kept[i];
                else
                    CK(cudaGraphKernelNodeGetParams(nodes[i], &kp));
                float a = av;
                int idx = (int)i;
                void *args_small[] = {&p, &a, &idx};
                void *args_mid[] = {&p, &m, &idx};
                void *args_big[] = {&p, &b, &idx};
                kp.kernelParams = big == BIG ? args_big : big == MID ? args_mid : args_small;
                kp.extra = NULL;
                CK(cudaGraphExecKernelNodeSetParams(x, nodes[i], &kp));
            }
            return (now_us() - t) / N;
        };
        setp.v.push_back(set_all((float)(r + 2), nullptr));
        std::vector<cudaKernelNodeParams> kept(n);
        for (size_t i = 0; i < n; i++)
            CK(cudaGraphKernelNodeGetParams(nodes[i], &kept[i]));
        setk.v.push_back(set_all((float)(r + 4), kept.data()));

        t0 = now_us();
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < N; i++)
            launch(big, s, p, i, (float)(r + 3));
        CK(cudaStreamEndCapture(s, &g2));
        cudaGraphExecUpdateResultInfo info;
        CK(cudaGraphExecUpdate(x, g2, &info));
        recap.v.push_back((now_us() - t0) / N);
        CK(cudaGraphLaunch(x, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        CK(cudaGraphDestroy(g2));
    }
    for (Row *r : {&eager, &capture, &inst, &glaunch, &setp, &setk, &recap})
        print(name, *r);
    CK(cudaFree(p));
    CK(cudaStreamDestroy(s));
}

int main()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("node_update_cost on %s, %d nodes a graph, %d repetitions\n", prop.name, N, REPS);
    CK(cudaFree(0));
    run(SMALL);
    run(MID);
    run(BIG);
    return 0;
}
