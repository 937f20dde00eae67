/*
** launch.c: the kernel-launch shims (cuLaunchKernel, cuLaunchKernelEx and their
** per-thread variants).
**
** Launches are the hot path: with the engine off and no trace, a shim costs one
** load of the ready flag, a thread-local test and the call.  Otherwise the launch
** goes to the engine (engine.h), and the trace names the kernel.
*/
#include "interpose.h"
#include "../policy/entry/engine.h"
#include "../policy/base/trace.h"

static void trace_launch(const char *abi, CUfunction f, const unsigned grid[3], const unsigned block[3],
                         CUstream stream, CUresult rc)
{
    gs__tls.depth++;
    gs__trace_line(gs__tid(), abi, stream, rc, gs__engine_kernel_name(f), grid, block, NULL);
    gs__tls.depth--;
}

/* A launch through the shim of row id (ex: cuLaunchKernelEx's form; pt: a
** per-thread default stream variant): straight to the driver while the engine is
** off, else to the engine. */
static inline CUresult launch(int id, int ex, int pt, const struct gs_launch *a, CUstream hStream)
{
    CUresult rc;
    CUstream s;

    gs__ensure_init();
    if (GS_UNLIKELY(!gs__real[id]))
        return CUDA_ERROR_NOT_FOUND;
    if (GS_LIKELY(gs__passthrough && !gs__trace_on) || gs__tls.depth || (ex && !a->cfg))
        return gs__launch_real(id, ex, a, hStream);
    s = gs__norm_stream(hStream, pt);
    rc = gs__engine_launch(id, a, s, hStream);
    if (gs__trace_on)
        trace_launch(gs__rows[id].abi, a->f, a->grid, a->block, s, rc);
    return rc;
}

GS_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shmem, CUstream hStream, void **params, void **extra)
{
    const struct gs_launch a = {f, {gx, gy, gz}, {bx, by, bz}, shmem, !extra, NULL, params, extra};
    return launch(GS_ID_cuLaunchKernel, 0, 0, &a, hStream);
}

GS_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                       unsigned by, unsigned bz, unsigned shmem, CUstream hStream, void **params,
                                       void **extra)
{
    const struct gs_launch a = {f, {gx, gy, gz}, {bx, by, bz}, shmem, !extra, NULL, params, extra};
    return launch(GS_ID_cuLaunchKernel_ptsz, 0, 1, &a, hStream);
}

/* cuLaunchKernelEx: without a config, straight to the driver (which says what is
** wrong with it). */
static CUresult launch_ex(int id, int pt, const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    struct gs_launch a = {f, {0, 0, 0}, {0, 0, 0}, 0, 0, cfg, params, extra};

    if (cfg) {
        a.grid[0] = cfg->gridDimX, a.grid[1] = cfg->gridDimY, a.grid[2] = cfg->gridDimZ;
        a.block[0] = cfg->blockDimX, a.block[1] = cfg->blockDimY, a.block[2] = cfg->blockDimZ;
        a.shmem = cfg->sharedMemBytes;
        a.plain = !cfg->numAttrs && !extra;
    }
    return launch(id, 1, pt, &a, cfg ? cfg->hStream : NULL);
}

GS_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(GS_ID_cuLaunchKernelEx, 0, cfg, f, params, extra);
}

GS_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(GS_ID_cuLaunchKernelEx_ptsz, 1, cfg, f, params, extra);
}
