/*
** staging.c: a node's pinned staging buffer (see staging.h).
*/
#include "staging.h"

#include "../base/log.h"

void *gs__staging_get(struct gs_node *n, size_t size)
{
    if (!n->staging && GS_REAL(cuMemAllocHost_v2)(&n->staging, size) != CUDA_SUCCESS)
        n->staging = NULL;
    return n->staging;
}

void gs__staging_free(struct gs_node *n)
{
    if (n->staging) {
        GS_IGNORE(GS_REAL(cuMemFreeHost)(n->staging)); /* a buffer not freed leaks */
        n->staging = NULL;
    }
}
