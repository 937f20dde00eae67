// xstream.cu: a step that forks to a second stream and joins back (samples/two_branch.cu's
// shape), timed three ways in one process.
//
//   xstream [ITERS] [REPS]        (bench/xstream.sh runs it with and without graphshim)
//
// A step: a head kernel on main; an event record on main and the side stream's
// wait on it (the fork); BRANCH kernels on main and BRANCH on the side, each
// branch on its own buffer; an event record on the side and main's wait on it
// (the join); a tail kernel on main.  Main is synchronized every SYNC_EVERY steps
// (default 1).  Each kernel runs KERNEL_NS of GPU time (default 2000: bench_slow,
// bench/slow.cuh).  Both streams are non-blocking.  The ways, in turn, REPS times
// (default 7), each ITERS steps (default 2000) after 100 untimed ones:
//   eager   the step as written, graphshim paused (gs_pause) where it is preloaded
//   shim    the same, graphshim active (gs_resume); without graphshim, eager again
//           (the method's noise)
//   graph   a hand-written graph: the step captured once from main, with its fork
//           and join, launched in its place (graphshim paused)
// Prints, per way, `us_<way> <median us a step> <min> <max>`, the ratios
// eager/shim and eager/graph (> 1: faster than eager), and a checksum of the
// buffers (every way runs the same steps: the three must agree, and so must a
// run without graphshim).
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "check.cuh"
#include "slow.cuh"

enum { N = 4096 };
enum Way { EAGER, SHIM, GRAPH };

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct Step {
    cudaStream_t main, side;
    cudaEvent_t fork, join;
    float *head, *a, *b;
    int branch = 3, n = N;
    long long ns = 2000;

    void kern(float *x, float bias, cudaStream_t s)
    {
        bench_slow<<<8, 256, 0, s>>>(x, 0.5f, bias, n, ns);
    }

    void issue()
    {
        kern(head, 0.25f, main);
        CK(cudaEventRecord(fork, main));
        CK(cudaStreamWaitEvent(side, fork, 0));
        for (int k = 0; k < branch; k++) {
            kern(a, 0.125f * (float)k, main);
            kern(b, 0.0625f * (float)k, side);
        }
        CK(cudaEventRecord(join, side));
        CK(cudaStreamWaitEvent(main, join, 0));
        kern(head, 0.5f, main);
    }
};

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000, reps = argc > 2 ? atoi(argv[2]) : 7;
    int sync_every = getenv("SYNC_EVERY") ? atoi(getenv("SYNC_EVERY")) : 1;
    auto pause = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    auto resume = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
    Step st;
    if (getenv("KERNEL_NS"))
        st.ns = atoll(getenv("KERNEL_NS"));
    if (getenv("BRANCH"))
        st.branch = atoi(getenv("BRANCH"));
    CK(cudaStreamCreateWithFlags(&st.main, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&st.side, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&st.fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&st.join, cudaEventDisableTiming));
    for (float **p : {&st.head, &st.a, &st.b}) {
        CK(cudaMalloc(p, N * sizeof(float)));
        CK(cudaMemset(*p, 0, N * sizeof(float)));
    }
    if (pause)
        pause();
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st.main, cudaStreamCaptureModeThreadLocal));
    st.issue();
    CK(cudaStreamEndCapture(st.main, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    if (resume)
        resume();

    long done = 0;
    auto run = [&](Way way, int steps) {
        if (way != SHIM && pause)
            pause();
        for (int i = 0; i < steps; i++) {
            if (way == GRAPH)
                CK(cudaGraphLaunch(exec, st.main));
            else
                st.issue();
            if (++done % sync_every == 0)
                CK(cudaStreamSynchronize(st.main));
        }
        CK(cudaStreamSynchronize(st.main));
        if (way != SHIM && resume)
            resume();
    };
    const Way ways[3] = {EAGER, SHIM, GRAPH};
    const char *names[3] = {"eager", "shim", "graph"};
    std::vector<double> us[3];
    for (int r = 0; r < reps; r++)
        for (int w0 = 0; w0 < 3; w0++) {
            int w = (w0 + r) % 3; // each way first in turn
            run(ways[w], 100);
            double t0 = now_us();
            run(ways[w], iters);
            us[w].push_back((now_us() - t0) / iters);
        }
    double med[3];
    for (int w = 0; w < 3; w++) {
        std::sort(us[w].begin(), us[w].end());
        med[w] = us[w][us[w].size() / 2];
        printf("us_%s %.3f %.3f %.3f\n", names[w], med[w], us[w].front(), us[w].back());
    }
    printf("eager/shim %.3f\neager/graph %.3f\n", med[0] / med[1], med[0] / med[2]);
    unsigned long long h = 1469598103934665603ull;
    std::vector<float> out(N);
    for (float *p : {st.head, st.a, st.b}) {
        CK(cudaMemcpy(out.data(), p, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (float v : out) {
            unsigned u;
            memcpy(&u, &v, sizeof u);
            h = (h ^ u) * 1099511628211ull;
        }
    }
    printf("checksum %016llx graphshim %s\n", h, pause ? "preloaded" : "absent");
    return 0;
}
