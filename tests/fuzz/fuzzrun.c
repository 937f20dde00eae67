/*
** fuzzrun.c: the differential fuzz runner (tests/fuzz/README.md).
**
**   fuzzrun [--seconds N] [--seed S] [--start S] [--jobs J] [--timeout T] [--max-threads M]
**
** Runs fuzzprog for seed after seed (from --start, default 1) until --seconds
** have passed, or only --seed S.  Each seed runs once over the fake driver
** without graphshim and once with it under each setting of knobs below; the
** standard output and exit status of each shim run must equal the plain run's.
** A difference (a timeout included) is printed with the seed, the setting and
** a diff.  At the end it prints how many programs ran and differed, and, per
** setting, how much the engine did (sums from the GRAPHSHIM_REPORT of each run),
** so that one can see that the fuzz reaches held and replayed work.  Seeds are
** spread over --jobs worker processes (default: the CPUs online).
** Exit status: 0 without differences, 1 with, 2 for a usage error.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/run.h"

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
};
#define NSETTINGS (int)(sizeof settings / sizeof settings[0])

/* What the engine did under one setting, summed over programs. */
struct engine_sums {
    long long programs, ops, held, replayed, replays, chunks, body_graphs, with_replays;
};

/* State shared by the workers (in a shared mapping). */
struct shared {
    pthread_mutex_t lock;          /* process-shared: output and sums */
    atomic_long next;              /* seeds handed out so far */
    long programs, differences;
    struct engine_sums sums[NSETTINGS];
};

static struct shared *g;
static char g_prog[512];
static int g_timeout = 30;
static char g_max_threads[16] = "8";   /* passed on to fuzzprog */

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
        s->body_graphs += json_int(tot, "body_graphs");
        s->with_replays += replays > 0;
    }
    free(json);
}

/* Prints a difference: seed, setting, statuses and a diff of the outputs. */
static void report_difference(long seed, const struct setting *st, const struct run *base, const struct run *shim)
{
    char path[2][300], cmd[1024];
    FILE *f;

    snprintf(path[0], sizeof path[0], "%s/expected", shim->dir);
    snprintf(path[1], sizeof path[1], "%s/stdout", shim->dir);
    if ((f = fopen(path[0], "w"))) {
        fputs(base->out, f);
        fclose(f);
    }
    printf("fuzz: DIFFERENCE seed %ld setting %s:", seed, st->name);
    for (int i = 0; st->env[i]; i++)
        printf(" %s", st->env[i]);
    printf("\n  exit status %d without the shim, %d with it%s\n", base->status, shim->status,
           shim->status == 128 + 14 ? " (timed out)" : "");
    printf("  rerun: make fuzz SEED=%ld FUZZ_THREADS=%s\n", seed, g_max_threads);
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' | head -40; tail -5 '%s/stderr' | sed 's/^/  stderr: /'", path[0],
             path[1], shim->dir);
    if (system(cmd) != 0) {
        /* diff's own status says nothing more */
    }
    fflush(stdout);
}

/* Runs one seed plainly and under every setting; returns the differences. */
static int run_seed(long seed, int verbose)
{
    char arg[32];
    struct run base;
    int diffs = 0;

    snprintf(arg, sizeof arg, "%ld", seed);
    const char *argv[] = {g_prog, arg, g_max_threads, NULL};
    run_prog(&base, 0, NULL, argv, g_timeout);
    for (int i = 0; i < NSETTINGS; i++) {
        const char *env[8];
        int n = 0;
        struct run r;
        for (int j = 0; settings[i].env[j]; j++)
            env[n++] = settings[i].env[j];
        env[n++] = "GRAPHSHIM_REPORT=@/report.json";
        env[n] = NULL;
        run_prog(&r, 1, env, argv, g_timeout);
        pthread_mutex_lock(&g->lock);
        add_report(&g->sums[i], &r);
        if (base.status != 0 || r.status != base.status || strcmp(r.out, base.out) != 0) {
            report_difference(seed, &settings[i], &base, &r);
            diffs++;
        } else if (verbose) {
            printf("fuzz: seed %ld setting %s: same (%zu bytes of output)\n", seed, settings[i].name, strlen(r.out));
        }
        pthread_mutex_unlock(&g->lock);
        run_free(&r);
    }
    run_free(&base);
    return diffs;
}

static void worker(long start, double deadline)
{
    while (now() < deadline) {
        long seed = start + atomic_fetch_add(&g->next, 1);
        int d = run_seed(seed, 0);
        pthread_mutex_lock(&g->lock);
        g->programs++;
        g->differences += d;
        pthread_mutex_unlock(&g->lock);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzzrun [--seconds N] [--seed S] [--start S] [--jobs J] [--timeout T] "
                    "[--max-threads M]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    double seconds = 60;
    long seed = -1, start = 1;
    int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pthread_mutexattr_t ma;

    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed"))
            seed = atol(argv[++i]);
        else if (!strcmp(argv[i], "--start"))
            start = atol(argv[++i]);
        else if (!strcmp(argv[i], "--jobs"))
            jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-threads"))
            snprintf(g_max_threads, sizeof g_max_threads, "%d", atoi(argv[++i]));
        else if (!strcmp(argv[i], "--timeout"))
            g_timeout = atoi(argv[++i]);
        else
            usage();
    }
    if (jobs < 1)
        jobs = 1;
    snprintf(g_prog, sizeof g_prog, "%s/tests/fuzzprog", BUILD_DIR);
    g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED)
        return perror("mmap"), 2;
    memset(g, 0, sizeof *g);
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&g->lock, &ma);
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (seed >= 0) {
        g->differences = run_seed(seed, 1);
        g->programs = 1;
    } else {
        double deadline = now() + seconds;
        for (int j = 0; j < jobs; j++)
            if (fork() == 0) {
                worker(start, deadline);
                _exit(0);
            }
        while (wait(NULL) > 0) {
        }
    }
    printf("fuzz: %ld programs, %ld differences (at most %s threads; settings:", g->programs, g->differences,
           g_max_threads);
    for (int i = 0; i < NSETTINGS; i++)
        printf(" %s", settings[i].name);
    printf(")\n");
    for (int i = 0; i < NSETTINGS; i++) {
        const struct engine_sums *s = &g->sums[i];
        printf("  %-16s ops %lld, held %lld, replayed %lld, replays %lld, chunks %lld, body graphs %lld; "
               "%lld of %lld programs replayed\n",
               settings[i].name, s->ops, s->held, s->replayed, s->replays, s->chunks, s->body_graphs,
               s->with_replays, s->programs);
    }
    return g->differences ? 1 : 0;
}
