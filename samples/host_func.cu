// host_func: cudaLaunchHostFunc inside the loop.  Per iteration:
//   chain (21 kernels) -> D2H of element 0..3 into pinned memory -> host fn
//   (phase 0) -> chain (3 kernels) -> D2H -> host fn (phase 1) -> sync.
// The host functions append (iteration, phase, value seen) to a log in host
// order; the program checks the order and the values against the CPU
// reference (a host function must run after the preceding stream work).
#include "common.cuh"

#include <vector>

static const char* NAME = "host_func";
static const ChainCfg kChainShort = {3, 0, 256};

struct Entry {
    int it, phase;
    float v[4];
};

static std::vector<Entry> g_log;
static float* g_snap;  // pinned, 2 x 4 floats

static void CUDART_CB record(void* p)
{
    intptr_t code = (intptr_t)p;
    Entry e;
    e.it = (int)(code >> 1);
    e.phase = (int)(code & 1);
    memcpy(e.v, g_snap + 4 * e.phase, sizeof e.v);
    g_log.push_back(e);
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs cb;
    chain_bufs_init(&cb, 50);
    CK(cudaMallocHost(&g_snap, 8 * sizeof(float)));
    g_log.reserve(2 * (size_t)iters);

    int cur = 0;
    for (int it = 0; it < iters; it++) {
        cur = chain_gpu(cb.d, cur, it, 15, kChain, s);
        CK(cudaMemcpyAsync(g_snap, cb.d[cur], 4 * sizeof(float), cudaMemcpyDeviceToHost, s));
        CK(cudaLaunchHostFunc(s, record, (void*)(intptr_t)(2 * it)));
        cur = chain_gpu(cb.d, cur, it, 16, kChainShort, s);
        CK(cudaMemcpyAsync(g_snap + 4, cb.d[cur], 4 * sizeof(float), cudaMemcpyDeviceToHost, s));
        CK(cudaLaunchHostFunc(s, record, (void*)(intptr_t)(2 * it + 1)));
        CK(cudaStreamSynchronize(s));
        if (g_log.size() != 2 * (size_t)(it + 1)) fail(NAME, "host function count after sync");
    }
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    uint64_t loghash = FNV_INIT;
    int rc = 0;
    for (int it = 0; it < iters; it++) {
        for (int ph = 0; ph < 2; ph++) {
            rc = chain_cpu(cb.h, rc, it, ph ? 16 : 15, ph ? kChainShort : kChain);
            const Entry& e = g_log[2 * it + ph];
            if (e.it != it || e.phase != ph) {
                fprintf(stderr, "%s: FAILED: host function order: entry %d is (%d,%d), expected (%d,%d)\n",
                        NAME, 2 * it + ph, e.it, e.phase, it, ph);
                return 1;
            }
            char what[64];
            snprintf(what, sizeof what, "value seen by host fn (%d,%d)", it, ph);
            check_equal(NAME, what, e.v, cb.h[rc], 4);
            loghash = fnv1a(&e, sizeof e, loghash);
        }
    }
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    printf("hostfn_calls %zu\n", g_log.size());
    printf("hostfn_log.fnv1a 0x%016llx\n", (unsigned long long)loghash);
    print_launches();

    free(out);
    CK(cudaFreeHost(g_snap));
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
