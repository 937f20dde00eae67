/*
** fuzzrun.c: the differential fuzz runner (tests/fuzz/README.md).
**
**   fuzzrun [--seconds N] [--seed S] [--start S] [--count N] [--first] [--free] [--jobs J]
**           [--timeout T] [--max-threads M] [--inject K] [--inject-only] [--inject-all] [--loops]
**           [--loops-every N] [--setting P] [--xs-extra N] [--no-drop]
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
** (FAKECUDA_FAIL, tests/fakecuda/README.md; or the test build's own faults:
** its allocations, its entry points, its own calls of any entry point,
** fuzzrun.h): the output must be the same, and
** a failed capture, instantiation or graph launch must show in the report.
** --inject-only skips the plain settings; --inject-all also fails calls whose
** failures show faults not fixed yet (shim_calls' open); --loops-every N runs
** the loop programs with every Nth seed only (make coverage: they reach the
** same few rules from seed to seed), the programs across streams with every
** seed still, each followed by K runs that fail one of graphshim's own calls
** in a group's paths (fuzz_xinject.c); --loops --setting P runs only the loop
** settings whose name begins with P (--setting xs: the programs across
** streams alone, as make mutants' judge of their planted bugs); --no-drop
** skips the loop settings that turn a rule off (GRAPHSHIM_TEST_DROP_RULE:
** make coverage's build counts the library users run, which has no such
** switch).  A difference (a timeout included) is
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

#include "fuzzrun.h"

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
    long alloc_injected, alloc_landed; /* runs whose fault is an allocation's, and those it met */
    long noentry_runs;                 /* runs over a driver without some entry points */
    long own_injected, own_landed;     /* runs failing one of graphshim's own calls, and those it met */
    struct own_by { char entry[48]; long runs, met; } own_by[48]; /* the same, per entry point */
    long xs_injected, xs_landed_by[NXS_PATHS]; /* the programs across streams' faults */
};

static struct shared *g;
static char g_prog[512];
int g_timeout = 30;
static char g_max_threads[16] = "8";   /* passed on to fuzzprog */
int g_inject_all;
static int g_inject = 1, g_inject_only;
static int g_loops_only; /* --loops: the loop programs' time settings alone */
static const char *g_setting = ""; /* --setting P: with --loops, those whose name begins with P */

/* Does --setting choose the loop setting ls (or --loops none was given)? */
static int g_no_drop; /* --no-drop: no setting that turns a rule off */
static int loop_chosen(const struct loop_setting *ls)
{
    for (int i = 0; g_no_drop && ls->env[i]; i++)
        if (!strncmp(ls->env[i], "GRAPHSHIM_TEST_DROP_RULE=", 25))
            return 0;
    return !g_loops_only || strncmp(ls->name, g_setting, strlen(g_setting)) == 0;
}
static long g_loops_every = 1; /* --loops-every N: the loop programs with every Nth seed only */
/* --xs-extra N: each seed also runs the programs across streams of N seeds of
** their own domain (xs_seed), which cost a tenth of a seed's other programs:
** the judge's first minute runs ten times as many of them */
static int g_xs_extra = XS_EXTRA;
static int g_free;   /* --free: threads run free, host clocks (no run is like another) */

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
    /* the loop, step and period programs run without FAKECUDA_PENDING */
    const char *pending = strncmp(st->name, "loop-", 5) && strncmp(st->name, "steps-", 6) && strncmp(st->name, "xs", 2) &&
                                  strncmp(st->name, "periods", 7)
                              ? pending_env(seed, pend, sizeof pend) : NULL;

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
    const char *fv = NULL, *var = fault ? fault_var(fault, &fv) : NULL;
    if (fault)
        printf(" %s=%s", var, fv);
    printf("\n  exit status %d without the shim, %d with it%s\n", base->status, shim->status,
           shim->status == 128 + 14 ? " (timed out)" : "");
    if (why)
        printf("  %s\n", why);
    printf("  rerun: make fuzz SEED=%ld FUZZ_THREADS=%s%s%s\n", seed, g_max_threads,
           g_free ? " FUZZ_FREE=1 (threads ran free: the difference may not come again)" : "",
           st->flags & SET_HOST_CLOCK ? " (graphshim's clock was the host's: the difference may not come again)" : "");
    if (fault) {
        printf("  or: %s=%s", var, fv);
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

/* May a plain run end with status under setting st?  0, or where the
** setting's programs end by a signal (fuzz_end.c) 128 + SIGHUP, SIGINT or
** SIGTERM. */
static int status_allowed(const struct setting *st, int status)
{
    return status == 0 || ((st->flags & SET_SIGNAL_END) && (status == 128 + 1 || status == 128 + 2 || status == 128 + 15));
}

/* Is the report of the shim run r there and whole (its totals and its last
** brace)?  A signal's end writes it from graphshim's own thread
** (policy/entry/ending.c); the fake driver's counts are not written then. */
static int report_whole(const struct run *r)
{
    char *json = run_file(r, "report.json");
    size_t n = json ? strlen(json) : 0;
    while (n && (json[n - 1] == '\n' || json[n - 1] == ' '))
        n--;
    int whole = json && strstr(json, "\"totals\"") && n && json[n - 1] == '}';
    free(json);
    return whole;
}

/* The environment of a run of seed under graphshim with the setting st: the
** setting's, the report's and the fake's counts', the seed's schedule (or
** threads free), its pending work, and the fault (NULL for none), as
** fault_var says.  Returns the entries of e->v, NULL-terminated. */
struct shim_env {
    const char *v[20];
    char fail[200], pend[32], sched[48];
};
static int shim_env(struct shim_env *e, long seed, const struct setting *st, const char *fault)
{
    int n = 0;

    for (int j = 0; st->env[j]; j++)
        e->v[n++] = st->env[j];
    e->v[n++] = "GRAPHSHIM_REPORT=@/report.json";
    e->v[n++] = "FAKECUDA_STATS=@/stats";
    if (g_free) {
        /* The host's clock: where the watchdog fires, at random, explores
        ** orders a virtual clock would not (and no run is like another). */
        e->v[n++] = "GRAPHSHIM_TEST_CLOCK=host";
        e->v[n++] = "FAKECUDA_CLOCK=host";
    } else {
        /* The seed's schedule of threads and the virtual clocks (run_prog's
        ** default): the run is the same every time. */
        snprintf(e->sched, sizeof e->sched, "FUZZ_SCHEDULE=%ld", seed);
        e->v[n++] = e->sched;
        e->v[n++] = "MALLOC_ARENA_MAX=1";
    }
    if (pending_env(seed, e->pend, sizeof e->pend))
        e->v[n++] = e->pend;
    if (fault) {
        const char *v, *var = fault_var(fault, &v);
        snprintf(e->fail, sizeof e->fail, "%s=%s", var, v);
        e->v[n++] = e->fail;
    }
    e->v[n] = NULL;
    return n;
}

/* The own calls per entry point (GRAPHSHIM_TEST_OWN_COUNTS) of a run of seed
** under graphshim with the setting st, the injected run's but its fault;
** text freed by the caller, NULL where none was written. */
static char *own_counts(long seed, const char *const *argv, const struct setting *st)
{
    struct shim_env e;
    struct run r;
    int n = shim_env(&e, seed, st, NULL);
    char *text;

    e.v[n++] = "GRAPHSHIM_TEST_OWN_COUNTS=@/own.counts";
    e.v[n] = NULL;
    run_prog(&r, 1, e.v, argv, g_timeout);
    text = run_file(&r, "own.counts");
    run_free(&r);
    return text;
}

/* Counts a run that fails one of graphshim's own calls (spec "own:ENTRY:..."),
** and whether it met it (stderr err), per entry point.  Called locked. */
static void own_count(const char *fault, const char *err)
{
    int met = strstr(err, "graphshim: injected own-call failure") != NULL, i = 0;
    size_t len = strcspn(fault + 4, ":");

    g->own_injected++;
    g->own_landed += met;
    while (i < 48 && g->own_by[i].entry[0] &&
           (strlen(g->own_by[i].entry) != len || strncmp(g->own_by[i].entry, fault + 4, len)))
        i++;
    if (i == 48 || len >= sizeof g->own_by[i].entry)
        return;
    memcpy(g->own_by[i].entry, fault + 4, len);
    g->own_by[i].runs++;
    g->own_by[i].met += met;
}

/* One run of seed under graphshim with the setting st, compared with base.
** slot: where its report is summed (NSETTINGS: the injected runs); fault: its
** injected fault (fault_var) or NULL, and row the call it fails.  Returns 1
** for a difference. */
static int shim_run(long seed, const char *const *argv, const struct run *base, const struct setting *st, int slot,
                    const char *fault, int row, int verbose)
{
    struct shim_env e;
    int diff = 0;
    struct run r;

    shim_env(&e, seed, st, fault);
    run_prog(&r, 1, e.v, argv, g_timeout);
    pthread_mutex_lock(&g->lock);
    add_report(&g->sums[slot], &r);
    if (!status_allowed(st, base->status) || r.status != base->status || strcmp(r.out, base->out) != 0) {
        report_difference(seed, st, fault, NULL, base, &r);
        diff = 1;
    } else if (!fault && base->status != 0 && !report_whole(&r)) {
        report_difference(seed, st, fault, "the program ended by a signal, and graphshim's report is missing or cut",
                          base, &r);
        diff = 1;
    } else if (!fault && base->status == 0 && accounts_differ(seed, st, base, &r)) {
        diff = 1;
    } else if (row == NOENTRY_ROW) {
        g->noentry_runs++; /* the output alone judges */
    } else if (row == OWN_ROW) {
        own_count(fault, r.err); /* the output alone judges */
    } else if (row == ALLOC_ROW) {
        /* graphshim without memory: the output alone judges */
        g->alloc_injected++;
        g->alloc_landed += strstr(r.err, "graphshim: injected allocation failure") != NULL;
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
        printf("fuzz: seed %ld setting %s%s%s: same (%zu bytes of output)\n", seed, st->name, fault ? " " : "",
               fault ? e.fail : "", strlen(r.out));
    pthread_mutex_unlock(&g->lock);
    run_free(&r);
    return diff;
}

/* Prints a loop program's difference: its setting, why, and how to run it;
** fault: the injected fault's spec, fail its variable (NULL: none). */
static void loop_fault_difference(long seed, const struct loop_setting *ls, const char *fault, const char *fail,
                                  const char *why, const struct run *base, const struct run *shim)
{
    struct setting st = {ls->name, {NULL}, 0};
    report_difference(seed, &st, fault, why, base, shim);
    printf("  loop program: build/tests/fuzzprog %s %ld under", loop_program(ls->kind), seed);
    for (int i = 0; ls->env[i]; i++)
        printf(" %s", ls->env[i]);
    printf("%s%s GRAPHSHIM_TEST_CLOCK=fake FAKECUDA_CLOCK=virtual%s\n", fail ? " " : "", fail ? fail : "",
           fail ? "" : " FAKECUDA_STATS=stats");
}

static void loop_difference(long seed, const struct loop_setting *ls, const char *why, const struct run *base,
                            const struct run *shim)
{
    loop_fault_difference(seed, ls, NULL, NULL, why, base, shim);
}

/* Injected run k of the program across streams of seed under ls: one of
** graphshim's own calls in a group's paths fails (fuzz_xinject.c, drawn from
** shim's call log); the output and the status must be base's.  env (n
** entries, the shim run's less its call log) and argv: the shim run's. */
static int xs_inject_run(long seed, const struct loop_setting *ls, int k, const struct run *base,
                         const struct run *shim, const char **env, int n, const char *const *argv)
{
    char spec[160], fail[200], *log = run_file(shim, "calls.log");
    int path = xs_draw_fault(seed, k, log, spec, sizeof spec), d = 0;
    struct run r;

    free(log);
    if (path < 0)
        return 0;
    snprintf(fail, sizeof fail, "FAKECUDA_FAIL=%s", spec);
    env[n++] = fail;
    env[n] = NULL;
    run_prog(&r, 1, env, argv, g_timeout);
    pthread_mutex_lock(&g->lock);
    g->xs_injected++;
    if (strstr(r.err, "fakecuda: injected"))
        g->xs_landed_by[path]++;
    if (r.status != base->status || strcmp(r.out, base->out) != 0)
        loop_fault_difference(seed, ls, spec, fail, xs_paths[path], base, &r), d = 1;
    pthread_mutex_unlock(&g->lock);
    run_free(&r);
    return d;
}

/* The loop program of seed under ls once more, with one of graphshim's own
** calls failing, drawn from the counts of its run with graphshim (shim): the
** output and the status must be base's (no claim of time).  env (n entries)
** and argv: the shim run's. */
static int loop_own_run(long seed, const struct loop_setting *ls, const struct run *base, const struct run *shim,
                        const char **env, int n, const char *const *argv)
{
    char spec[160], fail[200], *counts = run_file(shim, "own.counts");
    int leaks = ls->kind == LOOP_OOM ? OWN_NO_LEAK : OWN_LEAKS, d = 0;
    int row = draw_own_fault(seed, (int)(ls - loop_settings), counts, leaks, spec, sizeof spec);
    const char *v, *var;
    struct run r;

    free(counts);
    if (row != OWN_ROW)
        return 0;
    var = fault_var(spec, &v);
    snprintf(fail, sizeof fail, "%s=%s", var, v);
    env[n++] = fail;
    env[n] = NULL;
    run_prog(&r, 1, env, argv, g_timeout);
    pthread_mutex_lock(&g->lock);
    own_count(spec, r.err);
    if (r.status != base->status || strcmp(r.out, base->out) != 0)
        loop_fault_difference(seed, ls, spec, fail,
                              "a failed own call of graphshim's changed the loop program's output", base, &r), d = 1;
    pthread_mutex_unlock(&g->lock);
    run_free(&r);
    return d;
}

/* The loop program of seed under one time setting (fuzz_oracle.h), without
** and with graphshim: the same output, accounts that agree, and the time the
** setting allows.  Returns 1 for a difference. */
static int loop_run(long seed, const struct loop_setting *ls)
{
    char arg[32], why[400];
    const char *env[16];
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
    long glaunch_us = loop_graph_launch_us(ls->kind, base.out);
    if (glaunch_us) {
        /* the plain run launches no graph: its time is the same without this */
        snprintf(glaunch, sizeof glaunch, "FAKECUDA_GRAPH_LAUNCH_US=%ld", glaunch_us);
        env[n++] = glaunch;
    }
    env[n++] = "GRAPHSHIM_REPORT=@/report.json";
    env[n] = NULL;
    if (ls->kind == LOOP_XS && g_inject)
        env[n++] = "FAKECUDA_LOG=@/calls.log", env[n] = NULL; /* graphshim's calls, for the faults */
    /* graphshim's own calls, for a fault of one (not across streams: there a
    ** group's records and waits are the program's, issued by graphshim) */
    int own = ls->kind != LOOP_XS && g_inject && (seed + (ls - loop_settings)) % ALLOC_EVERY == OWN_KIND;
    if (own)
        env[n++] = "GRAPHSHIM_TEST_OWN_COUNTS=@/own.counts", env[n] = NULL;
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
    if (ls->kind == LOOP_XS && !d)
        for (int k = 0; k < g_inject; k++)
            d += xs_inject_run(seed, ls, k, &base, &r, env, n - 1, argv);
    if (own && !d)
        d += loop_own_run(seed, ls, &base, &r, env, n, argv);
    run_free(&base), run_free(&r);
    return d;
}

/* Draws injected run k of seed (fuzzrun.h): by (seed + k) % ALLOC_EVERY, a
** failed allocation, a driver without entry points, a failed own call of
** graphshim's (drawn from a run of its own, argv), or a failed call of the
** fake driver's. */
static int draw_injected(long seed, int k, int threads, struct plain_log *log, char *spec, size_t len, int *setting)
{
    long kind = (seed + k) % ALLOC_EVERY;

    if (kind == ALLOC_EVERY - 1)
        return draw_alloc_fault(seed, k, spec, len, setting);
    if (kind == ALLOC_EVERY - 2)
        return draw_noentry_fault(seed, k, log, spec, len, setting);
    if (kind == OWN_KIND) {
        *setting = draw_own_setting(seed, k);
        char *counts = own_counts(seed, log->argv, &settings[*setting]);
        int leaks = strncmp(settings[*setting].name, "oom", 3) ? OWN_LEAKS : OWN_ONE_LEAK;
        int row = draw_own_fault(seed, k, counts, leaks, spec, len);
        free(counts);
        if (row == OWN_ROW)
            return row;
    }
    return draw_fault(seed, k, threads, log, spec, len, setting);
}

/* The seed of the j-th extra programs across streams of seed: a domain of
** their own, above the seeds run (a seed there runs none more).  A difference
** names that seed: `fuzzrun --seed` of it runs its programs across streams. */
static long xs_seed(long seed, int j)
{
    return XS_DOMAIN + seed * XS_EXTRA_MAX + j;
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
            if (loop_chosen(&loop_settings[i]))
                diffs += loop_run(seed, &loop_settings[i]);
        return diffs;
    }
    snprintf(arg, sizeof arg, "%ld", seed);
    const char *argv[] = {g_prog, arg, g_max_threads, NULL};
    char sched[48];
    snprintf(sched, sizeof sched, "FUZZ_SCHEDULE=%s", g_free ? "" : arg);
    run_prog(&base, 0, (const char *[]){sched, "FAKECUDA_STATS=@/stats", pending_env(seed, pend, sizeof pend), NULL},
             argv, g_timeout);
    for (int i = 0; i < NSETTINGS && !g_inject_only; i++) {
        if (!(settings[i].flags & SET_OWN_BASE)) {
            diffs += shim_run(seed, argv, &base, &settings[i], i, NULL, 0, verbose);
            continue;
        }
        /* the program runs otherwise under the setting: its own plain run */
        const char *env[12];
        int n = 0;
        struct run own;
        for (int j = 0; settings[i].env[j]; j++)
            env[n++] = settings[i].env[j];
        env[n++] = sched, env[n++] = "FAKECUDA_STATS=@/stats", env[n++] = pending_env(seed, pend, sizeof pend);
        env[n] = NULL;
        run_prog(&own, 0, env, argv, g_timeout);
        diffs += shim_run(seed, argv, &own, &settings[i], i, NULL, 0, verbose);
        run_free(&own);
    }
    /* the programs across streams with every seed: short, and each reaches rules others do not */
    for (int i = 0; i < nloop_settings && !g_inject_only && !g_free; i++)
        if ((seed % g_loops_every == 0 || loop_settings[i].kind == LOOP_XS) && loop_chosen(&loop_settings[i]))
            diffs += loop_run(seed, &loop_settings[i]);
    for (int j = 0; j < g_xs_extra && seed >= 0 && seed < XS_DOMAIN && !g_inject_only && !g_free; j++)
        for (int i = 0; i < nloop_settings; i++)
            if (loop_settings[i].kind == LOOP_XS)
                diffs += loop_run(xs_seed(seed, j), &loop_settings[i]);
    if (g_inject) {
        struct plain_log log = {argv, NULL};
        const char *t = strstr(base.out, " threads ");
        int threads = t ? atoi(t + 9) : 0;
        for (int k = 0; k < g_inject; k++) {
            char spec[160];
            int setting, row = draw_injected(seed, k, threads, &log, spec, sizeof spec, &setting);
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
                    "[--jobs J] [--timeout T] [--max-threads M] [--inject K] [--inject-only] [--inject-all] [--loops] "
                    "[--loops-every N] [--setting P] [--xs-extra N] [--no-drop]\n");
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
        {"--loops", &g_loops_only}, {"--no-drop", &g_no_drop}};
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
        else if (!strcmp(argv[i], "--xs-extra") && atoi(argv[i + 1]) >= 0 && atoi(argv[i + 1]) <= XS_EXTRA_MAX)
            g_xs_extra = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--setting"))
            g_setting = argv[++i];
        else if (!strcmp(argv[i], "--loops-every") && atol(argv[i + 1]) > 0)
            g_loops_every = atol(argv[++i]);
        else
            usage();
    }
}

/* What the injected faults met, at the end. */
static void print_faults(void)
{
    if (g->xs_injected) {
        printf("  faults in the programs across streams: %ld runs, met per path:", g->xs_injected);
        for (int i = 0; i < NXS_PATHS; i++)
            printf("%s %s %ld", i ? "," : "", xs_paths[i], g->xs_landed_by[i]);
        printf("\n");
    }
    if (g->injected) {
        printf("  injected faults: %ld runs, %ld met a call of graphshim's (", g->injected, g->landed);
        for (int i = 0; i < NSHIM + NSHARED; i++)
            printf("%s%s %ld", i ? ", " : "", i < NSHIM ? shim_calls[i].entry : shared_calls[i - NSHIM].entry,
                   g->landed_by[i]);
        printf(")\n");
    }
    if (g->alloc_injected)
        printf("  of them failing graphshim's own allocations: %ld runs, %ld met one\n", g->alloc_injected,
               g->alloc_landed);
    if (g->noentry_runs)
        printf("  of them over a driver without some entry points: %ld runs\n", g->noentry_runs);
    if (g->own_injected) {
        printf("  of them failing one of graphshim's own calls: %ld runs, %ld met one (met/runs:", g->own_injected,
               g->own_landed);
        for (int i = 0; i < 48 && g->own_by[i].entry[0]; i++)
            printf("%s %s %ld/%ld", i ? "," : "", g->own_by[i].entry, g->own_by[i].met, g->own_by[i].runs);
        printf(")\n");
    }
}

int main(int argc, char **argv)
{
    struct args o = {60, -1, 1, 0, 0, (int)sysconf(_SC_NPROCESSORS_ONLN)};
    pthread_mutexattr_t ma;

    parse_args(argc, argv, &o);
    for (int i = 0; i < NSETTINGS + NSHIM + NSHARED; i++)
        if (!(i < NSETTINGS ? settings[i].name : i < NSETTINGS + NSHIM ? shim_calls[i - NSETTINGS].entry
                                                                       : shared_calls[i - NSETTINGS - NSHIM].entry))
            return fprintf(stderr, "fuzzrun: fuzzrun.h's counts are not fuzz_settings.c's tables\n"), 2;
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
        if (loop_chosen(&loop_settings[i]))
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
    print_faults();
    return g->differences ? 1 : 0;
}
