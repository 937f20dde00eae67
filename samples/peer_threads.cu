// peer_threads: one process, one host thread per GPU (every visible device;
// with a single device, two threads on device 0, each its own stream, so it
// still runs), each thread driving its device from its own non-blocking
// stream.  The threads form a ring: thread t sends to t+1.  Each iteration,
// thread t:
//   runs the tiny chain (21 kernels) on its own buffers;
//   waits (cudaStreamWaitEvent, across devices) until thread t+1 has used the
//   receive buffer it filled last iteration, copies its result into that
//   buffer on t+1's device (cudaMemcpyPeerAsync) and records an event;
//   after a barrier of all threads: waits (across devices) for the copy of
//   thread t-1 into its own receive buffer, mixes it into its result in place
//   (gsamp_mix: x[i] = (x[i] + recv[i+1]) / 2) and records an event;
//   a second barrier, so that every event waited for next iteration is the
//   one recorded in this one.
// Peer access is enabled where cudaDeviceCanAccessPeer allows it (the copies
// work without it too).  No synchronize inside the loop.  After the loop every
// thread's buffer is checked against the CPU bit for bit and printed in thread
// order.
#include "common.cuh"

#include <pthread.h>

#include <thread>
#include <vector>

static const char* NAME = "peer_threads";

struct Worker {
    int id, dev, next_dev;
    cudaStream_t s;
    cudaEvent_t sent, used;  // the copy to t+1 done; the mix of recv done
    ChainBufs cb;
    float* recv;             // on this thread's device, filled by thread t-1
    int cur;
    float* out;
};

static int g_nt, g_iters;
static std::vector<Worker> g_w;
static pthread_barrier_t g_bar;

static void barrier()
{
    int r = pthread_barrier_wait(&g_bar);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD) fail(NAME, "pthread_barrier_wait");
}

static void run_worker(Worker* w)
{
    CK(cudaSetDevice(w->dev));
    Worker* next = &g_w[(w->id + 1) % g_nt];
    Worker* prev = &g_w[(w->id + g_nt - 1) % g_nt];
    const size_t bytes = GS_N * sizeof(float);
    const int grid = (GS_N + kChain.block - 1) / kChain.block;
    int cur = 0;
    for (int it = 0; it < g_iters; it++) {
        cur = chain_gpu(w->cb.d, cur, it, 30 + w->id, kChain, w->s);
        CK(cudaStreamWaitEvent(w->s, next->used, 0));  // never recorded yet: no wait
        CK(cudaMemcpyPeerAsync(next->recv, next->dev, w->cb.d[cur], w->dev, bytes, w->s));
        CK(cudaEventRecord(w->sent, w->s));
        barrier();
        CK(cudaStreamWaitEvent(w->s, prev->sent, 0));
        LAUNCH(gsamp_mix, grid, kChain.block, 0, w->s, w->cb.d[cur], w->recv, w->cb.d[cur], GS_N);
        CK(cudaEventRecord(w->used, w->s));
        barrier();
    }
    CK(cudaMemcpyAsync(w->out, w->cb.d[cur], bytes, cudaMemcpyDeviceToHost, w->s));
    CK(cudaStreamSynchronize(w->s));
    w->cur = cur;
}

int main(int argc, char** argv)
{
    g_iters = iters_arg(argc, argv, 300);
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    g_nt = ndev >= 2 ? ndev : 2;
    g_w.resize(g_nt);
    int peers = 0;
    for (int t = 0; t < g_nt; t++) {
        Worker* w = &g_w[t];
        w->id = t;
        w->dev = ndev >= 2 ? t : 0;
        w->next_dev = ndev >= 2 ? (t + 1) % g_nt : 0;
        CK(cudaSetDevice(w->dev));
        int can = 0;
        if (w->next_dev != w->dev) CK(cudaDeviceCanAccessPeer(&can, w->dev, w->next_dev));
        if (can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(w->next_dev, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
            else CK(e);
            peers++;
        }
        CK(cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&w->sent, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&w->used, cudaEventDisableTiming));
        chain_bufs_init(&w->cb, 50 + t);
        CK(cudaMalloc(&w->recv, GS_N * sizeof(float)));
        w->out = (float*)malloc(GS_N * sizeof(float));
        if (!w->out) fail(NAME, "malloc");
    }
    fprintf(stderr, "%s: %d threads on %d devices, peer access on %d of %d links\n", NAME, g_nt,
            ndev >= 2 ? ndev : 1, peers, g_nt);
    if (pthread_barrier_init(&g_bar, NULL, (unsigned)g_nt) != 0) fail(NAME, "pthread_barrier_init");

    double t0 = now_s();
    std::vector<std::thread> th;
    for (int t = 0; t < g_nt; t++) th.emplace_back(run_worker, &g_w[t]);
    for (auto& x : th) x.join();
    fprintf(stderr, "%s: %d iterations, %.1f us/iter\n", NAME, g_iters, 1e6 * (now_s() - t0) / g_iters);

    // The same on the CPU: every thread's chain, the copies, then the mixes.
    std::vector<int> rc(g_nt, 0);
    std::vector<std::vector<float>> recv(g_nt, std::vector<float>(GS_N));
    for (int it = 0; it < g_iters; it++) {
        for (int t = 0; t < g_nt; t++) {
            rc[t] = chain_cpu(g_w[t].cb.h, rc[t], it, 30 + t, kChain);
            memcpy(recv[(t + 1) % g_nt].data(), g_w[t].cb.h[rc[t]], GS_N * sizeof(float));
        }
        for (int t = 0; t < g_nt; t++) cpu_mix(g_w[t].cb.h[rc[t]], recv[t].data(), g_w[t].cb.h[rc[t]], GS_N);
    }

    printf("sample %s\niters %d\n", NAME, g_iters);
    printf("devices %d\nthreads %d\n", ndev >= 2 ? ndev : 1, g_nt);
    for (int t = 0; t < g_nt; t++) {
        if (rc[t] != g_w[t].cur) fail(NAME, "buffer bookkeeping");
        char label[32];
        snprintf(label, sizeof label, "thread %d output", t);
        check_equal(NAME, label, g_w[t].out, g_w[t].cb.h[rc[t]], GS_N);
        snprintf(label, sizeof label, "buf%d", t);
        print_floats(label, g_w[t].out, GS_N);
    }
    print_launches();

    pthread_barrier_destroy(&g_bar);
    for (int t = 0; t < g_nt; t++) {
        Worker* w = &g_w[t];
        CK(cudaSetDevice(w->dev));
        chain_bufs_free(&w->cb);
        CK(cudaFree(w->recv));
        CK(cudaEventDestroy(w->sent));
        CK(cudaEventDestroy(w->used));
        CK(cudaStreamDestroy(w->s));
        free(w->out);
    }
    return 0;
}
