/*
** launch.c: the kernel-launch shims (cuLaunchKernel, cuLaunchKernelEx and their
** per-thread variants).
**
** Launches are the hot path: with the engine off and no trace, a shim costs one
** load of the ready flag, a thread-local test and the call.  Otherwise the launch
** goes to the engine (engine.h), and the trace names the kernel.
*/
#include "interpose.h"
#include "../policy/engine.h"
#include "../policy/trace.h"

/* The kernel's name, for the trace.  A CUkernel passed as a CUfunction is named
** by cuKernelGetName. */
static const char *kernel_name(CUfunction f)
{
    const char *name = NULL;

    if (gs__real[GS_ID_cuFuncGetName] && GS_REAL(cuFuncGetName)(&name, f) == CUDA_SUCCESS && name)
        return name;
    if (gs__real[GS_ID_cuKernelGetName] && GS_REAL(cuKernelGetName)(&name, (CUkernel)f) == CUDA_SUCCESS && name)
        return name;
    return "?";
}

static void trace_launch(const char *abi, CUfunction f, const unsigned grid[3], const unsigned block[3],
                         CUstream stream, CUresult rc)
{
    gs__tls.depth++;
    gs__trace_line(gs__tid(), abi, stream, rc, kernel_name(f), grid, block, NULL);
    gs__tls.depth--;
}

static CUresult launch(int id, int pt, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream hStream, void **params, void **extra)
{
    CUresult rc;
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};

    gs__ensure_init();
    if (GS_UNLIKELY(!gs__real[id]))
        return CUDA_ERROR_NOT_FOUND;
    if (GS_LIKELY(gs__passthrough && !gs__trace_on) || gs__tls.depth)
        return ((__typeof__(&cuLaunchKernel))gs__real[id])(f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra);
    rc = gs__engine_launch(id, f, grid, block, shmem, gs__norm_stream(hStream, pt), hStream, NULL, params, extra);
    if (gs__trace_on)
        trace_launch(gs__rows[id].abi, f, grid, block, gs__norm_stream(hStream, pt), rc);
    return rc;
}

GS_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shmem, CUstream hStream, void **params, void **extra)
{
    return launch(GS_ID_cuLaunchKernel, 0, f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra);
}

GS_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                       unsigned by, unsigned bz, unsigned shmem, CUstream hStream, void **params,
                                       void **extra)
{
    return launch(GS_ID_cuLaunchKernel_ptsz, 1, f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra);
}

static CUresult launch_ex(int id, int pt, const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    CUresult rc;
    unsigned grid[3], block[3];
    CUstream s;

    gs__ensure_init();
    if (GS_UNLIKELY(!gs__real[id]))
        return CUDA_ERROR_NOT_FOUND;
    if (GS_LIKELY(gs__passthrough && !gs__trace_on) || gs__tls.depth || !cfg)
        return ((__typeof__(&cuLaunchKernelEx))gs__real[id])(cfg, f, params, extra);
    grid[0] = cfg->gridDimX, grid[1] = cfg->gridDimY, grid[2] = cfg->gridDimZ;
    block[0] = cfg->blockDimX, block[1] = cfg->blockDimY, block[2] = cfg->blockDimZ;
    s = gs__norm_stream(cfg->hStream, pt);
    rc = gs__engine_launch(id, f, grid, block, cfg->sharedMemBytes, s, cfg->hStream, cfg, params, extra);
    if (gs__trace_on)
        trace_launch(gs__rows[id].abi, f, grid, block, s, rc);
    return rc;
}

GS_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(GS_ID_cuLaunchKernelEx, 0, cfg, f, params, extra);
}

GS_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(GS_ID_cuLaunchKernelEx_ptsz, 1, cfg, f, params, extra);
}
