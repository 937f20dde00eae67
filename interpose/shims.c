/*
** shims.c: the typed wrappers generated from hooks.def's GS_HOOK rows.
**
** Each wrapper normalizes its stream, runs the guard, calls its own real pointer
** and hands the result back unchanged.  Calls graphshim makes itself (depth > 0)
** and calls in pass-through mode go straight to the driver.  An allocation
** (GS_ALLOCATE) that the driver refuses with CUDA_ERROR_OUT_OF_MEMORY is made
** once more after graphshim freed memory of its own, and returns what that call
** returns; where graphshim held none, it returns the first answer.
*/
#include "interpose.h"
#include "../policy/entry/guard.h"
#include "../policy/base/trace.h"

#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream)                              \
    GS_EXPORT CUresult abi params                                                           \
    {                                                                                       \
        struct gs_call c_ = {GS_ID_##abi, GS_##cls, #abi, GS_STREAM_OF(stream, pt), 0};     \
        CUresult rc_;                                                                       \
        gs__ensure_init();                                                                  \
        if (GS_UNLIKELY(!gs__real[GS_ID_##abi]))                                            \
            return CUDA_ERROR_NOT_FOUND;                                                    \
        if (GS_UNLIKELY(gs__tls.depth))                                                     \
            return GS_APP(abi) args;                                                       \
        gs__guard_before(&c_);                                                              \
        rc_ = GS_APP(abi) args;                                                            \
        gs__guard_after(&c_, rc_);                                                          \
        return rc_;                                                                         \
    }
#define GS_ALLOCATE(name, abi, ver, pt, params, args, stream)                               \
    GS_EXPORT CUresult abi params                                                           \
    {                                                                                       \
        struct gs_call c_ = {GS_ID_##abi, GS_ALLOC, #abi, GS_STREAM_OF(stream, pt), 0};     \
        CUresult rc_;                                                                       \
        gs__ensure_init();                                                                  \
        if (GS_UNLIKELY(!gs__real[GS_ID_##abi]))                                            \
            return CUDA_ERROR_NOT_FOUND;                                                    \
        if (GS_UNLIKELY(gs__tls.depth))                                                     \
            return GS_APP(abi) args;                                                       \
        gs__guard_before(&c_);                                                              \
        rc_ = GS_APP(abi) args;                                                            \
        if (GS_UNLIKELY(rc_ == CUDA_ERROR_OUT_OF_MEMORY) && gs__guard_out_of_memory())      \
            rc_ = gs__guard_retried(GS_APP(abi) args);                                     \
        gs__guard_after(&c_, rc_);                                                          \
        return rc_;                                                                         \
    }
#define GS_HAND(name, abi, ver, pt, cls)
#define GS_PASS(name, abi, ver, pt, cls)

/* GS_NONE stays GS_NONE; a stream argument (or 0) is normalized by variant. */
#define GS_STREAM_OF(s, pt) (((CUstream)(s)) == GS_NONE ? GS_NONE : gs__norm_stream((CUstream)(s), pt))

#include "hooks.def"
