// loop_body: loops whose segments never repeat as a whole, only their bodies.
//   timing: one kernel launched 300 + it times between two event records, then an
//           event synchronize (a timing loop; each segment is one op longer than
//           the last);
//   jacobi: two kernels that update two buffers in turn, 500 + it iterations, one
//           synchronize at the end;
//   scan:   three kernels, 100 + it times, then a memset and a D2H copy.
// Each result is checked against the CPU.
#include "common.cuh"

static const char* NAME = "loop_body";

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 6);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float *d[3], *h[3];
    for (int i = 0; i < 3; i++) {
        CK(cudaMalloc(&d[i], GS_N * sizeof(float)));
        h[i] = (float*)malloc(GS_N * sizeof(float));
        fill_random(h[i], GS_N, 11u + (uint32_t)i);
        CK(cudaMemcpy(d[i], h[i], GS_N * sizeof(float), cudaMemcpyHostToDevice));
    }
    float* out = nullptr;
    CK(cudaMallocHost(&out, GS_N * sizeof(float)));
    const int blocks = GS_N / 256;

    for (int it = 0; it < iters; it++) {
        // timing loop, in place on d[0]
        CK(cudaEventRecord(e0, s));
        for (int k = 0; k < 300 + it; k++) {
            LAUNCH(gsamp_axpb, blocks, 256, 0, s, d[0], d[0], 1.0009765625f, 0.125f, GS_N);
            cpu_axpb(h[0], h[0], 1.0009765625f, 0.125f, GS_N);
        }
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));

        // jacobi-like: d[1] -> d[2] -> d[1]
        for (int k = 0; k < 500 + it; k++) {
            LAUNCH(gsamp_axpb, blocks, 256, 0, s, d[1], d[2], 0.75f, 0.3125f, GS_N);
            LAUNCH(gsamp_mix, blocks, 256, 0, s, d[2], d[0], d[1], GS_N);
            cpu_axpb(h[1], h[2], 0.75f, 0.3125f, GS_N);
            cpu_mix(h[2], h[0], h[1], GS_N);
        }
        CK(cudaStreamSynchronize(s));

        // scan-like: three kernels, then a memset and a copy out
        for (int k = 0; k < 100 + it; k++) {
            LAUNCH(gsamp_axpb, blocks, 256, 0, s, d[0], d[2], 1.5f, 0.0625f, GS_N);
            LAUNCH(gsamp_mix, blocks, 256, 0, s, d[2], d[1], d[0], GS_N);
            LAUNCH(gsamp_axpb, blocks, 256, 0, s, d[1], d[1], 0.5f, 0.25f, GS_N);
            cpu_axpb(h[0], h[2], 1.5f, 0.0625f, GS_N);
            cpu_mix(h[2], h[1], h[0], GS_N);
            cpu_axpb(h[1], h[1], 0.5f, 0.25f, GS_N);
        }
        CK(cudaMemsetAsync(d[2], 0, GS_N * sizeof(float), s));
        memset(h[2], 0, GS_N * sizeof(float));
        CK(cudaMemcpyAsync(out, d[0], GS_N * sizeof(float), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        check_equal(NAME, "scan output", out, h[0], GS_N);
    }

    printf("sample %s\niters %d\n", NAME, iters);
    for (int i = 0; i < 3; i++) {
        CK(cudaMemcpy(out, d[i], GS_N * sizeof(float), cudaMemcpyDeviceToHost));
        check_equal(NAME, "buffer", out, h[i], GS_N);
        print_floats(i == 0 ? "d0" : i == 1 ? "d1" : "d2", out, GS_N);
    }
    print_launches();

    for (int i = 0; i < 3; i++) {
        CK(cudaFree(d[i]));
        free(h[i]);
    }
    CK(cudaFreeHost(out));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return 0;
}
