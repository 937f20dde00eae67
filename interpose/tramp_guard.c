/*
** tramp_guard.c: what a trampoline runs around the real function (trampoline.S
** calls both): the guard before it, and after it the guard's trace of the result.
**
** A slot's entry comes from slots.c's table; a slot without a driver function
** (NULL) makes the trampoline return CUDA_ERROR_NOT_FOUND.
*/
#include "interpose.h"
#include "../policy/entry/guard.h"
#include "../policy/base/trace.h"

/* Called by the trampoline before the real function.  Returns it, or NULL. */
__attribute__((visibility("hidden"))) void *gs__tramp_enter(unsigned k)
{
    struct gs_slot *s = &gs__slots[k];

    gs__ensure_init();
    if (GS_LIKELY(s->real) && !gs__tls.depth && s->cls != GS_QUERY) {
        struct gs_call c = {s->row, s->cls, s->name, GS_NONE, 0};
        gs__guard_before(&c);
    }
    return s->real;
}

/* Called by the trampoline after the real function, with its result. */
__attribute__((visibility("hidden"))) void gs__tramp_leave(unsigned k, CUresult rc)
{
    struct gs_slot *s = &gs__slots[k];

    if (gs__trace_on && !gs__tls.depth) {
        struct gs_call c = {s->row, s->cls, s->name, GS_NONE, 0};
        gs__guard_after(&c, rc);
    }
}
