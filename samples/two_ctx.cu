// two_ctx: one process, two contexts: on devices 0 and 1 where two devices
// are present, else both on device 0 (each made with cuCtxCreate, so it also
// runs on one GPU).  Each context has its own non-blocking stream, event and
// chain buffers.  Each iteration:
//   context 0: the tiny chain (21 kernels) on its stream, then an event;
//   context 1: its stream waits for that event, copies context 0's result into
//              its own chain buffer (cuMemcpyPeerAsync), runs the chain with
//              other parameters, then an event;
//   context 0: its stream waits for that event and copies context 1's result
//              back into the buffer its next chain starts from.
// No synchronize inside the loop: the events end each stream's segments, and
// each context's 21 kernels are a sequence of their own (a graph per context,
// launched in that context).  After the loop both results are checked against
// the CPU bit for bit.
#include <cuda.h>

#include "common.cuh"

static const char* NAME = "two_ctx";

#define CU(call)                                                                   \
    do {                                                                           \
        CUresult r_ = (call);                                                      \
        if (r_ != CUDA_SUCCESS) {                                                  \
            const char* s_ = "?";                                                  \
            cuGetErrorName(r_, &s_);                                               \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                    s_, (int)r_);                                                  \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 500);
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    CU(cuInit(0));
    int devices = ndev >= 2 ? 2 : 1;

    CUcontext ctx[2];
    cudaStream_t s[2];
    cudaEvent_t ev[2];
    ChainBufs b[2];
    for (int i = 0; i < 2; i++) {
        CUdevice d;
        CU(cuDeviceGet(&d, devices == 2 ? i : 0));
        CU(cuCtxCreate(&ctx[i], NULL, 0, d)); // current from here: the runtime uses it
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
        chain_bufs_init(&b[i], 40 + i);
    }

    const size_t bytes = GS_N * sizeof(float);
    int cur[2] = {0, 0};
    for (int it = 0; it < iters; it++) {
        CU(cuCtxSetCurrent(ctx[0]));
        cur[0] = chain_gpu(b[0].d, cur[0], it, 1, kChain, s[0]);
        CK(cudaEventRecord(ev[0], s[0]));

        CU(cuCtxSetCurrent(ctx[1]));
        CK(cudaStreamWaitEvent(s[1], ev[0], 0));
        CU(cuMemcpyPeerAsync((CUdeviceptr)b[1].d[cur[1]], ctx[1], (CUdeviceptr)b[0].d[cur[0]], ctx[0], bytes,
                             (CUstream)s[1]));
        cur[1] = chain_gpu(b[1].d, cur[1], it, 2, kChain, s[1]);
        CK(cudaEventRecord(ev[1], s[1]));

        CU(cuCtxSetCurrent(ctx[0]));
        CK(cudaStreamWaitEvent(s[0], ev[1], 0));
        CU(cuMemcpyPeerAsync((CUdeviceptr)b[0].d[cur[0]], ctx[0], (CUdeviceptr)b[1].d[cur[1]], ctx[1], bytes,
                             (CUstream)s[0]));
    }

    float* out[2];
    for (int i = 0; i < 2; i++) {
        CU(cuCtxSetCurrent(ctx[i]));
        CK(cudaStreamSynchronize(s[i]));
        out[i] = (float*)malloc(bytes);
        if (!out[i]) fail(NAME, "malloc");
        CK(cudaMemcpy(out[i], b[i].d[cur[i]], bytes, cudaMemcpyDeviceToHost));
    }

    // The same on the CPU.
    int rc[2] = {0, 0};
    for (int it = 0; it < iters; it++) {
        rc[0] = chain_cpu(b[0].h, rc[0], it, 1, kChain);
        memcpy(b[1].h[rc[1]], b[0].h[rc[0]], bytes);
        rc[1] = chain_cpu(b[1].h, rc[1], it, 2, kChain);
        memcpy(b[0].h[rc[0]], b[1].h[rc[1]], bytes);
    }
    if (rc[0] != cur[0] || rc[1] != cur[1]) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "context 0", out[0], b[0].h[cur[0]], GS_N);
    check_equal(NAME, "context 1", out[1], b[1].h[cur[1]], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    printf("devices %d\n", devices);
    print_floats("ctx0", out[0], GS_N);
    print_floats("ctx1", out[1], GS_N);
    print_launches();

    for (int i = 1; i >= 0; i--) {
        CU(cuCtxSetCurrent(ctx[i]));
        free(out[i]);
        chain_bufs_free(&b[i]);
        CK(cudaEventDestroy(ev[i]));
        CK(cudaStreamDestroy(s[i]));
        CU(cuCtxDestroy(ctx[i]));
    }
    return 0;
}
