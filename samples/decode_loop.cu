// decode_loop: the launch pattern of a C++ LLM inference engine generating
// tokens one at a time (issue 50), with the engine's own graphs by hand as
// the yardstick.
//
//   decode_loop [tokens] [--mode eager|graphs|prompt] [--layers N] [--hidden H]
//               [--vocab V] [--gpu-us G] [--host-us U] [--pad P] [--start S]
//               [--warmup W] [--ab K] [--ab-tokens B] [--check C]
//               [--steps P] [--prompt-rows M] [--prompt-hidden HP]
//
// A token: two small host-to-device copies from pinned memory (the token id and
// its position, into one device array that the kernels read), then 1 + 16 N + 2
// kernels: an embedding; per layer a norm, the q, k and v products (matrix-vector,
// a warp a row), a rotation of q by the position, the write of k and v into the
// layer's KV cache at the position, attention scores over the first L positions
// of the cache (L = position + 1 rounded up to a multiple of the pad; later
// positions masked), a normalisation of the scores, the weighted sum of the
// cached values, the output product, a residual add, a norm, the up product
// (H to 2H), an activation, the down product and a residual add; then a final
// norm and a logits/argmax kernel (one block) that writes the next token's id.
// The id comes back by cudaMemcpyAsync into pinned memory and
// cudaStreamSynchronize, and the host sets the next token's inputs from it.
// Every kernel but the embedding is launched by cudaLaunchKernelEx with the
// attribute cudaLaunchAttributeProgrammaticStreamSerialization = 1; every
// kernel waits for the kernels before it (griddepcontrol.wait) before it
// touches memory and then lets the next one be scheduled
// (griddepcontrol.launch_dependents), so the overlap is only of launch latency.
// Kernel arguments depend on the padded length only (attention's length and
// its scratch's pointer, at workspace + L): they change when the position
// crosses a multiple of the pad, and repeat exactly between crossings; grids
// and blocks never change (the scores' grid covers the whole cache).
//
// Everything is 32-bit unsigned arithmetic modulo 2^32 (sums, products, a
// 32-bit mixer for the non-linear steps), so the CPU reference is exact and no
// order of summation matters; argmax ties go to the smallest id.
//
// Knobs (defaults): tokens 64 (the main run), --layers 22, --hidden 256 (FFN
// 2H), --vocab 1024, --gpu-us 0 (each kernel's block spins on the GPU's timer
// until at least G us have passed since it began: GPU time a kernel, 0 leaves
// tiny kernels), --host-us 1 (the host's own work before each launch, a busy
// loop calibrated at start), --pad 256, --start 200 (the position of the first
// generated token: the default run crosses 256 at token 56), --warmup 16 (the
// first min(W, T/2) tokens are not timed), --ab 0, --ab-tokens 32, --check -1
// (tokens checked against the CPU: -1 as many as about 2e9 multiply-adds allow,
// at least 1).
//
// Modes:
//   eager   every kernel launched as the host reaches it
//   graphs  as such an engine does by hand: the host does the same work per
//           kernel, recording the launches; if they equal the ones captured
//           last, cudaGraphLaunch of the executable; otherwise the token's
//           launches are stream-captured again and applied with
//           cudaGraphExecUpdate (instantiated anew if the update fails).  The
//           copies and the synchronize stay outside the graph.
//   prompt  the prompt step instead of decoding (below), eagerly
// eager and graphs print the same checksum; `launches` counts launch calls
// (captured ones included), so it differs between them.
//
// --ab K: after the main run, K pairs of blocks of B tokens each, in the order
// paused-active, active-paused, ... (ABBA), graphshim paused (gs_pause) in the
// paused block and active in the other (gs_pause and gs_resume looked up with
// dlsym: without graphshim both halves run alike and the ratio is the method's
// noise).  stderr: each block's tokens/s, then `ab: median paused/active = X`,
// the median over pairs of the paused block's time over the active one's
// (above 1: graphshim faster).
//
// --mode prompt: P prompt steps (--steps, 5): each an embedding of M rows
// (--prompt-rows, 512) of width HP (--prompt-hidden, 1024), then per layer
// 12 kernels of which 6 are tiled 16x16 matrix products (M x HP by HP x HP),
// a copy of the last row into pinned memory and a synchronize.  Every step
// computes the same from the same start; rows 0 and M-1 are checked against the
// CPU (the steps are row by row), and each step's last row against the first's.
// --issue-times K: for the first two steps, `prompt_issue_us STEP t1 .. tK last
// T copy C gpu G` on stderr, microseconds from the step's start to the return of
// each of its first K launches, of its last, and of the copy before its
// synchronize, and between events recorded before its first launch and after the
// copy (G: the GPU's time for the step).
//
// stdout (deterministic): the configuration, a few token ids, FNV-1a of the
// token ids and of the final hidden state, `checksum`, `launches`.  stderr:
// timings (`tokens_per_s X`, `ms_per_token X`, `prompt_ms X`), the AB blocks.
#include "common.cuh"

#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <vector>

static const char* NAME = "decode_loop";

// ---------------------------------------------------------------- arithmetic

__host__ __device__ static inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__host__ __device__ static inline uint32_t rotl32(uint32_t x, int r)
{
    r &= 31;
    return r ? (x << r) | (x >> (32 - r)) : x;
}

__host__ __device__ static inline uint32_t embed_val(int tok, int pos, int i)
{
    return mix32((uint32_t)tok * 0x9E3779B1u + (uint32_t)i) ^ mix32((uint32_t)pos * 0x85EBCA77u + (uint32_t)i + 1u);
}

// ---------------------------------------------------------------- kernels
//
// Every kernel takes one KArgs by value.  A kernel's block begins with
// kbegin (waits for the kernels before it, lets the next one be scheduled, and
// reads the GPU's timer) and ends with kend (thread 0 spins until spin_ns have
// passed since kbegin).

struct KArgs {
    const uint32_t* a; // input
    const uint32_t* b; // weights or a second input
    uint32_t* y;       // output
    const int* in;     // device [token id, position]
    int n, m;          // output length, reduction length
    int len;           // attention's padded length
    uint32_t salt;
    long long spin_ns;
};

__device__ static inline long long gtimer()
{
    long long t = 0;
#if defined(__CUDA_ARCH__)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#endif
    return t;
}

__device__ static inline long long kbegin()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
    return gtimer();
}

__device__ static inline void kend(long long t0, long long ns)
{
    if (ns > 0 && threadIdx.x == 0 && threadIdx.y == 0)
        while (gtimer() - t0 < ns)
            ;
}

// Sum of v over the warp; every lane gets it.
__device__ static inline uint32_t warp_sum(uint32_t v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// sum_j row[j] * a[j] for j < m, the warp's lanes taking every 32nd j; every
// lane gets it.
__device__ static inline uint32_t warp_dot(const uint32_t* row, const uint32_t* a, int m, int lane)
{
    uint32_t s = 0;
    for (int j = lane; j < m; j += 32)
        s += row[j] * a[j];
    return warp_sum(s);
}

// Sum of v over the block (blockDim.x a multiple of 32, at most 1024); every
// thread gets it.
__device__ static inline uint32_t block_sum(uint32_t v)
{
    __shared__ uint32_t part[32];
    v = warp_sum(v);
    int w = threadIdx.x / 32, nw = blockDim.x / 32;
    __syncthreads();
    if (threadIdx.x % 32 == 0)
        part[w] = v;
    __syncthreads();
    uint32_t s = 0;
    for (int i = 0; i < nw; i++)
        s += part[i];
    return s;
}

// x[i] = embedding of (token, position)
__global__ void gsamp_dec_embed(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] = embed_val(p.in[0], p.in[1], i);
    kend(t0, p.spin_ns);
}

// one block: y = mix(a ^ mix(sum(a) ^ salt))
__global__ void gsamp_dec_norm(KArgs p)
{
    long long t0 = kbegin();
    uint32_t s = 0;
    for (int i = threadIdx.x; i < p.n; i += blockDim.x)
        s += p.a[i];
    uint32_t t = mix32(block_sum(s) ^ p.salt);
    for (int i = threadIdx.x; i < p.n; i += blockDim.x)
        p.y[i] = mix32(p.a[i] ^ t);
    kend(t0, p.spin_ns);
}

// y[r] = sum_j b[r * m + j] * a[j], a warp a row
__global__ void gsamp_dec_matvec(KArgs p)
{
    long long t0 = kbegin();
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r < p.n) {
        uint32_t s = warp_dot(p.b + (size_t)r * p.m, p.a, p.m, lane);
        if (lane == 0)
            p.y[r] = s;
    }
    kend(t0, p.spin_ns);
}

// q rotated by the position, in place
__global__ void gsamp_dec_rope(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] = rotl32(p.y[i], p.in[1] + i) ^ p.salt;
    kend(t0, p.spin_ns);
}

// the layer's cache (y: [position][2][n]) at the position: rotated k (a), v (b)
__global__ void gsamp_dec_kvwrite(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x, pos = p.in[1];
    if (i < p.n) {
        uint32_t* row = p.y + (size_t)pos * 2 * p.n;
        row[i] = rotl32(p.a[i], pos * 3 + i);
        row[p.n + i] = p.b[i];
    }
    kend(t0, p.spin_ns);
}

// y[q] = sum_i a[i] * K[q][i] for q <= position, 0 for position < q < len;
// a warp a cache position
__global__ void gsamp_dec_scores(KArgs p)
{
    long long t0 = kbegin();
    int q = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (q < p.len) {
        uint32_t s = 0;
        if (q <= p.in[1])
            s = warp_dot(p.b + (size_t)q * 2 * p.m, p.a, p.m, lane);
        if (lane == 0)
            p.y[q] = s;
    }
    kend(t0, p.spin_ns);
}

// one block, in place: y[q] = mix(y[q] ^ sum(y)) >> 20 for q <= position, else 0
__global__ void gsamp_dec_softmax(KArgs p)
{
    long long t0 = kbegin();
    int pos = p.in[1];
    uint32_t s = 0;
    for (int q = threadIdx.x; q < p.len; q += blockDim.x)
        s += p.y[q];
    s = block_sum(s);
    for (int q = threadIdx.x; q < p.len; q += blockDim.x)
        p.y[q] = q <= pos ? mix32(p.y[q] ^ s) >> 20 : 0u;
    kend(t0, p.spin_ns);
}

// y[i] = sum over q <= position, q < len of a[q] * V[q][i]
__global__ void gsamp_dec_attnout(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        int end = min(p.len, p.in[1] + 1);
        uint32_t s = 0;
        for (int q = 0; q < end; q++)
            s += p.a[q] * p.b[(size_t)q * 2 * p.n + p.n + i];
        p.y[i] = s;
    }
    kend(t0, p.spin_ns);
}

// y += a
__global__ void gsamp_dec_add(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] += p.a[i];
    kend(t0, p.spin_ns);
}

// y = mix(a ^ salt)
__global__ void gsamp_dec_act(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] = mix32(p.a[i] ^ p.salt);
    kend(t0, p.spin_ns);
}

// one block: logits[v] = sum_i b[v * m + i] * a[i] for v < n, a warp a row;
// y[0] = the first v of the largest logit
__global__ void gsamp_dec_logits(KArgs p)
{
    long long t0 = kbegin();
    __shared__ uint32_t bv[32];
    __shared__ int bi[32];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = blockDim.x / 32;
    uint32_t best = 0;
    int besti = 0x7fffffff;
    for (int v = w; v < p.n; v += nw) {
        uint32_t s = warp_dot(p.b + (size_t)v * p.m, p.a, p.m, lane);
        if (besti == 0x7fffffff || s > best)
            best = s, besti = v;
    }
    if (lane == 0)
        bv[w] = best, bi[w] = besti;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t b = 0;
        int bix = 0x7fffffff;
        for (int j = 0; j < nw; j++)
            if (bi[j] != 0x7fffffff && (bix == 0x7fffffff || bv[j] > b || (bv[j] == b && bi[j] < bix)))
                b = bv[j], bix = bi[j];
        p.y[0] = (uint32_t)bix;
    }
    kend(t0, p.spin_ns);
}

// ---- prompt step

// y[r][c] = embedding of (row, column), n = rows * width
__global__ void gsamp_pro_embed(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] = embed_val(i / p.m, 7, i % p.m);
    kend(t0, p.spin_ns);
}

// a block a row of width m: y = mix(a ^ mix(sum(row) ^ salt))
__global__ void gsamp_pro_rownorm(KArgs p)
{
    long long t0 = kbegin();
    const uint32_t* a = p.a + (size_t)blockIdx.x * p.m;
    uint32_t* y = p.y + (size_t)blockIdx.x * p.m;
    uint32_t s = 0;
    for (int i = threadIdx.x; i < p.m; i += blockDim.x)
        s += a[i];
    uint32_t t = mix32(block_sum(s) ^ p.salt);
    for (int i = threadIdx.x; i < p.m; i += blockDim.x)
        y[i] = mix32(a[i] ^ t);
    kend(t0, p.spin_ns);
}

// y = a (n x m) times b (m x m), tiles of 16 x 16
__global__ void gsamp_pro_gemm(KArgs p)
{
    long long t0 = kbegin();
    __shared__ uint32_t ta[16][16], tb[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx;
    uint32_t s = 0;
    for (int k0 = 0; k0 < p.m; k0 += 16) {
        ta[ty][tx] = p.a[(size_t)r * p.m + k0 + tx];
        tb[ty][tx] = p.b[(size_t)(k0 + ty) * p.m + c];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; k++)
            s += ta[ty][k] * tb[k][tx];
        __syncthreads();
    }
    p.y[(size_t)r * p.m + c] = s;
    kend(t0, p.spin_ns);
}

// y[i] = q ^ (k * 3 + v), q k v at a[i], a[n + i], a[2n + i]
__global__ void gsamp_pro_mix(KArgs p)
{
    long long t0 = kbegin();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] = p.a[i] ^ (p.a[p.n + i] * 3u + p.a[2 * (size_t)p.n + i]);
    kend(t0, p.spin_ns);
}

// ---------------------------------------------------------------- host side

static volatile uint64_t g_sink;

static inline uint64_t busy(uint64_t n)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// Iterations of busy() a microsecond: the fastest of a few timed runs.
static double calibrate_busy()
{
    const uint64_t n = 1 << 20;
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        g_sink += busy(n);
        best = std::min(best, now_s() - t0);
    }
    return (double)n / (best * 1e6);
}

struct Opts {
    std::string mode = "eager";
    int tokens = 64, layers = 22, hidden = 256, vocab = 1024, pad = 256, start = 200, warmup = 16;
    double gpu_us = 0, host_us = 1;
    int ab = 0, ab_tokens = 32;
    long long check = -1;
    int steps = 5, prompt_rows = 512, prompt_hidden = 1024;
    int issue_times = 0;
};

static void usage(const char* prog)
{
    fprintf(stderr,
            "usage: %s [tokens] [--mode eager|graphs|prompt] [--tokens T] [--layers N] [--hidden H] [--vocab V]\n"
            "       [--gpu-us G] [--host-us U] [--pad P] [--start S] [--warmup W] [--ab K] [--ab-tokens B]\n"
            "       [--check C] [--steps P] [--prompt-rows M] [--prompt-hidden HP] [--issue-times K]\n",
            prog);
    exit(2);
}

static Opts parse(int argc, char** argv)
{
    Opts o;
    auto num = [&](const char* s, double lo, double hi) {
        char* end = nullptr;
        double v = strtod(s, &end);
        if (!end || *end || !(v >= lo && v <= hi)) {
            fprintf(stderr, "%s: bad value '%s'\n", NAME, s);
            usage(argv[0]);
        }
        return v;
    };
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0) {
            if (i != 1)
                usage(argv[0]);
            o.tokens = (int)num(argv[i], 1, 1e7);
            continue;
        }
        if (i + 1 >= argc)
            usage(argv[0]);
        const char* v = argv[++i];
        if (a == "--mode") {
            o.mode = v;
            if (o.mode != "eager" && o.mode != "graphs" && o.mode != "prompt")
                usage(argv[0]);
        } else if (a == "--tokens") o.tokens = (int)num(v, 1, 1e7);
        else if (a == "--layers") o.layers = (int)num(v, 1, 1000);
        else if (a == "--hidden") o.hidden = (int)num(v, 32, 16384);
        else if (a == "--vocab") o.vocab = (int)num(v, 1, 1 << 20);
        else if (a == "--gpu-us") o.gpu_us = num(v, 0, 1e6);
        else if (a == "--host-us") o.host_us = num(v, 0, 1e6);
        else if (a == "--pad") o.pad = (int)num(v, 1, 1 << 20);
        else if (a == "--start") o.start = (int)num(v, 0, 1 << 24);
        else if (a == "--warmup") o.warmup = (int)num(v, 0, 1e7);
        else if (a == "--ab") o.ab = (int)num(v, 0, 1e6);
        else if (a == "--ab-tokens") o.ab_tokens = (int)num(v, 1, 1e7);
        else if (a == "--check") o.check = (long long)num(v, -1, 1e12);
        else if (a == "--steps") o.steps = (int)num(v, 1, 1e6);
        else if (a == "--prompt-rows") o.prompt_rows = (int)num(v, 16, 1 << 16);
        else if (a == "--prompt-hidden") o.prompt_hidden = (int)num(v, 16, 1 << 14);
        else if (a == "--issue-times") o.issue_times = (int)num(v, 0, 1 << 20);
        else
            usage(argv[0]);
    }
    if (o.hidden % 32)
        fail(NAME, "--hidden must be a multiple of 32");
    if (o.prompt_rows % 16 || o.prompt_hidden % 16)
        fail(NAME, "--prompt-rows and --prompt-hidden must be multiples of 16");
    return o;
}

// One kernel launch as the engine issues it: compared byte for byte between
// tokens (zero padding included: every Launch is memset first).
struct Launch {
    const void* fn;
    dim3 grid, block;
    int pdl, zero; // zero: no padding before a
    KArgs a;
};

static void fill(uint32_t* v, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = mix32((uint32_t)i * 0x9E3779B1u + seed);
}

// The launcher: the host's own work before each kernel, then the launch (or
// its record, in graphs mode).
struct Engine {
    cudaStream_t s;
    double busy_per_us = 0;
    uint64_t host_iters = 0;
    long long spin_ns = 0;
    bool record = false;
    std::vector<double>* stamps = nullptr; // the time after each launch, where set
    std::vector<Launch> recs;

    void launch(const Launch& L)
    {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = L.grid;
        cfg.blockDim = L.block;
        cfg.dynamicSmemBytes = 0;
        cfg.stream = s;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = L.pdl ? at : nullptr;
        cfg.numAttrs = L.pdl ? 1 : 0;
        KArgs a = L.a;
        void* args[1] = {&a};
        CK(cudaLaunchKernelExC(&cfg, L.fn, args));
        g_launches++;
    }

    // Kernel fn on grid x block, arguments a (spin_ns set here).
    void kern(void (*fn)(KArgs), dim3 grid, dim3 block, bool pdl, KArgs a)
    {
        g_sink += busy(host_iters);
        Launch L;
        memset((void*)&L, 0, sizeof L); // every byte defined: recorded launches are compared with memcmp
        L.fn = (const void*)fn;
        L.grid = grid;
        L.block = block;
        L.pdl = pdl;
        L.a = a;
        L.a.spin_ns = spin_ns;
        if (record)
            recs.push_back(L);
        else
            launch(L);
        if (stamps)
            stamps->push_back(now_s());
    }
};

static KArgs args(const uint32_t* a, const uint32_t* b, uint32_t* y, const int* in, int n, int m, int len,
                  uint32_t salt)
{
    KArgs k;
    memset(&k, 0, sizeof k);
    k.a = a, k.b = b, k.y = y, k.in = in, k.n = n, k.m = m, k.len = len, k.salt = salt;
    return k;
}

static unsigned cdiv(long long a, long long b) { return (unsigned)((a + b - 1) / b); }

static uint64_t fnv_words(const uint32_t* v, size_t n, uint64_t h = FNV_INIT)
{
    return fnv1a(v, n * sizeof(uint32_t), h);
}

// ---------------------------------------------------------------- the model

struct Model {
    int N, H, F, V, pad, maxpos;
    // host: weights per layer [Wq Wk Wv Wo (H x H)][Wu (F x H)][Wd (H x F)], logits (V x H)
    std::vector<uint32_t> w, wl, cache0;
    size_t layer_words() const { return (size_t)4 * H * H + 2 * (size_t)F * H; }
    size_t cache_words() const { return (size_t)maxpos * 2 * H; } // a layer's
    const uint32_t* W(int l, int j) const { return w.data() + l * layer_words() + (size_t)j * H * H; }

    void init(const Opts& o, int total_tokens)
    {
        N = o.layers, H = o.hidden, F = 2 * H, V = o.vocab, pad = o.pad;
        maxpos = (int)cdiv((long long)o.start + total_tokens, pad) * pad;
        w.resize(N * layer_words());
        fill(w.data(), w.size(), 11);
        wl.resize((size_t)V * H);
        fill(wl.data(), wl.size(), 12);
        // the prompt's keys and values, positions [0, start)
        cache0.assign((size_t)N * cache_words(), 0);
        for (int l = 0; l < N; l++)
            fill(cache0.data() + l * cache_words(), (size_t)o.start * 2 * H, 100 + l);
    }
};

static inline int padded(int pos, int pad) { return (int)cdiv((long long)pos + 1, pad) * pad; }

// The decode state on the GPU and the token's launches.
struct Gpu {
    const Model* M;
    uint32_t *w, *wl, *cache, *x, *xn, *q, *k, *v, *ws, *o, *proj, *up, *act, *down, *out;
    int *in;
    int *h_in, *h_out; // pinned: [token id, position], [next token id]

    void init(const Model& m)
    {
        M = &m;
        int H = m.H, F = m.F;
        CK(cudaMalloc(&w, m.w.size() * 4));
        CK(cudaMemcpy(w, m.w.data(), m.w.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&wl, m.wl.size() * 4));
        CK(cudaMemcpy(wl, m.wl.data(), m.wl.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&cache, m.cache0.size() * 4));
        CK(cudaMemcpy(cache, m.cache0.data(), m.cache0.size() * 4, cudaMemcpyHostToDevice));
        uint32_t** bufs[] = {&x, &xn, &q, &k, &v, &o, &proj, &down};
        for (uint32_t** b : bufs)
            CK(cudaMalloc(b, (size_t)H * 4));
        CK(cudaMalloc(&up, (size_t)F * 4));
        CK(cudaMalloc(&act, (size_t)F * 4));
        CK(cudaMalloc(&ws, (size_t)2 * m.maxpos * 4));
        CK(cudaMalloc(&out, 4));
        CK(cudaMalloc(&in, 2 * sizeof(int)));
        CK(cudaMallocHost(&h_in, 2 * sizeof(int)));
        CK(cudaMallocHost(&h_out, sizeof(int)));
    }

    const uint32_t* W(int l, int j) const { return w + l * M->layer_words() + (size_t)j * M->H * M->H; }

    // The token's kernels at position pos (only its padded length goes into
    // the arguments; every grid is the same for all positions).
    void kernels(Engine& e, int pos) const
    {
        const int H = M->H, F = M->F, len = padded(pos, M->pad);
        uint32_t* sc = ws + len; // the scores' scratch: after an L-sized region
        e.kern(gsamp_dec_embed, cdiv(H, 128), 128, false, args(nullptr, nullptr, x, in, H, 0, 0, 0));
        for (int l = 0; l < M->N; l++) {
            uint32_t salt = (uint32_t)l * 16u;
            uint32_t* cl = cache + l * M->cache_words();
            const uint32_t* wu = W(l, 4);
            const uint32_t* wd = wu + (size_t)F * H;
            e.kern(gsamp_dec_norm, 1, 256, true, args(x, nullptr, xn, in, H, 0, 0, salt + 1));
            e.kern(gsamp_dec_matvec, cdiv(H, 8), 256, true, args(xn, W(l, 0), q, in, H, H, 0, 0));
            e.kern(gsamp_dec_matvec, cdiv(H, 8), 256, true, args(xn, W(l, 1), k, in, H, H, 0, 0));
            e.kern(gsamp_dec_matvec, cdiv(H, 8), 256, true, args(xn, W(l, 2), v, in, H, H, 0, 0));
            e.kern(gsamp_dec_rope, cdiv(H, 128), 128, true, args(nullptr, nullptr, q, in, H, 0, 0, salt + 5));
            e.kern(gsamp_dec_kvwrite, cdiv(H, 128), 128, true, args(k, v, cl, in, H, 0, 0, 0));
            e.kern(gsamp_dec_scores, cdiv(M->maxpos, 8), 256, true, args(q, cl, sc, in, len, H, len, 0));
            e.kern(gsamp_dec_softmax, 1, 256, true, args(nullptr, nullptr, sc, in, len, 0, len, 0));
            e.kern(gsamp_dec_attnout, cdiv(H, 128), 128, true, args(sc, cl, o, in, H, 0, len, 0));
            e.kern(gsamp_dec_matvec, cdiv(H, 8), 256, true, args(o, W(l, 3), proj, in, H, H, 0, 0));
            e.kern(gsamp_dec_add, cdiv(H, 128), 128, true, args(proj, nullptr, x, in, H, 0, 0, 0));
            e.kern(gsamp_dec_norm, 1, 256, true, args(x, nullptr, xn, in, H, 0, 0, salt + 12));
            e.kern(gsamp_dec_matvec, cdiv(F, 8), 256, true, args(xn, wu, up, in, F, H, 0, 0));
            e.kern(gsamp_dec_act, cdiv(F, 128), 128, true, args(up, nullptr, act, in, F, 0, 0, salt + 14));
            e.kern(gsamp_dec_matvec, cdiv(H, 8), 256, true, args(act, wd, down, in, H, F, 0, 0));
            e.kern(gsamp_dec_add, cdiv(H, 128), 128, true, args(down, nullptr, x, in, H, 0, 0, 0));
        }
        e.kern(gsamp_dec_norm, 1, 256, true, args(x, nullptr, xn, in, H, 0, 0, 0xfffffu));
        e.kern(gsamp_dec_logits, 1, 1024, true, args(xn, wl, out, in, M->V, H, 0, 0));
    }
};

static const int KERNELS_PER_LAYER = 16;

// The same token on the CPU: returns the next token id; x, cache updated.
struct Cpu {
    const Model* M;
    std::vector<uint32_t> x, xn, q, k, v, s, o, proj, up, act, down, cache;

    void init(const Model& m)
    {
        M = &m;
        x.resize(m.H), xn.resize(m.H), q.resize(m.H), k.resize(m.H), v.resize(m.H), o.resize(m.H);
        proj.resize(m.H), down.resize(m.H), up.resize(m.F), act.resize(m.F);
        s.resize(m.maxpos);
        cache = m.cache0;
    }
    static void norm(const std::vector<uint32_t>& a, std::vector<uint32_t>& y, uint32_t salt)
    {
        uint32_t s = 0;
        for (uint32_t u : a)
            s += u;
        uint32_t t = mix32(s ^ salt);
        for (size_t i = 0; i < a.size(); i++)
            y[i] = mix32(a[i] ^ t);
    }
    static void matvec(const uint32_t* w, const std::vector<uint32_t>& a, std::vector<uint32_t>& y, int n, int m)
    {
        for (int r = 0; r < n; r++) {
            uint32_t acc = 0;
            const uint32_t* row = w + (size_t)r * m;
            for (int j = 0; j < m; j++)
                acc += row[j] * a[j];
            y[r] = acc;
        }
    }
    int token(int tok, int pos)
    {
        const int H = M->H, F = M->F, len = padded(pos, M->pad);
        for (int i = 0; i < H; i++)
            x[i] = embed_val(tok, pos, i);
        for (int l = 0; l < M->N; l++) {
            uint32_t salt = (uint32_t)l * 16u;
            uint32_t* cl = cache.data() + l * M->cache_words();
            const uint32_t* wu = M->W(l, 4);
            const uint32_t* wd = wu + (size_t)F * H;
            norm(x, xn, salt + 1);
            matvec(M->W(l, 0), xn, q, H, H);
            matvec(M->W(l, 1), xn, k, H, H);
            matvec(M->W(l, 2), xn, v, H, H);
            for (int i = 0; i < H; i++)
                q[i] = rotl32(q[i], pos + i) ^ (salt + 5);
            uint32_t* row = cl + (size_t)pos * 2 * H;
            for (int i = 0; i < H; i++)
                row[i] = rotl32(k[i], pos * 3 + i), row[H + i] = v[i];
            uint32_t sum = 0;
            for (int p = 0; p < len; p++) {
                uint32_t a = 0;
                if (p <= pos)
                    for (int i = 0; i < H; i++)
                        a += q[i] * cl[(size_t)p * 2 * H + i];
                s[p] = a;
                sum += a;
            }
            for (int p = 0; p < len; p++)
                s[p] = p <= pos ? mix32(s[p] ^ sum) >> 20 : 0u;
            int end = std::min(len, pos + 1);
            for (int i = 0; i < H; i++) {
                uint32_t a = 0;
                for (int p = 0; p < end; p++)
                    a += s[p] * cl[(size_t)p * 2 * H + H + i];
                o[i] = a;
            }
            matvec(M->W(l, 3), o, proj, H, H);
            for (int i = 0; i < H; i++)
                x[i] += proj[i];
            norm(x, xn, salt + 12);
            matvec(wu, xn, up, F, H);
            for (int i = 0; i < F; i++)
                act[i] = mix32(up[i] ^ (salt + 14));
            matvec(wd, act, down, H, F);
            for (int i = 0; i < H; i++)
                x[i] += down[i];
        }
        norm(x, xn, 0xfffffu);
        uint32_t best = 0;
        int besti = -1;
        for (int v2 = 0; v2 < M->V; v2++) {
            uint32_t a = 0;
            for (int i = 0; i < H; i++)
                a += M->wl[(size_t)v2 * H + i] * xn[i];
            if (besti < 0 || a > best)
                best = a, besti = v2;
        }
        return besti;
    }
    // multiply-adds of a token at pos
    static double cost(const Model& m, int pos)
    {
        return (double)m.N * (8.0 * m.H * m.H + 2.0 * padded(pos, m.pad) * m.H) + (double)m.V * m.H;
    }
};

// ---------------------------------------------------------------- decode

struct Decoder {
    Opts o;
    Model m;
    Gpu g;
    Engine e;
    cudaGraphExec_t exec = nullptr;
    std::vector<Launch> captured;
    long captures = 0, updates = 0, instantiations = 0, graph_launches = 0;
    int tok = 1, pos = 0;
    std::vector<int> ids; // every token's output id, in order

    // One token: inputs in, kernels (eager, or the graph), the id back.
    void step()
    {
        g.h_in[0] = tok;
        g.h_in[1] = pos;
        CK(cudaMemcpyAsync(g.in, g.h_in, sizeof(int), cudaMemcpyHostToDevice, e.s));
        CK(cudaMemcpyAsync(g.in + 1, g.h_in + 1, sizeof(int), cudaMemcpyHostToDevice, e.s));
        if (o.mode == "graphs") {
            e.record = true;
            e.recs.clear();
            g.kernels(e, pos);
            e.record = false;
            bool same = exec && e.recs.size() == captured.size() &&
                        memcmp(e.recs.data(), captured.data(), captured.size() * sizeof(Launch)) == 0;
            if (!same)
                capture();
            CK(cudaGraphLaunch(exec, e.s));
            graph_launches++;
        } else {
            g.kernels(e, pos);
        }
        CK(cudaMemcpyAsync(g.h_out, g.out, sizeof(int), cudaMemcpyDeviceToHost, e.s));
        CK(cudaStreamSynchronize(e.s));
        tok = *g.h_out;
        if (tok < 0 || tok >= m.V)
            fail(NAME, "token id out of range");
        ids.push_back(tok);
        pos++;
    }

    // The recorded launches captured into a graph, applied to the executable.
    void capture()
    {
        cudaGraph_t graph;
        CK(cudaStreamBeginCapture(e.s, cudaStreamCaptureModeRelaxed));
        for (const Launch& L : e.recs)
            e.launch(L);
        CK(cudaStreamEndCapture(e.s, &graph));
        captures++;
        bool fresh = !exec;
        if (exec) {
            cudaGraphExecUpdateResultInfo info;
            if (cudaGraphExecUpdate(exec, graph, &info) == cudaSuccess) {
                updates++;
            } else {
                (void)cudaGetLastError(); // the failed update's error is not sticky
                CK(cudaGraphExecDestroy(exec));
                fresh = true;
            }
        }
        if (fresh) {
            CK(cudaGraphInstantiate(&exec, graph, 0));
            instantiations++;
        }
        CK(cudaGraphDestroy(graph));
        captured = e.recs;
    }

    // n tokens; returns the seconds they took.
    double run(int n)
    {
        double t0 = now_s();
        for (int i = 0; i < n; i++)
            step();
        return now_s() - t0;
    }
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int decode_main(const Opts& o, Engine& e)
{
    Decoder d;
    d.o = o;
    int total = o.tokens + 2 * o.ab * o.ab_tokens;
    d.m.init(o, total);
    d.g.init(d.m);
    d.e = e;
    d.pos = o.start;
    CK(cudaDeviceSynchronize());

    int warm = std::min(o.warmup, o.tokens / 2);
    d.run(warm);
    int timed = o.tokens - warm;
    double t = d.run(timed);
    fprintf(stderr, "%s: mode %s, %d layers, hidden %d, gpu-us %g, host-us %g, %d kernels a token\n", NAME,
            o.mode.c_str(), o.layers, o.hidden, o.gpu_us, o.host_us, 1 + KERNELS_PER_LAYER * o.layers + 2);
    fprintf(stderr, "tokens_per_s %.2f\n", timed / t);
    fprintf(stderr, "ms_per_token %.4f\n", 1e3 * t / timed);

    if (o.ab > 0) {
        auto pause = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
        auto resume = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
        fprintf(stderr, "ab: graphshim %s\n", pause && resume ? "loaded" : "not loaded (a null measurement)");
        std::vector<double> ratio;
        for (int p = 0; p < o.ab; p++) {
            double tt[2]; // [0] paused, [1] active
            for (int h = 0; h < 2; h++) {
                bool paused = (h == 0) == (p % 2 == 0);
                if (paused && pause)
                    pause();
                tt[!paused] = d.run(o.ab_tokens);
                if (paused && resume)
                    resume();
            }
            fprintf(stderr, "ab_pair %d paused %.2f active %.2f tokens/s\n", p, o.ab_tokens / tt[0],
                    o.ab_tokens / tt[1]);
            ratio.push_back(tt[0] / tt[1]);
        }
        fprintf(stderr, "ab: median paused/active = %.4f\n", median(ratio));
    }
    if (o.mode == "graphs")
        fprintf(stderr, "graphs: %ld captures, %ld updates, %ld instantiations, %ld graph launches\n", d.captures,
                d.updates, d.instantiations, d.graph_launches);
    CK(cudaGetLastError());

    std::vector<uint32_t> x(d.m.H);
    CK(cudaMemcpy(x.data(), d.g.x, x.size() * 4, cudaMemcpyDeviceToHost));

    // the CPU reference: the first `check` tokens
    long long check = o.check;
    if (check < 0) {
        double budget = 2e9, c = 0;
        check = 0;
        while (check < total && (check == 0 || c + Cpu::cost(d.m, o.start + (int)check) <= budget))
            c += Cpu::cost(d.m, o.start + (int)check), check++;
    }
    check = std::min<long long>(check, total);
    Cpu c;
    c.init(d.m);
    int ctok = 1;
    for (long long i = 0; i < check; i++) {
        ctok = c.token(ctok, o.start + (int)i);
        if (ctok != d.ids[i]) {
            fprintf(stderr, "%s: FAILED: token %lld: gpu %d cpu %d\n", NAME, i, d.ids[i], ctok);
            exit(1);
        }
    }
    if (check == total && memcmp(c.x.data(), x.data(), x.size() * 4) != 0)
        fail(NAME, "final hidden state differs from the CPU's");
    fprintf(stderr, "%s: %lld of %d tokens checked against the CPU\n", NAME, check, total);

    uint64_t th = fnv1a(d.ids.data(), d.ids.size() * sizeof(int));
    uint64_t xh = fnv_words(x.data(), x.size());
    printf("sample %s\n", NAME);
    printf("tokens %d\nlayers %d\nhidden %d\nvocab %d\npad %d\nstart %d\n", total, o.layers, o.hidden, o.vocab,
           o.pad, o.start);
    printf("kernels_per_token %d\n", 1 + KERNELS_PER_LAYER * o.layers + 2);
    int shown = -1;
    for (int i : {0, 1, total / 2, total - 1})
        if (i > shown && i < total)
            printf("token[%d] %d\n", i, d.ids[i]), shown = i;
    printf("tokens.fnv1a 0x%016llx\n", (unsigned long long)th);
    printf("state.fnv1a 0x%016llx\n", (unsigned long long)xh);
    printf("checksum 0x%016llx\n", (unsigned long long)fnv1a(&xh, 8, th));
    print_launches();
    return 0;
}

// ---------------------------------------------------------------- prompt step

static int prompt_main(const Opts& o, Engine& e)
{
    const int R = o.prompt_rows, HP = o.prompt_hidden, N = o.layers;
    const size_t RH = (size_t)R * HP, HH = (size_t)HP * HP;
    std::vector<uint32_t> hw(6 * HH); // Wq Wk Wv Wo Wu Wd, shared by the layers
    fill(hw.data(), hw.size(), 21);
    uint32_t *w, *x, *xn, *qkv, *a, *t, *u;
    CK(cudaMalloc(&w, hw.size() * 4));
    CK(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
    uint32_t** bufs[] = {&x, &xn, &a, &t, &u};
    for (uint32_t** b : bufs)
        CK(cudaMalloc(b, RH * 4));
    CK(cudaMalloc(&qkv, 3 * RH * 4));
    uint32_t* last;
    CK(cudaMallocHost(&last, (size_t)HP * 4));
    std::vector<uint32_t> first_last(HP);
    CK(cudaDeviceSynchronize());

    const unsigned eg = cdiv((long long)RH, 256);
    const dim3 gg(HP / 16, R / 16);
    std::vector<double> steps;
    double t0 = now_s();
    for (int st = 0; st < o.steps; st++) {
        double ts = now_s();
        std::vector<double> stamps;
        cudaEvent_t ev[2] = {};
        if (o.issue_times && st < 2) {
            e.stamps = &stamps;
            for (cudaEvent_t& v : ev)
                CK(cudaEventCreate(&v));
            CK(cudaEventRecord(ev[0], e.s));
        }
        e.kern(gsamp_pro_embed, eg, 256, false, args(nullptr, nullptr, x, nullptr, (int)RH, HP, 0, 0));
        for (int l = 0; l < N; l++) {
            uint32_t salt = (uint32_t)l * 16u;
            auto gemm = [&](const uint32_t* in, int j, uint32_t* out) {
                e.kern(gsamp_pro_gemm, gg, dim3(16, 16), true, args(in, w + j * HH, out, nullptr, R, HP, 0, 0));
            };
            e.kern(gsamp_pro_rownorm, R, 256, true, args(x, nullptr, xn, nullptr, R, HP, 0, salt + 1));
            gemm(xn, 0, qkv);
            gemm(xn, 1, qkv + RH);
            gemm(xn, 2, qkv + 2 * RH);
            e.kern(gsamp_pro_mix, eg, 256, true, args(qkv, nullptr, a, nullptr, (int)RH, 0, 0, 0));
            gemm(a, 3, t);
            e.kern(gsamp_dec_add, eg, 256, true, args(t, nullptr, x, nullptr, (int)RH, 0, 0, 0));
            e.kern(gsamp_pro_rownorm, R, 256, true, args(x, nullptr, xn, nullptr, R, HP, 0, salt + 8));
            gemm(xn, 4, u);
            e.kern(gsamp_dec_act, eg, 256, true, args(u, nullptr, a, nullptr, (int)RH, 0, 0, salt + 10));
            gemm(a, 5, t);
            e.kern(gsamp_dec_add, eg, 256, true, args(t, nullptr, x, nullptr, (int)RH, 0, 0, 0));
        }
        CK(cudaMemcpyAsync(last, x + RH - HP, (size_t)HP * 4, cudaMemcpyDeviceToHost, e.s));
        if (ev[1])
            CK(cudaEventRecord(ev[1], e.s));
        double issued = now_s();
        CK(cudaStreamSynchronize(e.s));
        steps.push_back(now_s() - ts);
        if (e.stamps) {
            // us from the step's start to the end of each of its first K launches,
            // to its last launch's, and to the end of its copy
            e.stamps = nullptr;
            fprintf(stderr, "prompt_issue_us %d", st + 1);
            for (size_t i = 0; i < stamps.size() && i < (size_t)o.issue_times; i++)
                fprintf(stderr, " %.1f", 1e6 * (stamps[i] - ts));
            float gpu_ms = 0;
            CK(cudaEventElapsedTime(&gpu_ms, ev[0], ev[1]));
            fprintf(stderr, " last %.1f copy %.1f gpu %.1f\n", 1e6 * (stamps.back() - ts), 1e6 * (issued - ts),
                    1e3 * gpu_ms);
            for (cudaEvent_t v : ev)
                CK(cudaEventDestroy(v));
        }
        if (st == 0)
            memcpy(first_last.data(), last, (size_t)HP * 4);
        else if (memcmp(first_last.data(), last, (size_t)HP * 4) != 0)
            fail(NAME, "a prompt step's last row differs from the first step's");
    }
    double total = now_s() - t0;
    fprintf(stderr, "%s: prompt, %d steps, %d layers, %d x %d, %d kernels a step\n", NAME, o.steps, N, R, HP,
            1 + 12 * N);
    fprintf(stderr, "prompt_step_ms");
    for (double s : steps)
        fprintf(stderr, " %.3f", 1e3 * s);
    fprintf(stderr, "\nprompt_ms %.3f\n", 1e3 * total);

    std::vector<uint32_t> hx(RH);
    CK(cudaMemcpy(hx.data(), x, RH * 4, cudaMemcpyDeviceToHost));
    // the CPU reference, rows 0 and R-1 (every step is row by row)
    for (int r : {0, R - 1}) {
        std::vector<uint32_t> xr(HP), xnr(HP), q(HP), k(HP), v(HP), ar(HP), tr(HP);
        auto rownorm = [&](const std::vector<uint32_t>& in, std::vector<uint32_t>& out, uint32_t salt) {
            uint32_t s = 0;
            for (uint32_t u2 : in)
                s += u2;
            uint32_t tt = mix32(s ^ salt);
            for (int i = 0; i < HP; i++)
                out[i] = mix32(in[i] ^ tt);
        };
        auto rowmul = [&](const std::vector<uint32_t>& in, int j, std::vector<uint32_t>& out) {
            const uint32_t* W = hw.data() + j * HH;
            std::fill(out.begin(), out.end(), 0u);
            for (int kk = 0; kk < HP; kk++) {
                uint32_t av = in[kk];
                const uint32_t* row = W + (size_t)kk * HP;
                for (int c = 0; c < HP; c++)
                    out[c] += av * row[c];
            }
        };
        for (int i = 0; i < HP; i++)
            xr[i] = embed_val(r, 7, i);
        for (int l = 0; l < N; l++) {
            uint32_t salt = (uint32_t)l * 16u;
            rownorm(xr, xnr, salt + 1);
            rowmul(xnr, 0, q);
            rowmul(xnr, 1, k);
            rowmul(xnr, 2, v);
            for (int i = 0; i < HP; i++)
                ar[i] = q[i] ^ (k[i] * 3u + v[i]);
            rowmul(ar, 3, tr);
            for (int i = 0; i < HP; i++)
                xr[i] += tr[i];
            rownorm(xr, xnr, salt + 8);
            rowmul(xnr, 4, q);
            for (int i = 0; i < HP; i++)
                ar[i] = mix32(q[i] ^ (salt + 10));
            rowmul(ar, 5, tr);
            for (int i = 0; i < HP; i++)
                xr[i] += tr[i];
        }
        if (memcmp(xr.data(), hx.data() + (size_t)r * HP, (size_t)HP * 4) != 0) {
            fprintf(stderr, "%s: FAILED: prompt row %d differs from the CPU's\n", NAME, r);
            exit(1);
        }
    }
    uint64_t h = fnv_words(hx.data(), hx.size());
    printf("sample %s\n", NAME);
    printf("prompt_steps %d\nlayers %d\nrows %d\nhidden %d\n", o.steps, N, R, HP);
    printf("kernels_per_step %d\n", 1 + 12 * N);
    printf("prompt.fnv1a 0x%016llx\n", (unsigned long long)h);
    printf("checksum 0x%016llx\n", (unsigned long long)h);
    print_launches();
    return 0;
}

int main(int argc, char** argv)
{
    Opts o = parse(argc, argv);
    Engine e;
    e.busy_per_us = calibrate_busy();
    e.host_iters = (uint64_t)(o.host_us * e.busy_per_us + 0.5);
    e.spin_ns = (long long)(o.gpu_us * 1000.0 + 0.5);
    CK(cudaStreamCreateWithFlags(&e.s, cudaStreamNonBlocking));
    int rc = o.mode == "prompt" ? prompt_main(o, e) : decode_main(o, e);
    CK(cudaStreamDestroy(e.s));
    return rc;
}
