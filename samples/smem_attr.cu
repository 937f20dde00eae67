// smem_attr: as PyTorch's training steps do, one kernel launched with a
// different dynamic shared memory size each time, its limit set before every
// launch to what that launch needs (cudaFuncSetAttribute): 64 KiB, then lowered
// to 8 KiB, raised to 32 KiB, lowered to 16 KiB, each launch followed by two
// small kernels, and a stream synchronize per iteration.  A held 64 KiB launch
// issued after the limit is lowered fails: held work must go out first.  The
// kernel's result depends on every word of its shared memory.
#include "common.cuh"

static const char* NAME = "smem_attr";
static const int kSizes[4] = {65536, 8192, 32768, 16384}; // bytes, in launch order
static const int kBlocks = 4, kThreads = 128;

// Block b works on m words of x (m = dynamic shared memory / 4).
__global__ void gsamp_smem(unsigned* x, int m)
{
    extern __shared__ unsigned sh[];
    unsigned* v = x + (size_t)blockIdx.x * m;
    for (int i = threadIdx.x; i < m; i += blockDim.x)
        sh[i] = v[i] * 2654435761u + (unsigned)i;
    __syncthreads();
    for (int i = threadIdx.x; i < m; i += blockDim.x)
        v[i] = sh[m - 1 - i] ^ (sh[(i * 7) % m] >> 3);
}

__global__ void gsamp_bump(unsigned* x, int n, unsigned k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 3u + k;
}

static void cpu_smem(unsigned* x, int m)
{
    unsigned* sh = (unsigned*)malloc((size_t)m * sizeof *sh);
    for (int b = 0; b < kBlocks; b++) {
        unsigned* v = x + (size_t)b * m;
        for (int i = 0; i < m; i++)
            sh[i] = v[i] * 2654435761u + (unsigned)i;
        for (int i = 0; i < m; i++)
            v[i] = sh[m - 1 - i] ^ (sh[(i * 7) % m] >> 3);
    }
    free(sh);
}

static void cpu_bump(unsigned* x, int n, unsigned k)
{
    for (int i = 0; i < n; i++)
        x[i] = x[i] * 3u + k;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 100);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    unsigned *d[4], *h[4];
    int n[4];
    for (int j = 0; j < 4; j++) {
        n[j] = kBlocks * kSizes[j] / 4;
        h[j] = (unsigned*)malloc((size_t)n[j] * sizeof(unsigned));
        for (int i = 0; i < n[j]; i++)
            h[j][i] = (unsigned)(i * 2246822519u + j);
        CK(cudaMalloc(&d[j], (size_t)n[j] * sizeof(unsigned)));
        CK(cudaMemcpy(d[j], h[j], (size_t)n[j] * sizeof(unsigned), cudaMemcpyHostToDevice));
    }

    for (int it = 0; it < iters; it++) {
        for (int j = 0; j < 4; j++) {
            CK(cudaFuncSetAttribute(gsamp_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, kSizes[j]));
            LAUNCH(gsamp_smem, kBlocks, kThreads, kSizes[j], s, d[j], kSizes[j] / 4);
            LAUNCH(gsamp_bump, (n[j] + 255) / 256, 256, 0, s, d[j], n[j], 1u + j);
            LAUNCH(gsamp_bump, (n[(j + 1) % 4] + 255) / 256, 256, 0, s, d[(j + 1) % 4], n[(j + 1) % 4], 7u);
        }
        CK(cudaStreamSynchronize(s));
    }
    for (int it = 0; it < iters; it++)
        for (int j = 0; j < 4; j++) {
            cpu_smem(h[j], kSizes[j] / 4);
            cpu_bump(h[j], n[j], 1u + j);
            cpu_bump(h[(j + 1) % 4], n[(j + 1) % 4], 7u);
        }

    printf("sample %s\niters %d\n", NAME, iters);
    for (int j = 0; j < 4; j++) {
        unsigned* out = (unsigned*)malloc((size_t)n[j] * sizeof(unsigned));
        CK(cudaMemcpy(out, d[j], (size_t)n[j] * sizeof(unsigned), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n[j]; i++)
            if (out[i] != h[j][i]) {
                fprintf(stderr, "%s: buffer %d word %d: 0x%08x, the CPU has 0x%08x\n", NAME, j, i, out[i], h[j][i]);
                fail(NAME, "output differs from the CPU reference");
            }
        printf("buf%d.fnv1a 0x%016llx\n", j, (unsigned long long)fnv1a(out, (size_t)n[j] * sizeof(unsigned)));
        free(out);
        free(h[j]);
        CK(cudaFree(d[j]));
    }
    print_launches();
    CK(cudaStreamDestroy(s));
    return 0;
}
