// check.cuh: CK(call) for the benchmark programs: a CUDA runtime call that fails
// prints where and why, and exits 1; CU(call) the same for a driver call.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define CU(x)                                                                          \
    do {                                                                               \
        CUresult r_ = (x);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, __LINE__, #x, (int)r_); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)
