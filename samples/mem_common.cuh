// Shared work of the memory-kind samples (mem_*.cu): an integer pipeline whose
// CPU reference is exact, so that a stale, lost, repeated or reordered kernel or
// copy anywhere in the history changes the printed checksums.
//
// State x (n 32-bit words, on the device) and an input `in` (written by the host
// each iteration, reaching the GPU by whatever memory kind the sample checks):
//   gsamp_mk_in    x[i] = x[i] * A + in[i]
//   gsamp_mk_hash  x[i] = (x[i] ^ (x[i] >> 13)) * a_k + b_k + i     (K times)
//   gsamp_mk_out   out[i] = x[i] ^ salt
// The coefficients depend on the round, the iteration (period 4) and k, so
// replaying stale arguments shows.  Kernels use a grid-stride loop with at
// most 1024 blocks of 256 threads.
#pragma once

#include "common.cuh"

#include <sys/mman.h>
#include <unistd.h>

typedef uint32_t u32;

static inline u32 mk_a(int round, int it, int k)
{
    return 0x9E3779B1u + 2u * (u32)(round * 131 + (it & 3) * 17 + k * 5);  // odd
}

static inline u32 mk_b(int round, int it, int k)
{
    return 0x7F4A7C15u ^ ((u32)round << 20) ^ ((u32)(it & 3) << 12) ^ (u32)(k * 0x2545);
}

static inline u32 mk_salt(int round, int it)
{
    return 0xA5A5A5A5u ^ (u32)(round * 7919 + it);
}

__global__ void gsamp_mk_in(u32* x, const u32* in, size_t n, u32 a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = x[i] * a + in[i];
}

__global__ void gsamp_mk_hash(u32* x, size_t n, u32 a, u32 b)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        u32 v = x[i];
        x[i] = (v ^ (v >> 13)) * a + b + (u32)i;
    }
}

__global__ void gsamp_mk_out(u32* out, const u32* x, size_t n, u32 salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = x[i] ^ salt;
}

static inline int mk_grid(size_t n)
{
    size_t g = (n + 255) / 256;
    return (int)(g < 1 ? 1 : g > 1024 ? 1024 : g);
}

// The K hash steps alone (x in place).
static inline void mk_hash_gpu(u32* x, size_t n, int round, int it, int K, cudaStream_t s, int k0 = 0)
{
    for (int k = k0; k < k0 + K; k++)
        LAUNCH(gsamp_mk_hash, mk_grid(n), 256, 0, s, x, n, mk_a(round, it, k), mk_b(round, it, k));
}

static inline void mk_hash_cpu(u32* x, size_t n, int round, int it, int K, int k0 = 0)
{
    for (int k = k0; k < k0 + K; k++) {
        u32 a = mk_a(round, it, k), b = mk_b(round, it, k);
        for (size_t i = 0; i < n; i++) {
            u32 v = x[i];
            x[i] = (v ^ (v >> 13)) * a + b + (u32)i;
        }
    }
}

// One whole iteration on the GPU: in, K hash steps, out (K + 2 launches).
static inline void mk_gpu(u32* x, const u32* in, u32* out, size_t n, int round, int it, int K,
                          cudaStream_t s)
{
    LAUNCH(gsamp_mk_in, mk_grid(n), 256, 0, s, x, in, n, mk_a(round, it, 99));
    mk_hash_gpu(x, n, round, it, K, s);
    LAUNCH(gsamp_mk_out, mk_grid(n), 256, 0, s, out, x, n, mk_salt(round, it));
}

static inline void mk_cpu(u32* x, const u32* in, u32* out, size_t n, int round, int it, int K)
{
    u32 a = mk_a(round, it, 99), salt = mk_salt(round, it);
    for (size_t i = 0; i < n; i++) x[i] = x[i] * a + in[i];
    mk_hash_cpu(x, n, round, it, K);
    for (size_t i = 0; i < n; i++) out[i] = x[i] ^ salt;
}

// Deterministic input words from a seed.
static inline void mk_fill(u32* v, size_t n, u32 seed)
{
    u32 s = seed * 2654435761u + 0x6D2B79F5u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = s ^ (s >> 16);
    }
}

static inline u32 mk_seed(int round, int it, int which = 0)
{
    return (u32)(round * 100003 + it * 101 + which * 7 + 1);
}

static inline void mk_check(const char* sample, const char* what, int round, int it, const u32* got,
                            const u32* ref, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (got[i] != ref[i]) {
            fprintf(stderr, "%s: FAILED: %s, round %d iteration %d: mismatch at [%zu] of %zu: gpu 0x%08x cpu 0x%08x\n",
                    sample, what, round, it, i, n, got[i], ref[i]);
            exit(1);
        }
    }
}

// A reserved range of address space (PROT_NONE) in which mk_map_at maps fresh
// pageable pages at a fixed address and mk_unmap_at gives them back: the range
// stays reserved, so nothing else lands there and the next mapping comes back
// at the same address, with another size where asked.
static inline void* mk_reserve(size_t bytes)
{
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap (reserve)");
        exit(2);
    }
    return p;
}

static inline void* mk_map_at(void* at, size_t bytes)
{
    void* p = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != at) {
        perror("mmap (fixed)");
        exit(2);
    }
    return p;
}

static inline void mk_unmap_at(void* at, size_t bytes)
{
    if (mmap(at, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) != at) {
        perror("mmap (release)");
        exit(2);
    }
}

static inline void* mk_malloc(size_t bytes)
{
    void* p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "malloc(%zu) failed\n", bytes);
        exit(2);
    }
    return p;
}

// Per-round line: what the round did and the FNV-1a of every output it saw.
static inline void mk_round_line(int round, const char* kind, size_t bytes, int iters, uint64_t hash)
{
    printf("round %d kind %s bytes %zu iters %d out.fnv1a 0x%016llx\n", round, kind, bytes, iters,
           (unsigned long long)hash);
}

// The sample's last lines: its name, iterations per round, the hash of all
// rounds' lines, and its launches (common.cuh's report format).
static inline void mk_summary(const char* sample, int iters, uint64_t all)
{
    printf("sample %s\niters %d\n", sample, iters);
    printf("all.fnv1a 0x%016llx\n", (unsigned long long)all);
    print_launches();
}

// The device, and whether it has concurrent managed access (prefetches and
// advice are left out where it has not): set by the managed-memory samples.
static int g_dev, g_concurrent;

// Prefetches managed memory to the host or the device, on s.
static inline void mk_prefetch(const void* p, size_t bytes, bool to_host, cudaStream_t s)
{
    if (!g_concurrent) return;
#if CUDART_VERSION >= 12020
    cudaMemLocation loc = {};
    loc.type = to_host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = to_host ? 0 : g_dev;
#if CUDART_VERSION >= 13000
    CK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
    CK(cudaMemPrefetchAsync_v2(p, bytes, loc, 0, s));
#endif
#else
    CK(cudaMemPrefetchAsync(p, bytes, to_host ? cudaCpuDeviceId : g_dev, s));
#endif
}
