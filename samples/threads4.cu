// threads4: 4 host threads, each with its own created stream, its own buffers
// and its own loop of the tiny chain (different parameters per thread),
// cudaStreamSynchronize after each iteration.  Results are printed in thread
// order after join, so stdout is deterministic.
#include "common.cuh"

#include <thread>
#include <vector>

static const char* NAME = "threads4";
static const int NT = 4;

struct Worker {
    int id;
    int iters;
    ChainBufs cb;
    int cur;
    float* out;
};

static void run_worker(Worker* w)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int cur = 0;
    for (int it = 0; it < w->iters; it++) {
        cur = chain_gpu(w->cb.d, cur, it, 10 + w->id, kChain, s);
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaMemcpyAsync(w->out, w->cb.d[cur], GS_N * sizeof(float), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
    w->cur = cur;
}

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    Worker w[NT];
    for (int t = 0; t < NT; t++) {
        w[t].id = t;
        w[t].iters = iters;
        chain_bufs_init(&w[t].cb, 20 + t);
        w[t].out = (float*)malloc(GS_N * sizeof(float));
    }
    std::vector<std::thread> th;
    for (int t = 0; t < NT; t++) th.emplace_back(run_worker, &w[t]);
    for (auto& x : th) x.join();

    printf("sample %s\niters %d\nthreads %d\n", NAME, iters, NT);
    for (int t = 0; t < NT; t++) {
        int rc = 0;
        for (int it = 0; it < iters; it++) rc = chain_cpu(w[t].cb.h, rc, it, 10 + t, kChain);
        if (rc != w[t].cur) fail(NAME, "buffer bookkeeping");
        char what[32];
        snprintf(what, sizeof what, "thread %d output", t);
        check_equal(NAME, what, w[t].out, w[t].cb.h[rc], GS_N);
        char label[16];
        snprintf(label, sizeof label, "out%d", t);
        print_floats(label, w[t].out, GS_N);
    }
    print_launches();

    for (int t = 0; t < NT; t++) {
        chain_bufs_free(&w[t].cb);
        free(w[t].out);
    }
    return 0;
}
