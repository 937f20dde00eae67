/*
** fuzz_settings.c: the runner's knob settings and its injected faults
** (tests/fuzz/README.md, "Settings" and "Injected faults").
*/
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/run.h"
#include "fuzzrun.h"

_Static_assert(NINJECT_SETTINGS <= NSETTINGS, "the injected runs' settings are settings");

/* The knob settings every seed runs under, with the shim.  The first
** NINJECT_SETTINGS are also those an injected run draws from (so a seed's faults
** are what they were before the later settings came). */
const struct setting settings[NSETTINGS] = {
    {"default", {NULL}, 0},
    {"warmup1-minops1", {"GRAPHSHIM_WARMUP=1", "GRAPHSHIM_MIN_OPS=1", NULL}, 0},
    {"chunk2", {"GRAPHSHIM_CHUNK_OPS=2", NULL}, 0},
    {"chunk0-nogain", {"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_GAIN_CHECK=0", NULL}, 0},
    {"watchdog50", {"GRAPHSHIM_MAX_DEFER_US=50", NULL}, 0},
    {"body2-warmup1", {"GRAPHSHIM_BODY_OPS=2", "GRAPHSHIM_WARMUP=1", NULL}, 0},
    {"exact", {"GRAPHSHIM_PATCH=0", "GRAPHSHIM_BODY_OPS=0", NULL}, 0},
    /* a device of 3 MiB, graphs of 48 KiB: graphshim's executables fill it and
    ** the program's allocations fail but for graphshim's out-of-memory release */
    {"oom3", {"FAKECUDA_MEM_MB=3", "FAKECUDA_EXEC_KB=48", NULL}, 0},
    /* the program ends as its seed draws (fuzz_end.c): by a signal at its
    ** default action, one it handles, a child's, a Python's end */
    {"signal-end", {"FUZZ_END=seed", NULL}, SET_OWN_BASE | SET_SIGNAL_END},
    /* chunks by time, short chunks, few executables, learning that rests */
    {"chunk-us-max4", {"GRAPHSHIM_CHUNK_OPS=2", "GRAPHSHIM_CHUNK_MAX=4", "GRAPHSHIM_CHUNK_US=1", NULL}, 0},
    {"graphs2-rest2", {"GRAPHSHIM_MAX_GRAPHS=2", "GRAPHSHIM_REST_AFTER=2", "GRAPHSHIM_WARMUP=1", NULL}, 0},
    /* every message, no steps, no short trials, no NVTX, no bail sites */
    {"debug-plain", {"GRAPHSHIM_LOG=debug", "GRAPHSHIM_STEPS=0", "GRAPHSHIM_SHORT_TRIAL=0", "GRAPHSHIM_NVTX=0",
                     "GRAPHSHIM_BAIL_SITES=0", NULL}, 0},
    /* graphshim's own clock is the host's: the watchdog's thread scans, sleeps
    ** and wakes by itself (the fake's clock stays virtual) */
    {"host-clock", {"GRAPHSHIM_TEST_CLOCK=host", "GRAPHSHIM_MAX_DEFER_US=50", NULL}, SET_HOST_CLOCK},
    /* graphshim off: every call passes straight through */
    {"off", {"GRAPHSHIM=0", NULL}, 0},
    /* groups across streams (the programs' events and streams may form them),
    ** both runs in the fake's dependency order, so a graph not ordered as the
    ** eager work was gives other bytes */
    {"xstream-deps", {"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", NULL}, SET_OWN_BASE},
    /* every call traced, the report's counters checked at exit (stderr
    ** alone), loop bodies in graphs of up to 4096 ops, chunks that always
    ** grow, learning that never rests */
    {"trace-check-wide", {"GRAPHSHIM_TRACE=@/trace.log",
                          "GRAPHSHIM_CHECK=hit_rate>=0.5, streams.replays > 1,ops_held<=1e5,graphs_alive!=0,"
                          "chunks==0,streams.warmup<2.5",
                          "GRAPHSHIM_BODY_OPS=4096", "GRAPHSHIM_CHUNK_MAX=0", "GRAPHSHIM_REST_AFTER=0", NULL},
     0},
    /* chunks by time alone: none by count */
    {"chunk-us-only", {"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_CHUNK_US=1", NULL}, 0},
};

/* The calls of graphshim's own that an injected run fails: its private capture
** stream aside (below), capture, the node queries during capture, instantiation,
** setting a node's parameters (and reading them first), asking where a moved
** copy's device side lies, and graph launch.  A program that makes one of
** these calls itself (its own graphs: fuzz_xops.c) is not failed in it, so
** every call counted is graphshim's.  report: the
** failure must show in the report (a failed capture or instantiation in
** graph_failures, a failed graph launch in the bail graph-failed); where
** graphshim has a way around it (a graph built anew), nothing need show.
** open: a failure that shows a fault of graphshim's not fixed yet, drawn only
** with --inject-all (tests/fuzz/README.md). */
const struct shim_call shim_calls[NSHIM] = {
    {"cuStreamBeginCapture_v2", 1, 0},       {"cuStreamEndCapture", 1, 0},
    {"cuGraphInstantiateWithFlags", 1, 0},   {"cuGraphLaunch", 1, 0},
    {"cuGraphKernelNodeGetParams_v2", 0, 0}, {"cuGraphNodeGetType", 0, 0},
    {"cuGraphExecKernelNodeSetParams_v2", 0, 0},
    {"cuStreamGetCaptureInfo_v2", 0, 0},
    {"cuGraphMemcpyNodeGetParams", 0, 0},    {"cuGraphExecMemcpyNodeSetParams", 0, 0},
    {"cuGraphMemsetNodeGetParams", 0, 0},    {"cuGraphExecMemsetNodeSetParams", 0, 0},
    {"cuPointerGetAttributes", 0, 0},
    /* graphshim's helpers around its ops: the staging and handoff events
    ** (created, recorded, queried, synchronized, destroyed), the stream
    ** synchronize they fall back on, a busy stream's query (chunks), the
    ** executables destroyed, memory measured at a release, what a stream or
    ** a context is, a host pointer's kind, a kernel's name, layout and
    ** attributes, the driver's version */
    {"cuEventRecord", 0, 0},                 {"cuEventQuery", 0, 0},
    {"cuEventSynchronize", 0, 0},            {"cuEventDestroy_v2", 0, 0},
    {"cuStreamSynchronize", 0, 0},           {"cuStreamQuery", 0, 0},
    {"cuGraphExecDestroy", 0, 0},            {"cuGraphDestroy", 0, 0},
    {"cuMemGetInfo_v2", 0, 0},               {"cuCtxGetCurrent", 0, 0},
    {"cuStreamGetCtx", 0, 0},                {"cuStreamGetFlags", 0, 0},
    {"cuPointerGetAttribute", 0, 0},         {"cuFuncGetParamInfo", 0, 0},
    {"cuFuncGetName", 0, 0},                 {"cuKernelGetName", 0, 0},
    {"cuKernelGetParamInfo", 0, 0},          {"cuFuncGetAttribute", 0, 0},
    {"cuDriverGetVersion", 0, 0},
};
/* Calls that fuzzprog makes too: graphshim's private capture stream, its
** staging event and its pinned staging buffers.  Failed in programs of one
** thread that make all their own calls of the entry point before their first
** op (as the plain run's call log shows), from the program's own count of them
** on; fuzzprog's memory ops allocate pinned memory later, and then the entry
** point is left alone. */
const struct shim_call shared_calls[NSHARED] = {
    {"cuStreamCreate", 1, 0}, {"cuEventCreate", 0, 0}, {"cuMemAllocHost_v2", 0, 0},
};
/* The errors injected. */
static const char *const fault_codes[] = {"CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                          "CUDA_ERROR_NOT_SUPPORTED"};



/* FAKECUDA_PENDING for every run of a seed, with and without the shim: odd
** seeds run over a driver whose work completes later, queries answering not
** ready 1 to 4 times (tests/fakecuda/README.md), even seeds over the one that
** runs each op when it is enqueued.  Into buf; NULL for none. */
const char *pending_env(long seed, char *buf, size_t len)
{
    if (seed % 2 == 0)
        return NULL;
    snprintf(buf, len, "FAKECUDA_PENDING=%ld", 1 + (seed / 2) % 4);
    return buf;
}

/* A small generator for the faults of a seed (splitmix64). */
static uint64_t next_rand(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Is the call log line an op's: a launch, or an asynchronous copy or memset? */
static int is_op(const char *line)
{
    size_t name = strcspn(line, " \n");
    return strncmp(line, "cuLaunch", 8) == 0 || (strncmp(line, "cuMem", 5) == 0 && memmem(line, name, "Async", 5));
}

/* Lines of the call log text that begin with "entry "; *last gets the number
** of the last (1-based, 0 if none), *first_op that of the first op (a launch,
** an asynchronous copy or memset), or 0. */
static long log_calls(const char *log, const char *entry, long *last, long *first_op)
{
    char pat[96];
    long n = 0, line = 0;
    size_t len = (size_t)snprintf(pat, sizeof pat, "%s ", entry);

    *last = *first_op = 0;
    for (const char *p = log; p && *p;) {
        line++;
        if (strncmp(p, pat, len) == 0)
            n++, *last = line;
        if (!*first_op && is_op(p))
            *first_op = line;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return n;
}

/* The call log of a plain run (a program of one thread makes the same calls
** every run). */
static const char *plain_log(struct plain_log *l)
{
    if (!l->text) {
        struct run r;
        char pend[32];
        run_prog(&r, 0, (const char *[]){"FAKECUDA_LOG=@/calls.log", pending_env(atol(l->argv[1]), pend, sizeof pend), NULL},
                 l->argv, g_timeout);
        l->text = run_file(&r, "calls.log");
        if (!l->text)
            l->text = strdup("");
        run_free(&r);
    }
    return l->text;
}

/* fuzzrun.h */
int draw_fault(long seed, int k, int threads, struct plain_log *log, char *spec, size_t len, int *setting)
{
    uint64_t x = (uint64_t)seed * 1000003u + (uint64_t)k * 7919u + 17;
    int rows = NSHIM + (threads == 1 ? NSHARED : 0), row;
    long own = 0, last, first_op;
    const struct shim_call *c;

    for (;;) {
        row = (int)(next_rand(&x) % (uint64_t)rows);
        c = row < NSHIM ? &shim_calls[row] : &shared_calls[row - NSHIM];
        if (c->open && !g_inject_all)
            continue;
        if (row < NSHIM) {
            /* a program that captures its own graphs calls these too */
            if (!log_calls(plain_log(log), c->entry, &last, &first_op))
                break;
            continue;
        }
        own = log_calls(plain_log(log), c->entry, &last, &first_op);
        if (first_op && last < first_op)
            break; /* the program's own calls all come first */
    }
    long n = next_rand(&x) % 2 ? 1 + (long)(next_rand(&x) % 3) : 1 + (long)(next_rand(&x) % 32);
    int every = next_rand(&x) % 4 == 0;
    const char *code = fault_codes[next_rand(&x) % 3];

    *setting = (int)(next_rand(&x) % NINJECT_SETTINGS);
    /* Where memory is short, a driver that never destroys graphshim's
    ** executables leaves the program less (its own allocations fail, as
    ** they would beside any program that cannot free): one destroy fails. */
    if (every && strstr(c->entry, "Destroy") && !strncmp(settings[*setting].name, "oom", 3))
        every = 0;
    n += own; /* after the program's own calls */
    snprintf(spec, len, "%s:%ld%s:%s", c->entry, n, every ? "+" : "", code);
    return row;
}

/* fuzzrun.h: the Nth allocation (N from 1 to 600, most under 100), or the
** Nth and every later one (a quarter of the runs). */
int draw_alloc_fault(long seed, int k, char *spec, size_t len, int *setting)
{
    uint64_t x = (uint64_t)seed * 2654435761u + (uint64_t)k * 40503u + 91;
    long n = next_rand(&x) % 3 ? 1 + (long)(next_rand(&x) % 100) : 1 + (long)(next_rand(&x) % 600);
    int every = next_rand(&x) % 4 == 0;

    *setting = (int)(next_rand(&x) % NINJECT_SETTINGS);
    snprintf(spec, len, "alloc:%ld%s", n, every ? "+" : "");
    return ALLOC_ROW;
}

/* The entry points a GRAPHSHIM_TEST_NO_ENTRY draws from (interpose/test_fault.c):
** those graphshim can do without, most of the time, and a few it cannot
** (then it passes every call through: interpose/init.c's check_driver). */
static const char *const optional_entries[] = {
    "cuStreamGetCtx", "cuStreamGetCaptureInfo_v2", "cuPointerGetAttributes",
    "cuGraphKernelNodeGetParams_v2", "cuGraphMemcpyNodeGetParams", "cuGraphMemsetNodeGetParams",
    "cuGraphExecKernelNodeSetParams_v2", "cuGraphExecMemcpyNodeSetParams", "cuGraphExecMemsetNodeSetParams",
    "cuKernelGetParamInfo", "cuStreamGetCtx", "cuStreamGetCaptureInfo_v2", "cuKernelGetParamInfo",
    "cuFuncGetName", "cuGraphExecDestroy", "cuDriverGetVersion",
};
enum { NOPTIONAL = sizeof optional_entries / sizeof optional_entries[0] };

/* fuzzrun.h: 1 to 3 draws, each kept where the program never calls it. */
int draw_noentry_fault(long seed, int k, struct plain_log *log, char *spec, size_t len, int *setting)
{
    uint64_t x = (uint64_t)seed * 97531u + (uint64_t)k * 8641u + 5;
    int want = 1 + (int)(next_rand(&x) % 3);
    size_t at = (size_t)snprintf(spec, len, "noentry:");
    long last, first_op;

    for (int i = 0; i < want && at < len; i++) {
        const char *e = optional_entries[next_rand(&x) % NOPTIONAL];
        if (strstr(spec, e) || log_calls(plain_log(log), e, &last, &first_op))
            continue;
        at += (size_t)snprintf(spec + at, len - at, "%s%s", at > 8 ? "," : "", e);
    }
    if (at == 8) /* every draw called by the program: the last entry, its driver version */
        snprintf(spec + at, len - at, "%s", log_calls(plain_log(log), "cuDriverGetVersion", &last, &first_op)
                                                ? "cuGraphExecDestroy" : "cuDriverGetVersion");
    *setting = (int)(next_rand(&x) % NINJECT_SETTINGS);
    return NOENTRY_ROW;
}

/* The errors of graphshim's own calls that fail: those of fault_codes and a
** handle refused (CUDA_ERROR_INVALID_HANDLE); never one that ends the context. */
static const int own_codes[] = {2, 901, 801, 400};

/* fuzzrun.h: any setting whose program runs as the plain run's, on the
** virtual clock, to its end, with the engine on (not "off"): more than an
** injected run of FAKECUDA_FAIL draws from, for the paths that only some
** settings take (chunks by time, graphs at rest). */
int draw_own_setting(long seed, int k)
{
    uint64_t x = (uint64_t)seed * 48271u + (uint64_t)k * 69621u + 3;
    int pick[NSETTINGS], n = 0;

    for (int i = 0; i < NSETTINGS; i++)
        if (!settings[i].flags && strcmp(settings[i].name, "off") != 0)
            pick[n++] = i;
    return pick[next_rand(&x) % (uint64_t)n];
}

/* Does the counts line p name a call that gives memory back (a destroy or
** a free)? */
static int gives_memory(const char *p)
{
    size_t name = strcspn(p, " \n");
    return memmem(p, name, "Destroy", 7) || memmem(p, name, "Free", 4);
}

/* fuzzrun.h: an entry point graphshim called (each as likely), but those
** that issue held ops (launches, asynchronous copies and memsets: a failure
** there is the program's op failing, as its own call would); the first of
** its calls a third of the time, else one of them; a quarter of the time
** every one from it on.  Where memory is short, graphshim's memory not given
** back leaves the program less (its own allocations fail, as they would
** beside any program that cannot free): under OWN_ONE_LEAK one destroy or
** free fails, not every one from it on; under OWN_NO_LEAK none (the loop
** program of mode oom allocates all that graphshim must give back). */
int draw_own_fault(long seed, int k, const char *counts, int leaks, char *spec, size_t len)
{
    uint64_t x = (uint64_t)seed * 16807u + (uint64_t)k * 31337u + 29;
    const char *rows[64];
    long calls[64];
    int n = 0;

    for (const char *p = counts; p && *p && n < 64; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *sp = strchr(p, ' ');
        if (sp && !is_op(p) && atol(sp + 1) > 0 && !(leaks == OWN_NO_LEAK && gives_memory(p)))
            rows[n] = p, calls[n++] = atol(sp + 1);
    }
    if (!n)
        return -1;
    int r = (int)(next_rand(&x) % (uint64_t)n);
    long first = next_rand(&x) % 3 == 0 ? 1 : 1 + (long)(next_rand(&x) % (uint64_t)calls[r]);
    int every = next_rand(&x) % 4 == 0 && !(leaks == OWN_ONE_LEAK && gives_memory(rows[r]));
    int code = own_codes[next_rand(&x) % (sizeof own_codes / sizeof own_codes[0])];

    snprintf(spec, len, "own:%.*s:%ld%s:%d", (int)strcspn(rows[r], " "), rows[r], first, every ? "+" : "", code);
    return OWN_ROW;
}

/* fuzzrun.h */
const char *fault_var(const char *spec, const char **value)
{
    if (strncmp(spec, "noentry:", 8) == 0)
        return *value = spec + 8, "GRAPHSHIM_TEST_NO_ENTRY";
    if (strncmp(spec, "own:", 4) == 0)
        return *value = spec + 4, "GRAPHSHIM_TEST_OWN_FAIL";
    int alloc = strncmp(spec, "alloc:", 6) == 0;
    *value = alloc ? spec + 6 : spec;
    return alloc ? "GRAPHSHIM_TEST_FAIL_ALLOC" : "FAKECUDA_FAIL";
}
