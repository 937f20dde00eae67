// mem_rounds: the memory kind changes every round and the size grows 4x per
// round (4 KiB to 1 MiB, then again), so that new buffers land where freed ones
// of another kind or size were.  35 rounds: every pair of 7 host-side kinds and
// 5 sizes once.
//   malloc        pageable (malloc); the input overwritten right after its H2D
//                 call returns; D2H into pageable memory
//   mmap          pageable (mmap'd at one fixed address of a reserved range:
//                 each mmap round's buffers come back there with another size)
//   mallochost    pinned (cudaMallocHost)
//   mapped        cudaHostAllocMapped: the kernels read the input and write the
//                 output in host memory directly, no copies
//   registered    aligned_alloc + cudaHostRegister (unregistered and freed at
//                 the round's end)
//   managed       cudaMallocManaged; prefetched to the device before the
//                 kernels and the output to the host after them
//   managed-host  cudaMallocManaged(cudaMemAttachHost); cudaStreamAttachMemAsync
//                 Single before the kernels and back to Host after them
// The device buffers come from cudaMalloc in even rounds and cudaMallocAsync in
// odd ones, and are freed at each round's end.
// Per iteration: the host writes the input, H2D (or prefetch/attach, or none),
// 7 kernels, D2H (or prefetch/attach, or none), stream synchronize; every
// iteration checked against the CPU.
#include "mem_common.cuh"

static const char* NAME = "mem_rounds";
static const int NKINDS = 7, NSIZES = 5, ROUNDS = NKINDS * NSIZES;
static const int K = 5;
static const char* KINDS[NKINDS] = {"malloc", "mmap", "mallochost", "mapped", "registered", "managed",
                                    "managed-host"};

struct Bufs {
    int kind;
    size_t bytes;
    u32 *hin, *hout;    // host side (managed: the managed buffers)
    u32 *vin, *vout;    // what the kernels use for input and output
};

static char* g_area;  // reserved for the mmap kind: input, then output

static void bufs_alloc(Bufs* b, int kind, size_t bytes, u32* din, u32* dout)
{
    b->kind = kind;
    b->bytes = bytes;
    b->vin = din;
    b->vout = dout;
    switch (kind) {
    case 0:
        b->hin = (u32*)mk_malloc(bytes);
        b->hout = (u32*)mk_malloc(bytes);
        break;
    case 1:
        b->hin = (u32*)mk_map_at(g_area, bytes);
        b->hout = (u32*)mk_map_at(g_area + ((size_t)4096 << (2 * (NSIZES - 1))), bytes);
        break;
    case 2:
        CK(cudaMallocHost(&b->hin, bytes));
        CK(cudaMallocHost(&b->hout, bytes));
        break;
    case 3:
        CK(cudaHostAlloc(&b->hin, bytes, cudaHostAllocMapped));
        CK(cudaHostAlloc(&b->hout, bytes, cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer((void**)&b->vin, b->hin, 0));
        CK(cudaHostGetDevicePointer((void**)&b->vout, b->hout, 0));
        break;
    case 4:
        b->hin = (u32*)aligned_alloc(4096, bytes);
        b->hout = (u32*)aligned_alloc(4096, bytes);
        if (!b->hin || !b->hout) fail(NAME, "aligned_alloc");
        CK(cudaHostRegister(b->hin, bytes, cudaHostRegisterDefault));
        CK(cudaHostRegister(b->hout, bytes, cudaHostRegisterDefault));
        break;
    default:
        CK(cudaMallocManaged(&b->hin, bytes, kind == 5 ? cudaMemAttachGlobal : cudaMemAttachHost));
        CK(cudaMallocManaged(&b->hout, bytes, kind == 5 ? cudaMemAttachGlobal : cudaMemAttachHost));
        b->vin = b->hin;
        b->vout = b->hout;
        break;
    }
}

static void bufs_free(Bufs* b)
{
    switch (b->kind) {
    case 0:
        free(b->hin);
        free(b->hout);
        break;
    case 1:
        mk_unmap_at(b->hin, b->bytes);
        mk_unmap_at(b->hout, b->bytes);
        break;
    case 2:
    case 3:
        CK(cudaFreeHost(b->hin));
        CK(cudaFreeHost(b->hout));
        break;
    case 4:
        CK(cudaHostUnregister(b->hin));
        CK(cudaHostUnregister(b->hout));
        free(b->hin);
        free(b->hout);
        break;
    default:
        CK(cudaFree(b->hin));
        CK(cudaFree(b->hout));
        break;
    }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 20);
    CK(cudaGetDevice(&g_dev));
    int managed = 0, can_map = 0;
    CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, g_dev));
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, g_dev));
    if (!managed || !can_map) fail(NAME, "the device lacks managed or mapped host memory");
    CK(cudaDeviceGetAttribute(&g_concurrent, cudaDevAttrConcurrentManagedAccess, g_dev));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    g_area = (char*)mk_reserve(2 * ((size_t)4096 << (2 * (NSIZES - 1))));
    uint64_t all = FNV_INIT;
    for (int r = 0; r < ROUNDS; r++) {
        const int kind = r % NKINDS;
        const size_t bytes = (size_t)4096 << (2 * (r % NSIZES)), n = bytes / 4;
        const bool async = r & 1;
        u32 *x = nullptr, *din = nullptr, *dout = nullptr;
        if (async) {
            CK(cudaMallocAsync((void**)&x, bytes, s));
            CK(cudaMallocAsync((void**)&din, bytes, s));
            CK(cudaMallocAsync((void**)&dout, bytes, s));
        } else {
            CK(cudaMalloc(&x, bytes));
            CK(cudaMalloc(&din, bytes));
            CK(cudaMalloc(&dout, bytes));
        }
        CK(cudaMemsetAsync(x, 0, bytes, s));
        Bufs b;
        bufs_alloc(&b, kind, bytes, din, dout);
        CK(cudaStreamSynchronize(s));

        u32* rx = (u32*)mk_malloc(bytes);
        u32* rin = (u32*)mk_malloc(bytes);
        u32* rout = (u32*)mk_malloc(bytes);
        memset(rx, 0, bytes);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            mk_fill(b.hin, n, mk_seed(r, it));   // the stream is idle
            if (kind <= 2 || kind == 4) {
                CK(cudaMemcpyAsync(din, b.hin, bytes, cudaMemcpyHostToDevice, s));
                if (kind <= 1) memset(b.hin, 0xEE, bytes);   // pageable: allowed
            } else if (kind == 5) {
                mk_prefetch(b.hin, bytes, false, s);
            } else if (kind == 6) {
                CK(cudaStreamAttachMemAsync(s, b.hin, 0, cudaMemAttachSingle));
                CK(cudaStreamAttachMemAsync(s, b.hout, 0, cudaMemAttachSingle));
            }
            mk_gpu(x, b.vin, b.vout, n, r, it, K, s);
            if (kind <= 2 || kind == 4) {
                CK(cudaMemcpyAsync(b.hout, dout, bytes, cudaMemcpyDeviceToHost, s));
            } else if (kind == 5) {
                mk_prefetch(b.hout, bytes, true, s);
            } else if (kind == 6) {
                CK(cudaStreamAttachMemAsync(s, b.hin, 0, cudaMemAttachHost));
                CK(cudaStreamAttachMemAsync(s, b.hout, 0, cudaMemAttachHost));
            }
            CK(cudaStreamSynchronize(s));

            mk_fill(rin, n, mk_seed(r, it));
            mk_cpu(rx, rin, rout, n, r, it, K);
            mk_check(NAME, "output", r, it, b.hout, rout, n);
            rh = fnv1a(b.hout, bytes, rh);
        }
        bufs_free(&b);
        if (async) {
            CK(cudaFreeAsync(x, s));
            CK(cudaFreeAsync(din, s));
            CK(cudaFreeAsync(dout, s));
            CK(cudaStreamSynchronize(s));
        } else {
            CK(cudaFree(x));
            CK(cudaFree(din));
            CK(cudaFree(dout));
        }
        mk_round_line(r, KINDS[kind], bytes, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        free(rx);
        free(rin);
        free(rout);
    }

    mk_summary(NAME, iters, all);
    CK(cudaStreamDestroy(s));
    return 0;
}
