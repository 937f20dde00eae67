/*
** proc.c: the cuGetProcAddress shims.
**
** Every CUDA runtime (static, shared, library-private) fetches the driver's entry
** points through cuGetProcAddress, including cuGetProcAddress itself: that
** self-lookup must return these shims, or every later lookup escapes.  Each shim
** asks the real driver first and hands its answer, unchanged in status, to
** gs__wrap_proc, which swaps the pointer for the matching wrapper.
*/
#include <string.h>

#include "interpose.h"
#include "../policy/entry/guard.h"

static void wrap(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    if (!pfn || !*pfn || !symbol || gs__tls.depth)
        return;
    if (*pfn == gs__real[GS_ID_cuGetProcAddress_v2])
        *pfn = (void *)&cuGetProcAddress_v2;
    else if (*pfn == gs__real[GS_ID_cuGetProcAddress])
        *pfn = (void *)&cuGetProcAddress;
    else
        *pfn = gs__wrap_proc(symbol, *pfn, version, flags);
}

static void trace(int id, CUresult rc)
{
    struct gs_call c = {id, GS_PROC, gs__rows[id].abi, GS_NONE, 0};
    gs__guard_after(&c, rc);
}

GS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    CUresult rc;

    gs__ensure_init();
    if (!gs__real[GS_ID_cuGetProcAddress])
        return CUDA_ERROR_NOT_FOUND;
    rc = GS_REAL(cuGetProcAddress)(symbol, pfn, version, flags);
    if (rc == CUDA_SUCCESS)
        wrap(symbol, pfn, version, flags);
    trace(GS_ID_cuGetProcAddress, rc);
    return rc;
}

GS_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *status)
{
    CUresult rc;

    gs__ensure_init();
    if (!gs__real[GS_ID_cuGetProcAddress_v2])
        return CUDA_ERROR_NOT_FOUND;
    rc = GS_REAL(cuGetProcAddress_v2)(symbol, pfn, version, flags, status);
    if (rc == CUDA_SUCCESS)
        wrap(symbol, pfn, version, flags);
    trace(GS_ID_cuGetProcAddress_v2, rc);
    return rc;
}
