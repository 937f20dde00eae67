/*
** attr.c: the shims of calls that set a function attribute or a context limit.
**
** Such a change can change what held work and built graphs mean, so it is a
** boundary of every stream that drops every graph (class ATTR).  But libraries
** set attributes before launches as a matter of course, to the value they
** already have (PyTorch sets a kernel's dynamic shared memory before each of
** its launches): a set to the current value, read first from the driver,
** changes nothing and passes through as a query does.  Where the current value
** cannot be read, the call is an ATTR boundary as before.
*/
#include "interpose.h"
#include "../policy/engine.h"
#include "../policy/guard.h"

/* Runs a set call: a query if `same` (the value is already the current one),
** an ATTR boundary otherwise.  REAL_CALL is the real call with the program's
** arguments. */
#define SET_BODY(abi, same, REAL_CALL)                                                   \
    do {                                                                                \
        struct gs_call c_ = {GS_ID_##abi, GS_ATTR, #abi, GS_NONE};                      \
        CUresult rc_;                                                                   \
        gs__ensure_init();                                                              \
        if (GS_UNLIKELY(!gs__real[GS_ID_##abi]))                                        \
            return CUDA_ERROR_NOT_FOUND;                                                \
        if (gs__tls.depth)                                                              \
            return REAL_CALL;                                                           \
        if (!gs__passthrough && !GS_DROPPED(GS_RULE_ATTR_SAME) && (same))               \
            c_.cls = GS_QUERY;                                                          \
        gs__guard_before(&c_);                                                          \
        rc_ = REAL_CALL;                                                                \
        gs__guard_after(&c_, rc_);                                                      \
        return rc_;                                                                     \
    } while (0)

GS_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value)
{
    int cur;
    SET_BODY(cuFuncSetAttribute,
             gs__real[GS_ID_cuFuncGetAttribute] &&
                 GS_REAL(cuFuncGetAttribute)(&cur, a, f) == CUDA_SUCCESS && cur == value,
             GS_REAL(cuFuncSetAttribute)(f, a, value));
}

GS_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute a, int value, CUkernel k, CUdevice dev)
{
    int cur;
    SET_BODY(cuKernelSetAttribute,
             gs__real[GS_ID_cuKernelGetAttribute] &&
                 GS_REAL(cuKernelGetAttribute)(&cur, a, k, dev) == CUDA_SUCCESS && cur == value,
             GS_REAL(cuKernelSetAttribute)(a, value, k, dev));
}

GS_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    size_t cur;
    SET_BODY(cuCtxSetLimit,
             gs__real[GS_ID_cuCtxGetLimit] &&
                 GS_REAL(cuCtxGetLimit)(&cur, limit) == CUDA_SUCCESS && cur == value,
             GS_REAL(cuCtxSetLimit)(limit, value));
}
