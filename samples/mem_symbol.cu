// mem_symbol: __constant__ and __device__ variables written and read by symbol.
// Four rounds; the part of the state in use grows 4x per round (64 to 4096
// words).  Per iteration: the coefficients go to a __constant__ array with
// cudaMemcpyToSymbolAsync (from pinned memory in even rounds, from pageable
// memory overwritten right after the call in odd ones), 4 words of the
// __device__ state are poked with cudaMemcpyToSymbolAsync at an offset (of
// period 4, like the coefficients), 4 kernels update the state through the
// symbol, one more adds it into a __device__ accumulator through the address
// cudaGetSymbolAddress gave, and cudaMemcpyFromSymbolAsync brings the state
// back; stream synchronize; checked against the CPU.  Each round starts with cudaMemcpyToSymbol (synchronous) and
// ends with cudaMemcpyFromSymbol of the accumulator, checked too.
#include "mem_common.cuh"

static const char* NAME = "mem_symbol";
static const int ROUNDS = 4;
static const int NSTATE = 4096;
static const int NCOEF = 64;
static const int K = 4;

__constant__ u32 c_coef[NCOEF];
__device__ u32 g_state[NSTATE];
__device__ u32 g_acc[NSTATE];

__global__ void gsamp_sym_step(int m, int k)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
        u32 v = g_state[i];
        g_state[i] = (v ^ (v >> 13)) * (c_coef[k] | 1u) + c_coef[k + 32] + (u32)i;
    }
}

__global__ void gsamp_sym_acc(u32* acc, int m)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
        acc[i] += g_state[i] * 3u;
}

static void cpu_steps(u32* st, int m, const u32* coef)
{
    for (int k = 0; k < K; k++)
        for (int i = 0; i < m; i++) {
            u32 v = st[i];
            st[i] = (v ^ (v >> 13)) * (coef[k] | 1u) + coef[k + 32] + (u32)i;
        }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    u32* acc = nullptr;
    CK(cudaGetSymbolAddress((void**)&acc, g_acc));

    u32 *pcoef = nullptr, *pout = nullptr, *ppoke = nullptr;
    CK(cudaMallocHost(&pcoef, NCOEF * sizeof(u32)));
    CK(cudaMallocHost(&pout, NSTATE * sizeof(u32)));
    CK(cudaMallocHost(&ppoke, 4 * sizeof(u32)));
    u32* gcoef = (u32*)mk_malloc(NCOEF * sizeof(u32));
    u32* gout = (u32*)mk_malloc(NSTATE * sizeof(u32));
    u32* gpoke = (u32*)mk_malloc(4 * sizeof(u32));
    static u32 init[NSTATE], zero[NSTATE], rst[NSTATE], racc[NSTATE], hacc[NSTATE], rcoef[NCOEF];

    uint64_t all = FNV_INIT;
    for (int r = 0; r < ROUNDS; r++) {
        const int m = 64 << (2 * r);
        const bool pageable = r & 1;
        u32* hcoef = pageable ? gcoef : pcoef;
        u32* hout = pageable ? gout : pout;
        u32* hpoke = pageable ? gpoke : ppoke;
        mk_fill(init, NSTATE, mk_seed(r, 0, 9));
        CK(cudaMemcpyToSymbol(g_state, init, sizeof init));
        CK(cudaMemcpyToSymbol(g_acc, zero, sizeof zero));
        memcpy(rst, init, sizeof init);
        memset(racc, 0, sizeof racc);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            const int at = ((it & 3) * 37) % (m - 3);   // period 4, like the coefficients
            mk_fill(hcoef, NCOEF, mk_seed(r, it, 1));
            mk_fill(hpoke, 4, mk_seed(r, it, 2));
            CK(cudaMemcpyToSymbolAsync(c_coef, hcoef, NCOEF * sizeof(u32), 0, cudaMemcpyHostToDevice, s));
            CK(cudaMemcpyToSymbolAsync(g_state, hpoke, 4 * sizeof(u32), at * sizeof(u32), cudaMemcpyHostToDevice, s));
            if (pageable) {   // allowed: the copies have their bytes
                memset(hcoef, 0xEE, NCOEF * sizeof(u32));
                memset(hpoke, 0xEE, 4 * sizeof(u32));
            }
            for (int k = 0; k < K; k++) LAUNCH(gsamp_sym_step, mk_grid(m), 256, 0, s, m, k);
            LAUNCH(gsamp_sym_acc, mk_grid(m), 256, 0, s, acc, m);
            CK(cudaMemcpyFromSymbolAsync(hout, g_state, m * sizeof(u32), 0, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));

            mk_fill(rcoef, NCOEF, mk_seed(r, it, 1));
            mk_fill(rst + at, 4, mk_seed(r, it, 2));
            cpu_steps(rst, m, rcoef);
            for (int i = 0; i < m; i++) racc[i] += rst[i] * 3u;
            mk_check(NAME, "state", r, it, hout, rst, m);
            rh = fnv1a(hout, m * sizeof(u32), rh);
        }
        CK(cudaMemcpyFromSymbol(hacc, g_acc, sizeof hacc));
        mk_check(NAME, "accumulator", r, iters, hacc, racc, NSTATE);
        rh = fnv1a(hacc, sizeof hacc, rh);
        mk_round_line(r, pageable ? "pageable" : "pinned", m * sizeof(u32), iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
    }

    mk_summary(NAME, iters, all);

    CK(cudaFreeHost(pcoef));
    CK(cudaFreeHost(pout));
    CK(cudaFreeHost(ppoke));
    free(gcoef);
    free(gout);
    free(gpoke);
    CK(cudaStreamDestroy(s));
    return 0;
}
