/*
** cucheck.h: CHECK(call) for the driver-API test programs: a call that does not
** return CUDA_SUCCESS prints where and what, and exits 1.
*/
#ifndef GS_TEST_CUCHECK_H
#define GS_TEST_CUCHECK_H

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

#endif
