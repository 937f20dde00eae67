// two_branch: each step forks to a second stream by an event and joins it back
// by an event, as a program whose step runs two branches at once does:
//   main:  record `fork`; 2 chain kernels on set A
//   side:  wait `fork`; a mix of A (as it was at the fork) into set B, then 2
//          chain kernels on B; record `join`
//   main:  wait `join`; a mix of A and B into A
// Both streams are non-blocking.  The side's reads of A and main's writes of A
// during the branches touch different buffers, so only the fork and the join
// order them.  Each set rotates through its three buffers back to where it
// began, so every step issues the same pointers (its scalars have period 4).
// Two phases of ITERS steps (default 300): the first synchronizes main every
// step, the second every 10th step.  Each phase's A and B are checked against
// the CPU and printed.
#include "common.cuh"

static const char* NAME = "two_branch";

static const ChainCfg kBranch = {2, 0, 256};

struct Branches {
    ChainBufs A, B;
    int ca = 0, cb = 0;
};

// One step on the GPU; the streams and events are the program's.
static void step_gpu(Branches* w, int it, cudaStream_t main, cudaStream_t side, cudaEvent_t fork,
                     cudaEvent_t join)
{
    const int grid = GS_N / 256;
    CK(cudaEventRecord(fork, main));
    CK(cudaStreamWaitEvent(side, fork, 0));
    int a0 = w->ca;
    w->ca = chain_gpu(w->A.d, w->ca, it, 1, kBranch, main);
    int bo = (w->cb + 1) % 3;
    LAUNCH(gsamp_mix, grid, 256, 0, side, w->A.d[a0], w->B.d[w->cb], w->B.d[bo], GS_N);
    w->cb = chain_gpu(w->B.d, bo, it, 2, kBranch, side);
    CK(cudaEventRecord(join, side));
    CK(cudaStreamWaitEvent(main, join, 0));
    int ao = (w->ca + 1) % 3;
    LAUNCH(gsamp_mix, grid, 256, 0, main, w->A.d[w->ca], w->B.d[w->cb], w->A.d[ao], GS_N);
    w->ca = ao;
}

// The same step on the CPU, on the mirrors (indices kept apart from the GPU's).
static void step_cpu(Branches* w, int it, int* ca, int* cb)
{
    int a0 = *ca;
    *ca = chain_cpu(w->A.h, *ca, it, 1, kBranch);
    int bo = (*cb + 1) % 3;
    cpu_mix(w->A.h[a0], w->B.h[*cb], w->B.h[bo], GS_N);
    *cb = chain_cpu(w->B.h, bo, it, 2, kBranch);
    int ao = (*ca + 1) % 3;
    cpu_mix(w->A.h[*ca], w->B.h[*cb], w->A.h[ao], GS_N);
    *ca = ao;
}

// ITERS steps synchronizing every sync_every steps, then the check and the digest.
static void phase(const char* label, int iters, int sync_every, uint32_t seed, cudaStream_t main,
                  cudaStream_t side, cudaEvent_t fork, cudaEvent_t join)
{
    Branches w;
    chain_bufs_init(&w.A, seed);
    chain_bufs_init(&w.B, seed + 1);
    CK(cudaDeviceSynchronize()); // the pageable copies in are done before the non-blocking streams read
    for (int it = 0; it < iters; it++) {
        step_gpu(&w, it, main, side, fork, join);
        if ((it + 1) % sync_every == 0 || it + 1 == iters)
            CK(cudaStreamSynchronize(main));
    }
    float* a = (float*)malloc(GS_N * sizeof(float));
    float* b = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(a, w.A.d[w.ca], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b, w.B.d[w.cb], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
    int ca = 0, cb = 0;
    for (int it = 0; it < iters; it++)
        step_cpu(&w, it, &ca, &cb);
    if (ca != w.ca || cb != w.cb) fail(NAME, "buffer bookkeeping");
    check_equal(NAME, "set A", a, w.A.h[ca], GS_N);
    check_equal(NAME, "set B", b, w.B.h[cb], GS_N);
    char la[32], lb[32];
    snprintf(la, sizeof la, "%s.a", label);
    snprintf(lb, sizeof lb, "%s.b", label);
    print_floats(la, a, GS_N);
    print_floats(lb, b, GS_N);
    free(a);
    free(b);
    chain_bufs_free(&w.A);
    chain_bufs_free(&w.B);
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 300);
    cudaStream_t main_s, side;
    cudaEvent_t fork, join;
    CK(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    printf("sample %s\niters %d\n", NAME, iters);
    phase("sync1", iters, 1, 21, main_s, side, fork, join);
    phase("sync10", iters, 10, 23, main_s, side, fork, join);
    print_launches();
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(main_s));
    CK(cudaStreamDestroy(side));
    return 0;
}
