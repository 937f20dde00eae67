// copy_args: device-to-device copies and memsets whose arguments change every
// iteration, as a caching allocator's buffers and a step count change them.
// Per iteration, four times: a copy from one of five states in turn into a
// scratch buffer, at an offset and of a size that change too; a memset of
// another buffer, at an offset that moves, with a value that counts the
// iterations; each folded into an accumulator by a kernel; and a step that
// changes the state.  Then an upload from pinned host memory (which the host
// writes each iteration) into one of three device buffers in turn, folded in,
// a readback of one of the five states in turn into pinned host memory, and a
// stream synchronize, after which the host folds the readback into its own
// hash.  Every 25 iterations the
// scratch and memset buffers move to memory of another kind: cudaMalloc,
// cudaMallocAsync (a pool), cudaMallocManaged, and a virtual-memory mapping
// (cuMemCreate + cuMemMap), where the driver refuses to move a copy node made
// on cudaMalloc memory (graphshim must build that graph anew).  The output: the
// accumulator's hash every 25 iterations and at the end.
#include "common.cuh"

#include <cuda.h>

static const char* NAME = "copy_args";
static const int N = 4096;  // 4-byte words a buffer
static const int NKINDS = 4;

__global__ void gsamp_fold(uint32_t* acc, const uint32_t* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] = (acc[i] ^ x[i]) * 16777619u + 1u;
}

__global__ void gsamp_step(uint32_t* x, uint32_t v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 2654435761u + v + (uint32_t)i;
}

#define CU(call)                                                        \
    do {                                                                \
        CUresult r_ = (call);                                           \
        if (r_ != CUDA_SUCCESS) {                                       \
            fprintf(stderr, "%s: %s failed: %d\n", NAME, #call, (int)r_); \
            exit(1);                                                    \
        }                                                               \
    } while (0)

// A buffer of N words of memory kind k (0 cudaMalloc, 1 pool, 2 managed, 3 VMM).
static uint32_t* alloc_kind(int k, cudaStream_t s)
{
    void* p = nullptr;
    size_t bytes = N * sizeof(uint32_t);
    if (k == 0) {
        CK(cudaMalloc(&p, bytes));
    } else if (k == 1) {
        CK(cudaMallocAsync(&p, bytes, s));
        CK(cudaStreamSynchronize(s));
    } else if (k == 2) {
        CK(cudaMallocManaged(&p, bytes));
    } else {
        CUmemAllocationProp prop = {};
        CUmemAccessDesc a = {};
        CUmemGenericAllocationHandle h;
        CUdeviceptr d;
        size_t g = 0;
        int dev = 0;
        CK(cudaGetDevice(&dev));
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        size_t sz = (bytes + g - 1) / g * g;
        CU(cuMemAddressReserve(&d, sz, 0, 0, 0));
        CU(cuMemCreate(&h, sz, &prop, 0));
        CU(cuMemMap(d, sz, 0, h, 0));
        a.location = prop.location;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CU(cuMemSetAccess(d, sz, &a, 1));
        p = (void*)d;
    }
    CK(cudaMemset(p, 0, bytes));
    return (uint32_t*)p;
}

static uint64_t hash_of(const uint32_t* d)
{
    static uint32_t h[N];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    return fnv1a(h, sizeof h);
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    uint32_t *state[5], *acc, *scratch[NKINDS], *setbuf[NKINDS];
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < 5; i++) {
        state[i] = alloc_kind(0, s);
        LAUNCH(gsamp_step, N / 256, 256, 0, s, state[i], 1000u + i, N);
    }
    acc = alloc_kind(0, s);
    for (int k = 0; k < NKINDS; k++) {
        scratch[k] = alloc_kind(k, s);
        setbuf[k] = alloc_kind(k, s);
    }
    CK(cudaDeviceSynchronize());

    uint32_t *pin_in, *pin_out, *up[3];
    uint64_t host_hash = FNV_INIT;
    CK(cudaMallocHost(&pin_in, N * sizeof(uint32_t)));
    CK(cudaMallocHost(&pin_out, N * sizeof(uint32_t)));
    for (int i = 0; i < 3; i++)
        up[i] = alloc_kind(0, s);
    CK(cudaDeviceSynchronize());

    printf("sample %s\niters %d\n", NAME, iters);
    for (int it = 0; it < iters; it++) {
        int k = it / 25 % NKINDS;
        for (int j = 0; j < 4; j++) {
            int off = (it + j) % 3 * 64, words = N - 256 + (it % 5) * 32;
            CK(cudaMemcpyAsync(scratch[k] + off, state[(it + j) % 5], (size_t)(words - off) * 4,
                               cudaMemcpyDeviceToDevice, s));
            LAUNCH(gsamp_fold, N / 256, 256, 0, s, acc, scratch[k], N);
            CK(cudaMemsetAsync(setbuf[k] + it % 4 * 64, (it * 31 + j) & 0xff, (size_t)(N - 256) * 4, s));
            LAUNCH(gsamp_fold, N / 256, 256, 0, s, acc, setbuf[k], N);
            LAUNCH(gsamp_step, N / 256, 256, 0, s, state[j], (uint32_t)(it * 4 + j), N);
        }
        for (int w = 0; w < N; w++)
            pin_in[w] = (uint32_t)(it * 7919 + w);
        CK(cudaMemcpyAsync(up[it % 3], pin_in, N * sizeof(uint32_t), cudaMemcpyHostToDevice, s));
        LAUNCH(gsamp_fold, N / 256, 256, 0, s, acc, up[it % 3], N);
        CK(cudaMemcpyAsync(pin_out, state[it % 5], N * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        host_hash = fnv1a(pin_out, N * sizeof(uint32_t), host_hash);
        if (it % 25 == 24)
            printf("it %d kind %d acc %016llx readback %016llx\n", it, k, (unsigned long long)hash_of(acc),
                   (unsigned long long)host_hash);
    }
    printf("acc %016llx\n", (unsigned long long)hash_of(acc));
    print_launches();
    CK(cudaStreamDestroy(s));
    return 0;
}
