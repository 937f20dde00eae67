/*
** fuzz_sched.c: a deterministic interleaving of the program's threads
** (FUZZ_SCHEDULE=N; tests/fuzz/README.md).
**
** One thread runs at a time.  The running thread hands the turn on only
** between ops (never inside a driver call, so that no thread waits inside one
** for another that cannot run), to a thread drawn from the schedule's random
** numbers among those not finished: the same N gives the same order of every
** driver call of every thread, run after run.  With the fake driver's virtual
** clock and graphshim's test clock (the watchdog checks held work as that clock
** moves, in the thread that moved it), a program's run under graphshim is then
** the same every time, and a difference found once is found again.  Without
** FUZZ_SCHEDULE (or with one thread) threads run free.
*/
#include "fuzzprog.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int on, running = -1, live[MAX_THREADS], nthreads;
static uint64_t rng;

/* Draws the next thread to run among those not finished; -1 for none.  Called
** with mu. */
static void pick_next(void)
{
    int c[MAX_THREADS], n = 0;
    for (int i = 0; i < nthreads; i++)
        if (live[i])
            c[n++] = i;
    running = n ? c[rnd(&rng, (unsigned)n)] : -1;
    pthread_cond_broadcast(&cv);
}

void sched_init(int threads)
{
    const char *v = getenv("FUZZ_SCHEDULE");
    if (!v || !*v || threads < 2)
        return;
    on = 1;
    nthreads = threads;
    rng = strtoull(v, NULL, 0) * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < threads; i++)
        live[i] = 1;
    pick_next();
}

static void wait_turn(int tid)
{
    while (running != tid)
        pthread_cond_wait(&cv, &mu);
}

void sched_enter(const struct thr *t)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    wait_turn(t->tid);
    pthread_mutex_unlock(&mu);
}

void sched_turn(const struct thr *t)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    pick_next();
    wait_turn(t->tid);
    pthread_mutex_unlock(&mu);
}

void sched_leave(const struct thr *t)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    live[t->tid] = 0;
    pick_next();
    pthread_mutex_unlock(&mu);
}
