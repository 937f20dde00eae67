/*
** copy.c: the shims of asynchronous copies and memsets (ops the engine may
** hold): each fills in the op as the program made it (driver/ops.h) and hands
** it to the engine's door, gs__engine_copy (policy/entry/copy.c), which keys
** it, holds it or issues it.
*/
#include "interpose.h"
#include "../policy/entry/engine.h"
#include "../policy/base/trace.h"

/* Copy or memset op through the shim of row id (pt: a per-thread default
** stream variant): straight to the driver while the engine is off and nothing
** is traced, or in a call graphshim makes itself; else to the engine. */
static inline CUresult door(int id, int pt, const struct gs_copy *op)
{
    gs__ensure_init();
    if (GS_UNLIKELY(!gs__real[id]))
        return CUDA_ERROR_NOT_FOUND;
    if (gs__tls.depth || (gs__passthrough && !gs__trace_on))
        return gs__copy_real(id, op);
    return gs__engine_copy(&(struct gs_call){id, gs__rows[id].cls, gs__rows[id].abi, gs__norm_stream(op->stream, pt), 0},
                           op);
}

#define COPY(id, pt, form, dst, src, n, h) \
    return door(id, pt, &(struct gs_copy){form, (uint64_t)(uintptr_t)(dst), (uint64_t)(uintptr_t)(src), n, 0, h})
#define MEMSET(id, pt, form, dst, v, n, h) return door(id, pt, &(struct gs_copy){form, dst, 0, n, v, h})

GS_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyHtoDAsync_v2, 0, GS_COPY_HTOD, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyHtoDAsync_v2_ptsz, 1, GS_COPY_HTOD, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyDtoHAsync_v2, 0, GS_COPY_DTOH, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyDtoHAsync_v2_ptsz, 1, GS_COPY_DTOH, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyDtoDAsync_v2, 0, GS_COPY_DTOD, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyDtoDAsync_v2_ptsz, 1, GS_COPY_DTOD, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyAsync, 0, GS_COPY_ANY, dst, src, n, h);
}
GS_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    COPY(GS_ID_cuMemcpyAsync_ptsz, 1, GS_COPY_ANY, dst, src, n, h);
}
GS_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD8Async, 0, GS_SET_D8, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD8Async_ptsz, 1, GS_SET_D8, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD16Async, 0, GS_SET_D16, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD16Async_ptsz, 1, GS_SET_D16, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD32Async, 0, GS_SET_D32, dst, v, n, h);
}
GS_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    MEMSET(GS_ID_cuMemsetD32Async_ptsz, 1, GS_SET_D32, dst, v, n, h);
}
