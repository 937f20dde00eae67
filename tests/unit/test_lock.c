/*
** test_lock.c: the stream lock (policy/base/lock.h): biased to the thread that takes
** it, revoked by any other, and exclusive throughout.
*/
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "../../policy/base/lock.h"

/* Takes and frees l n times. */
static void take(struct gs_lock *l, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        gs__lock(l);
        gs__unlock(l);
    }
}

static void *take_once(void *arg)
{
    take(arg, 1);
    return NULL;
}

/* Is membarrier(2) to be had here (the bias needs it)?  A lock taken by one
** thread a long run in a row tells. */
static int biasing(void)
{
    static struct gs_lock l;

    take(&l, gs__bias_run + 1);
    return atomic_load(&l.owner) != 0;
}

Test(lock, a_long_run_by_one_thread_biases_it_and_another_thread_revokes_it)
{
    static struct gs_lock l;
    pthread_t t;

    gs__bias_run = 8;
    if (!biasing())
        cr_skip("membarrier(2) is not available here: locks are never biased");
    take(&l, 7);
    cr_assert_eq(atomic_load(&l.owner), 0, "biased after 7 takings of 8");
    take(&l, 1);
    cr_assert_eq(atomic_load(&l.owner), gs__tid(), "not biased after a run of 8");
    /* Biased: taken and freed without the shared lock. */
    gs__lock(&l);
    cr_assert_eq(atomic_load(&l.inside), 1);
    cr_assert_eq(atomic_load(&l.v), 0);
    gs__unlock(&l);
    cr_assert_eq(atomic_load(&l.inside), 0);

    /* Another thread takes it: the bias ends, and comes back after a run twice
    ** as long. */
    cr_assert_eq(pthread_create(&t, NULL, take_once, &l), 0);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&l.owner), 0, "still biased after another thread took it");
    cr_assert_eq(l.revokes, 1);
    take(&l, 15);
    cr_assert_eq(atomic_load(&l.owner), 0, "biased again after 15 takings of 16");
    take(&l, 1);
    cr_assert_eq(atomic_load(&l.owner), gs__tid());
}

/* While the owner holds it biased, another thread's trylock fails and leaves
** it so; once the owner is out, it succeeds and revokes the bias. */
static struct gs_lock held_lock;
static void *try_it(void *arg)
{
    (void)arg;
    if (!gs__trylock(&held_lock))
        return (void *)0;
    gs__unlock(&held_lock);
    return (void *)1;
}

Test(lock, trylock_fails_while_the_owner_is_inside)
{
    pthread_t t;
    void *got;

    gs__bias_run = 4;
    if (!biasing())
        cr_skip("membarrier(2) is not available here: locks are never biased");
    take(&held_lock, 4);
    cr_assert_eq(atomic_load(&held_lock.owner), gs__tid());
    gs__lock(&held_lock);
    cr_assert_eq(pthread_create(&t, NULL, try_it, NULL), 0);
    pthread_join(t, &got);
    cr_assert_eq(got, (void *)0, "trylock took a lock its owner holds");
    cr_assert_eq(atomic_load(&held_lock.owner), gs__tid(), "a failed trylock revoked the bias");
    cr_assert_eq(atomic_load(&held_lock.v), 0, "a failed trylock left the shared lock taken");
    gs__unlock(&held_lock);
    cr_assert_eq(pthread_create(&t, NULL, try_it, NULL), 0);
    pthread_join(t, &got);
    cr_assert_eq(got, (void *)1);
    cr_assert_eq(atomic_load(&held_lock.owner), 0);
}

/* Threads take a lock in bursts (each burst long enough to bias it, then
** another thread revokes that), a fresh lock each episode (the bias comes back
** ever more slowly): no two are ever inside at once, and no increment of a
** plain counter under the lock is lost. */
#define THREADS 4
#define EPISODES 100
#define ROUNDS 100
#define BURST 12
static struct gs_lock busy_lock;
static long counter;
static atomic_int in, overlaps;
static unsigned revoked;
static pthread_barrier_t episode;

static void burst_rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < BURST; i++) {
            gs__lock(&busy_lock);
            if (atomic_fetch_add(&in, 1) != 0)
                atomic_fetch_add(&overlaps, 1);
            counter++;
            atomic_fetch_sub(&in, 1);
            gs__unlock(&busy_lock);
        }
        if (r % 7 == 0)
            sched_yield();
    }
}

static void *burst(void *first)
{
    for (int e = 0; e < EPISODES; e++) {
        pthread_barrier_wait(&episode);
        if (first) { /* one thread starts each episode afresh */
            revoked += busy_lock.revokes;
            memset(&busy_lock, 0, sizeof busy_lock);
        }
        pthread_barrier_wait(&episode);
        burst_rounds();
    }
    return NULL;
}

Test(lock, threads_taking_it_in_turn_never_overlap, .timeout = 15)
{
    pthread_t t[THREADS];
    long want = (long)THREADS * EPISODES * ROUNDS * BURST;

    gs__bias_run = 4;
    pthread_barrier_init(&episode, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, burst, i ? NULL : &t[i]), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    revoked += busy_lock.revokes;
    cr_assert_eq(atomic_load(&overlaps), 0, "%d takings overlapped another", atomic_load(&overlaps));
    cr_assert_eq(counter, want, "%ld increments lost", want - counter);
    if (biasing())
        cr_assert_gt(revoked, EPISODES, "biases were revoked only %u times: the test tried little", revoked);
    cr_log_info("revoked %u", revoked);
}
