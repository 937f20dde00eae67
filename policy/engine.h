/*
** engine.h: the engine's entry points, called by the interposer.
*/
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include "../interpose/interpose.h"

/* Once, from gs__init(), after the real driver table is resolved. */
void gs__engine_init(void);
/* At exit: issues held work, writes the report. */
void gs__engine_exit(void);
/* Around fork(): phase 0 before, 1 in the parent after, 2 in the child after. */
void gs__engine_fork(int phase);
/* A kernel launch (row id of the shim).  stream is normalized, app_stream is what
** the program passed; cfg is the cuLaunchKernelEx config or NULL.  Returns what
** the program must see. */
CUresult gs__engine_launch(int id, CUfunction f, const unsigned grid[3], const unsigned block[3],
                           unsigned shmem, CUstream stream, CUstream app_stream, const CUlaunchConfig *cfg,
                           void **params, void **extra);
/* A call that is not an op: resolves the held work it could observe. */
void gs__engine_boundary(const struct gs_call *c);

#endif
