// step_shape.cu: a JAX jit step's shape (issue 57), timed, in one of two modes.
//
//   step_shape eager|graph|graph-same [ITERS] [REPS]
//
// A step: the host's own work (HOST_NS, default 2000 ns of spinning: XLA's
// runtime between its thunks), then a launch with cuLaunchKernelEx, four times
// on the compute stream; three of the four kernels take the step's number (as
// a step counter or a rotating buffer would: graphshim sets three nodes a
// replay); then two event records on the compute stream, a wait of a second
// stream on the first event and a host function there (XLA releases buffers
// so), and cuEventSynchronize on the second event (the program waits for the
// step's result).  No synchronize ends the step.  Each kernel runs KERNEL_NS of
// GPU time (default 4000 ns: a small matrix product), so the GPU bounds the
// step where the host launches quickly.
//
//   eager  the plain program (run it with and without graphshim preloaded:
//          bench/step_shape.sh does, and prints the ratios)
//   graph  the same step as a hand-written graph: the four launches captured
//          once, each step the three changed nodes set
//          (cuGraphExecKernelNodeSetParams) and the graph launched in their
//          place; the events, the wait and the host function as in eager
//   graph-same  the graph launched as captured, no node set (other results:
//          its checksum differs): against graph, what the three sets and the
//          launch of a changed executable cost
//
// HOST_NS=0 leaves the host nothing to do while it holds: against the default,
// what the late start of held work costs.
// Prints `us_reps` (each repetition's time per step), `us_per_iter <median over
// REPS>` and a checksum of the result (both modes and graphshim must agree).
#include <cuda.h>
#include <cuda_runtime.h>
#include "check.cuh"
#include "slow.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

enum { N = 4096, KERNELS = 4 };

static volatile long released; // the host function's count

static void CUDA_CB release(void *) { released++; }

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void spin_ns(long ns)
{
    double until = now_us() + ns / 1e3;
    while (now_us() < until) {
    }
}

struct Step {
    CUfunction f;
    CUstream s, s2;
    CUevent e1, e2;
    float *buf[KERNELS];
    long long kernel_ns;
    long host_ns;
    int n = N;
    // Kernel k's arguments in step it (bench_slow): buf[k] = a * buf[k] + b, b
    // the step's number in kernels 1-3.
    float a = 0.5f, b[KERNELS];
    void *args[KERNELS][5];

    void set_args(long it)
    {
        for (int k = 0; k < KERNELS; k++) {
            b[k] = k ? 0.001f * (float)(it % 97) : 0.25f;
            void *v[5] = {&buf[k], &a, &b[k], &n, &kernel_ns};
            memcpy(args[k], v, sizeof v);
        }
    }

    void launch(int k, CUstream on)
    {
        CUlaunchConfig cfg = {};
        cfg.gridDimX = 8, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = 256, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.hStream = on;
        CU(cuLaunchKernelEx(&cfg, f, args[k], nullptr));
    }

    // What follows the launches: two records, the second stream's wait and host
    // function, and the wait for the step's result.
    void tail()
    {
        CU(cuEventRecord(e1, s));
        CU(cuEventRecord(e2, s));
        CU(cuStreamWaitEvent(s2, e1, 0));
        CU(cuLaunchHostFunc(s2, release, nullptr));
        CU(cuEventSynchronize(e2));
    }
};

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "eager") && strcmp(argv[1], "graph") && strcmp(argv[1], "graph-same"))) {
        fprintf(stderr, "usage: step_shape eager|graph|graph-same [ITERS] [REPS]\n");
        return 2;
    }
    bool graph = strcmp(argv[1], "eager") != 0, sets = strcmp(argv[1], "graph") == 0;
    int iters = argc > 2 ? atoi(argv[2]) : 2000, reps = argc > 3 ? atoi(argv[3]) : 9;
    Step st;
    st.kernel_ns = getenv("KERNEL_NS") ? atoll(getenv("KERNEL_NS")) : 4000;
    st.host_ns = getenv("HOST_NS") ? atol(getenv("HOST_NS")) : 2000;
    CK(cudaFree(0));
    cudaFunction_t fn;
    CK(cudaGetFuncBySymbol(&fn, (const void *)bench_slow));
    st.f = (CUfunction)fn;
    CU(cuStreamCreate(&st.s, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&st.s2, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&st.e1, CU_EVENT_DISABLE_TIMING));
    CU(cuEventCreate(&st.e2, CU_EVENT_DISABLE_TIMING));
    std::vector<float> init(N);
    for (int i = 0; i < N; i++)
        init[i] = (float)(i % 97) / 97.0f;
    for (auto &p : st.buf) {
        CK(cudaMalloc(&p, N * sizeof(float)));
        CK(cudaMemcpy(p, init.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    }

    CUgraphExec exec = nullptr;
    CUgraphNode nodes[KERNELS];
    if (graph) { // the four launches captured once; their nodes in order
        CUgraph g;
        size_t count = KERNELS;
        st.set_args(0);
        CU(cuStreamBeginCapture(st.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        for (int k = 0; k < KERNELS; k++)
            st.launch(k, st.s);
        CU(cuStreamEndCapture(st.s, &g));
        CU(cuGraphGetNodes(g, nodes, &count));
        CU(cuGraphInstantiate(&exec, g, 0));
    }
    long it = 0;
    auto step = [&]() {
        st.set_args(it++);
        if (!graph) {
            for (int k = 0; k < KERNELS; k++) {
                spin_ns(st.host_ns);
                st.launch(k, st.s);
            }
        } else {
            for (int k = 0; k < KERNELS; k++)
                spin_ns(st.host_ns);
            for (int k = 1; sets && k < KERNELS; k++) { // the changed nodes
                CUDA_KERNEL_NODE_PARAMS p = {};
                p.func = st.f;
                p.gridDimX = 8, p.gridDimY = 1, p.gridDimZ = 1;
                p.blockDimX = 256, p.blockDimY = 1, p.blockDimZ = 1;
                p.kernelParams = st.args[k];
                CU(cuGraphExecKernelNodeSetParams(exec, nodes[k], &p));
            }
            CU(cuGraphLaunch(exec, st.s));
        }
        st.tail();
    };
    for (int i = 0; i < 200; i++) // warm-up: graphshim learns, the GPU clocks up
        step();
    std::vector<double> us;
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        for (int i = 0; i < iters; i++)
            step();
        us.push_back((now_us() - t0) / iters);
    }
    printf("us_reps");
    for (double u : us)
        printf(" %.3f", u);
    printf("\n");
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    printf("us_per_iter %.3f\n", sorted[sorted.size() / 2]);
    CK(cudaStreamSynchronize((cudaStream_t)st.s2));
    std::vector<float> out(N);
    unsigned long long h = 1469598103934665603ull;
    for (float *p : st.buf) {
        CK(cudaMemcpy(out.data(), p, N * sizeof(float), cudaMemcpyDeviceToHost));
        for (float v : out) {
            unsigned u;
            memcpy(&u, &v, sizeof u);
            h = (h ^ u) * 1099511628211ull;
        }
    }
    printf("checksum %016llx released %ld\n", h, (long)released);
    return 0;
}
