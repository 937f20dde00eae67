/*
** lock.h: the lock of a stream's state, taken on every op.
**
** Almost always one thread issues a stream's ops and takes its lock for each.  So
** the lock is biased: after a run of takings by one thread, that thread owns it
** and takes it with plain loads and stores, no atomic read-modify-write (each
** costs 5-10 ns on the machines measured; a plain mutex takes two per op):
**   the owner      sets `inside`, then checks that the shared lock is free and
**                  that it still owns the lock;
**   another thread takes the shared lock and, finding an owner, makes every
**                  thread of the process pass a full memory barrier (membarrier
**                  (2): either the owner sees the shared lock taken, or this
**                  thread sees `inside`), waits until the owner is out, and
**                  revokes the bias.
** The shared lock is a futex in three states (free, taken, taken with waiters),
** after Drepper's "Futexes Are Tricky": a compare-and-swap to take it and an
** exchange to free it, inline; only a wait goes to the kernel (lock.c).  A
** revoked bias comes back after a run twice as long each time (a stream that two
** threads use in turn stays shared).  Without membarrier (an old kernel, a
** seccomp filter) no lock is ever biased.  Not recursive; zeroed memory is a
** free lock.
*/
#ifndef GS_LOCK_H
#define GS_LOCK_H

#include <stdatomic.h>

#include "../../driver/driver.h"
#include "assert.h"

struct gs_lock {
    atomic_int v;      /* the shared lock: 0 free, 1 taken, 2 taken and a thread may wait */
    atomic_int inside; /* the owner holds the lock biased (written by the owner alone) */
    atomic_int owner;  /* the thread (gs__tid) the lock is biased to; 0: none */
    int last;          /* under the shared lock: the thread that took it last, */
    unsigned run;      /* how many times in a row, */
    unsigned bias_at;  /* the run that biases the lock to it (0: GS_BIAS_RUN's), */
    unsigned revokes;  /* and how many biases were revoked */
};

/* Takings in a row by one thread before the lock is biased to it, the first
** time (GS_BIAS_RUN; a test may lower it). */
#define GS_BIAS_RUN 256
extern unsigned gs__bias_run;

/* membarrier(2): 1 if it can be had (registered), else 0; and every running
** thread of the process passing a full memory barrier (only where it can). */
int gs__barrier_ready(void);
void gs__barrier_all(void);

void gs__lock_wait(struct gs_lock *l, int seen);
void gs__lock_wake(struct gs_lock *l);
void gs__lock_owned(struct gs_lock *l, int me);
int gs__lock_revoke_try(struct gs_lock *l, int me);

/* The test build keeps the locks each thread holds (lock.c): GS_LOCK_NOTE(l, 1)
** once l is taken, (l, 0) before it is let go; gs__lock_held(l): does the
** caller hold l?  GS_ASSERT_LOCKED(s): the calling thread holds s's lock, where
** a function says "called locked" (an invariant, assert.h); GS_ASSERT_NO_LOCK():
** it holds no stream's lock, where an engine's door returns to the layer that
** called it.  Nothing of it in the library users run. */
#ifdef GS_TEST
void gs__lock_note(const struct gs_lock *l, int taken);
int gs__lock_held(const struct gs_lock *l);
#define GS_LOCK_NOTE(l, taken) gs__lock_note(l, taken)
#define GS_ASSERT_LOCKED(s) GS_ASSERT(gs__lock_held(&(s)->lock))
int gs__locks_held(void);
#define GS_ASSERT_NO_LOCK() GS_ASSERT(gs__locks_held() == 0)
#else
#define GS_LOCK_NOTE(l, taken) ((void)0)
#define GS_ASSERT_LOCKED(s) ((void)sizeof((s)->lock))
#define GS_ASSERT_NO_LOCK() ((void)0)
#endif

static inline int gs__lock_me(void)
{
    int me = gs__tls.tid;
    return GS_LIKELY(me) ? me : gs__tid();
}

/* Takes l biased if the caller owns it and the shared lock is free: 1, or 0. */
static inline int gs__lock_biased(struct gs_lock *l, int me)
{
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) != me)
        return 0;
    atomic_store_explicit(&l->inside, 1, memory_order_relaxed);
    /* The store before the loads, as written: a thread that takes the shared lock
    ** makes this one pass a full barrier (lock.c), so that it sees the store or
    ** this one sees the lock taken. */
    atomic_signal_fence(memory_order_seq_cst);
    if (GS_LIKELY(atomic_load_explicit(&l->v, memory_order_seq_cst) == 0 &&
                  atomic_load_explicit(&l->owner, memory_order_seq_cst) == me))
        return 1;
    atomic_store_explicit(&l->inside, 0, memory_order_release);
    return 0;
}

/* Takes the shared lock if it is free: 1; else 0, with the state seen in *c. */
static inline int gs__lock_cas(struct gs_lock *l, int *c)
{
    *c = 0;
    return atomic_compare_exchange_strong_explicit(&l->v, c, 1, memory_order_seq_cst, memory_order_relaxed);
}

/* Takes the shared lock; then an owner is waited out and loses the bias, or
** the caller's run grows and may win it (gs__lock_owned). */
static inline void gs__lock_shared(struct gs_lock *l, int me)
{
    int c, o;

    if (GS_UNLIKELY(!gs__lock_cas(l, &c)))
        gs__lock_wait(l, c);
    o = atomic_load_explicit(&l->owner, memory_order_seq_cst);
    if (o == me)
        return;
    if (GS_LIKELY(!o && l->last == me && ++l->run < l->bias_at))
        return;
    gs__lock_owned(l, me);
}

static inline void gs__lock(struct gs_lock *l)
{
    int me = gs__lock_me();

    if (!gs__lock_biased(l, me))
        gs__lock_shared(l, me);
    GS_LOCK_NOTE(l, 1);
}

static inline void gs__unlock_shared(struct gs_lock *l)
{
    if (GS_UNLIKELY(atomic_exchange_explicit(&l->v, 0, memory_order_seq_cst) == 2))
        gs__lock_wake(l);
}

/* 1 if l was free and is now the caller's, else 0: never waits. */
static inline int gs__trylock(struct gs_lock *l)
{
    int me = gs__lock_me(), c;

    if (gs__lock_biased(l, me)) {
        GS_LOCK_NOTE(l, 1);
        return 1;
    }
    if (!gs__lock_cas(l, &c))
        return 0;
    if (gs__lock_revoke_try(l, me)) {
        GS_LOCK_NOTE(l, 1);
        return 1;
    }
    gs__unlock_shared(l);
    return 0;
}

static inline void gs__unlock(struct gs_lock *l)
{
    /* `inside` is set while the owner holds the lock biased (and for a moment
    ** while it tries to); the owner does not change while anyone holds the lock. */
    GS_LOCK_NOTE(l, 0);
    if (atomic_load_explicit(&l->inside, memory_order_relaxed) &&
        atomic_load_explicit(&l->owner, memory_order_relaxed) == gs__tls.tid)
        atomic_store_explicit(&l->inside, 0, memory_order_release);
    else
        gs__unlock_shared(l);
}

#endif
