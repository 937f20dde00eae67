/*
** attr.c: the shims of calls that set a function attribute or a context limit.
**
** Such a change can change what held work and built graphs mean, so it is a
** boundary of every stream that drops every graph (class ATTR).  But libraries
** set attributes before launches as a matter of course (PyTorch sets a kernel's
** dynamic shared memory before each of its launches, each launch to its own
** size), and dropping every graph there rebuilds them all at every step.  The
** current value is read first (the matching get call), and:
**   - a set to the current value changes nothing: it passes through as a query;
**   - a raise of the dynamic shared memory limit leaves every held launch valid
**     and changes no result: it passes through as a query;
**   - a lower one would make a held launch that needs more invalid, so held work
**     goes out first, but a built graph was captured and is launched with the
**     limit its launches were issued under, so it stays; a launch over the new
**     limit is never held until a set allows it again (policy/entry/limit.h),
**     so a graph with it replays only after such a set; graphs stay across the
**     preferred shared memory carveout too, a hint;
**   - anything else, or a value that cannot be read, is an ATTR boundary.
** GRAPHSHIM_TEST_DROP_RULE=attr-keep makes every such call an ATTR boundary.
*/
#include "interpose.h"
#include "../policy/entry/engine.h"
#include "../policy/entry/guard.h"
#include "../policy/entry/limit.h"
#include "../policy/base/log.h"

/* Sets the class of c, a set of attribute a (or a limit: a < 0) from cur (rc: the
** result of reading it) to value. */
static void classify(struct gs_call *c, int a, CUresult rc, long long cur, long long value)
{
    if (gs__passthrough || GS_DROPPED(GS_RULE_ATTR_KEEP) || rc != CUDA_SUCCESS)
        return;
    if (cur == value || (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && value > cur))
        c->cls = GS_QUERY;
    else if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || a == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
        c->keep_graphs = 1;
}

/* A set of the dynamic shared memory limit of handle from cur (rc: the result of
** reading it) to value returned success: limit.h notes it. */
static void noted(int a, const void *handle, CUresult rc, long long cur, int value)
{
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && !gs__passthrough)
        gs__smem_limit_set(handle, value, rc != CUDA_SUCCESS || value < cur);
}

/* Runs a set call: READ reads the current value into cur (its result in rc_),
** which classify() weighs.  REAL_CALL is the real call with the program's
** arguments; NOTE runs after it where it returned success. */
#define SET_BODY(abi, getter, attr, value, READ, REAL_CALL, NOTE)                        \
    do {                                                                                \
        struct gs_call c_ = {GS_ID_##abi, GS_ATTR, #abi, GS_NONE, 0};                   \
        CUresult rc_ = CUDA_ERROR_NOT_FOUND, read_;                                     \
        gs__ensure_init();                                                              \
        if (GS_UNLIKELY(!gs__real[GS_ID_##abi]))                                        \
            return CUDA_ERROR_NOT_FOUND;                                                \
        if (gs__tls.depth)                                                              \
            return REAL_CALL;                                                           \
        if (!gs__passthrough && gs__real[GS_ID_##getter])                               \
            rc_ = READ;                                                                 \
        classify(&c_, attr, rc_, (long long)cur, (long long)(value));                  \
        gs__guard_before(&c_);                                                          \
        read_ = rc_;                                                                    \
        if ((rc_ = REAL_CALL) == CUDA_SUCCESS)                                          \
            NOTE;                                                                       \
        gs__guard_after(&c_, rc_);                                                      \
        return rc_;                                                                     \
    } while (0)

GS_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value)
{
    int cur = 0;
    SET_BODY(cuFuncSetAttribute, cuFuncGetAttribute, (int)a, value, GS_REAL(cuFuncGetAttribute)(&cur, a, f),
             GS_APP(cuFuncSetAttribute)(f, a, value), noted((int)a, f, read_, cur, value));
}

/* A kernel is launched by its handle or by its function in a context: both are
** noted (the current context's; where it cannot be read, the kernel's alone). */
static void kernel_noted(int a, CUkernel k, CUresult rc, long long cur, int value)
{
    CUfunction f;

    noted(a, k, rc, cur, value);
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && gs__real[GS_ID_cuKernelGetFunction] &&
        GS_REAL(cuKernelGetFunction)(&f, k) == CUDA_SUCCESS)
        noted(a, f, rc, cur, value);
}

GS_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute a, int value, CUkernel k, CUdevice dev)
{
    int cur = 0;
    SET_BODY(cuKernelSetAttribute, cuKernelGetAttribute, (int)a, value,
             GS_REAL(cuKernelGetAttribute)(&cur, a, k, dev), GS_APP(cuKernelSetAttribute)(a, value, k, dev),
             kernel_noted((int)a, k, read_, cur, value));
}

GS_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    size_t cur = 0;
    SET_BODY(cuCtxSetLimit, cuCtxGetLimit, -1, value, GS_REAL(cuCtxGetLimit)(&cur, limit),
             GS_APP(cuCtxSetLimit)(limit, value), (void)read_);
}
