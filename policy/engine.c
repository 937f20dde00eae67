/*
** engine.c: the engine's entry points.
**
** This first engine holds nothing: every op is issued at once, exactly as the
** program issued it.  It is the pass-through that learning, holding and replay
** (DESIGN.md section 3) build on.
*/
#include "engine.h"

#include "guard.h"
#include "report.h"

void gs__engine_init(void) {}

void gs__engine_exit(void)
{
    gs__report_write();
}

void gs__engine_fork(int phase)
{
    (void)phase;
}

CUresult gs__engine_launch(int id, CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                           CUstream stream, CUstream app_stream, const CUlaunchConfig *cfg, void **params,
                           void **extra)
{
    (void)stream;
    atomic_fetch_add_explicit(&gs__calls_by_class[GS_LAUNCH], 1, memory_order_relaxed);
    if (cfg)
        return ((__typeof__(&cuLaunchKernelEx))gs__real[id])(cfg, f, params, extra);
    return ((__typeof__(&cuLaunchKernel))gs__real[id])(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                                        shmem, app_stream, params, extra);
}

void gs__engine_boundary(const struct gs_call *c)
{
    (void)c;
}
