/*
** interpose.h: what the interposer's files share (the floor above driver/).
**
** The rows of hooks.def also become a table of row descriptions (gs__rows) with
** the wrapper each program gets.  Trampolines (trampoline.S, slots.c) carry the
** entry points that have no typed wrapper.
*/
#ifndef GS_INTERPOSE_H
#define GS_INTERPOSE_H

#include "../driver/driver.h"

/* Number of GS_PASS rows: their trampolines are slots 0 .. GS_NPASS-1. */
enum {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream)
#define GS_HAND(name, abi, ver, pt, cls)
#define GS_PASS(name, abi, ver, pt, cls) GS_PASSNO_##abi,
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
    GS_NPASS
};

struct gs_row {
    const char *name;    /* base name, as cuGetProcAddress is asked */
    const char *abi;     /* exported symbol */
    int version;         /* CUDA version that introduced the variant */
    unsigned char pt;    /* per-thread-default-stream variant */
    unsigned char cls;   /* enum gs_class */
    void *wrapper;       /* what the program gets: typed wrapper or trampoline */
};

extern const struct gs_row gs__rows[GS_NROWS];

/* Initialization (init.c).  gs__ready is set once the real driver's table is
** resolved; gs__init() is idempotent and thread-safe. */
void gs__init(void);
static inline void gs__ensure_init(void)
{
    if (GS_UNLIKELY(!atomic_load_explicit(&gs__ready, memory_order_acquire)))
        gs__init();
}
/* The real dlsym and the driver's handle. */
extern void *(*gs__real_dlsym)(void *, const char *);
void gs__resolve_dlsym(void);                           /* finds gs__real_dlsym */
void *gs__dlsym_real(void *handle, const char *name);   /* the real dlsym's answer */
void *gs__dlsym(void *handle, const char *name);        /* the hook, but for RTLD_NEXT */
int gs__libcuda_loaded(void);
extern void *gs__libcuda;
/* Is p an address inside the loaded libcuda? */
int gs__in_libcuda(const void *p);

/* Lookup (lookup.c): what a program gets for a driver symbol it obtained
** through dlsym or cuGetProcAddress.  real is the driver's pointer. */
void *gs__wrap_symbol(const char *abi, void *real);
void *gs__wrap_proc(const char *name, void *real, int version, cuuint64_t flags);

/* Trampoline slots (slots.c). */
#include "nslots.h"
void *gs__slot_for(const char *name, void *real, int cls);
void gs__slots_init(void);

#endif
