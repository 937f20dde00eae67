/*
** slots.c: trampoline slots (see trampoline.S).
**
** Slot k is the stub at gs__tramp_base + 16*k.  The first GS_NNAMED slots are the
** exported stubs of hooks.def's GS_PASS rows and of cuda.h's other entry points;
** the rest are handed out at run time, one per distinct real pointer, for entry
** points obtained through dlsym or cuGetProcAddress.  Handing out takes a mutex
** (it happens once per entry point); using a slot takes none.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "interpose.h"
#include "../policy/entry/guard.h"
#include "../policy/base/log.h"
#include "../policy/base/trace.h"

/* The driver names of cuda.h that hooks.def does not list (generated). */
static const char *const driver_names[] = {
#define GS_DRIVER(abi) #abi,
#include "driver_names.def"
#undef GS_DRIVER
};
#define GS_NDRIVER ((int)(sizeof driver_names / sizeof driver_names[0]))
#define GS_NNAMED (GS_NPASS + GS_NDRIVER)
#define GS_NALL (GS_NNAMED + GS_NSLOTS)

struct gs_slot {
    void *real;         /* the driver's function; NULL: missing */
    int cls;            /* enum gs_class */
    int row;            /* hooks.def row, or -1 */
    char name[72];      /* entry point name, for the trace */
};

extern char gs__tramp_base[];
static struct gs_slot slots[GS_NALL];
static int nslots = GS_NNAMED;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

void gs__slots_init(void)
{
    int k = 0;

    static const short pass_rows[GS_NPASS] = {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream)
#define GS_HAND(name, abi, ver, pt, cls)
#define GS_PASS(name, abi, ver, pt, cls) GS_ID_##abi,
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
    };

    for (; k < GS_NPASS; k++) {
        int i = pass_rows[k];
        slots[k].real = gs__real[i];
        slots[k].cls = gs__rows[i].cls;
        slots[k].row = i;
        snprintf(slots[k].name, sizeof slots[k].name, "%s", gs__rows[i].abi);
    }
    for (int j = 0; j < GS_NDRIVER; j++, k++) {
        slots[k].real = gs__libcuda ? gs__real_dlsym(gs__libcuda, driver_names[j]) : NULL;
        slots[k].cls = GS_UNCLASSIFIED;
        slots[k].row = -1;
        snprintf(slots[k].name, sizeof slots[k].name, "%s", driver_names[j]);
    }
}

void *gs__slot_for(const char *name, void *real, int cls)
{
    static int warned;
    void *stub = real;
    int k;

    pthread_mutex_lock(&slots_lock);
    for (k = GS_NNAMED; k < nslots; k++)
        if (slots[k].real == real && strcmp(slots[k].name, name) == 0)
            break;
    if (k == nslots && nslots < GS_NALL) {
        slots[k].real = real;
        slots[k].cls = cls;
        slots[k].row = -1;
        snprintf(slots[k].name, sizeof slots[k].name, "%s", name);
        nslots++;
    }
    if (k < nslots)
        stub = gs__tramp_base + 16 * k;
    else if (!warned++)
        gs__warn("more than %d distinct driver entry points: %s and later ones run unguarded", GS_NSLOTS, name);
    pthread_mutex_unlock(&slots_lock);
    return stub;
}

/* Called by the trampoline before the real function.  Returns it, or NULL. */
__attribute__((visibility("hidden"))) void *gs__tramp_enter(unsigned k)
{
    struct gs_slot *s = &slots[k];

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
    struct gs_slot *s = &slots[k];

    if (gs__trace_on && !gs__tls.depth) {
        struct gs_call c = {s->row, s->cls, s->name, GS_NONE, 0};
        gs__guard_after(&c, rc);
    }
}
