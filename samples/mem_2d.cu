// mem_2d: 2-D copies and memsets between pitched buffers.  Five rounds; the
// W x H word arrays grow 4x per round (64 x 16 to 1024 x 256, 4 KiB to 1 MiB);
// the device arrays come from cudaMallocPitch and are freed between rounds; the
// host arrays have pitches of their own and are pinned (cudaMallocHost) in even
// rounds, pageable in odd ones (the input overwritten right after its copy
// call returns).  Per iteration: cudaMemcpy2DAsync H2D of the whole input into
// A, a kernel folds A into the state B, 2 hash kernels on B, cudaMemset2DAsync
// of a 4-word strip of B's upper rows, cudaMemcpy2DAsync D2D of a quarter of B
// (offset) over A's corner, a kernel adds A into B, cudaMemcpy2DAsync D2H of B
// into the host output's own pitch; stream synchronize; checked against the
// CPU, padding of the output included (it must stay untouched).
#include "mem_common.cuh"

static const char* NAME = "mem_2d";
static const int ROUNDS = 5;

__global__ void gsamp_2d_in(char* B, size_t pb, const char* A, size_t pa, int W, int H, u32 a)
{
    for (int y = blockIdx.y; y < H; y += gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < W; x += gridDim.x * blockDim.x) {
            u32* b = (u32*)(B + y * pb);
            const u32* s = (const u32*)(A + y * pa);
            b[x] = b[x] * a + s[x];
        }
}

__global__ void gsamp_2d_hash(char* B, size_t pb, int W, int H, u32 a, u32 c)
{
    for (int y = blockIdx.y; y < H; y += gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < W; x += gridDim.x * blockDim.x) {
            u32* b = (u32*)(B + y * pb);
            u32 v = b[x];
            b[x] = (v ^ (v >> 13)) * a + c + (u32)(y * W + x);
        }
}

__global__ void gsamp_2d_add(char* B, size_t pb, const char* A, size_t pa, int W, int H)
{
    for (int y = blockIdx.y; y < H; y += gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < W; x += gridDim.x * blockDim.x) {
            u32* b = (u32*)(B + y * pb);
            const u32* s = (const u32*)(A + y * pa);
            b[x] += s[x] * 5u;
        }
}

// CPU arrays are dense W x H.
static void cpu_hash(u32* B, int W, int H, u32 a, u32 c)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            u32 v = B[y * W + x];
            B[y * W + x] = (v ^ (v >> 13)) * a + c + (u32)(y * W + x);
        }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 24);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    uint64_t all = FNV_INIT;
    for (int r = 0; r < ROUNDS; r++) {
        const int W = 64 << r, H = 16 << r;
        const size_t wb = (size_t)W * 4;
        const bool pageable = r & 1;
        const size_t hpi = wb + 128, hpo = wb + 64;   // host pitches (bytes)
        char *A = nullptr, *B = nullptr;
        size_t pa = 0, pb = 0;
        CK(cudaMallocPitch((void**)&A, &pa, wb, H));
        CK(cudaMallocPitch((void**)&B, &pb, wb, H));
        CK(cudaMemset2DAsync(B, pb, 0, wb, H, s));
        char *hin = nullptr, *hout = nullptr;
        if (pageable) {
            hin = (char*)mk_malloc(hpi * H);
            hout = (char*)mk_malloc(hpo * H);
        } else {
            CK(cudaMallocHost(&hin, hpi * H));
            CK(cudaMallocHost(&hout, hpo * H));
        }
        memset(hout, 0x5A, hpo * H);
        CK(cudaStreamSynchronize(s));

        const size_t n = (size_t)W * H;
        u32* rA = (u32*)mk_malloc(n * 4);
        u32* rB = (u32*)mk_malloc(n * 4);
        u32* rT = (u32*)mk_malloc(n * 4);
        u32* got = (u32*)mk_malloc(n * 4);
        memset(rB, 0, n * 4);
        dim3 grid(W / 256 > 0 ? W / 256 : 1, H < 64 ? H : 64);
        uint64_t rh = FNV_INIT;
        for (int it = 0; it < iters; it++) {
            const u32 a0 = mk_a(r, it, 99);
            const int qx = W / 4, qy = H / 4, sx = (it * 5) % (W - 4);
            const unsigned char mv = (unsigned char)(0x11 * (it % 15 + 1));
            // the input: row y is at hin + y * hpi, its padding random too
            mk_fill((u32*)hin, hpi * H / 4, mk_seed(r, it));
            for (int y = 0; y < H; y++) memcpy(rA + (size_t)y * W, hin + y * hpi, wb);
            CK(cudaMemcpy2DAsync(A, pa, hin, hpi, wb, H, cudaMemcpyHostToDevice, s));
            if (pageable) memset(hin, 0xEE, hpi * H);   // allowed: the copy has its bytes

            LAUNCH(gsamp_2d_in, grid, 256, 0, s, B, pb, A, pa, W, H, a0);
            for (int k = 0; k < 2; k++)
                LAUNCH(gsamp_2d_hash, grid, 256, 0, s, B, pb, W, H, mk_a(r, it, k), mk_b(r, it, k));
            CK(cudaMemset2DAsync(B + sx * 4, pb, mv, 16, H / 2, s));
            CK(cudaMemcpy2DAsync(A, pa, B + qy * pb + qx * 4, pb, (size_t)qx * 2 * 4, H / 2,
                                 cudaMemcpyDeviceToDevice, s));
            LAUNCH(gsamp_2d_add, grid, 256, 0, s, B, pb, A, pa, W, H);
            CK(cudaMemcpy2DAsync(hout, hpo, B, pb, wb, H, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));

            for (size_t i = 0; i < n; i++) rB[i] = rB[i] * a0 + rA[i];
            for (int k = 0; k < 2; k++) cpu_hash(rB, W, H, mk_a(r, it, k), mk_b(r, it, k));
            for (int y = 0; y < H / 2; y++) memset(rB + (size_t)y * W + sx, mv, 16);
            memcpy(rT, rB, n * 4);
            for (int y = 0; y < H / 2; y++)
                memcpy(rA + (size_t)y * W, rT + (size_t)(y + qy) * W + qx, (size_t)qx * 2 * 4);
            for (size_t i = 0; i < n; i++) rB[i] += rA[i] * 5u;

            for (int y = 0; y < H; y++) {
                memcpy(got + (size_t)y * W, hout + y * hpo, wb);
                for (size_t j = wb; j < hpo; j++)
                    if ((unsigned char)hout[y * hpo + j] != 0x5A) {
                        fprintf(stderr, "%s: FAILED: round %d iteration %d: padding of output row %d written\n",
                                NAME, r, it, y);
                        return 1;
                    }
            }
            mk_check(NAME, "output", r, it, got, rB, n);
            rh = fnv1a(got, n * 4, rh);
        }
        mk_round_line(r, pageable ? "pageable" : "pinned", n * 4, iters, rh);
        all = fnv1a(&rh, sizeof rh, all);
        CK(cudaFree(A));
        CK(cudaFree(B));
        if (pageable) {
            free(hin);
            free(hout);
        } else {
            CK(cudaFreeHost(hin));
            CK(cudaFreeHost(hout));
        }
        free(rA);
        free(rB);
        free(rT);
        free(got);
    }

    mk_summary(NAME, iters, all);
    CK(cudaStreamDestroy(s));
    return 0;
}
