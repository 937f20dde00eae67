// copy_overlap: compute on one stream while a copy stream brings the previous
// step's result to the host, as a training loop copies out its metrics or a
// pipeline its outputs.  Step it:
//   copy:    wait done[(it-1)%2]; copy snap[(it-1)%2] to pinned out[(it-1)%2];
//            record copied[(it-1)%2]
//   compute: wait copied[it%2] (the copy of step it-2 read snap[it%2]); the
//            21-kernel chain; a device copy of its result into snap[it%2];
//            record done[it%2]
// then the host synchronizes the copy stream and folds step it-1's bytes into a
// digest.  Both streams are non-blocking: only the events order them.  ITERS
// steps (default 300); the digest and the last result are checked against the
// CPU and printed.
#include "common.cuh"

static const char* NAME = "copy_overlap";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 300);
    const size_t bytes = GS_N * sizeof(float);
    cudaStream_t compute, copy;
    cudaEvent_t done[2], copied[2];
    float *snap[2], *out[2];
    CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    for (int k = 0; k < 2; k++) {
        CK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&copied[k], cudaEventDisableTiming));
        CK(cudaMalloc(&snap[k], bytes));
        CK(cudaMallocHost(&out[k], bytes));
    }
    ChainBufs X;
    chain_bufs_init(&X, 31);
    CK(cudaDeviceSynchronize()); // the pageable copies in are done before the non-blocking streams read
    int cx = 0;
    uint64_t digest = FNV_INIT;
    for (int it = 0; it <= iters; it++) { // step iters only copies out the last result
        if (it > 0) {
            int p = (it - 1) % 2;
            CK(cudaStreamWaitEvent(copy, done[p], 0));
            CK(cudaMemcpyAsync(out[p], snap[p], bytes, cudaMemcpyDeviceToHost, copy));
            CK(cudaEventRecord(copied[p], copy));
        }
        if (it < iters) {
            int c = it % 2;
            if (it >= 2)
                CK(cudaStreamWaitEvent(compute, copied[c], 0));
            cx = chain_gpu(X.d, cx, it, 4, kChain, compute);
            CK(cudaMemcpyAsync(snap[c], X.d[cx], bytes, cudaMemcpyDeviceToDevice, compute));
            CK(cudaEventRecord(done[c], compute));
        }
        if (it > 0) {
            CK(cudaStreamSynchronize(copy));
            digest = fnv1a(out[(it - 1) % 2], bytes, digest);
        }
    }
    CK(cudaStreamSynchronize(compute));

    uint64_t ref = FNV_INIT;
    int rx = 0;
    for (int it = 0; it < iters; it++) {
        rx = chain_cpu(X.h, rx, it, 4, kChain);
        ref = fnv1a(X.h[rx], bytes, ref);
    }
    if (rx != cx) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "last result", out[(iters - 1) % 2], X.h[rx], GS_N);
    if (digest != ref) fail(NAME, "the digest of the copied results differs from the CPU's");

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("last", out[(iters - 1) % 2], GS_N);
    printf("copies.fnv1a 0x%016llx\n", (unsigned long long)digest);
    print_launches();
    for (int k = 0; k < 2; k++) {
        CK(cudaEventDestroy(done[k]));
        CK(cudaEventDestroy(copied[k]));
        CK(cudaFree(snap[k]));
        CK(cudaFreeHost(out[k]));
    }
    chain_bufs_free(&X);
    CK(cudaStreamDestroy(compute));
    CK(cudaStreamDestroy(copy));
    return 0;
}
