/*
** watchdog.c: the thread that issues work held too long (a host that polls memory
** without a CUDA call).
*/
#define _GNU_SOURCE
#include "watchdog.h"

#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../base/assert.h"
#include "../base/clock.h"
#include "../stream/body.h"
#include "../stream/issue.h"
#include "../stream/segment.h"
#include "../stream/stream.h"

static pthread_t watchdog_thread;
static atomic_int watchdog_started;
static atomic_int watchdog_stop;

/* While no stream has held work for GS_WATCHDOG_QUIET naps, the watchdog sleeps
** until a stream begins to hold (gs__held_from wakes it): a program that never
** holds (work that never repeats, one launch per synchronize) is not woken
** thousands of times a second. */
#define GS_WATCHDOG_QUIET 20

/* Does a stream hold work?  Called with the table lock. */
static int any_held(void)
{
    for (struct gs_stream *s = gs__all_streams; s; s = s->next)
        if (atomic_load_explicit(&s->seg.held_since, memory_order_relaxed))
            return 1;
    return 0;
}

/* Sleeps until a stream holds work, where the barrier can be had: a stream that
** set held_since before the barrier is seen here, one that sets it after sees
** gs__watchdog_idle (gs__held_from). */
static void sleep_until_held(void)
{
    struct timespec second = {1, 0};
    int held;

    if (!gs__barrier_ready())
        return;
    atomic_store(&gs__watchdog_idle, 1);
    gs__barrier_all();
    pthread_mutex_lock(&gs__table_lock);
    held = any_held();
    pthread_mutex_unlock(&gs__table_lock);
    if (held) {
        atomic_store(&gs__watchdog_idle, 0);
        return;
    }
    while (atomic_load(&gs__watchdog_idle) && !atomic_load(&watchdog_stop))
        syscall(SYS_futex, &gs__watchdog_idle, FUTEX_WAIT_PRIVATE, 1, &second, NULL, 0);
}

/* Issues s's held work, held too long: a program point reached
** GS_WATCHDOG_HITS times with no segment of the stream replayed whole between
** (one held again after a hit, entry/hold.c, is not) does not wait for a sync
** (the host polls, or works long before its next CUDA call): from then on,
** work held up to there goes out as soon as it is reached, as a graph (an
** early chunk), and holding goes on after it.  (A hit between replays is a
** descheduled thread, which a busy machine sees now and then.)  Called locked. */
static void fire(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    if (s->holding == GS_HOLD_BODY) {
        gs__flush(s, GS_BAIL_WATCHDOG);
        gs__body_watchdog(s); /* counts its hits itself */
    } else {
        struct gs_node *n = s->cur;
        if (n->watchdog.watchdog_mark != (uint32_t)s->whole_replays)
            n->watchdog.watchdog_hits = 0; /* a segment replayed whole since the last hit here */
        n->watchdog.watchdog_mark = (uint32_t)s->whole_replays;
        if (n->watchdog.watchdog_hits < GS_WATCHDOG_HITS)
            n->watchdog.watchdog_hits++;
        gs__flush(s, GS_BAIL_WATCHDOG);
    }
}

/* fire(s) with s's context current on the watchdog's thread.  Where it cannot
** be made current there, nothing goes out (it would go to no context, and
** fail): the held work waits for the program's next boundary, whose thread
** issues it. */
static void fire_in_ctx(struct gs_stream *s)
{
    CUcontext prev;

    if (gs__enter_ctx(s, &prev) != 0)
        return;
    fire(s);
    gs__leave_ctx(s, prev);
}

/* Issues work held longer than limit ns on any stream.  Returns whether a
** stream held work. */
static int scan(uint64_t limit)
{
    uint64_t now = gs__now_ns();
    int held = 0;

    pthread_mutex_lock(&gs__table_lock);
    for (struct gs_stream *s = gs__all_streams; s; s = s->next) {
        uint64_t since = atomic_load_explicit(&s->seg.held_since, memory_order_relaxed);
        held |= since != 0;
        if (!since || now - since < limit)
            continue;
        gs__lock(&s->lock);
        /* Again under the lock, with the clock read now: the held work may have
        ** gone out meanwhile and newer work be held since after `now`. */
        since = atomic_load_explicit(&s->seg.held_since, memory_order_relaxed);
        if (s->holding && since && gs__now_ns() - since >= limit)
            fire_in_ctx(s);
        gs__unlock(&s->lock);
    }
    pthread_mutex_unlock(&gs__table_lock);
    return held;
}

/* Issues work held longer than GRAPHSHIM_MAX_DEFER_US, so a host waiting for it
** without a CUDA call (polling mapped memory) never waits forever. */
static void *watchdog(void *arg)
{
    uint64_t limit = (uint64_t)gs__cfg.max_defer_us * 1000u;
    struct timespec nap = {0, (long)(limit / 4 > 50000 ? (limit / 4 < 10000000 ? limit / 4 : 10000000) : 50000)};
    unsigned quiet = 0;

    (void)arg;
    gs__tls.depth++;
    while (!atomic_load(&watchdog_stop)) {
        nanosleep(&nap, NULL);
#ifdef GS_TEST
        if (gs__test_clock)
            continue; /* the fake driver's clock: its ticks scan, in the thread that moved it */
#endif
        if (scan(limit))
            quiet = 0;
        else if (++quiet >= GS_WATCHDOG_QUIET) {
            sleep_until_held();
            quiet = 0;
        }
    }
    return NULL;
}

#ifdef GS_TEST
void gs__watchdog_tick(void)
{
    if (gs__passthrough || GS_DROPPED(GS_RULE_WATCHDOG) || !atomic_load(&watchdog_started))
        return;
    gs__tls.depth++;
    scan((uint64_t)gs__cfg.max_defer_us * 1000u);
    gs__tls.depth--;
}
#endif

int gs__watchdog_start(void)
{
    if (pthread_create(&watchdog_thread, NULL, watchdog, NULL) != 0)
        return -1;
    atomic_store(&watchdog_started, 1);
    return 0;
}

int gs__watchdog_running(void)
{
    return atomic_load(&watchdog_started);
}
