/*
** guardprog.h: what guardprog's files share.  main.c holds the program (its
** kernels, the helpers below, the scenario lookup); each other file holds the
** scenarios of one subject and ends with their table (gp_SUBJECT[], a NULL
** name last), which main.c searches:
**
**   boundaries.c   what ends a segment: synchronizes, events, host code, frees,
**                  synchronous copies, the legacy stream, captures, a destroy
**   passthrough.c  what is never held: unknown entry points, collectives,
**                  launch attributes graphshim does not know, pauses, queries
**   pace.c         hosts slow, slowing or stalling between launches
**   learning.c     work that repeats rarely, late or never; long sequences
**   params.c       parameters: buffers in turn, layouts of library kernels,
**                  modules and libraries, launch and function attributes
**   polling.c      a host that waits on memory or events with no synchronize
**   memory.c       pageable staging, memory run out, buffers bound to copies
**   threads.c      threads, contexts and default streams
**   steps.c        work that repeats inside a segment, or with other arguments
**   life.c         what a segment's life must keep (steps.c's kernels)
**
** A new scenario goes into its subject's file and table; a new subject's
** table into main.c's list.  The helpers (hidden: guardprog is linked with
** -rdynamic, and the driver and graphshim must not see their names) are
** defined in main.c, those of the step kernels in steps.c.
*/
#ifndef GS_TEST_GUARDPROG_H
#define GS_TEST_GUARDPROG_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/graphshim.h"
#include "../../fakecuda/fakecuda.h"
#include "../cucheck.h"

#define N 64 /* floats of a buffer */
#define W 4  /* words of a step kernel's state (steps.c) */
#define P(ptr) ((CUdeviceptr)(uintptr_t)(ptr))

#pragma GCC visibility push(hidden)

/* A pause of the host, spent on the fake driver's clock (main.c). */
int pause_for(const struct timespec *t, struct timespec *rem);
#define nanosleep pause_for
#define usleep(us) pause_for(&(struct timespec){(us) / 1000000, (us) % 1000000 * 1000}, NULL)

/* The kernels of main.c, loaded in main; the primary context, current in
** main; n, the kernels' element count (N) as a launch argument. */
extern CUfunction k_fill, k_axpb, k_copy, k_setflag, k_nccl, k_bump, k_nccl_mangled;
extern CUcontext ctx;
extern int n;

void launch(CUfunction f, CUstream s, void **args);
void fill(CUstream s, CUdeviceptr x, float v);
void axpb(CUstream s, CUdeviceptr x);
void axpb_shaped(CUstream s, CUdeviceptr x, unsigned block);
void copy(CUstream s, CUdeviceptr dst, CUdeviceptr src);
void show(int it, const char *what, const float *v);
float *pinned(void);
CUdeviceptr dev(void);
void input(CUstream s, CUdeviceptr x, int it);
void prepare(CUstream *s, CUdeviceptr *x, float **out, unsigned flags);

/* The step kernels (steps.c): k_step[op] is step0 to step4. */
extern CUfunction k_step[5], k_fold, k_stepg, k_stepb;
void steps_loop(int iters, const char *name, int nx, CUdeviceptr (*launches)(CUstream, const CUdeviceptr *, int));
void launch_step(CUstream s, int op, CUdeviceptr x, uint64_t v);

struct gp_scenario {
    const char *name;
    void (*fn)(int iters);
};

extern const struct gp_scenario gp_boundaries[], gp_passthrough[], gp_pace[], gp_learning[], gp_params[],
    gp_polling[], gp_memory[], gp_threads[], gp_steps[], gp_life[];

#pragma GCC visibility pop

#endif
