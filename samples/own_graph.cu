// own_graph: the application captures its own CUDA graph (the 21-kernel chain,
// cudaStreamBeginCapture/EndCapture), instantiates it and launches it in a
// loop; before each graph launch one eager kernel with iteration-dependent
// parameters runs on the same stream.  cudaStreamSynchronize per iteration.
// `launches` counts the captured launches (issued once, during capture) plus
// the eager ones; `graph_launches` counts cudaGraphLaunch calls.
#include "common.cuh"

static const char* NAME = "own_graph";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 200);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ChainBufs cb;
    chain_bufs_init(&cb, 30);

    // capture the chain once (parameters of "iteration 0", salt 12)
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int gcur = chain_gpu(cb.d, 0, 0, 12, kChain, s);
    CK(cudaStreamEndCapture(s, &graph));
    if (gcur != 0) fail(NAME, "chain does not end on its start buffer");
    CK(cudaGraphInstantiate(&exec, graph, 0));

    long long graph_launches = 0;
    for (int it = 0; it < iters; it++) {
        float a, b;
        chain_params(it, 77, 13, &a, &b);
        LAUNCH(gsamp_axpb, GS_N / 128, 128, 0, s, cb.d[0], cb.d[0], a, b, GS_N);
        CK(cudaGraphLaunch(exec, s));
        graph_launches++;
        CK(cudaStreamSynchronize(s));
    }
    float* out = (float*)malloc(GS_N * sizeof(float));
    CK(cudaMemcpy(out, cb.d[0], GS_N * sizeof(float), cudaMemcpyDeviceToHost));

    for (int it = 0; it < iters; it++) {
        float a, b;
        chain_params(it, 77, 13, &a, &b);
        cpu_axpb(cb.h[0], cb.h[0], a, b, GS_N);
        chain_cpu(cb.h, 0, 0, 12, kChain);
    }
    check_equal(NAME, "output", out, cb.h[0], GS_N);

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, GS_N);
    printf("graph_launches %lld\n", graph_launches);
    print_launches();

    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    free(out);
    chain_bufs_free(&cb);
    CK(cudaStreamDestroy(s));
    return 0;
}
