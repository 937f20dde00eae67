/*
** cucheck.h: CHECK(call) for the driver-API test programs: a call that does not
** return CUDA_SUCCESS prints where and what, and exits 1; seeded_words(), a
** device buffer of words that depend on a seed.
*/
#ifndef GS_TEST_CUCHECK_H
#define GS_TEST_CUCHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        CUresult rc_ = (call);                                                       \
        if (rc_ != CUDA_SUCCESS) {                                                   \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)rc_); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* A new device buffer of n (at most 64) words, each its own from seed. */
static inline CUdeviceptr seeded_words(uint64_t seed, int n)
{
    uint64_t v[64];
    CUdeviceptr p;

    for (int w = 0; w < n && w < 64; w++)
        v[w] = (seed * (uint64_t)n + (uint64_t)w + 1) * 0x9e3779b97f4a7c15ull;
    CHECK(cuMemAlloc_v2(&p, (size_t)n * sizeof *v));
    CHECK(cuMemcpyHtoD_v2(p, v, (size_t)n * sizeof *v));
    return p;
}

#endif
