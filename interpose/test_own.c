/*
** test_own.c: failures of any of graphshim's own driver calls, for the test
** build only ($(BUILD)/test/libgraphshim.so, -DGS_TEST).
**
** FAKECUDA_FAIL counts every call of an entry point, the program's and
** graphshim's: an entry point the program calls too cannot be failed for
** graphshim alone.  In the test build every call graphshim makes for itself
** (GS_REAL, driver/driver.h) asks gs__test_own for its pointer, which counts
** it per row; and the test build reads
**
**     GRAPHSHIM_TEST_OWN_FAIL=ENTRY:CALLS:CODE[,ENTRY:CALLS:CODE...]
**
** at initialization, as GRAPHSHIM_TEST_FAULT (test_fault.c), but where ENTRY
** is any row of hooks.def and CALLS counts graphshim's own calls of it alone,
** over all threads from 1.  A failing call returns CODE without reaching the
** driver; the first of each item says so on standard error ("graphshim:
** injected own-call failure N of ENTRY"), the mark the fuzzer counts.
**
** The failure is a stub without parameters called through the row's type:
** on x86-64 (System V) and AArch64 the caller passes the arguments in
** registers and on its own stack, and clears them itself, so a callee that
** reads none returns its CUresult safely.  The end of a capture has a stub of
** its own type: the driver ends a capture whose end fails, so a failing end
** ends it too and returns no graph.
**
**     GRAPHSHIM_TEST_OWN_COUNTS=PATH
**
** writes at exit (init.c) one line "ENTRY N" per row that graphshim called
** N > 0 times, from which the fuzzer draws its faults (fuzz_settings.c).  The
** library users run has none of this: the file compiles to nothing without
** GS_TEST, and GS_REAL reads gs__real alone.
*/
#ifdef GS_TEST
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interpose.h"
#include "../policy/base/log.h"

static atomic_ulong calls[GS_NROWS]; /* graphshim's own calls of each row */

/* The items of GRAPHSHIM_TEST_OWN_FAIL: row id's calls first..last fail
** (last: ULONG_MAX for N+).  Written at initialization alone. */
#define NOWN 8
static struct own_fault {
    int id;
    unsigned long first, last;
    CUresult code;
    atomic_int told;
} faults[NOWN];
static int nfaults;
static pid_t counts_pid; /* the process that writes the counts (not a child) */

static void end_capture(CUstream s, CUgraph *g)
{
    if (GS_APP(cuStreamEndCapture)(s, g) == CUDA_SUCCESS && *g)
        GS_IGNORE(GS_APP(cuGraphDestroy)(*g)); /* a graph not destroyed leaks */
    *g = NULL;
}

/* Item k's stubs: any row's, and the end of a capture's. */
#define OWN_ITEMS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define OWN_STUB(k)                                                                                         \
    static CUresult fail_##k(void) { return faults[k].code; }                                              \
    static CUresult fail_end_##k(CUstream s, CUgraph *g)                                                   \
    {                                                                                                      \
        end_capture(s, g);                                                                                 \
        return faults[k].code;                                                                             \
    }
OWN_ITEMS(OWN_STUB)
static void *const stubs[NOWN][2] = {
#define OWN_STUB_ROW(k) {(void *)fail_##k, (void *)fail_end_##k},
    OWN_ITEMS(OWN_STUB_ROW)
};
_Static_assert(sizeof stubs / sizeof stubs[0] == NOWN, "a pair of stubs per item");

/* Says once per item, without allocating, that it failed call n. */
static void tell(struct own_fault *f, unsigned long n)
{
    char msg[160];
    int len;

    if (atomic_exchange(&f->told, 1))
        return;
    len = snprintf(msg, sizeof msg, "graphshim: injected own-call failure %lu of %s (error %d)\n", n,
                   gs__rows[f->id].abi, (int)f->code);
    if (len > 0 && write(2, msg, (size_t)len) < 0) {
        /* standard error closed: the failure stands unsaid */
    }
}

/* driver.h */
void *gs__test_own(int id)
{
    unsigned long n = atomic_fetch_add_explicit(&calls[id], 1, memory_order_relaxed) + 1;

    for (int k = 0; k < nfaults; k++) {
        struct own_fault *f = &faults[k];
        if (f->id != id || n < f->first || n > f->last || !gs__real[id])
            continue;
        tell(f, n);
        return stubs[k][id == GS_ID_cuStreamEndCapture];
    }
    return gs__real[id];
}

static void own_install(char *tok)
{
    char shown[128];
    unsigned long first, last;
    CUresult code;
    int id = GS_NROWS;

    snprintf(shown, sizeof shown, "%s", tok);
    if (gs__test_fault_parse(tok, &first, &last, &code) == 0)
        for (id = 0; id < GS_NROWS && strcmp(gs__rows[id].abi, tok); id++) {
        }
    if (id == GS_NROWS || nfaults == NOWN) {
        gs__warn("GRAPHSHIM_TEST_OWN_FAIL: '%s' is not ENTRY:CALLS:CODE of a hooks.def row, or one past the %d "
                 "items; ignored",
                 shown, NOWN);
        return;
    }
    faults[nfaults].id = id;
    faults[nfaults].first = first;
    faults[nfaults].last = last;
    faults[nfaults++].code = code;
    gs__info("GRAPHSHIM_TEST_OWN_FAIL: %s injected", shown);
}

/* interpose.h */
void gs__test_own_install(void)
{
    const char *v = getenv("GRAPHSHIM_TEST_OWN_FAIL");

    counts_pid = getpid();
    if (v && *v)
        gs__test_each_item("GRAPHSHIM_TEST_OWN_FAIL", v, own_install);
}

/* interpose.h */
void gs__test_own_counts(void)
{
    const char *path = getenv("GRAPHSHIM_TEST_OWN_COUNTS");
    FILE *f;

    if (!path || !*path || getpid() != counts_pid)
        return;
    if (!(f = fopen(path, "w"))) {
        gs__warn("GRAPHSHIM_TEST_OWN_COUNTS: %s cannot be written", path);
        return;
    }
    for (int i = 0; i < GS_NROWS; i++) {
        unsigned long n = atomic_load_explicit(&calls[i], memory_order_relaxed);
        if (n)
            fprintf(f, "%s %lu\n", gs__rows[i].abi, n);
    }
    fclose(f);
}
#endif
