// bench.cu: one workload, timed, in one of two modes.
//
//   bench WORKLOAD eager|graph|split [ITERS] [REPS]
//
//   eager  the plain program: launches each iteration (run it with and without
//          graphshim preloaded)
//   graph  the same work as a hand-written CUDA graph: one iteration captured once
//          with cudaStreamBeginCapture, then replayed each iteration (scalars and
//          rotate: see below)
//   split  tiny and large20 only: the hand-written graph in the pieces that
//          graphshim's default early chunks cut (GRAPHSHIM_CHUNK_OPS=8: ops 0-7,
//          8-15, 16-31, 32-63, ...), launched back to back each iteration: what
//          chunking costs with no host time between the pieces (graphshim's
//          floor where it chunks)
//
// Every iteration ends with cudaStreamSynchronize.  Prints
// `us_reps` (each repetition's time per iteration, in order: the first ones
// carry what graphshim's learning cost), `us_per_iter <median over REPS>`,
// `host_us_per_iter` (the same for the host time of issuing an iteration, before
// its synchronize: the launches, or the graph launch) and a checksum of the
// result (the two modes and graphshim must agree; it goes to stdout with the
// times, one line each).  With BENCH_AB=N, N more pairs of repetitions after
// those, graphshim paused in one of each pair (see below): `ab_reps` and
// `ab_ratio` (the median over pairs of paused / active time).  With
// BENCH_PAUSED=1 graphshim is paused for the whole run (bench.sh:
// SWEEP=BENCH_PAUSED=1): a process with graphshim loaded and its engine idle.
//
// Workloads:
//   tiny1 tiny5 tiny20 tiny100  K tiny dependent kernels (1024 floats)
//   large20                     20 kernels over 16M floats each (no gain to expect)
//   norepeat                    20 tiny kernels whose arguments and grid sizes
//                               change every launch: nothing ever repeats, not
//                               even the sequence of kernel shapes (the worst case)
//   slowhost                    60 kernels of 10 us of GPU time each, the host busy
//                               for 15 us after each launch (a framework's work
//                               between launches on a slow host: PyTorch d=1024 on
//                               the device hosts): a host-bound sequence, where
//                               what the GPU runs after the synchronize is the
//                               cost (no graph column: a hand-written graph would
//                               skip the host's work)
//   balanced                    the same with kernels of 15 us: the GPU as busy as
//                               the host (resnet18 at batch 1 on the device hosts:
//                               about 18 us of GPU time an op against 24 of the
//                               host's), where held work makes the GPU start late
//   rare                        the same, but the grid sizes follow a sequence of
//                               low discrepancy: about 300 different sequences of
//                               shapes, each back every 300 iterations or so (work
//                               that repeats too rarely to pay for its graphs)
//   h2d_pinned h2d_pageable     4 KiB H2D copy in, 20 tiny kernels, D2H out (pinned)
//   cublas                      cublasSgemm 128x128x128 + an elementwise kernel
//   gemm4096                    four cublasSgemm 4096x4096x4096 + an elementwise
//                               kernel: a GPU-bound step (milliseconds of GPU time
//                               for 5 launches), where holding can only delay
//   loop1                       one tiny kernel 1000 times, the same arguments each
//                               time, then the synchronize (a timing loop)
//   body5                       5 different tiny kernels, 200 times back to back
//   loopvar                     one tiny kernel 1000 + (i mod 1000) times in iteration
//                               i: the loop is the same, the segment never repeats as a
//                               whole, so only loop bodies can be graphed (no graph
//                               column: a graph of a loop whose length changes)
//   scalars                     20 tiny kernels whose scalar arguments change every
//                               iteration (an optimizer's step); graph: built once,
//                               each node's arguments set with
//                               cudaGraphExecKernelNodeSetParams every iteration
//   rotate                      20 tiny kernels whose buffers rotate among 3 sets of
//                               two (a caching allocator's addresses); graph: one
//                               captured per set, launched in turn
//   copies                      10 device-to-device copies, each from one of five
//                               buffers in turn (a caching allocator's), each
//                               folded by a tiny kernel into one buffer; graph:
//                               built once, its copy nodes' sources set with
//                               cudaGraphExecMemcpyNodeSetParams1D every iteration
//   large32k                    one tiny kernel whose parameter is a 32,000-byte
//                               struct (CUDA 12.1+ allows 32,764 bytes), 1000 times
//                               with the same arguments, then the synchronize
// The last four mix the words of their buffers as integers (bench_mix), which
// never settle: the checksum shows every launch, their order and their count.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include "check.cuh"
#include "slow.cuh"
#include "mix64.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

__global__ void bench_axpb(float *x, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = a * x[i] + b;
}

// x = (x ^ (v + J)) * p + J, word by word: a bijection; J makes five different
// kernels of one source.
template <int J>
__global__ void bench_mix(unsigned *x, unsigned v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = (x[i] ^ (v + J)) * 16777619u + J;
}

// large32k's kernel: a 32,000-byte parameter, read at two words by every thread
// (uniform reads of the parameter bank: the kernel stays tiny on the GPU).
struct BenchBig {
    unsigned w[8000];
};
__global__ void bench_big(float *x, BenchBig p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 0.999f + (float)(p.w[0] ^ p.w[7999]) * 1e-6f;
}

typedef void (*MixKernel)(unsigned *, unsigned, int);
static const MixKernel mixers[5] = {bench_mix<0>, bench_mix<1>, bench_mix<2>, bench_mix<3>, bench_mix<4>};

// dst = mix of dst and src, word by word.
__global__ void bench_fold(unsigned *dst, const unsigned *src, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = (dst[i] ^ src[i]) * 16777619u + 1u;
}

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct Work {
    std::string name;
    int k = 20;
    int n = 1024;
    bool copies = false, pageable = false, norepeat = false, rare = false, gemm = false, slowhost = false;
    bool mixing = false, scalars = false; // the bench_mix workloads; scalars: arguments change
    int repeat = 1, sets = 1;             // runs of the k kernels per iteration; rotation sets
    int gemm_m = 128, gemms = 1;          // cublas, gemm4096: matrix size, products per iteration
    long long slow_ns = 10000;            // slowhost, balanced: GPU time of a kernel
    bool growing = false;                 // loopvar: repeat grows by one every iteration
    bool big = false;                     // large32k
    bool dcopies = false;                 // copies: xs are the sources, ys[0] the target
    BenchBig bigp = {};
    std::vector<unsigned *> xs, ys;       // bench_mix: buffers of each rotation set
    cudaStream_t s;
    float *x = nullptr, *hin = nullptr, *hout = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    cublasHandle_t h = nullptr;
    long iter = 0;

    void setup()
    {
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(cudaMalloc(&x, (size_t)n * sizeof(float)));
        std::vector<float> init(n);
        for (int i = 0; i < n; i++)
            init[i] = (float)(i % 97) / 97.0f;
        CK(cudaMemcpy(x, init.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
        for (int r = 0; (mixing || dcopies) && r < 2 * sets; r++) { // each buffer of each set its own words
            unsigned *buf;
            std::vector<unsigned> v(n);
            for (int i = 0; i < n; i++)
                v[i] = (unsigned)(r * n + i + 1) * 2654435761u;
            CK(cudaMalloc(&buf, (size_t)n * sizeof(unsigned)));
            CK(cudaMemcpy(buf, v.data(), v.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
            (r % 2 ? ys : xs).push_back(buf);
        }
        if (copies) {
            size_t bytes = 1024 * sizeof(float);
            if (pageable)
                hin = (float *)malloc(bytes);
            else
                CK(cudaMallocHost(&hin, bytes));
            CK(cudaMallocHost(&hout, bytes));
            for (int i = 0; i < 1024; i++)
                hin[i] = (float)i / 1024.0f;
        }
        if (gemm) {
            const int m = gemm_m;
            CK(cudaMalloc(&a, m * m * sizeof(float)));
            CK(cudaMalloc(&b, m * m * sizeof(float)));
            CK(cudaMalloc(&c, m * m * sizeof(float)));
            std::vector<float> v(m * m);
            for (int i = 0; i < m * m; i++)
                v[i] = (float)((i * 37) % 101) / 101.0f;
            CK(cudaMemcpy(a, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(b, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemset(c, 0, v.size() * 4));
            if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "cublas setup failed\n");
                exit(1);
            }
        }
    }

    int grid() const { return n > 4096 ? 1024 : (n + 255) / 256; }

    // The bench_mix workloads: launch j of iteration it, as kernel, buffer and v.
    // rotate's last launch is the fold instead.
    MixKernel mix_kernel(int j) const { return mixers[j % 5]; }
    unsigned *mix_buffer(long it, int j) const { return sets > 1 && j % 2 ? ys[it % sets] : xs[it % sets]; }
    unsigned mix_arg(long it, int j) const { return scalars ? (unsigned)(it * 1000003 + j) : (unsigned)(j + 7); }

    void mix_body()
    {
        for (int r = 0; r < repeat + (growing ? (int)(iter % 1000) : 0); r++)
            for (int j = 0; j < k; j++) {
                if (sets > 1 && j == k - 1)
                    bench_fold<<<grid(), 256, 0, s>>>(ys[iter % sets], xs[iter % sets], n);
                else
                    mix_kernel(j)<<<grid(), 256, 0, s>>>(mix_buffer(iter, j), mix_arg(iter, j), n);
            }
    }

    // scalars' hand-written graph: its k kernel nodes in a chain, built with the
    // arguments of iteration 0.  The graph stays alive: its nodes name the
    // executable's nodes for set_scalars.
    cudaGraphExec_t scalar_graph(std::vector<cudaGraphNode_t> &nodes)
    {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaGraphCreate(&g, 0));
        nodes.resize(k);
        for (int j = 0; j < k; j++) {
            MixNode p(*this, 0, j);
            CK(cudaGraphAddKernelNode(&nodes[j], g, j ? &nodes[j - 1] : nullptr, j ? 1 : 0, &p.params));
        }
        CK(cudaGraphInstantiate(&ge, g, 0));
        return ge;
    }

    // Sets the arguments of iteration it in scalars' executable.
    void set_scalars(cudaGraphExec_t ge, const std::vector<cudaGraphNode_t> &nodes, long it)
    {
        for (int j = 0; j < k; j++) {
            MixNode p(*this, it, j);
            CK(cudaGraphExecKernelNodeSetParams(ge, nodes[j], &p.params));
        }
    }

    // A kernel node's parameters for launch j of iteration it; params points
    // into the object, which must not be copied.
    struct MixNode {
        unsigned *x;
        unsigned v;
        int n;
        void *args[3] = {&x, &v, &n};
        cudaKernelNodeParams params = {};
        MixNode(const Work &w, long it, int j) : x(w.mix_buffer(it, j)), v(w.mix_arg(it, j)), n(w.n)
        {
            params.func = (void *)w.mix_kernel(j);
            params.gridDim = dim3(w.grid());
            params.blockDim = dim3(256);
            params.kernelParams = args;
        }
        MixNode(const MixNode &) = delete;
    };

    // Kernels a to b-1 of an iteration of the plain workloads (tiny, large20,
    // h2d, the ones after cublas's gemm).
    void plain_range(int a, int b)
    {
        for (int j = a; j < b; j++)
            bench_axpb<<<grid(), 256, 0, s>>>(x, 0.999f, 0.001f * (float)(j % 3), n);
    }

    // copies: copy j of iteration it reads this source.
    unsigned *copy_src(long it, int j) const { return xs[(it + j) % sets]; }

    // copies' hand-written graph: k / 2 pairs of a copy and a fold in a chain,
    // with the sources of iteration 0; copy nodes in nodes, for set_copies.
    cudaGraphExec_t copy_graph(std::vector<cudaGraphNode_t> &nodes)
    {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        cudaGraphNode_t last = nullptr, c, f;
        CK(cudaGraphCreate(&g, 0));
        for (int j = 0; j < k / 2; j++) {
            unsigned *dst = ys[0], *src = copy_src(0, j), *acc = ys[1];
            int nn = n;
            void *args[3] = {&acc, &dst, &nn};
            cudaKernelNodeParams p = {};
            p.func = (void *)bench_fold;
            p.gridDim = dim3(grid());
            p.blockDim = dim3(256);
            p.kernelParams = args;
            CK(cudaGraphAddMemcpyNode1D(&c, g, last ? &last : nullptr, last ? 1 : 0, dst, src,
                                        (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToDevice));
            CK(cudaGraphAddKernelNode(&f, g, &c, 1, &p));
            nodes.push_back(c);
            last = f;
        }
        CK(cudaGraphInstantiate(&ge, g, 0));
        return ge;
    }

    // Sets the sources of iteration it in copies' executable.
    void set_copies(cudaGraphExec_t ge, const std::vector<cudaGraphNode_t> &nodes, long it)
    {
        for (int j = 0; j < (int)nodes.size(); j++)
            CK(cudaGraphExecMemcpyNodeSetParams1D(ge, nodes[j], ys[0], copy_src(it, j), (size_t)n * sizeof(unsigned),
                                                  cudaMemcpyDeviceToDevice));
    }

    // One iteration's work, without the final synchronize.
    void body()
    {
        if (dcopies) {
            for (int j = 0; j < k / 2; j++) {
                CK(cudaMemcpyAsync(ys[0], copy_src(iter, j), (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToDevice,
                                   s));
                bench_fold<<<grid(), 256, 0, s>>>(ys[1], ys[0], n);
            }
            iter++;
            return;
        }
        if (mixing) {
            mix_body();
            iter++;
            return;
        }
        if (copies)
            CK(cudaMemcpyAsync(x, hin, 1024 * sizeof(float), cudaMemcpyHostToDevice, s));
        if (gemm) {
            const int m = gemm_m;
            const float one = 1.0f, zero = 0.0f;
            for (int g = 0; g < gemms; g++)
                if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m) !=
                    CUBLAS_STATUS_SUCCESS) {
                    fprintf(stderr, "cublasSgemm failed\n");
                    exit(1);
                }
            bench_axpb<<<(m * m + 255) / 256, 256, 0, s>>>(c, 0.5f, 0.25f, m * m);
        }
        if (big) {
            for (int j = 0; j < 1000; j++)
                bench_big<<<grid(), 256, 0, s>>>(x, bigp, n);
        } else if (slowhost) {
            for (int j = 0; j < k; j++) {
                bench_slow<<<grid(), 256, 0, s>>>(x, 0.999f, 0.001f * (float)(j % 3), n, slow_ns);
                for (double t0 = now_us(); now_us() - t0 < 15;)
                    ;
            }
        } else if (norepeat || rare) {
            for (int j = 0; j < k; j++) { // every launch's argument differs from every earlier one
                unsigned long h = (unsigned long)(iter * k + j);
                h = rare ? h * 0x9E3779B97F4A7C15ul : mix64(h);
                bench_axpb<<<1 + (int)(h >> 59), 256, 0, s>>>(x, 0.5f, (float)((iter * k + j) % 8388608), n);
            }
        } else {
            plain_range(0, k);
        }
        if (copies)
            CK(cudaMemcpyAsync(hout, x, 1024 * sizeof(float), cudaMemcpyDeviceToHost, s));
        iter++;
    }

    // FNV-1a of the first 4096 words of x, or of every bench_mix buffer.
    unsigned checksum()
    {
        std::vector<const void *> bufs{x};
        if (mixing || dcopies) {
            bufs.assign(xs.begin(), xs.end());
            bufs.insert(bufs.end(), ys.begin(), ys.end());
        }
        unsigned hsh = 2166136261u;
        for (const void *b : bufs) {
            std::vector<unsigned> v(std::min(n, 4096));
            CK(cudaMemcpy(v.data(), b, v.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
            for (unsigned u : v)
                hsh = (hsh ^ u) * 16777619u;
        }
        return hsh;
    }
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench WORKLOAD eager|graph [ITERS] [REPS]\n");
        return 2;
    }
    Work w;
    w.name = argv[1];
    bool split = std::string(argv[2]) == "split";
    bool graph = split || std::string(argv[2]) == "graph";
    int iters = argc > 3 ? atoi(argv[3]) : 500, reps = argc > 4 ? atoi(argv[4]) : 7;
    const std::string &n = w.name;
    if (n.rfind("tiny", 0) == 0)
        w.k = atoi(n.c_str() + 4);
    else if (n == "large20")
        w.n = 16 << 20;
    else if (n == "norepeat")
        w.norepeat = true;
    else if (n == "rare")
        w.rare = true;
    else if (n == "slowhost")
        w.slowhost = true, w.k = 60;
    else if (n == "balanced")
        w.slowhost = true, w.k = 60, w.slow_ns = 15000;
    else if (n == "h2d_pinned")
        w.copies = true;
    else if (n == "h2d_pageable")
        w.copies = w.pageable = true;
    else if (n == "cublas")
        w.gemm = true, w.k = 0;
    else if (n == "gemm4096")
        w.gemm = true, w.k = 0, w.gemm_m = 4096, w.gemms = 4;
    else if (n == "loop1")
        w.mixing = true, w.k = 1, w.repeat = 1000;
    else if (n == "body5")
        w.mixing = true, w.k = 5, w.repeat = 200;
    else if (n == "loopvar")
        w.mixing = w.growing = true, w.k = 1, w.repeat = 1000;
    else if (n == "scalars")
        w.mixing = w.scalars = true;
    else if (n == "rotate")
        w.mixing = true, w.sets = 3;
    else if (n == "copies")
        w.dcopies = true, w.sets = 5;
    else if (n == "large32k") {
        w.big = true;
        for (int i = 0; i < 8000; i++)
            w.bigp.w[i] = (unsigned)i * 2654435761u;
    }
    else {
        fprintf(stderr, "unknown workload %s\n", n.c_str());
        return 2;
    }
    if (graph && (w.norepeat || w.rare || w.growing || w.slowhost)) {
        printf("us_per_iter nan\n"); // a graph of work that never repeats does not exist
        return 0;
    }
    if (split && (w.copies || w.gemm || w.mixing || w.big || w.dcopies || w.k < 2)) { // the others: no graph at all (above)
        printf("us_per_iter nan\n");
        return 0;
    }
    w.setup();
    // BENCH_PAUSED=1: graphshim (where preloaded) paused for the whole run: what
    // its presence costs a process, apart from its engine's work on each op.
    if (getenv("BENCH_PAUSED"))
        if (auto pause = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause"))
            pause();

    std::vector<cudaGraphExec_t> ge;    // one per rotation set
    std::vector<cudaGraphNode_t> nodes; // scalars: the kernel nodes, in launch order
    if (graph && w.scalars) {
        ge.push_back(w.scalar_graph(nodes));
    } else if (graph && w.dcopies) {
        ge.push_back(w.copy_graph(nodes));
    } else if (split) { // the pieces, in launch order
        for (int a = 0, b = 8; a < w.k; a = b, b *= 2) {
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(w.s, cudaStreamCaptureModeThreadLocal));
            w.plain_range(a, std::min(b, w.k));
            CK(cudaStreamEndCapture(w.s, &g));
            CK(cudaGraphInstantiate(&ge.emplace_back(), g, 0));
            CK(cudaGraphDestroy(g));
        }
    } else if (graph) {
        for (int r = 0; r < w.sets; r++) { // body() goes on to the next set
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(w.s, cudaStreamCaptureModeThreadLocal));
            w.body();
            CK(cudaStreamEndCapture(w.s, &g));
            CK(cudaGraphInstantiate(&ge.emplace_back(), g, 0));
            CK(cudaGraphDestroy(g));
        }
    }
    long launched = 0; // graph: iterations launched
    double host = 0;   // host time of issuing, before the synchronize
    auto one = [&]() {
        double t0 = now_us();
        if (graph) {
            if (w.scalars)
                w.set_scalars(ge[0], nodes, launched);
            if (w.dcopies)
                w.set_copies(ge[0], nodes, launched);
            if (split)
                for (cudaGraphExec_t x : ge)
                    CK(cudaGraphLaunch(x, w.s));
            else
                CK(cudaGraphLaunch(ge[launched % ge.size()], w.s));
            launched++;
        } else {
            w.body();
        }
        host += now_us() - t0;
        CK(cudaStreamSynchronize(w.s));
    };
    for (int i = 0; i < 20; i++) // warm-up: lazy loading, and graphshim's learning
        one();
    std::vector<double> per, hosts;
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        host = 0;
        for (int i = 0; i < iters; i++)
            one();
        per.push_back((now_us() - t0) / iters);
        hosts.push_back(host / iters);
    }
    printf("us_reps"); // in order: the first repetitions hold what learning cost
    for (double u : per)
        printf(" %.3f", u);
    printf("\n");
    // BENCH_AB=N: N more pairs of repetitions, one of each pair with graphshim
    // paused (gs_pause: every op goes straight to the driver), the other with it
    // active, in the order AB BA AB ...: the engine's own cost, measured within
    // one process, where the level of the host's speed moves by up to 30 %
    // between processes.  Without graphshim both halves run alike (and the work
    // stays the same as with it): the ratio's noise.
    if (int ab = getenv("BENCH_AB") ? atoi(getenv("BENCH_AB")) : 0; ab > 0) {
        auto pause = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
        auto resume = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
        std::vector<double> ratio;
        printf("ab_reps");
        for (int p = 0; p < ab; p++) {
            double t[2]; // [0] paused, [1] active
            for (int h = 0; h < 2; h++) {
                bool paused = (h == 0) == (p % 2 == 0);
                if (paused && pause)
                    pause();
                double t0 = now_us();
                for (int i = 0; i < iters; i++)
                    one();
                t[!paused] = (now_us() - t0) / iters;
                if (paused && resume)
                    resume();
            }
            printf(" %.3f:%.3f", t[0], t[1]);
            ratio.push_back(t[0] / t[1]);
        }
        printf("\n");
        std::sort(ratio.begin(), ratio.end());
        printf("ab_ratio %.4f\n", ratio.size() % 2 ? ratio[ratio.size() / 2]
                                                   : (ratio[ratio.size() / 2 - 1] + ratio[ratio.size() / 2]) / 2);
    }
    std::sort(per.begin(), per.end());
    std::sort(hosts.begin(), hosts.end());
    CK(cudaGetLastError());
    printf("us_per_iter %.3f\n", per[per.size() / 2]);
    printf("host_us_per_iter %.3f\n", hosts[hosts.size() / 2]);
    printf("checksum %08x\n", w.norepeat || w.rare || w.gemm ? 0u : w.checksum());
    return 0;
}
