/*
** prof.c: the engine's phase timers (prof.h), in the profile build only.
*/
#include "prof.h"

#ifdef GS_PROFILE
#include "../../driver/driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GS_PROF_BUCKETS 40

/* One thread's counts; all threads' blocks are kept in a list for the exit. */
struct prof_block {
    uint64_t calls[GS_NPROF], cycles[GS_NPROF];
    uint64_t hist[GS_NPROF][GS_PROF_BUCKETS]; /* calls by floor(log2(cycles)) */
    struct prof_block *next;
};

static const char *const phase_names[GS_NPROF] = {
    [GS_PROF_LAUNCH] = "launch (all of it)", [GS_PROF_KEY] = "  key",
    [GS_PROF_BEGIN] = "  op_begin",          [GS_PROF_HELD] = "    held",
    [GS_PROF_LEARNED] = "    issued, learned", [GS_PROF_ISSUED] = "    issued, not learned",
    [GS_PROF_RESTED] = "    resting (shape only)", [GS_PROF_PASSED] = "    passed through",  [GS_PROF_DRIVER] = "  driver launch",
    [GS_PROF_DRIVER_OFF] = "  driver launch, graphshim paused", [GS_PROF_CHUNK] = "      of those, early chunks",
    [GS_PROF_KEY_ARGS] = "  key built: new arguments", [GS_PROF_MISS_NONE] = "  key built: no op expected", [GS_PROF_MISS_BODY] = "  key built: a loop body holds",
    [GS_PROF_MISS_ATTR] = "  key built: attributes", [GS_PROF_MISS_OTHER] = "  key built: another op",
    [GS_PROF_END] = "  op_end",              [GS_PROF_BOUNDARY] = "boundary (before a guarded call)",
    [GS_PROF_SYNCED] = "synced (after a stream sync)",
    [GS_PROF_GRAPH] = "held ops out as a graph (in the above)", [GS_PROF_GRAPH_SET] = "  variant, nodes set",
    [GS_PROF_ARGS_HASH] = "    arguments hashed", [GS_PROF_NODE_SET] = "    driver node set",
    [GS_PROF_GRAPH_CAPTURE] = "  capture, instantiate", [GS_PROF_GRAPH_LAUNCH] = "  driver graph launch",
    [GS_PROF_EAGER] = "held ops out eagerly (in the above)",
};

static struct prof_block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static GS_TLS struct prof_block *mine;
static uint64_t tsc0, ns0;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((constructor)) static void prof_start(void)
{
    ns0 = now_ns();
    tsc0 = __rdtsc();
}

void gs__prof_add(int phase, uint64_t cycles)
{
    struct prof_block *b = mine;
    int bucket = cycles ? 63 - __builtin_clzll(cycles) : 0;

    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return;
        pthread_mutex_lock(&blocks_lock);
        b->next = blocks;
        blocks = b;
        pthread_mutex_unlock(&blocks_lock);
        mine = b;
    }
    b->calls[phase]++;
    b->cycles[phase] += cycles;
    b->hist[phase][bucket < GS_PROF_BUCKETS ? bucket : GS_PROF_BUCKETS - 1]++;
}

/* The upper end, in cycles, of the bucket holding the call at fraction q. */
static double quantile(const uint64_t *hist, uint64_t calls, double q)
{
    uint64_t seen = 0;
    for (int i = 0; i < GS_PROF_BUCKETS; i++) {
        seen += hist[i];
        if ((double)seen >= q * (double)calls)
            return (double)(2ull << i);
    }
    return 0;
}

void gs__prof_print(void)
{
    struct prof_block sum = {0};
    double ns_per_cycle = (double)(now_ns() - ns0) / (double)(__rdtsc() - tsc0);

    pthread_mutex_lock(&blocks_lock);
    for (struct prof_block *b = blocks; b; b = b->next)
        for (int p = 0; p < GS_NPROF; p++) {
            sum.calls[p] += b->calls[p];
            sum.cycles[p] += b->cycles[p];
            for (int i = 0; i < GS_PROF_BUCKETS; i++)
                sum.hist[p][i] += b->hist[p][i];
        }
    pthread_mutex_unlock(&blocks_lock);
    fprintf(stderr, "graphshim profile (%.3f ns per cycle; median and p99 are a bucket's upper end, x2 steps)\n",
            ns_per_cycle);
    fprintf(stderr, "  %-34s %10s %10s %10s %10s\n", "phase", "calls", "mean ns", "median<=", "p99<=");
    for (int p = 0; p < GS_NPROF; p++) {
        uint64_t n = sum.calls[p];
        if (!n)
            continue;
        fprintf(stderr, "  %-34s %10llu %10.1f %10.0f %10.0f\n", phase_names[p], (unsigned long long)n,
                (double)sum.cycles[p] * ns_per_cycle / (double)n, quantile(sum.hist[p], n, 0.5) * ns_per_cycle,
                quantile(sum.hist[p], n, 0.99) * ns_per_cycle);
    }
}
#else
typedef int gs__prof_off; /* the normal build times nothing */
#endif
