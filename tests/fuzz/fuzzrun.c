/*
** fuzzrun.c: the differential fuzz runner (tests/fuzz/README.md).
**
**   fuzzrun [--seconds N] [--seed S] [--start S] [--count N] [--first] [--free] [--jobs J]
**           [--timeout T] [--max-threads M] [--inject K] [--inject-only] [--inject-all] [--loops]
**
** Runs fuzzprog for seed after seed (from --start, default 1) until --seconds
** have passed (or --count seeds ran: a fixed range; --first: until the first
** difference), or only --seed S.  Every run of a seed interleaves the
** program's threads by the seed's schedule (FUZZ_SCHEDULE, fuzz_sched.c) over
** virtual clocks, so that a difference found is found again by its seed;
** --free lets threads run free over the host's clocks instead, which explores
** orders no schedule makes, but a difference found so may not come again.  Each seed runs once over the fake driver
** without graphshim and once with it under each setting of knobs below; the
** standard output and exit status of each shim run must equal the plain run's.
** Then K more shim runs (--inject, default 1; 0 for none), each under a setting
** drawn from the list and with one of graphshim's own driver calls failing
** (FAKECUDA_FAIL, tests/fakecuda/README.md): the output must be the same, and
** a failed capture, instantiation or graph launch must show in the report.
** --inject-only skips the plain settings; --inject-all also fails calls whose
** failures show faults not fixed yet (shim_calls' open).  A difference (a timeout included) is
** printed with the seed, the setting, the fault and a diff.  At the end it
** prints how many programs ran and differed, and, per setting, how much the
** engine did (sums from the GRAPHSHIM_REPORT of each run), so that one can see
** that the fuzz reaches held and replayed work, and how many injected faults
** met a call.  Seeds are spread over --jobs worker processes (default: the CPUs
** online).  Exit status: 0 without differences, 1 with, 2 for a usage error.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/run.h"
#include "fuzz_oracle.h"

/* The knob settings every seed runs under, with the shim. */
static const struct setting {
    const char *name;
    const char *env[4];
} settings[] = {
    {"default", {NULL}},
    {"warmup1-minops1", {"GRAPHSHIM_WARMUP=1", "GRAPHSHIM_MIN_OPS=1", NULL}},
    {"chunk2", {"GRAPHSHIM_CHUNK_OPS=2", NULL}},
    {"chunk0-nogain", {"GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_GAIN_CHECK=0", NULL}},
    {"watchdog50", {"GRAPHSHIM_MAX_DEFER_US=50", NULL}},
    {"body2-warmup1", {"GRAPHSHIM_BODY_OPS=2", "GRAPHSHIM_WARMUP=1", NULL}},
    {"exact", {"GRAPHSHIM_PATCH=0", "GRAPHSHIM_BODY_OPS=0", NULL}},
    /* a device of 3 MiB, graphs of 48 KiB: graphshim's executables fill it and
    ** the program's allocations fail but for graphshim's out-of-memory release */
    {"oom3", {"FAKECUDA_MEM_MB=3", "FAKECUDA_EXEC_KB=48", NULL}},
};
#define NSETTINGS (int)(sizeof settings / sizeof settings[0])

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
static const struct shim_call {
    const char *entry;
    int report, open;
} shim_calls[] = {
    {"cuStreamBeginCapture_v2", 1, 0},       {"cuStreamEndCapture", 1, 0},
    {"cuGraphInstantiateWithFlags", 1, 0},   {"cuGraphLaunch", 1, 0},
    {"cuGraphKernelNodeGetParams_v2", 0, 0}, {"cuGraphNodeGetType", 0, 1},
    {"cuGraphExecKernelNodeSetParams_v2", 0, 0},
    {"cuStreamGetCaptureInfo_v2", 0, 1},
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
static const struct shim_call shared_calls[] = {
    {"cuStreamCreate", 1, 0}, {"cuEventCreate", 0, 0}, {"cuMemAllocHost_v2", 0, 0},
};
#define NSHIM (int)(sizeof shim_calls / sizeof shim_calls[0])
#define NSHARED (int)(sizeof shared_calls / sizeof shared_calls[0])
/* The errors injected. */
static const char *const fault_codes[] = {"CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                          "CUDA_ERROR_NOT_SUPPORTED"};

/* What the engine did under one setting, summed over programs. */
struct engine_sums {
    long long programs, ops, held, replayed, replays, chunks, body_graphs, with_replays, oom_retries;
};

/* State shared by the workers (in a shared mapping). */
struct shared {
    pthread_mutex_t lock;          /* process-shared: output and sums */
    atomic_long next;              /* seeds handed out so far */
    atomic_int found;              /* a difference was found (--first stops there) */
    long programs, differences;
    struct engine_sums sums[NSETTINGS + 1];   /* the last: injected runs */
    long injected, landed;         /* injected runs, and those whose fault met a call */
    long loops;                    /* loop programs run under a time setting */
    long landed_by[NSHIM + NSHARED];
};

static struct shared *g;
static char g_prog[512];
static int g_timeout = 30;
static char g_max_threads[16] = "8";   /* passed on to fuzzprog */
static int g_inject = 1, g_inject_only, g_inject_all;
static int g_loops_only; /* --loops: the loop programs' time settings alone */
static int g_free;   /* --free: threads run free, host clocks (no run is like another) */

/* FAKECUDA_PENDING for every run of a seed, with and without the shim: odd
** seeds run over a driver whose work completes later, queries answering not
** ready 1 to 4 times (tests/fakecuda/README.md), even seeds over the one that
** runs each op when it is enqueued.  Into buf; NULL for none. */
static const char *pending_env(long seed, char *buf, size_t len)
{
    if (seed % 2 == 0)
        return NULL;
    snprintf(buf, len, "FAKECUDA_PENDING=%ld", 1 + (seed / 2) % 4);
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The integer after "key": in the text from p on; 0 if absent. */
static long long json_int(const char *p, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *q = p ? strstr(p, pat) : NULL;
    return q ? strtoll(q + strlen(pat), NULL, 10) : 0;
}

static void add_report(struct engine_sums *s, const struct run *r)
{
    char *json = run_file(r, "report.json");
    const char *tot = json ? strstr(json, "\"totals\"") : NULL;
    s->programs++;
    if (tot) {
        long long replays = json_int(tot, "replays");
        s->ops += json_int(tot, "ops");
        s->held += json_int(tot, "ops_held");
        s->replayed += json_int(tot, "ops_replayed");
        s->replays += replays;
        s->chunks += json_int(tot, "chunks");
        s->oom_retries += json_int(tot, "oom_retries");
        s->body_graphs += json_int(tot, "body_graphs");
        s->with_replays += replays > 0;
    }
    free(json);
}

/* Prints a difference: seed, setting, statuses and a diff of the outputs; fault:
** the FAKECUDA_FAIL of an injected run (NULL for none), and why: what else was
** wrong (NULL where the outputs or statuses differ). */
static void report_difference(long seed, const struct setting *st, const char *fault, const char *why,
                              const struct run *base, const struct run *shim)
{
    char path[2][300], cmd[1024], pend[32];
    FILE *f;
    /* the loop and step programs run without FAKECUDA_PENDING */
    const char *pending = strncmp(st->name, "loop-", 5) && strncmp(st->name, "steps-", 6) ? pending_env(seed, pend, sizeof pend) : NULL;

    snprintf(path[0], sizeof path[0], "%s/expected", shim->dir);
    snprintf(path[1], sizeof path[1], "%s/stdout", shim->dir);
    if ((f = fopen(path[0], "w"))) {
        fputs(base->out, f);
        fclose(f);
    }
    printf("fuzz: DIFFERENCE seed %ld setting %s:", seed, st->name);
    for (int i = 0; st->env[i]; i++)
        printf(" %s", st->env[i]);
    if (pending)
        printf(" %s", pending);
    if (fault)
        printf(" FAKECUDA_FAIL=%s", fault);
    printf("\n  exit status %d without the shim, %d with it%s\n", base->status, shim->status,
           shim->status == 128 + 14 ? " (timed out)" : "");
    if (why)
        printf("  %s\n", why);
    printf("  rerun: make fuzz SEED=%ld FUZZ_THREADS=%s%s\n", seed, g_max_threads,
           g_free ? " FUZZ_FREE=1 (threads ran free: the difference may not come again)" : "");
    if (fault) {
        printf("  or: FAKECUDA_FAIL=%s", fault);
        for (int i = 0; st->env[i]; i++)
            printf(" %s", st->env[i]);
        if (pending)
            printf(" %s", pending);
        if (!g_free)
            printf(" FUZZ_SCHEDULE=%ld MALLOC_ARENA_MAX=1 GRAPHSHIM_TEST_CLOCK=fake FAKECUDA_CLOCK=virtual", seed);
        printf(" GRAPHSHIM_REPORT=/dev/stderr LD_LIBRARY_PATH=%s/fakecuda LD_PRELOAD=%s/test/libgraphshim.so %s %ld %s\n",
               BUILD_DIR, BUILD_DIR, g_prog, seed, g_max_threads);
    }
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' | head -40; tail -5 '%s/stderr' | sed 's/^/  stderr: /'", path[0],
             path[1], shim->dir);
    if (system(cmd) != 0) {
        /* diff's own status says nothing more */
    }
    fflush(stdout);
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

/* The call log of a plain run of the program argv (a program of one thread
** makes the same calls every run), made at the first need; freed by the caller. */
struct plain_log {
    const char *const *argv;
    char *text;
};

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

/* Draws injected run k of seed: its setting (index into settings), its fault
** (FAKECUDA_FAIL, into spec) and the row of shim_calls / shared_calls it fails
** (shared rows after NSHIM).  threads: the program's threads; log: its call
** log, for the shared rows. */
static int draw_fault(long seed, int k, int threads, struct plain_log *log, char *spec, size_t len, int *setting)
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

    *setting = (int)(next_rand(&x) % NSETTINGS);
    n += own; /* after the program's own calls */
    snprintf(spec, len, "%s:%ld%s:%s", c->entry, n, every ? "+" : "", code);
    return row;
}

/* Do the report of the shim run r and the fake driver's counts of it and of
** the plain run base disagree (fuzz_oracle.h)?  Prints the difference. */
static int accounts_differ(long seed, const struct setting *st, const struct run *base, const struct run *r)
{
    char *json = run_file(r, "report.json"), *bstats = run_file(base, "stats"), *sstats = run_file(r, "stats");
    char why[400];
    int d = oracle_accounts(json, bstats, sstats, why, sizeof why);

    if (d)
        report_difference(seed, st, NULL, why, base, r);
    free(json), free(bstats), free(sstats);
    return d;
}

/* One run of seed under graphshim with the assignments env, compared with base.
** slot: where its report is summed (NSETTINGS: the injected runs); fault: its
** FAKECUDA_FAIL or NULL, and row the call it fails.  Returns 1 for a difference. */
static int shim_run(long seed, const char *const *argv, const struct run *base, const struct setting *st, int slot,
                    const char *fault, int row, int verbose)
{
    const char *env[12];
    char fail[160], pend[32], sched[48];
    int n = 0, diff = 0;
    struct run r;

    for (int j = 0; st->env[j]; j++)
        env[n++] = st->env[j];
    env[n++] = "GRAPHSHIM_REPORT=@/report.json";
    env[n++] = "FAKECUDA_STATS=@/stats";
    if (g_free) {
        /* The host's clock: where the watchdog fires, at random, explores
        ** orders a virtual clock would not (and no run is like another). */
        env[n++] = "GRAPHSHIM_TEST_CLOCK=host";
        env[n++] = "FAKECUDA_CLOCK=host";
    } else {
        /* The seed's schedule of threads and the virtual clocks (run_prog's
        ** default): the run is the same every time. */
        snprintf(sched, sizeof sched, "FUZZ_SCHEDULE=%ld", seed);
        env[n++] = sched;
        env[n++] = "MALLOC_ARENA_MAX=1";
    }
    if (pending_env(seed, pend, sizeof pend))
        env[n++] = pend;
    if (fault) {
        snprintf(fail, sizeof fail, "FAKECUDA_FAIL=%s", fault);
        env[n++] = fail;
    }
    env[n] = NULL;
    run_prog(&r, 1, env, argv, g_timeout);
    pthread_mutex_lock(&g->lock);
    add_report(&g->sums[slot], &r);
    if (base->status != 0 || r.status != base->status || strcmp(r.out, base->out) != 0) {
        report_difference(seed, st, fault, NULL, base, &r);
        diff = 1;
    } else if (!fault && accounts_differ(seed, st, base, &r)) {
        diff = 1;
    } else if (fault && strstr(r.err, "fakecuda: injected")) {
        /* The fault met a call: where it must, it shows in the report. */
        const struct shim_call *c = row < NSHIM ? &shim_calls[row] : &shared_calls[row - NSHIM];
        char *json = run_file(&r, "report.json");
        const char *tot = json ? strstr(json, "\"totals\"") : NULL;
        const char *bails = tot ? strstr(tot, "\"bails\"") : NULL;
        g->landed++;
        g->landed_by[row]++;
        if (c->report && !(json_int(tot, "graph_failures") > 0 || json_int(bails, "graph-failed") > 0)) {
            report_difference(seed, st, fault,
                              "the fault met a call, but the report shows no graph failure (graph_failures 0, "
                              "no graph-failed bail)",
                              base, &r);
            diff = 1;
        }
        free(json);
    }
    if (fault)
        g->injected++;
    if (!diff && verbose)
        printf("fuzz: seed %ld setting %s%s%s: same (%zu bytes of output)\n", seed, st->name,
               fault ? " FAKECUDA_FAIL=" : "", fault ? fault : "", strlen(r.out));
    pthread_mutex_unlock(&g->lock);
    run_free(&r);
    return diff;
}

/* Prints a loop program's difference: its setting, why, and how to run it. */
static void loop_difference(long seed, const struct loop_setting *ls, const char *why, const struct run *base,
                            const struct run *shim)
{
    struct setting st = {ls->name, {NULL}};
    report_difference(seed, &st, NULL, why, base, shim);
    printf("  loop program: build/tests/fuzzprog %s %ld under", loop_program(ls->kind), seed);
    for (int i = 0; ls->env[i]; i++)
        printf(" %s", ls->env[i]);
    printf(" GRAPHSHIM_TEST_CLOCK=fake FAKECUDA_CLOCK=virtual FAKECUDA_STATS=stats\n");
}

/* The loop program of seed under one time setting (fuzz_oracle.h), without
** and with graphshim: the same output, accounts that agree, and the time the
** setting allows.  Returns 1 for a difference. */
static int loop_run(long seed, const struct loop_setting *ls)
{
    char arg[32], why[400];
    const char *env[12];
    int n = 0, d = 0;
    struct run base, r;

    snprintf(arg, sizeof arg, "%ld", seed);
    const char *argv[] = {g_prog, loop_program(ls->kind), arg, NULL};
    for (int i = 0; ls->env[i]; i++)
        env[n++] = ls->env[i];
    env[n++] = "FAKECUDA_STATS=@/stats";
    /* both runs on the virtual clock (run_prog gives it to shim runs alone) */
    env[n++] = "FAKECUDA_CLOCK=virtual";
    env[n++] = "GRAPHSHIM_TEST_CLOCK=fake";
    env[n] = NULL;
    run_prog(&base, 0, env, argv, g_timeout);
    char glaunch[64];
    if (ls->kind == LOOP_EVEN) {
        /* the plain run launches no graph: its time is the same without this */
        snprintf(glaunch, sizeof glaunch, "FAKECUDA_GRAPH_LAUNCH_US=%ld", loop_graph_launch_us(base.out));
        env[n++] = glaunch;
    }
    env[n++] = "GRAPHSHIM_REPORT=@/report.json";
    env[n] = NULL;
    run_prog(&r, 1, env, argv, g_timeout);
    char *json = run_file(&r, "report.json"), *bs = run_file(&base, "stats"), *ss = run_file(&r, "stats");
    pthread_mutex_lock(&g->lock);
    g->loops++;
    if (base.status != 0 || r.status != base.status || strcmp(r.out, base.out) != 0)
        loop_difference(seed, ls, "the loop program's output or status differs", &base, &r), d = 1;
    else if (oracle_accounts(json, bs, ss, why, sizeof why) ||
             (ls->kind >= LOOP_STEPS ? oracle_steps(ls, base.out, r.err, json, bs, ss, why, sizeof why)
                                     : oracle_loop_time(ls, base.out, json, bs, ss, why, sizeof why)))
        loop_difference(seed, ls, why, &base, &r), d = 1;
    pthread_mutex_unlock(&g->lock);
    free(json), free(bs), free(ss);
    run_free(&base), run_free(&r);
    return d;
}

/* Runs one seed plainly and under every setting, then with injected faults;
** returns the differences. */
static int run_seed(long seed, int verbose)
{
    char arg[32], pend[32];
    struct run base;
    int diffs = 0;

    if (g_loops_only) {
        for (int i = 0; i < nloop_settings; i++)
            diffs += loop_run(seed, &loop_settings[i]);
        return diffs;
    }
    snprintf(arg, sizeof arg, "%ld", seed);
    const char *argv[] = {g_prog, arg, g_max_threads, NULL};
    char sched[48];
    snprintf(sched, sizeof sched, "FUZZ_SCHEDULE=%s", g_free ? "" : arg);
    run_prog(&base, 0, (const char *[]){sched, "FAKECUDA_STATS=@/stats", pending_env(seed, pend, sizeof pend), NULL},
             argv, g_timeout);
    for (int i = 0; i < NSETTINGS && !g_inject_only; i++)
        diffs += shim_run(seed, argv, &base, &settings[i], i, NULL, 0, verbose);
    for (int i = 0; i < nloop_settings && !g_inject_only && !g_free; i++)
        diffs += loop_run(seed, &loop_settings[i]);
    if (g_inject) {
        struct plain_log log = {argv, NULL};
        const char *t = strstr(base.out, " threads ");
        int threads = t ? atoi(t + 9) : 0;
        for (int k = 0; k < g_inject; k++) {
            char spec[128];
            int setting, row = draw_fault(seed, k, threads, &log, spec, sizeof spec, &setting);
            diffs += shim_run(seed, argv, &base, &settings[setting], NSETTINGS, spec, row, verbose);
        }
        free(log.text);
    }
    run_free(&base);
    return diffs;
}

static void worker(long start, long count, int first, double deadline)
{
    while (now() < deadline) {
        long k = atomic_fetch_add(&g->next, 1);
        if ((count > 0 && k >= count) || (first && atomic_load(&g->found)))
            break;
        long seed = start + k;
        int d = run_seed(seed, 0);
        pthread_mutex_lock(&g->lock);
        g->programs++;
        g->differences += d;
        pthread_mutex_unlock(&g->lock);
        if (d)
            atomic_store(&g->found, 1);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzzrun [--seconds N] [--seed S] [--start S] [--count N] [--first] [--free] "
                    "[--jobs J] [--timeout T] [--max-threads M] [--inject K] [--inject-only] [--inject-all] [--loops]\n");
    exit(2);
}

/* What the command line asks for. */
struct args {
    double seconds;
    long seed, start, count;
    int first, jobs;
};

static void parse_args(int argc, char **argv, struct args *o)
{
    static const struct { const char *name; int *flag; } flags[] = {
        {"--inject-only", &g_inject_only}, {"--inject-all", &g_inject_all}, {"--free", &g_free},
        {"--loops", &g_loops_only}};
    for (int i = 1; i < argc; i++) {
        int f = 0;
        for (; f < (int)(sizeof flags / sizeof flags[0]) && strcmp(argv[i], flags[f].name); f++) {
        }
        if (f < (int)(sizeof flags / sizeof flags[0])) {
            *flags[f].flag = 1;
            continue;
        }
        if (!strcmp(argv[i], "--first")) {
            o->first = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--seconds"))
            o->seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed"))
            o->seed = atol(argv[++i]);
        else if (!strcmp(argv[i], "--start"))
            o->start = atol(argv[++i]);
        else if (!strcmp(argv[i], "--count"))
            o->count = atol(argv[++i]);
        else if (!strcmp(argv[i], "--jobs"))
            o->jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-threads"))
            snprintf(g_max_threads, sizeof g_max_threads, "%d", atoi(argv[++i]));
        else if (!strcmp(argv[i], "--timeout"))
            g_timeout = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--inject"))
            g_inject = atoi(argv[++i]);
        else
            usage();
    }
}

int main(int argc, char **argv)
{
    struct args o = {60, -1, 1, 0, 0, (int)sysconf(_SC_NPROCESSORS_ONLN)};
    pthread_mutexattr_t ma;

    parse_args(argc, argv, &o);
    if (g_inject < 0 || (g_inject_only && !g_inject))
        usage();
    if (o.jobs < 1)
        o.jobs = 1;
    snprintf(g_prog, sizeof g_prog, "%s/tests/fuzzprog", BUILD_DIR);
    g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED)
        return perror("mmap"), 2;
    memset(g, 0, sizeof *g);
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&g->lock, &ma);
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (o.seed >= 0) {
        g->differences = run_seed(o.seed, 1);
        g->programs = 1;
    } else {
        double deadline = now() + o.seconds;
        for (int j = 0; j < o.jobs; j++)
            if (fork() == 0) {
                worker(o.start, o.count, o.first, deadline);
                _exit(0);
            }
        while (wait(NULL) > 0) {
        }
    }
    printf("fuzz: %ld programs, %ld differences (at most %s threads; settings:", g->programs, g->differences,
           g_max_threads);
    for (int i = 0; i < NSETTINGS && !g_inject_only && !g_loops_only; i++)
        printf(" %s", settings[i].name);
    for (int i = 0; i < nloop_settings && !g_inject_only && !g_free; i++)
        printf(" %s", loop_settings[i].name);
    if (g_inject && !g_loops_only)
        printf(" %sinjected x %d", g_inject_only ? "" : "+ ", g_inject);
    printf(")\n");
    for (int i = 0; i <= NSETTINGS; i++) {
        const struct engine_sums *s = &g->sums[i];
        if (!s->programs)
            continue;
        printf("  %-16s ops %lld, held %lld, replayed %lld, replays %lld, chunks %lld, body graphs %lld, "
               "out-of-memory retries %lld; %lld of %lld programs replayed\n",
               i < NSETTINGS ? settings[i].name : "injected", s->ops, s->held, s->replayed, s->replays, s->chunks,
               s->body_graphs, s->oom_retries, s->with_replays, s->programs);
    }
    if (g->loops)
        printf("  loop programs    %ld runs under the time settings, each without and with graphshim\n", g->loops);
    if (g->injected) {
        printf("  injected faults: %ld runs, %ld met a call of graphshim's (", g->injected, g->landed);
        for (int i = 0; i < NSHIM + NSHARED; i++)
            printf("%s%s %ld", i ? ", " : "", i < NSHIM ? shim_calls[i].entry : shared_calls[i - NSHIM].entry,
                   g->landed_by[i]);
        printf(")\n");
    }
    return g->differences ? 1 : 0;
}
