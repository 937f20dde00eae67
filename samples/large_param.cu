// large_param: a kernel whose by-value parameter is a 32,000-byte struct (CUDA
// 12.1+ allows up to 32,764 bytes of parameters on Volta and later), launched
// 1,000 times between two synchronizations.  The struct's words differ between
// even and odd iterations (and so does a scalar in it), all 1,000 launches of
// an iteration pass the same bytes; each launch folds the struct into a
// 256-word output (out = out * M + f(struct), so a lost, repeated or stale
// launch shows).  Per iteration: 1,000 launches, a D2H copy into pinned memory,
// stream synchronize; every iteration checked against the CPU.
#include "common.cuh"

static const char* NAME = "large_param";
static const int LAUNCHES = 1000;
static const int NT = 256;
static const int NW = 7996;

struct BigParam {
    uint32_t k, it, pad[2];
    uint32_t w[NW];
};
static_assert(sizeof(BigParam) == 32000, "the parameter struct is 32,000 bytes");

__global__ void gsamp_lp_fold(BigParam p, uint32_t* out)
{
    int t = threadIdx.x;
    uint32_t sum = 0;
    for (int j = t; j < NW; j += NT) sum += p.w[j] ^ (uint32_t)j;
    out[t] = out[t] * 0x01000193u + sum + p.k * 7u + p.it;
}

static void make_param(BigParam* p, int parity)
{
    memset(p, 0, sizeof *p);
    p->k = 0x51u + (uint32_t)parity * 0x1000u;
    p->it = (uint32_t)parity;
    uint32_t s = 12345u + (uint32_t)parity * 7919u;
    for (int j = 0; j < NW; j++) {
        s = s * 1664525u + 1013904223u;
        p->w[j] = s ^ (s >> 15);
    }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 20);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    static BigParam par[2];
    make_param(&par[0], 0);
    make_param(&par[1], 1);
    uint32_t* dout;
    uint32_t* hout;
    CK(cudaMalloc(&dout, NT * sizeof(uint32_t)));
    CK(cudaMallocHost(&hout, NT * sizeof(uint32_t)));
    CK(cudaMemset(dout, 0, NT * sizeof(uint32_t)));

    uint32_t ref[NT], c[2][NT];
    memset(ref, 0, sizeof ref);
    for (int q = 0; q < 2; q++)
        for (int t = 0; t < NT; t++) {
            uint32_t sum = 0;
            for (int j = t; j < NW; j += NT) sum += par[q].w[j] ^ (uint32_t)j;
            c[q][t] = sum + par[q].k * 7u + par[q].it;
        }

    uint64_t hash = FNV_INIT;
    double t0 = now_s();
    for (int it = 0; it < iters; it++) {
        const BigParam& p = par[it & 1];
        for (int j = 0; j < LAUNCHES; j++) LAUNCH(gsamp_lp_fold, 1, NT, 0, s, p, dout);
        CK(cudaMemcpyAsync(hout, dout, NT * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));

        for (int j = 0; j < LAUNCHES; j++)
            for (int t = 0; t < NT; t++) ref[t] = ref[t] * 0x01000193u + c[it & 1][t];
        for (int t = 0; t < NT; t++)
            if (hout[t] != ref[t]) {
                fprintf(stderr, "%s: FAILED: iteration %d: out[%d] gpu 0x%08x cpu 0x%08x\n", NAME, it, t,
                        hout[t], ref[t]);
                return 1;
            }
        hash = fnv1a(hout, NT * sizeof(uint32_t), hash);
    }
    fprintf(stderr, "%s: %.1f us per launch\n", NAME, 1e6 * (now_s() - t0) / ((double)iters * LAUNCHES));

    printf("sample %s\niters %d\n", NAME, iters);
    printf("param_bytes %zu launches_per_sync %d\n", sizeof(BigParam), LAUNCHES);
    printf("out[0] 0x%08x out[255] 0x%08x\n", hout[0], hout[NT - 1]);
    printf("all_iters.fnv1a 0x%016llx\n", (unsigned long long)hash);
    print_launches();

    CK(cudaFree(dout));
    CK(cudaFreeHost(hout));
    CK(cudaStreamDestroy(s));
    return 0;
}
