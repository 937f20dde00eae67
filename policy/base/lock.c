/*
** lock.c: the slow half of a stream's lock (lock.h): waiting for the shared
** lock in the kernel, waking a waiter, and biasing the lock to a thread or
** revoking that.
*/
#define _GNU_SOURCE
#include "lock.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

unsigned gs__bias_run = GS_BIAS_RUN;

/* membarrier(2), registered once: 1, or -1 where it cannot be had. */
static atomic_int barrier_state;

int gs__barrier_ready(void)
{
    int st = atomic_load_explicit(&barrier_state, memory_order_acquire);

    if (!st) {
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        st = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                     syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
                 ? 1
                 : -1;
        atomic_store_explicit(&barrier_state, st, memory_order_release);
    }
    return st > 0;
}

/* Registered as the library loads: a process of one thread registers at once,
** one with threads waits for the kernel's RCU grace period (15 ms measured),
** which would otherwise fall on the op that first biases a lock. */
__attribute__((constructor)) static void barrier_register(void)
{
    gs__barrier_ready();
}

/* Every running thread of the process passes a full memory barrier.  Called
** only where gs__barrier_ready() said yes. */
void gs__barrier_all(void)
{
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        /* Not expected once registered.  Bias no more locks; an owner's store to
        ** `inside` leaves its CPU's store buffer within nanoseconds, so a pause
        ** this long lets the caller see it. */
        struct timespec t = {0, 1000000};
        atomic_store_explicit(&barrier_state, -1, memory_order_release);
        nanosleep(&t, NULL);
    }
}

/* The lock was seen in state `seen`, not free.  Spins a little first: the
** holder is mostly another thread's op, out in a microsecond. */
void gs__lock_wait(struct gs_lock *l, int seen)
{
    int c = seen;

    for (int i = 0; i < 64 && c == 1; i++) {
        c = atomic_load_explicit(&l->v, memory_order_relaxed);
        if (c == 0 && atomic_compare_exchange_strong_explicit(&l->v, &c, 1, memory_order_seq_cst,
                                                              memory_order_relaxed))
            return;
    }
    /* Waiting: the state says so (2), and whoever frees it wakes one waiter. */
    if (c != 2)
        c = atomic_exchange_explicit(&l->v, 2, memory_order_seq_cst);
    while (c != 0) {
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange_explicit(&l->v, 2, memory_order_seq_cst);
    }
}

void gs__lock_wake(struct gs_lock *l)
{
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Holding the shared lock, with owner o, not the caller: either the owner saw
** the lock taken and keeps out, or the barrier makes its `inside` visible here,
** and it is out when that is 0 (the caller keeps the shared lock meanwhile, so
** it does not come back biased).  The bias ends.  wait: wait for the owner to be
** out; else return 0 if it is in. */
static int bias_revoke(struct gs_lock *l, int wait)
{
    gs__barrier_all();
    for (unsigned i = 0; atomic_load_explicit(&l->inside, memory_order_acquire); i++) {
        if (!wait)
            return 0;
        if (i >= 64)
            sched_yield();
    }
    atomic_store_explicit(&l->owner, 0, memory_order_seq_cst);
    if (l->revokes < 16)
        l->revokes++;
    l->run = 0;
    l->bias_at = gs__bias_run << l->revokes;
    return 1;
}

void gs__lock_owned(struct gs_lock *l, int me)
{
    int o = atomic_load_explicit(&l->owner, memory_order_relaxed);

    if (o && o != me)
        bias_revoke(l, 1);
    if (l->last != me) {
        l->last = me;
        l->run = 1;
    }
    if (!l->bias_at)
        l->bias_at = gs__bias_run;
    if (l->run < l->bias_at)
        return;
    /* A run long enough: the lock is the caller's from its next taking on
    ** (where membarrier can be had). */
    l->run = 0;
    if (gs__barrier_ready())
        atomic_store_explicit(&l->owner, me, memory_order_seq_cst);
    else
        l->bias_at = UINT_MAX;
}

int gs__lock_revoke_try(struct gs_lock *l, int me)
{
    int o = atomic_load_explicit(&l->owner, memory_order_seq_cst);

    return !o || o == me || bias_revoke(l, 0);
}

#ifdef GS_TEST
#include <stdio.h>
#include <stdlib.h>

/* The locks this thread holds, newest last: a thread holds a stream's lock, and
** now and then a second one (another stream's, while it resolves it). */
#define GS_HELD_MAX 16
static __thread const struct gs_lock *held[GS_HELD_MAX];
static __thread int nheld;

void gs__lock_note(const struct gs_lock *l, int taken)
{
    if (taken) {
        GS_ASSERT(!gs__lock_held(l)); /* not recursive */
        GS_ASSERT(nheld < GS_HELD_MAX);
        held[nheld++] = l;
        return;
    }
    for (int i = nheld - 1; i >= 0; i--)
        if (held[i] == l) {
            held[i] = held[--nheld];
            return;
        }
    GS_ASSERT(!"a lock let go by a thread that does not hold it");
}

int gs__lock_held(const struct gs_lock *l)
{
    for (int i = 0; i < nheld; i++)
        if (held[i] == l)
            return 1;
    return 0;
}

int gs__locks_held(void)
{
    return nheld;
}

void gs__assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "graphshim: invariant broken at %s:%d: %s\n", file, line, cond);
    abort();
}
#endif
