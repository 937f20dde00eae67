// cublas_gemm: a loop of cublasSgemm (128x128) + an elementwise kernel on a
// created stream, cudaStreamSynchronize after each iteration.
//   Y = A * X           (cuBLAS SGEMM, column major)
//   X = fma(0.9, Y, bias + t(it))   (gsamp_affine, t varies with period 4)
// Checked against a double-precision CPU reference with a tolerance (this
// check is about correctness; bit identity with/without the shim is checked by
// comparing the stdout of runs).
#include "common.cuh"

#include <cublas_v2.h>

static const char* NAME = "cublas_gemm";

#define CB(call)                                                                    \
    do {                                                                            \
        cublasStatus_t st_ = (call);                                                \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                         \
            fprintf(stderr, "%s:%d: %s failed: cublas status %d\n", __FILE__, __LINE__, \
                    #call, (int)st_);                                               \
            exit(2);                                                                \
        }                                                                           \
    } while (0)

static const int M = 128;

__global__ void gsamp_affine(const float* y, const float* bias, float* x, float c, float t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __fmaf_rn(c, y[i], __fadd_rn(bias[i], t));
}

static float t_of(int it) { return (float)((it & 3) - 2) / 16.0f; }

int main(int argc, char** argv)
{
    int iters = iters_arg(argc, argv, 100);
    const int NN = M * M;
    const float C = 0.9f;

    float* hA = (float*)malloc(NN * sizeof(float));
    float* hX = (float*)malloc(NN * sizeof(float));
    float* hBias = (float*)malloc(NN * sizeof(float));
    float* out = (float*)malloc(NN * sizeof(float));
    fill_random(hA, NN, 101);
    fill_random(hX, NN, 102);
    fill_random(hBias, NN, 103);
    for (int i = 0; i < NN; i++) hA[i] *= 0.05f;  // spectral norm ~0.65: contracting
    for (int i = 0; i < NN; i++) hBias[i] *= 0.5f;

    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetStream(h, s));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // plain FP32, no TF32

    float *dA, *dX, *dY, *dBias;
    CK(cudaMalloc(&dA, NN * sizeof(float)));
    CK(cudaMalloc(&dX, NN * sizeof(float)));
    CK(cudaMalloc(&dY, NN * sizeof(float)));
    CK(cudaMalloc(&dBias, NN * sizeof(float)));
    CK(cudaMemcpy(dA, hA, NN * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dX, hX, NN * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dBias, hBias, NN * sizeof(float), cudaMemcpyHostToDevice));

    const float one = 1.0f, zero = 0.0f;
    long long gemms = 0;
    for (int it = 0; it < iters; it++) {
        CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, M, M, &one, dA, M, dX, M, &zero, dY, M));
        gemms++;
        LAUNCH(gsamp_affine, NN / 256, 256, 0, s, dY, dBias, dX, C, t_of(it), NN);
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaMemcpy(out, dX, NN * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference in double
    double* x = (double*)malloc(NN * sizeof(double));
    double* y = (double*)malloc(NN * sizeof(double));
    for (int i = 0; i < NN; i++) x[i] = hX[i];
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < NN; i++) y[i] = 0.0;
        for (int j = 0; j < M; j++)
            for (int k = 0; k < M; k++) {
                double b = x[k + j * M];
                const float* a = hA + k * M;
                double* yc = y + j * M;
                for (int i = 0; i < M; i++) yc[i] += (double)a[i] * b;
            }
        double t = t_of(it);
        for (int i = 0; i < NN; i++) x[i] = (double)C * y[i] + ((double)hBias[i] + t);
    }
    double maxerr = 0.0;
    int worst = 0;
    for (int i = 0; i < NN; i++) {
        double e = fabs((double)out[i] - x[i]);
        if (!(e <= maxerr)) { maxerr = e; worst = i; }  // also catches NaN
    }
    fprintf(stderr, "%s: max abs error vs CPU double reference %.3g\n", NAME, maxerr);
    if (!(maxerr <= 1e-3)) {
        fprintf(stderr, "%s: FAILED: mismatch at [%d]: gpu %.9g cpu %.9g\n", NAME, worst,
                (double)out[worst], x[worst]);
        return 1;
    }

    printf("sample %s\niters %d\n", NAME, iters);
    print_floats("out", out, NN);
    printf("gemms %lld\n", gemms);
    print_launches();

    CB(cublasDestroy(h));
    CK(cudaFree(dA));
    CK(cudaFree(dX));
    CK(cudaFree(dY));
    CK(cudaFree(dBias));
    CK(cudaStreamDestroy(s));
    free(hA); free(hX); free(hBias); free(out); free(x); free(y);
    return 0;
}
