// mem_zerocopy: zero-copy (mapped) host memory used by kernels directly, and a
// kernel that polls a latch in mapped memory until the host sets it.  Five
// rounds with buffers growing 4x per round (4 KiB to 1 MiB); even rounds use
// cudaHostAlloc(cudaHostAllocMapped), odd rounds mmap'd memory registered with
// cudaHostRegisterMapped (each buffer at one fixed address of a reserved range:
// it comes back there with another size); everything is freed between rounds.
// Per iteration: a one-thread kernel waits for the latch to hold this
// iteration's token; 5 kernels read the input from and write the output to
// mapped memory; a last kernel sets a done flag in mapped memory.  Only then
// does the host write the input (the kernels wait for the latch), set the latch,
// poll the done flag without any CUDA call, synchronize the stream and check
// the output against the CPU.  Nothing waits forever: the kernel gives up after
// 10 s (and reports it), the host's poll after 20 s (exit 3).
#include "mem_common.cuh"

#include <atomic>

static const char* NAME = "mem_zerocopy";
static const int ROUNDS = 5;
static const int K = 3;
static const unsigned long long KERNEL_LIMIT_NS = 10000000000ull;
static const double HOST_LIMIT_S = 20.0;

__device__ __forceinline__ unsigned long long gsamp_now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Waits until *latch == token, at most limit_ns; on timeout writes the token to *err.
__global__ void gsamp_zc_wait(volatile u32* latch, u32 token, volatile u32* err, unsigned long long limit_ns)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long t0 = gsamp_now_ns();
        while (*latch != token) {
            if (gsamp_now_ns() - t0 > limit_ns) {
                *err = token;
                break;
            }
            __nanosleep(2000);
        }
        __threadfence_system();
    }
}

__global__ void gsamp_zc_signal(volatile u32* done, u32 token)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        __threadfence_system();
        *done = token;
        __threadfence_system();
    }
}

struct Zc {
    u32 *hin, *hout, *hflags;  // host views; flags: [0] latch, [32] done, [64] err
    u32 *din, *dout, *dflags;  // device views
    size_t bytes;
    bool registered;
};

static void* devptr(void* h)
{
    void* d = nullptr;
    CK(cudaHostGetDevicePointer(&d, h, 0));
    return d;
}

static char* g_area;  // reserved: input, output and flags at fixed addresses

static void zc_alloc(Zc* z, size_t bytes, bool registered)
{
    const size_t big = (size_t)4096 << 8;
    z->bytes = bytes;
    z->registered = registered;
    if (registered) {
        z->hin = (u32*)mk_map_at(g_area, bytes);
        z->hout = (u32*)mk_map_at(g_area + big, bytes);
        z->hflags = (u32*)mk_map_at(g_area + 2 * big, 4096);
        CK(cudaHostRegister(z->hin, bytes, cudaHostRegisterMapped));
        CK(cudaHostRegister(z->hout, bytes, cudaHostRegisterMapped));
        CK(cudaHostRegister(z->hflags, 4096, cudaHostRegisterMapped));
    } else {
        CK(cudaHostAlloc(&z->hin, bytes, cudaHostAllocMapped));
        CK(cudaHostAlloc(&z->hout, bytes, cudaHostAllocMapped));
        CK(cudaHostAlloc(&z->hflags, 4096, cudaHostAllocMapped));
    }
    memset(z->hflags, 0, 4096);
    memset(z->hout, 0, bytes);
    z->din = (u32*)devptr(z->hin);
    z->dout = (u32*)devptr(z->hout);
    z->dflags = (u32*)devptr(z->hflags);
}

static void zc_free(Zc* z)
{
    if (z->registered) {
        CK(cudaHostUnregister(z->hin));
        CK(cudaHostUnregister(z->hout));
        CK(cudaHostUnregister(z->hflags));
        mk_unmap_at(z->hin, z->bytes);
        mk_unmap_at(z->hout, z->bytes);
        mk_unmap_at(z->hflags, 4096);
    } else {
        CK(cudaFreeHost(z->hin));
        CK(cudaFreeHost(z->hout));
        CK(cudaFreeHost(z->hflags));
    }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int can_map = 0;
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    if (!can_map) fail(NAME, "the device cannot map host memory");

    g_area = (char*)mk_reserve(3 * ((size_t)4096 << 8));
    uint64_t all = FNV_INIT;
    double max_wait = 0.0;
    Zc z = {};
    u32* x = nullptr;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * r), n = bytes / 4;
        const bool reg = r & 1;
        if (x) {
            zc_free(&z);
            CK(cudaFree(x));
        }
        zc_alloc(&z, bytes, reg);
        CK(cudaMalloc(&x, bytes));
        CK(cudaMemsetAsync(x, 0, bytes, s));
        CK(cudaStreamSynchronize(s));
        volatile u32* latch = z.hflags;
        volatile u32* done = z.hflags + 32;
        volatile u32* err = z.hflags + 64;

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            const u32 token = (u32)(r * 100000 + it + 1);
            LAUNCH(gsamp_zc_wait, 1, 32, 0, s, z.dflags, token, z.dflags + 64, KERNEL_LIMIT_NS);
            mk_gpu(x, z.din, z.dout, n, r, it, K, s);
            LAUNCH(gsamp_zc_signal, 1, 32, 0, s, z.dflags + 32, token);

            // the kernels wait for the latch: the input may be written now
            mk_fill(z.hin, n, mk_seed(r, it));
            std::atomic_thread_fence(std::memory_order_seq_cst);
            *latch = token;

            double t0 = now_s();
            unsigned long spins = 0;
            while (*done != token) {
                if ((++spins & 1023) == 0 && now_s() - t0 > HOST_LIMIT_S) {
                    fprintf(stderr,
                            "%s: FAILED: timeout (%.0f s) waiting for the done flag of round %d iteration %d "
                            "(flag %u, expected %u, kernel error word %u): the launches were not submitted\n",
                            NAME, HOST_LIMIT_S, r, it, *done, token, *err);
                    _exit(3);
                }
            }
            std::atomic_thread_fence(std::memory_order_acquire);
            double w = now_s() - t0;
            if (w > max_wait) max_wait = w;
            CK(cudaStreamSynchronize(s));
            if (*err != 0) {
                fprintf(stderr, "%s: FAILED: the waiting kernel of token %u gave up after 10 s\n", NAME, *err);
                return 1;
            }

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, z.hout, rout, n);
            rh = fnv1a(z.hout, bytes, rh);
        }
        mk_round_line(r, reg ? "registered-mapped" : "hostalloc-mapped", bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }
    fprintf(stderr, "%s: max poll wait %.3f ms\n", NAME, 1000.0 * max_wait);

    mk_summary(NAME, iters, all);

    zc_free(&z);
    CK(cudaFree(x));
    CK(cudaStreamDestroy(s));
    return 0;
}
