// mem_hostfn: cudaLaunchHostFunc as a producer between copies.  Per iteration:
// 3 kernels on the state, a D2H copy of it into pinned memory, a host function
// that reads that copy and writes the next input into pinned memory, an H2D
// copy of that input (pinned memory is read when the copy executes: after the
// host function), 3 more kernels, a D2H copy, a second host function that folds
// the result into a log, stream synchronize; checked against the CPU.  Four
// rounds with buffers growing 4x per round (1 KiB to 64 KiB), freed and
// allocated again between rounds; in odd rounds the input is mapped memory
// (cudaHostAllocMapped) that the kernel after the host function reads directly,
// without a copy.
#include "mem_common.cuh"

static const char* NAME = "mem_hostfn";
static const int ROUNDS = 4;

struct Ctx {
    const u32* snap;   // pinned: the state as copied out
    u32* feed;         // pinned: the input the host function writes
    const u32* snap2;  // pinned: the result
    size_t n;
    u32 tag;           // set by the host before each launch of produce (stream idle)
    uint64_t log;
    int calls;
};

static void produce_cpu(const u32* snap, u32* feed, size_t n, u32 tag)
{
    for (size_t i = 0; i < n; i++) feed[i] = (snap[(i * 7) % n] * 0x01000193u) ^ tag ^ (u32)i;
}

static void CUDART_CB produce(void* p)
{
    Ctx* c = (Ctx*)p;
    produce_cpu(c->snap, c->feed, c->n, c->tag);
    c->calls++;
}

static void CUDART_CB record(void* p)
{
    Ctx* c = (Ctx*)p;
    c->log = fnv1a(c->snap2, c->n * sizeof(u32), c->log);
    c->calls++;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int can_map = 0;
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    if (!can_map) fail(NAME, "the device cannot map host memory");

    uint64_t all = FNV_INIT;
    for (int r = 0; r < ROUNDS; r++) {
        const size_t n = (size_t)256 << (2 * r), bytes = n * sizeof(u32);
        const bool mapped = r & 1;
        u32 *snap, *feed, *snap2, *x, *din;
        CK(cudaMallocHost(&snap, bytes));
        CK(cudaHostAlloc(&feed, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault));
        CK(cudaMallocHost(&snap2, bytes));
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&din, bytes));
        const u32* feed_dev = din;
        if (mapped) CK(cudaHostGetDevicePointer((void**)&feed_dev, feed, 0));
        u32* init = (u32*)mk_malloc(bytes);
        mk_fill(init, n, mk_seed(r, 0, 5));
        CK(cudaMemcpy(x, init, bytes, cudaMemcpyHostToDevice));
        Ctx c = {snap, feed, snap2, n, 0, FNV_INIT, 0};

        u32* rx = init;
        u32* rfeed = (u32*)mk_malloc(bytes);
        uint64_t rlog = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            c.tag = mk_salt(r, it);
            mk_hash_gpu(x, n, r, it, 3, s);
            CK(cudaMemcpyAsync(snap, x, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaLaunchHostFunc(s, produce, &c));
            if (!mapped) CK(cudaMemcpyAsync(din, feed, bytes, cudaMemcpyHostToDevice, s));
            LAUNCH(gsamp_mk_in, mk_grid(n), 256, 0, s, x, feed_dev, n, mk_a(r, it, 99));
            mk_hash_gpu(x, n, r, it, 2, s, 3);
            CK(cudaMemcpyAsync(snap2, x, bytes, cudaMemcpyDeviceToHost, s));
            CK(cudaLaunchHostFunc(s, record, &c));
            CK(cudaStreamSynchronize(s));
            if (c.calls != 2 * (it + 1)) fail(NAME, "host functions not run by the synchronize");

            mk_hash_cpu(rx, n, r, it, 3);
            produce_cpu(rx, rfeed, n, mk_salt(r, it));
            u32 a = mk_a(r, it, 99);
            for (size_t i = 0; i < n; i++) rx[i] = rx[i] * a + rfeed[i];
            mk_hash_cpu(rx, n, r, it, 2, 3);
            mk_check(NAME, "result", r, it, snap2, rx, n);
            rlog = fnv1a(rx, bytes, rlog);
            if (rlog != c.log) fail(NAME, "the host function's log differs from the CPU's");
        }
        mk_round_line(r, mapped ? "mapped" : "pinned", bytes, iters, c.log);
        all = fnv1a(&c.log, sizeof c.log, all);
        CK(cudaFreeHost(snap));
        CK(cudaFreeHost(feed));
        CK(cudaFreeHost(snap2));
        CK(cudaFree(x));
        CK(cudaFree(din));
        free(init);
        free(rfeed);
    }

    mk_summary(NAME, iters, all);
    CK(cudaStreamDestroy(s));
    return 0;
}
