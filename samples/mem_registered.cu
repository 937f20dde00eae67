// mem_registered: host memory registered with cudaHostRegister and unregistered
// again, freed and registered anew between rounds.  Six rounds with buffers
// growing 4x per round (4 KiB to 4 MiB); the kind changes every round:
//   malloc        aligned_alloc'd input and output, cudaHostRegisterDefault
//   mmap-mapped   mmap'd (input and output each at one fixed address of a
//                 reserved range: a new round's buffer comes back at the last
//                 one's address with another size, registered anew),
//                 cudaHostRegisterMapped: the first kernel reads the input
//                 straight from host memory through its device pointer
//   mmap-toggle   mmap'd, cudaHostRegisterPortable; the input is unregistered
//                 a third of the way through the round (the same address is
//                 pageable from then on: the host overwrites it right after each
//                 H2D call returns, which pageable copies allow) and registered
//                 again two thirds of the way through (pinned rules again)
// Registered memory is read when the copy executes, so while it is registered
// the host writes an input only while the stream is idle.
// Per iteration: H2D (or none), 6 kernels, D2H, stream synchronize; every
// iteration checked against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_registered";
static const int ROUNDS = 6;
static const int K = 4;
static const char* KINDS[3] = {"malloc", "mmap-mapped", "mmap-toggle"};

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int can_map = 0;
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    if (!can_map) fail(NAME, "the device cannot map host memory");

    void* area_in = mk_reserve((size_t)4096 << (2 * (ROUNDS - 1)));
    void* area_out = mk_reserve((size_t)4096 << (2 * (ROUNDS - 1)));
    uint64_t all = FNV_INIT;
    int same_in = 0;
    u32 *hin = nullptr, *hout = nullptr, *x = nullptr, *din = nullptr, *dout = nullptr;
    size_t old_bytes = 0;
    int old_kind = 0;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t bytes = (size_t)4096 << (2 * r), n = bytes / 4;
        const int kind = r % 3;
        void* oi = hin;
        if (hin) {
            CK(cudaHostUnregister(hin));
            CK(cudaHostUnregister(hout));
            if (old_kind == 0) {
                free(hin);
                free(hout);
            } else {
                mk_unmap_at(hin, old_bytes);
                mk_unmap_at(hout, old_bytes);
            }
            CK(cudaFree(x));
            CK(cudaFree(din));
            CK(cudaFree(dout));
        }
        if (kind == 0) {
            // page aligned: two registrations must not share a page
            hin = (u32*)aligned_alloc(4096, bytes);
            hout = (u32*)aligned_alloc(4096, bytes);
            if (!hin || !hout) fail(NAME, "aligned_alloc");
        } else {
            hin = (u32*)mk_map_at(area_in, bytes);
            hout = (u32*)mk_map_at(area_out, bytes);
        }
        same_in += (void*)hin == oi;
        old_bytes = bytes;
        old_kind = kind;
        unsigned flags = kind == 0 ? cudaHostRegisterDefault : kind == 1 ? cudaHostRegisterMapped
                                                                         : cudaHostRegisterPortable;
        CK(cudaHostRegister(hin, bytes, flags));
        CK(cudaHostRegister(hout, bytes, flags));
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&din, bytes));
        CK(cudaMalloc(&dout, bytes));
        CK(cudaMemsetAsync(x, 0, bytes, s));
        CK(cudaStreamSynchronize(s));

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        bool registered = true;
        for (int it = 0; it < iters; it++) {
            if (kind == 2 && it == iters / 3 && registered) {
                CK(cudaHostUnregister(hin));
                registered = false;
            }
            if (kind == 2 && it == 2 * iters / 3 && !registered) {
                CK(cudaHostRegister(hin, bytes, flags));
                registered = true;
            }
            mk_fill(hin, n, mk_seed(r, it));
            const u32* src = din;
            if (kind == 1) {
                void* dp = nullptr;
                CK(cudaHostGetDevicePointer(&dp, hin, 0));
                src = (const u32*)dp;
            } else {
                CK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s));
                if (!registered) memset(hin, 0xEE, bytes);  // pageable now: allowed
            }
            mk_gpu(x, src, dout, n, r, it, K, s);
            CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, hout, rout, n);
            rh = fnv1a(hout, bytes, rh);
        }
        if (!registered) CK(cudaHostRegister(hin, bytes, flags));
        mk_round_line(r, KINDS[kind], bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }
    fprintf(stderr, "%s: the input came back at the same address in %d of %d rounds\n", NAME, same_in, ROUNDS);

    mk_summary(NAME, iters, all);

    CK(cudaHostUnregister(hin));
    CK(cudaHostUnregister(hout));
    if (old_kind == 0) {
        free(hin);
        free(hout);
    } else {
        mk_unmap_at(hin, old_bytes);
        mk_unmap_at(hout, old_bytes);
    }
    CK(cudaFree(x));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaStreamDestroy(s));
    return 0;
}
