// mapped_poll: each iteration runs the same few tiny kernels and then a kernel
// that writes a value and a flag into MAPPED pinned host memory
// (cudaHostAlloc(cudaHostAllocMapped)); the host busy-polls the flag WITHOUT
// calling any CUDA function until it is set (the launch must really have been
// submitted), then checks the value and synchronizes the stream.  A 20 s
// timeout prints an error and exits nonzero instead of hanging.
#include "common.cuh"

#include <atomic>
#include <unistd.h>

static const char* NAME = "mapped_poll";
static const ChainCfg kChainFew = {6, 3, 256};
static const double TIMEOUT_S = 20.0;

__global__ void gsamp_signal(const float* x, volatile float* val, volatile int* flag, int token)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        val[0] = x[0];
        val[1] = x[GS_N - 1];
        __threadfence_system();
        *flag = token;
        __threadfence_system();
    }
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    ChainBufs cb;
    chain_bufs_init(&cb, 60);

    void* hmem = nullptr;
    CK(cudaHostAlloc(&hmem, 64, cudaHostAllocMapped));
    memset(hmem, 0, 64);
    volatile int* hflag = (volatile int*)hmem;
    volatile float* hval = (volatile float*)((char*)hmem + 16);
    void* dmem = nullptr;
    CK(cudaHostGetDevicePointer(&dmem, hmem, 0));
    volatile int* dflag = (volatile int*)dmem;
    volatile float* dval = (volatile float*)((char*)dmem + 16);

    uint64_t hash = FNV_INIT;
    double max_wait = 0.0;
    int cur = 0, rc = 0;
    for (int it = 0; it < iters; it++) {
        int token = it + 1;
        cur = chain_gpu(cb.d, cur, it, 17, kChainFew, s);
        LAUNCH(gsamp_signal, 1, 32, 0, s, cb.d[cur], dval, dflag, token);

        // busy-poll without any CUDA call
        double t0 = now_s();
        unsigned long spins = 0;
        while (*hflag != token) {
            if ((++spins & 1023) == 0 && now_s() - t0 > TIMEOUT_S) {
                fprintf(stderr,
                        "%s: FAILED: timeout (%.0f s) waiting for the flag set by the kernel "
                        "of iteration %d (flag=%d, expected %d): the launch was not submitted\n",
                        NAME, TIMEOUT_S, it, *hflag, token);
                _exit(3);
            }
        }
        std::atomic_thread_fence(std::memory_order_acquire);
        double w = now_s() - t0;
        if (w > max_wait) max_wait = w;
        float v[2] = {hval[0], hval[1]};

        rc = chain_cpu(cb.h, rc, it, 17, kChainFew);
        float ref[2] = {cb.h[rc][0], cb.h[rc][GS_N - 1]};
        char what[48];
        snprintf(what, sizeof what, "value signalled in iteration %d", it);
        check_equal(NAME, what, v, ref, 2);
        hash = fnv1a(v, sizeof v, hash);

        CK(cudaStreamSynchronize(s));
    }
    fprintf(stderr, "%s: max poll wait %.3f ms\n", NAME, 1000.0 * max_wait);
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
    if (rc != cur) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "output", out, cb.h[cur], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    printf("signals.fnv1a 0x%016llx\n", (unsigned long long)hash);
    print_launches();

    free(out);
    CK(cudaFreeHost(hmem));
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
