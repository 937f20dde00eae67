/*
** interpose.h: what the interposer's files share (the floor above driver/).
**
** The rows of hooks.def also become a table of row descriptions (gs__rows); the
** wrapper each row hands a program is lookup.c's.  Trampolines (trampoline.S,
** slots.c, tramp_guard.c) carry the entry points that have no typed wrapper.
**
** The files use one another in one direction only, lowest first:
**   rows.c, libcuda.c   the rows as data; the real dlsym and libcuda
**   slots.c             the trampoline slots' table
**   test_fault.c        the test build's failing graph calls (GRAPHSHIM_TEST_FAULT)
**   test_own.c          and its failing own calls of any row (GRAPHSHIM_TEST_OWN_FAIL)
**   cov_dump.c          the coverage build's counters, written before a signal ends it
**   init.c              initialization (fills the driver table and the slots)
**   shims.c, attr.c, copy.c, event.c, launch.c, tramp_guard.c
**                       the wrappers' bodies, each calling gs__ensure_init
**   trampoline.S        the stubs, calling tramp_guard.c
**   lookup.c            the wrapper of every row; answers; cuGetProcAddress
**   dlsym.c, api.c      the dlsym hook; gs_pause and gs_resume
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
};

/* The rows (rows.c). */
extern const struct gs_row gs__rows[GS_NROWS];

/* The real dlsym and the driver's library (libcuda.c). */
extern void *(*gs__real_dlsym)(void *, const char *);
void gs__resolve_dlsym(void);                           /* finds gs__real_dlsym */
void *gs__dlsym_real(void *handle, const char *name);   /* the real dlsym's answer */
extern void *gs__libcuda;
void *gs__libcuda_open(void);                           /* sets gs__libcuda; NULL: dlerror() */
int gs__libcuda_loaded(void);
/* Is p an address inside the loaded libcuda? */
int gs__in_libcuda(const void *p);

/* Trampoline slots (slots.c): slot k's entry point, for tramp_guard.c. */
#include "nslots.h"
struct gs_slot {
    void *real;         /* the driver's function; NULL: missing */
    int cls;            /* enum gs_class */
    int row;            /* hooks.def row, or -1 */
    char name[72];      /* entry point name, for the trace */
};
extern struct gs_slot gs__slots[];
void gs__slots_init(void);
int gs__slot_claim(const char *name, void *real, int cls);
/* The stubs (trampoline.S): slot k's is at gs__tramp_base + 16*k. */
extern char gs__tramp_base[];

/* The test build only: swaps the graph calls GRAPHSHIM_TEST_FAULT names for
** failing ones (test_fault.c). */
void gs__test_faults_install(void);
/* test_fault.c's parts that test_own.c uses: the items of a comma list, and
** one ENTRY:CALLS:CODE (spec keeps ENTRY; 0, or -1 where it is not one). */
void gs__test_each_item(const char *name, const char *v, void (*item)(char *tok));
int gs__test_fault_parse(char *spec, unsigned long *first, unsigned long *last, CUresult *code);
void gs__test_own_install(void);    /* test_own.c: GRAPHSHIM_TEST_OWN_FAIL */
void gs__test_own_counts(void);     /* test_own.c: GRAPHSHIM_TEST_OWN_COUNTS, at exit */
void gs__test_clock_install(void);  /* test_clock.c: GRAPHSHIM_TEST_CLOCK */
void gs__test_alloc_stop(void);     /* test_alloc.c: no allocation fails from here on */

/* Initialization (init.c).  gs__ready is set once the real driver's table is
** resolved; gs__init() is idempotent and thread-safe. */
void gs__init(void);
static inline void gs__ensure_init(void)
{
    if (GS_UNLIKELY(!atomic_load_explicit(&gs__ready, memory_order_acquire)))
        gs__init();
}

/* Lookup (lookup.c): what a program gets for a driver symbol it obtained
** through dlsym or cuGetProcAddress.  real is the driver's pointer. */
void *gs__wrap_symbol(const char *abi, void *real);
void *gs__wrap_proc(const char *name, void *real, int version, cuuint64_t flags);
/* The trampoline of an entry point without a row (real once slots run out). */
void *gs__slot_for(const char *name, void *real, int cls);

/* The dlsym hook (dlsym.c): dlsym for any handle but RTLD_NEXT. */
void *gs__dlsym(void *handle, const char *name);

#endif
