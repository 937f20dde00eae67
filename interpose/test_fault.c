/*
** test_fault.c: failures of graphshim's own graph calls on a real driver, for
** the test build only ($(BUILD)/test/libgraphshim.so, -DGS_TEST).
**
** Over the fake driver, FAKECUDA_FAIL makes any call fail.  On a GPU the
** same proof is needed: a job whose rank fails to capture, or to launch a
** graph, must end with the same result and never hang.  The test build reads
**
**     GRAPHSHIM_TEST_FAULT=ENTRY:CALLS:CODE[,ENTRY:CALLS:CODE...]
**
** at initialization, where ENTRY is one of the calls below, CALLS is N (the
** Nth call), N+ (the Nth and every later one) or N-M, and CODE a CUresult
** number.  A failing call returns CODE without reaching the driver; the others
** go through.  With GRAPHSHIM_TEST_FAULT_RANK=R, only the process whose RANK
** is R (one rank of a torchrun job) has the faults.  The library users run has
** none of this: the file compiles to nothing without GS_TEST.
*/
#ifdef GS_TEST
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"
#include "../policy/base/log.h"

struct fault {
    unsigned long first, last; /* calls first..last fail (last: ULONG_MAX for N+) */
    CUresult code;
    atomic_ulong calls;
    void *real;
};

/* The calls a fault may name: graphshim's capture, instantiation and launch.
** A failing call does nothing, but the end of a capture: the driver ends a
** capture that fails (an invalidated one), so a failing end ends it too and
** returns no graph. */
#define GS_FAULT_ROWS(X)                                                                                \
    X(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode m), (s, m), (void)0)                   \
    X(cuStreamEndCapture, (CUstream s, CUgraph *g), (s, g), end_capture(fault_cuStreamEndCapture.real, s, g)) \
    X(cuGraphInstantiateWithFlags, (CUgraphExec * e, CUgraph g, unsigned long long f), (e, g, f), (void)0) \
    X(cuGraphLaunch, (CUgraphExec e, CUstream s), (e, s), (void)0)

static void end_capture(void *real, CUstream s, CUgraph *g)
{
    if (((__typeof__(&cuStreamEndCapture))real)(s, g) == CUDA_SUCCESS && *g)
        GS_IGNORE(GS_REAL(cuGraphDestroy)(*g)); /* a graph not destroyed leaks */
    *g = NULL;
}

#define GS_FAULT_WRAP(abi, params, args, on_fail)                                        \
    static struct fault fault_##abi;                                                     \
    static CUresult fault_call_##abi params                                              \
    {                                                                                    \
        unsigned long n = atomic_fetch_add(&fault_##abi.calls, 1) + 1;                   \
        if (n >= fault_##abi.first && n <= fault_##abi.last) {                           \
            on_fail;                                                                     \
            return fault_##abi.code;                                                     \
        }                                                                                \
        return ((__typeof__(&abi))fault_##abi.real) args;                                \
    }
GS_FAULT_ROWS(GS_FAULT_WRAP)

static const struct {
    const char *abi;
    int id;
    struct fault *f;
    void *wrapper;
} rows[] = {
#define GS_FAULT_ROW(abi, params, args, on_fail) {#abi, GS_ID_##abi, &fault_##abi, (void *)fault_call_##abi},
    GS_FAULT_ROWS(GS_FAULT_ROW)
};

/* interpose.h: ENTRY:CALLS:CODE, for test_own.c too. */
int gs__test_fault_parse(char *spec, unsigned long *first, unsigned long *last, CUresult *code)
{
    char *calls = strchr(spec, ':'), *c, *end;
    long n;

    if (!calls || !(c = strchr(calls + 1, ':')))
        return -1;
    *calls++ = 0;
    *c++ = 0;
    *first = strtoul(calls, &end, 10);
    if (end == calls || *first == 0)
        return -1;
    if (*end == '+')
        *last = (unsigned long)-1, end++;
    else if (*end == '-')
        *last = strtoul(end + 1, &end, 10);
    else
        *last = *first;
    if (*end)
        return -1;
    n = strtol(c, &end, 10);
    if (*end || *last < *first || n <= 0)
        return -1;
    *code = (CUresult)n;
    return 0;
}

/* Parses one ENTRY:CALLS:CODE of the rows above; 0, or -1 where it is not one. */
static int install(char *spec)
{
    unsigned long first, last;
    CUresult c;

    if (gs__test_fault_parse(spec, &first, &last, &c) != 0)
        return -1;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (strcmp(rows[i].abi, spec) != 0)
            continue;
        if (!gs__real[rows[i].id])
            return -1;
        rows[i].f->first = first;
        rows[i].f->last = last;
        rows[i].f->code = c;
        rows[i].f->real = gs__real[rows[i].id];
        gs__real[rows[i].id] = rows[i].wrapper;
        return 0;
    }
    return -1;
}

/* interpose.h */
void gs__test_each_item(const char *name, const char *v, void (*item)(char *tok))
{
    char buf[512], *save = NULL;

    if (strlen(v) >= sizeof buf) {
        gs__warn("%s is too long; nothing of it is used", name);
        return;
    }
    strcpy(buf, v);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        item(tok);
}

/* GRAPHSHIM_TEST_NO_ENTRY=ENTRY[,ENTRY...]: graphshim finds none of these
** entry points in the driver, as with a driver that lacks them: one it
** cannot do without makes it pass every call through (init.c's check_driver),
** the others take their way around.  A program that calls one itself gets
** CUDA_ERROR_NOT_FOUND, so the fuzzer names only those its program never calls
** (fuzz_settings.c). */
static void entry_remove(char *tok)
{
    int j = 0;

    while (j < GS_NROWS && strcmp(gs__rows[j].abi, tok))
        j++;
    if (j == GS_NROWS) {
        gs__warn("GRAPHSHIM_TEST_NO_ENTRY: '%.64s' is no entry point of the driver's graphshim knows; ignored", tok);
        return;
    }
    gs__real[j] = NULL;
    gs__info("GRAPHSHIM_TEST_NO_ENTRY: %s removed", tok);
}

static void fault_install(char *tok)
{
    char shown[128];

    snprintf(shown, sizeof shown, "%s", tok);
    if (install(tok) != 0)
        gs__warn("GRAPHSHIM_TEST_FAULT: '%s' is not ENTRY:CALLS:CODE of a known entry; ignored", shown);
    else
        gs__info("GRAPHSHIM_TEST_FAULT: %s injected", shown);
}

void gs__test_faults_install(void)
{
    const char *gone = getenv("GRAPHSHIM_TEST_NO_ENTRY"), *v = getenv("GRAPHSHIM_TEST_FAULT");
    const char *only = getenv("GRAPHSHIM_TEST_FAULT_RANK"), *rank = getenv("RANK");

    if (gone && *gone)
        gs__test_each_item("GRAPHSHIM_TEST_NO_ENTRY", gone, entry_remove);
    if (!v || !*v)
        return;
    if (only && *only && (!rank || strcmp(rank, only) != 0))
        return; /* faults for another rank of the job */
    gs__test_each_item("GRAPHSHIM_TEST_FAULT", v, fault_install);
}
#endif
