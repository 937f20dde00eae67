/*
** slots.c: the trampoline slots' table (see trampoline.S).
**
** Slot k is the stub at gs__tramp_base + 16*k.  The first GS_NNAMED slots are the
** exported stubs of hooks.def's GS_PASS rows and of cuda.h's other entry points;
** the rest are handed out at run time, one per distinct real pointer, for entry
** points obtained through dlsym or cuGetProcAddress.  Handing out takes a mutex
** (it happens once per entry point); using a slot takes none.
**
** This file keeps the table and says which slot an entry point has; it names no
** stub, so initialization can fill it.  The guard a stub runs is tramp_guard.c's,
** the stub's address for a slot lookup.c's (gs__slot_for).
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "interpose.h"
#include "../policy/base/log.h"

/* The driver names of cuda.h that hooks.def does not list (generated). */
static const char *const driver_names[] = {
#define GS_DRIVER(abi) #abi,
#include "driver_names.def"
#undef GS_DRIVER
};
#define GS_NDRIVER ((int)(sizeof driver_names / sizeof driver_names[0]))
#define GS_NNAMED (GS_NPASS + GS_NDRIVER)
#define GS_NALL (GS_NNAMED + GS_NSLOTS)

struct gs_slot gs__slots[GS_NALL];
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
        gs__slots[k].real = gs__real[i];
        gs__slots[k].cls = gs__rows[i].cls;
        gs__slots[k].row = i;
        snprintf(gs__slots[k].name, sizeof gs__slots[k].name, "%s", gs__rows[i].abi);
    }
    for (int j = 0; j < GS_NDRIVER; j++, k++) {
        gs__slots[k].real = gs__libcuda ? gs__real_dlsym(gs__libcuda, driver_names[j]) : NULL;
        gs__slots[k].cls = GS_UNCLASSIFIED;
        gs__slots[k].row = -1;
        snprintf(gs__slots[k].name, sizeof gs__slots[k].name, "%s", driver_names[j]);
    }
}

/* The slot of entry point name at real (cls: its class), handed out if it has
** none yet; -1 once all GS_NSLOTS are taken (a warning, once). */
int gs__slot_claim(const char *name, void *real, int cls)
{
    static int warned;
    int k;

    pthread_mutex_lock(&slots_lock);
    for (k = GS_NNAMED; k < nslots; k++)
        if (gs__slots[k].real == real && strcmp(gs__slots[k].name, name) == 0)
            break;
    if (k == nslots && nslots < GS_NALL) {
        gs__slots[k].real = real;
        gs__slots[k].cls = cls;
        gs__slots[k].row = -1;
        snprintf(gs__slots[k].name, sizeof gs__slots[k].name, "%s", name);
        nslots++;
    }
    if (k == nslots) {
        k = -1;
        if (!warned++)
            gs__warn("more than %d distinct driver entry points: %s and later ones run unguarded", GS_NSLOTS, name);
    }
    pthread_mutex_unlock(&slots_lock);
    return k;
}
