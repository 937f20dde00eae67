/*
** guard.h: the guard layer, called by every wrapper around the real driver call.
*/
#ifndef GS_GUARD_H
#define GS_GUARD_H

#include "../../driver/driver.h"

/* Runs before the real call: resolves whatever held work the call could observe
** or enqueue behind, by the call's class (docs/names.md). */
void gs__guard_before(const struct gs_call *c);
/* Runs after the real call with its result: trace and counters. */
void gs__guard_after(const struct gs_call *c, CUresult rc);

/* An allocation of the program's failed with CUDA_ERROR_OUT_OF_MEMORY:
** frees the memory graphshim holds (stream/release.h).  Nonzero where it freed
** some and the call is to be made once more, its result then handed to
** gs__guard_retried(), which counts it and returns it unchanged; 0 where
** nothing was held (the engine off, the program capturing a stream, or no
** graph or staging buffer alive): the failure stands as it is. */
int gs__guard_out_of_memory(void);
CUresult gs__guard_retried(CUresult rc);

/* The names of classes and the calls counted by class: base/names.h. */
#include "../base/names.h"

#endif
