/*
** limit.h: the dynamic shared memory limits the program lowered.
**
** A launch is held only where its structure already ran eagerly, so that a
** launch the driver refuses fails at its own call (docs/graphing.md).  A set
** that lowers a function's dynamic shared memory limit keeps the learned
** sequences and graphs (interpose/attr.c), and a launch learned under the
** higher limit would then be held although the driver now refuses it: such a
** launch, of a function whose limit was lowered below what it asks, is never
** held.  It goes out after what its stream holds and fails as without
** graphshim; once a set allows it again it is held again.
*/
#ifndef GS_LIMIT_H
#define GS_LIMIT_H

#include <limits.h>
#include <stdatomic.h>

#include "../../driver/ops.h"

/* The lowest limit noted (UINT_MAX: none): launches that ask no more never
** look further. */
extern _Atomic unsigned gs__smem_floor;

/* A set of handle's (a CUfunction, or a CUkernel's) dynamic shared memory
** limit to value returned success: lowered (or from a value unread) it is
** noted; raised, a noted limit follows. */
void gs__smem_limit_set(const void *handle, int value, int lowered);
int gs__smem_refused_slow(const struct gs_launch *a);

/* Nonzero where launch a asks more dynamic shared memory than its function's
** lowered limit allows. */
static inline int gs__smem_refused(const struct gs_launch *a)
{
    return __builtin_expect(a->shmem > atomic_load_explicit(&gs__smem_floor, memory_order_relaxed), 0) &&
           gs__smem_refused_slow(a);
}

#endif
