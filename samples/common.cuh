// Shared helpers for the graphshim samples.
//
// Every sample is an ordinary CUDA program: it checks every CUDA return code,
// checks its own result against a CPU reference (exit 1 + message on stderr on
// mismatch) and prints a deterministic report to stdout:
//     sample <name>
//     iters <N>
//     <label>[<i>] <%a> 0x<bits>      (a few values, exact)
//     <label>.fnv1a 0x<16 hex>        (FNV-1a 64 over the whole buffer's bytes)
//     ...                             (sample specific lines)
//     launches <N>                    (kernel launches the program issued)
// Nothing timing dependent goes to stdout.
//
// All kernels of the samples are named gsamp_* so that a trace can tell the
// program's own launches from those of libraries (cuBLAS).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>

#define CK(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(e_), (int)e_);                  \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

// Kernel launches issued by the program itself (<<<>>>), all threads.
static std::atomic<long long> g_launches{0};

#define LAUNCH(kern, grid, block, shmem, stream, ...)                \
    do {                                                             \
        kern<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__);   \
        CK(cudaGetLastError());                                      \
        g_launches++;                                                \
    } while (0)

static inline void fail(const char* sample, const char* msg)
{
    fprintf(stderr, "%s: FAILED: %s\n", sample, msg);
    exit(1);
}

static inline int iters_arg(int argc, char** argv, int def)
{
    if (argc > 1) {
        char* end = nullptr;
        long v = strtol(argv[1], &end, 10);
        if (!end || *end || v <= 0 || v > 100000000) {
            fprintf(stderr, "usage: %s [iterations>0]\n", argv[0]);
            exit(2);
        }
        return (int)v;
    }
    return def;
}

static inline double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ---------------------------------------------------------------- hashing

static const uint64_t FNV_INIT = 0xcbf29ce484222325ull;

static inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = FNV_INIT)
{
    const unsigned char* b = (const unsigned char*)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

// Prints 4 values (exact) and the FNV-1a of the whole buffer.
static inline void print_floats(const char* label, const float* v, int n)
{
    int idx[4] = {0, 1, n / 2, n - 1};
    for (int j = 0; j < 4; j++) {
        float f = v[idx[j]];
        printf("%s[%d] %a 0x%08x\n", label, idx[j], (double)f, fbits(f));
    }
    printf("%s.fnv1a 0x%016llx\n", label, (unsigned long long)fnv1a(v, (size_t)n * sizeof(float)));
}

static inline void print_launches()
{
    printf("launches %lld\n", (long long)g_launches.load());
}

// Exact (bitwise) comparison against the CPU reference.
static inline void check_equal(const char* sample, const char* what, const float* got,
                               const float* ref, int n)
{
    for (int i = 0; i < n; i++) {
        if (fbits(got[i]) != fbits(ref[i])) {
            fprintf(stderr, "%s: FAILED: %s mismatch at [%d]: gpu %a (0x%08x) cpu %a (0x%08x)\n",
                    sample, what, i, (double)got[i], fbits(got[i]), (double)ref[i], fbits(ref[i]));
            exit(1);
        }
    }
}

// ---------------------------------------------------------------- inputs

static inline uint32_t lcg_next(uint32_t* s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s;
}

// Non-zero values in (-1, 1), deterministic from the seed.
static inline void fill_random(float* v, int n, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; i++) {
        uint32_t r = lcg_next(&s) >> 8;                          // 24 bits
        v[i] = (float)(((double)r + 0.5) / 8388608.0 - 1.0);     // never 0
    }
}

// ---------------------------------------------------------------- the tiny chain
//
// A chain of K tiny dependent kernels over GS_N floats using three rotating
// buffers d[0..2]; `cur` is the index of the buffer holding the current value.
// Step k: mix step (every mix_every-th) z = (x[i] + prev[(i+1)%n]) * 0.5,
// otherwise y = frac(fma(a, x, b)) (t - floor(t)) with a in [1.25, 1.94] and
// (a, b) depending on k, salt and it % 4 (so parameters vary between
// iterations with period 4: a graphing layer that replays stale parameters
// produces different bits).  The map is expanding (chaotic) on [0, 1), so
// values stay bounded, stay different per element, and any deviation
// anywhere in the history shows up in the output.  With K % 3 == 0 the chain
// ends on the buffer it started on, so pointers repeat every iteration.
// All operations are correctly rounded IEEE ops (fma, floor, sub, add, mul by
// 0.5), so the CPU reference is bit-exact.

#define GS_N 1024

struct ChainCfg {
    int K;          // kernels per chain
    int mix_every;  // every mix_every-th step is a mix (0: never)
    int block;      // block size
};

static const ChainCfg kChain = {21, 7, 256};

__global__ void gsamp_axpb(const float* x, float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float t = __fmaf_rn(a, x[i], b);
        y[i] = __fsub_rn(t, floorf(t));
    }
}

__global__ void gsamp_mix(const float* x, const float* y, float* z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = i + 1 == n ? 0 : i + 1;
        z[i] = __fmul_rn(__fadd_rn(x[i], y[j]), 0.5f);
    }
}

static inline void chain_params(int it, int k, int salt, float* a, float* b)
{
    int ph = it & 3;
    int m = (ph * 5 + k * 3 + salt * 7) % 12;  // 0..11
    int q = (ph * 7 + k * 5 + salt * 3) % 23;  // 0..22
    *a = 1.25f + (float)m / 16.0f;             // [1.25, 1.9375], exact
    *b = (float)q / 32.0f;                     // [0, 0.6875], exact
}

static inline bool chain_is_mix(const ChainCfg& c, int k)
{
    return c.mix_every > 0 && k % c.mix_every == c.mix_every - 1;
}

// Issues the chain on stream s; returns the new cur.
static inline int chain_gpu(float* const d[3], int cur, int it, int salt, const ChainCfg& c,
                            cudaStream_t s, int n = GS_N)
{
    int grid = (n + c.block - 1) / c.block;
    for (int k = 0; k < c.K; k++) {
        int out = (cur + 1) % 3, prev = (cur + 2) % 3;
        if (chain_is_mix(c, k)) {
            LAUNCH(gsamp_mix, grid, c.block, 0, s, d[cur], d[prev], d[out], n);
        } else {
            float a, b;
            chain_params(it, k, salt, &a, &b);
            LAUNCH(gsamp_axpb, grid, c.block, 0, s, d[cur], d[out], a, b, n);
        }
        cur = out;
    }
    return cur;
}

static inline void cpu_axpb(const float* x, float* y, float a, float b, int n)
{
    for (int i = 0; i < n; i++) {
        float t = fmaf(a, x[i], b);
        y[i] = t - floorf(t);
    }
}

static inline void cpu_mix(const float* x, const float* y, float* z, int n)
{
    for (int i = 0; i < n; i++) {
        int j = i + 1 == n ? 0 : i + 1;
        z[i] = (x[i] + y[j]) * 0.5f;
    }
}

// Same chain on the CPU; returns the new cur.
static inline int chain_cpu(float* const h[3], int cur, int it, int salt, const ChainCfg& c,
                            int n = GS_N)
{
    for (int k = 0; k < c.K; k++) {
        int out = (cur + 1) % 3, prev = (cur + 2) % 3;
        if (chain_is_mix(c, k)) {
            cpu_mix(h[cur], h[prev], h[out], n);
        } else {
            float a, b;
            chain_params(it, k, salt, &a, &b);
            cpu_axpb(h[cur], h[out], a, b, n);
        }
        cur = out;
    }
    return cur;
}

// Three device buffers + their CPU mirror, initialised with seeded data.
struct ChainBufs {
    float* d[3];
    float* h[3];
    int n;
};

static inline void chain_bufs_init(ChainBufs* cb, uint32_t seed, int n = GS_N)
{
    cb->n = n;
    for (int j = 0; j < 3; j++) {
        CK(cudaMalloc(&cb->d[j], (size_t)n * sizeof(float)));
        cb->h[j] = (float*)malloc((size_t)n * sizeof(float));
        if (!cb->h[j]) fail("chain_bufs_init", "malloc");
        fill_random(cb->h[j], n, seed * 3 + j);
        CK(cudaMemcpy(cb->d[j], cb->h[j], (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    }
}

static inline void chain_bufs_free(ChainBufs* cb)
{
    for (int j = 0; j < 3; j++) {
        CK(cudaFree(cb->d[j]));
        free(cb->h[j]);
    }
}
