// mem_managed: managed memory (cudaMallocManaged) used by kernels and the host
// in turn, with prefetches, stream attachment and advice.  Ten rounds; buffers
// grow 4x per round from 4 KiB to 1 MiB and start again (3 buffers: at most
// 3 MiB managed at a time); the kind changes every round:
//   global        cudaMemAttachGlobal; no hints
//   prefetch      global; cudaMemAdvise ReadMostly (input) and PreferredLocation
//                 device (state); per iteration the input and state are
//                 prefetched to the device before the kernels and the output to
//                 the host (cudaMemLocationTypeHost) after them
//   attach-host   input and output allocated with cudaMemAttachHost; per
//                 iteration cudaStreamAttachMemAsync(Single) before the kernels
//                 and back to cudaMemAttachHost after them; AccessedBy advice
//   prefer-host   global; PreferredLocation host and AccessedBy device for the
//                 input; the state goes to the host and back to the device
//                 (prefetches) every iteration, the output to the host
// Everything is freed between rounds, so new buffers land where freed ones of
// another size and kind were.  The host touches managed memory only while the
// stream is idle.  Prefetches and advice need concurrent managed access; where
// the device lacks it they are left out (the results are the same).
// Per iteration: the host writes the input, prefetches/attachments, 6 kernels,
// stream synchronize, the host checks the output against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_managed";
static const int ROUNDS = 10;
static const int K = 4;
static const char* KINDS[4] = {"global", "prefetch", "attach-host", "prefer-host"};

static void advise(const void* p, size_t bytes, cudaMemoryAdvise advice, bool host)
{
    if (!g_concurrent) return;
#if CUDART_VERSION >= 12020
    cudaMemLocation loc = {};
    loc.type = host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = host ? 0 : g_dev;
#if CUDART_VERSION >= 13000
    CK(cudaMemAdvise(p, bytes, advice, loc));
#else
    CK(cudaMemAdvise_v2(p, bytes, advice, loc));
#endif
#else
    CK(cudaMemAdvise(p, bytes, advice, host ? cudaCpuDeviceId : g_dev));
#endif
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    CK(cudaGetDevice(&g_dev));
    int managed = 0;
    CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, g_dev));
    if (!managed) fail(NAME, "the device has no managed memory");
    CK(cudaDeviceGetAttribute(&g_concurrent, cudaDevAttrConcurrentManagedAccess, g_dev));
    fprintf(stderr, "%s: concurrent managed access %d%s\n", NAME, g_concurrent,
            g_concurrent ? "" : " (prefetches and advice left out)");
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    uint64_t all = FNV_INIT;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * (r % 5)), n = bytes / 4;
        const int kind = r % 4;
        u32 *min = nullptr, *mx = nullptr, *mout = nullptr;
        unsigned fl = kind == 2 ? cudaMemAttachHost : cudaMemAttachGlobal;
        CK(cudaMallocManaged(&min, bytes, fl));
        CK(cudaMallocManaged(&mx, bytes, cudaMemAttachGlobal));
        CK(cudaMallocManaged(&mout, bytes, fl));
        memset(mx, 0, bytes);
        if (kind == 1) {
            advise(min, bytes, cudaMemAdviseSetReadMostly, false);
            advise(mx, bytes, cudaMemAdviseSetPreferredLocation, false);
        } else if (kind == 2) {
            advise(mout, bytes, cudaMemAdviseSetAccessedBy, false);
        } else if (kind == 3) {
            advise(min, bytes, cudaMemAdviseSetPreferredLocation, true);
            advise(min, bytes, cudaMemAdviseSetAccessedBy, false);
            mk_prefetch(mx, bytes, false, s);
            CK(cudaStreamSynchronize(s));
        }

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            mk_fill(min, n, mk_seed(r, it));
            if (kind == 1) {
                mk_prefetch(min, bytes, false, s);
                mk_prefetch(mx, bytes, false, s);
            } else if (kind == 2) {
                CK(cudaStreamAttachMemAsync(s, min, 0, cudaMemAttachSingle));
                CK(cudaStreamAttachMemAsync(s, mout, 0, cudaMemAttachSingle));
            }
            mk_gpu(mx, min, mout, n, r, it, K, s);
            if (kind == 1) {
                mk_prefetch(mout, bytes, true, s);
            } else if (kind == 2) {
                CK(cudaStreamAttachMemAsync(s, min, 0, cudaMemAttachHost));
                CK(cudaStreamAttachMemAsync(s, mout, 0, cudaMemAttachHost));
            } else if (kind == 3) {
                mk_prefetch(mout, bytes, true, s);
                mk_prefetch(mx, bytes, true, s);
                mk_prefetch(mx, bytes, false, s);
            }
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, mout, rout, n);
            rh = fnv1a(mout, bytes, rh);
        }
        mk_check(NAME, "state", r, iters, mx, rx, n);
        mk_round_line(r, KINDS[kind], bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        CK(cudaFree(min));
        CK(cudaFree(mx));
        CK(cudaFree(mout));
        free(rx);
        free(rin);
        free(rout);
    }

    mk_summary(NAME, iters, all);
    CK(cudaStreamDestroy(s));
    return 0;
}
