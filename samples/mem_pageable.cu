// mem_pageable: pageable host memory, small and mmap-sized, freed and allocated
// again between rounds and inside them.  Six rounds with buffers growing 4x per
// round (4 KiB to 4 MiB); the input buffer comes from malloc in even rounds and
// from mmap in odd ones (mapped at one fixed address of a reserved range, so it
// comes back there with another size each time); the output buffer is realloc'd to
// each round's size; a small coefficient buffer is freed and malloc'd every
// iteration with a size that alternates between 240 and 248 bytes (one malloc
// bin: the same address with another size).  Half-way through each round the
// input and output are freed and allocated again, and the device buffers are
// freed and allocated again between rounds.
// Per iteration: two pageable H2D cudaMemcpyAsync whose sources the host
// overwrites right after the call returns (the copy must see the bytes as of the
// call), 6 kernels, a pageable D2H cudaMemcpyAsync (complete on return), a
// stream synchronize; every iteration checked against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_pageable";
static const int ROUNDS = 6;
static const int K = 4;       // hash steps per iteration
static const int NCOEF = 60;  // coefficient words used (240 bytes)

__global__ void gsamp_pg_coef(u32* x, size_t n, const u32* coef, int ncoef)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] += coef[i % ncoef];
}

static void cpu_coef(u32* x, size_t n, const u32* coef, int ncoef)
{
    for (size_t i = 0; i < n; i++) x[i] += coef[i % ncoef];
}

struct Host {
    u32* p;
    size_t bytes;
    bool mapped;  // from mmap (else malloc)
};

static void* g_area;  // reserved for the mmap'd inputs (4 MiB)

static void host_free(Host* h)
{
    if (!h->p) return;
    if (h->mapped) mk_unmap_at(h->p, h->bytes);
    else free(h->p);
    h->p = nullptr;
}

// A new input buffer of `bytes`: mapped at the reserved range's start, or malloc'd.
static void host_alloc(Host* h, size_t bytes, bool mapped)
{
    h->bytes = bytes;
    h->mapped = mapped;
    h->p = (u32*)(mapped ? mk_map_at(g_area, bytes) : mk_malloc(bytes));
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    g_area = mk_reserve((size_t)4096 << (2 * (ROUNDS - 1)));

    Host hin = {nullptr, 0, false};
    u32* hout = nullptr;
    u32* hcoef = nullptr;
    u32 *x = nullptr, *din = nullptr, *dout = nullptr, *dcoef = nullptr;
    CK(cudaMalloc(&dcoef, 64 * sizeof(u32)));
    uint64_t all = FNV_INIT;
    int same_in = 0, same_out = 0, same_coef = 0;

    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * r), n = bytes / 4;
        const bool mapped = r & 1;
        // new buffers of another size (and kind) where the last ones were
        void* old_in = hin.p;
        host_free(&hin);
        host_alloc(&hin, bytes, mapped);
        same_in += hin.p == old_in;
        void* old_out = hout;
        hout = (u32*)realloc(hout, bytes);
        if (!hout) fail(NAME, "realloc");
        same_out += hout == old_out;
        if (x) {
            CK(cudaFree(x));
            CK(cudaFree(din));
            CK(cudaFree(dout));
        }
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&din, bytes));
        CK(cudaMalloc(&dout, bytes));
        CK(cudaMemsetAsync(x, 0, bytes, s));

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        u32 rcoef[NCOEF];
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;

        for (int it = 0; it < iters; it++) {
            if (it == iters / 2) {
                // freed and allocated again, same size: often the same address
                host_free(&hin);
                host_alloc(&hin, bytes, mapped);
                free(hout);
                hout = (u32*)mk_malloc(bytes);
            }
            void* oc = hcoef;
            free(hcoef);
            hcoef = (u32*)mk_malloc(it & 1 ? 248 : 240);
            same_coef += (void*)hcoef == oc;

            mk_fill(hin.p, n, mk_seed(r, it));
            mk_fill(hcoef, NCOEF, mk_seed(r, it, 1));
            CK(cudaMemcpyAsync(dcoef, hcoef, NCOEF * sizeof(u32), cudaMemcpyHostToDevice, s));
            memset(hcoef, 0xEE, NCOEF * sizeof(u32));  // allowed: the copy has its bytes
            CK(cudaMemcpyAsync(din, hin.p, bytes, cudaMemcpyHostToDevice, s));
            memset(hin.p, 0xEE, bytes);                 // likewise

            LAUNCH(gsamp_mk_in, mk_grid(n), 256, 0, s, x, din, n, mk_a(r, it, 99));
            LAUNCH(gsamp_pg_coef, mk_grid(n), 256, 0, s, x, n, dcoef, NCOEF);
            mk_hash_gpu(x, n, r, it, K, s);
            LAUNCH(gsamp_mk_out, mk_grid(n), 256, 0, s, dout, x, n, mk_salt(r, it));
            CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_fill(rcoef, NCOEF, mk_seed(r, it, 1));
            u32 a = mk_a(r, it, 99), salt = mk_salt(r, it);
            for (size_t i = 0; i < n; i++) rx[i] = rx[i] * a + rin[i];
            cpu_coef(rx, n, rcoef, NCOEF);
            mk_hash_cpu(rx, n, r, it, K);
            for (size_t i = 0; i < n; i++) rout[i] = rx[i] ^ salt;
            mk_check(NAME, "output", r, it, hout, rout, n);
            rh = fnv1a(hout, bytes, rh);
        }
        mk_round_line(r, mapped ? "mmap" : "malloc", bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }
    fprintf(stderr, "%s: same address again: input %d of %d rounds, output %d, coefficients %d of %d iterations\n",
            NAME, same_in, ROUNDS, same_out, same_coef, ROUNDS * iters);

    mk_summary(NAME, iters, all);

    host_free(&hin);
    free(hout);
    free(hcoef);
    CK(cudaFree(x));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaFree(dcoef));
    CK(cudaStreamDestroy(s));
    return 0;
}
