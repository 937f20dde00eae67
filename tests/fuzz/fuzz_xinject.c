/*
** fuzz_xinject.c: the faults injected into the programs across streams
** (fuzzprog xs SEED): one of graphshim's own driver calls in a group's paths
** fails (FAKECUDA_FAIL), found in the call log of the program's run with
** graphshim and without a fault.  The run with the fault makes the same calls
** up to it (one thread at a time, virtual clocks), so the call's number is
** the one to fail.  Graphshim's own calls there, told apart from the
** program's (tests/fakecuda/README.md, "Call log": handles are numbered in
** the order they were made):
**
**   - a capture of graphshim's is one begun on a stream the program did not
**     make; in it, the private member streams and events it makes, and its
**     records and waits (the group's forks and joins on private events);
**   - outside them, the events graphshim makes (bridges, staging) and their
**     records and waits (the bridges before and after a group's launch);
**   - after the launch of an executable whose capture recorded E events, the
**     E records that follow it (the program's events recorded again);
**   - its captures' begin, end and instantiation, and its graph launches;
**   - its helpers' calls of entry points the program never calls.
**
** The program's handles: the streams and events it made before its first
** launch, a stream made right after it destroyed one (fuzz_xs.c makes them
** again so), an event made later with CU_EVENT_BLOCKING_SYNC (fuzz_xs.c's
** XS_MARK: a destroy of a group's event waits for the group's end, so the
** program's destroy is not in the log there); a stream on which the program begins a capture is
** its own capture's, whose graph launches are the program's.
*/
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzrun.h"

const char *const xs_paths[NXS_PATHS] = {
    "member-stream", "private-event", "capture-record", "capture-wait", "bridge-event",
    "bridge-record", "bridge-wait",   "re-record",      "capture-launch", "helper",
};

/* Entry points fuzz_xs.c never calls: each call is graphshim's own helper's
** (what a stream, a context or a kernel is, a node's parameters set).  Not the
** capture's node queries, whose failures show a fault not fixed yet
** (fuzz_settings.c, shim_calls' open). */
static const char *const helpers[] = {
    "cuCtxGetCurrent", "cuStreamGetCtx", "cuStreamGetFlags", "cuFuncGetName", "cuFuncGetParamInfo",
    "cuFuncGetAttribute", "cuGraphExecKernelNodeSetParams_v2", "cuGraphKernelNodeGetParams_v2",
    "cuPointerGetAttribute", "cuPointerGetAttributes", "cuMemGetInfo_v2", "cuDriverGetVersion", NULL,
};

#define XS_HANDLES 4096

struct xs_log {
    char prog_s[XS_HANDLES], prog_e[XS_HANDLES], shim_s[XS_HANDLES];
    int exec_events[XS_HANDLES]; /* an executable's recorded events */
    char prog_cap[XS_HANDLES]; /* the program's own capture's stream */
    int cap_events, in_cap, launched, rerecords, setup, again_s, again_e;
    char cap_seen[XS_HANDLES];
    struct count { char name[40]; long n; } counts[32];
    int ncounts;
};

/* The handle number after "key=" + letter in line (e.g. "stream=s", 3); -1 if none. */
static int handle(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    if (!p || p[strlen(key)] < '0' || p[strlen(key)] > '9')
        return -1;
    int h = atoi(p + strlen(key));
    return h < XS_HANDLES ? h : -1;
}

/* This call's number among the calls of its entry point. */
static long call_number(struct xs_log *L, const char *entry)
{
    for (int i = 0; i < L->ncounts; i++)
        if (!strcmp(L->counts[i].name, entry))
            return ++L->counts[i].n;
    if (L->ncounts == 32)
        return -1;
    snprintf(L->counts[L->ncounts].name, sizeof L->counts[0].name, "%s", entry);
    L->counts[L->ncounts].n = 1;
    return L->counts[L->ncounts++].n;
}

/* Was the event of a create line made with CU_EVENT_BLOCKING_SYNC (fuzz_xs.c's XS_MARK)? */
static int marked(const char *line)
{
    const char *f = strstr(line, " flags=0x");
    return f && (strtoul(f + 9, NULL, 16) & 0x1); /* CU_EVENT_BLOCKING_SYNC */
}

/* The path of graphshim's own call in line, or -1 (the program's, or none of a group's). */
static int classify(struct xs_log *L, const char *entry, const char *line)
{
    int s = handle(line, "stream=s"), e = handle(line, "event=e"), out_s = handle(line, "out=s");
    int out_e = handle(line, "out=e");

    for (int i = 0; helpers[i]; i++)
        if (!strcmp(entry, helpers[i]))
            return 9;
    /* a stream or event made right after the program destroyed one is its own */
    L->again_s |= !strcmp(entry, "cuStreamDestroy_v2");
    L->again_e |= !strcmp(entry, "cuEventDestroy_v2");
    if (!strcmp(entry, "cuStreamCreate") && out_s >= 0 && (L->setup || L->again_s)) {
        L->prog_s[out_s] = 1, L->again_s = 0;
        return -1;
    }
    if (!strcmp(entry, "cuEventCreate") && out_e >= 0 && (L->setup || L->again_e || marked(line))) {
        L->prog_e[out_e] = 1, L->again_e = 0;
        return -1;
    }
    if (!strcmp(entry, "cuStreamBeginCapture_v2") && s >= 0 && L->prog_s[s])
        L->prog_cap[s] = 1; /* before its first launch too */
    if (L->setup)
        return -1;
    if (!strcmp(entry, "cuStreamCreate") && out_s >= 0) {
        L->shim_s[out_s] = 1;
        return L->in_cap ? 0 : -1;
    }
    if (!strcmp(entry, "cuEventCreate"))
        return L->in_cap ? 1 : 4;
    if (!strcmp(entry, "cuStreamBeginCapture_v2") && s >= 0 && L->shim_s[s]) {
        L->in_cap = 1, L->cap_events = 0;
        memset(L->cap_seen, 0, sizeof L->cap_seen);
        return 8;
    }
    if (L->in_cap && !strcmp(entry, "cuEventRecord") && e >= 0) {
        L->cap_events += !L->cap_seen[e];
        L->cap_seen[e] = 1;
        return 2;
    }
    if (L->in_cap && !strcmp(entry, "cuStreamWaitEvent"))
        return 3;
    if (L->in_cap && !strcmp(entry, "cuStreamEndCapture")) {
        L->in_cap = 0;
        return 8;
    }
    if (!strcmp(entry, "cuGraphInstantiateWithFlags") && L->cap_events >= 0) {
        int x = handle(line, "out=x");
        if (x >= 0)
            L->exec_events[x] = L->cap_events;
        L->cap_events = -1;
        return 8;
    }
    if (!strcmp(entry, "cuGraphLaunch") && s >= 0 && L->prog_s[s] && !L->prog_cap[s]) {
        int x = handle(line, "exec=x");
        L->rerecords = x >= 0 ? L->exec_events[x] : 0;
        L->launched = s;
        return 8;
    }
    if (L->rerecords > 0 && !strcmp(entry, "cuEventRecord") && s == L->launched && e >= 0 && L->prog_e[e]) {
        L->rerecords--;
        return 7;
    }
    L->rerecords = 0;
    if ((!strcmp(entry, "cuEventRecord") || !strcmp(entry, "cuStreamWaitEvent")) && e >= 0 && !L->prog_e[e])
        return entry[2] == 'E' ? 5 : 6;
    return -1;
}

int xs_draw_fault(long seed, int k, const char *log, char *spec, size_t len)
{
    static const char *const codes[] = {"CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                        "CUDA_ERROR_NOT_SUPPORTED"};
    struct xs_log *L = calloc(1, sizeof *L);
    struct pick { char entry[40]; long n; int path; } *picks = NULL;
    int npicks = 0, cap = 0, have[NXS_PATHS] = {0};
    char entry[40];
    const char *p = log, *only = getenv("FUZZ_XS_PATH"); /* one path alone, by its name */

    if (!L || !log)
        return free(L), -1;
    L->setup = 1, L->cap_events = -1;
    for (const char *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
        if (sscanf(line, "%39s", entry) != 1)
            continue;
        if (!strcmp(entry, "cuLaunchKernel"))
            L->setup = 0;
        long n = call_number(L, entry);
        int path = classify(L, entry, line);
        if (path < 0 || n < 0 || (only && strcmp(only, xs_paths[path])))
            continue;
        if (npicks == cap && !(picks = realloc(picks, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *picks)))
            return free(L), -1;
        snprintf(picks[npicks].entry, sizeof picks[0].entry, "%s", entry);
        picks[npicks].n = n;
        picks[npicks++].path = path;
        have[path]++;
    }
    free(L);
    /* a path first (each that the log has alike), then one of its calls */
    uint64_t r = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 17;
    int paths = 0, path = -1;
    for (int i = 0; i < NXS_PATHS; i++)
        paths += have[i] > 0;
    r ^= r >> 29;
    if (paths) {
        int want = (int)(r % (uint64_t)paths);
        for (int i = 0; i < NXS_PATHS && path < 0; i++)
            if (have[i] && want-- == 0)
                path = i;
        long which = (long)((r >> 20) % (uint64_t)have[path]);
        for (int i = 0; i < npicks; i++)
            if (picks[i].path == path && which-- == 0)
                snprintf(spec, len, "%s:%ld%s:%s", picks[i].entry, picks[i].n,
                         path == 9 && (r >> 50) % 4 == 0 ? "+" : "", /* a helper's every call from it on */
                         codes[(r >> 40) % 3]);
    }
    free(picks);
    return path;
}
