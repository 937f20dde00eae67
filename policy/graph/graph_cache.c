/*
** graph_cache.c: the executables of sequences kept on their nodes, the variants
** of one for other arguments, and eviction (see graph_cache.h); capture and
** instantiation are graph_capture.c's.
**
** The cache lock guards the list of live executables.
** It is taken with a stream's lock held, so it never waits for a stream's lock:
** eviction of another stream's graph only tries that lock.
*/
#include "graph_cache.h"

#include <stdlib.h>
#include <string.h>

#include "../base/config.h"
#include "../base/nvtx.h"
#include "../base/prof.h"
#include "staging.h"

struct exec_rec {
    struct gs_node *node;
    struct gs_graphs *own;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct exec_rec *recs;
static int nrecs, caprecs;
static atomic_ulong use_clock;
static long nevicted;
static atomic_long nowned; /* executables outside the cache: loop bodies */

static void rec_remove(int i)
{
    recs[i] = recs[--nrecs];
}

/* Destroys the least recently used graph other than keep's.  Called with the
** cache lock; own's stream (locked by the caller) may be used without its lock. */
static void evict_one(struct gs_graphs *own, struct gs_node *keep)
{
    for (int tries = 0; tries < 4; tries++) {
        int victim = -1;
        for (int i = 0; i < nrecs; i++)
            if (recs[i].node != keep && (victim < 0 || recs[i].node->cache.last_used < recs[victim].node->cache.last_used))
                victim = i;
        if (victim < 0)
            return;
        if (recs[victim].own == own || gs__trylock(recs[victim].own->lock)) {
            struct gs_node *n = recs[victim].node;
            struct gs_graphs *owner = recs[victim].own;
            gs__exec_free(n->cache.exec);
            n->cache.exec = NULL;
            rec_remove(victim);
            nevicted++;
            if (owner != own)
                gs__unlock(owner->lock);
            return;
        }
        /* Its stream is busy: touch it so another is picked next time. */
        recs[victim].node->cache.last_used = atomic_fetch_add(&use_clock, 1);
    }
}

/* Puts t's new executable e (ops from .. t->depth-1) in the cache. */
static void cache_add(struct gs_graphs *own, struct gs_node *t, struct gs_exec *e)
{
    t->cache.exec = e;
    t->cache.last_used = atomic_fetch_add(&use_clock, 1);
    pthread_mutex_lock(&cache_lock);
    if (nrecs == caprecs) {
        int cap = caprecs ? 2 * caprecs : 64;
        struct exec_rec *r = realloc(recs, (size_t)cap * sizeof *r);
        if (!r) {
            /* No room to list it: it stays t's, outside the count of
            ** GRAPHSHIM_MAX_GRAPHS, and goes with t. */
            pthread_mutex_unlock(&cache_lock);
            return;
        }
        recs = r, caprecs = cap;
    }
    recs[nrecs].node = t;
    recs[nrecs++].own = own;
    while (nrecs > gs__cfg.max_graphs) {
        int before = nrecs;
        evict_one(own, t);
        if (nrecs == before)
            break;
    }
    pthread_mutex_unlock(&cache_lock);
}

int gs__graph_capture(struct gs_graphs *own, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from)
{
    struct gs_exec *e;
    int rc = gs__capture_path(own, path, keys, from, t->depth, &e);

    if (rc == 0)
        cache_add(own, t, e);
    return rc;
}

/* No variant of t (n of them) could take these arguments: the driver refused
** a node (a copy moved between memory of other kinds) of the one needing the
** fewest sets, which still knows what it holds.  A variant is captured with
** them, beside the others (the oldest goes where GS_VARIANTS are kept): a copy
** alternating between two kinds of memory keeps one for each, where dropping
** them all would capture at every replay.  NULL where none could be captured
** (the caller captures anew). */
static struct gs_exec *refused(struct gs_graphs *own, struct gs_node *t, uint32_t n, struct gs_node **path,
                               const struct gs_key *const *keys)
{
    struct gs_exec *e, **last = &t->cache.exec;

    if (gs__capture_path(own, path, keys, t->cache.exec->from, t->depth, &e) != 0) {
        gs__graph_drop_exec(t, own);
        return NULL;
    }
    if (n >= GS_VARIANTS) {
        while ((*last)->next)
            last = &(*last)->next;
        gs__exec_free(*last);
        *last = NULL;
    }
    gs__exec_push_front(t, e);
    own->refused++;
    return e;
}

struct gs_exec *gs__exec_for(struct gs_graphs *own, struct gs_node *t, struct gs_node **path,
                             const struct gs_key *const *keys, uint32_t npatches, uint32_t *set)
{
    struct gs_exec **best = &t->cache.exec, *e, **v;
    uint32_t cost = UINT32_MAX, n = 0;
    GS_PROF_START(t_hash);
    uint64_t h = gs__exec_args_hash(path, keys, t->cache.exec->from, t->depth);
    GS_PROF_STOP(GS_PROF_ARGS_HASH, t_hash); /* timed here: a capture hashes too, in its own phase */
    int rc, before = gs__exec_came_before(t->cache.exec, h);

    *set = 0;
    /* A variant that holds these arguments, found by its hash: arguments that
    ** come back in turn (buffers in rotation) are not compared with every
    ** variant's before it. */
    for (v = &t->cache.exec; *v; v = &(*v)->next)
        if ((*v)->args_known && (*v)->args_hash == h && !gs__exec_cost(*v, path, keys)) {
            cost = 0, best = v;
            break;
        }
    for (v = &t->cache.exec; cost && *v; v = &(*v)->next, n++) {
        uint32_t c = (npatches || (*v)->ndiff) ? gs__exec_cost(*v, path, keys) : 0;
        if (c < cost)
            cost = c, best = v;
    }
    if (before && cost >= GS_VARIANT_MIN_SETS && n < GS_VARIANTS && t->cache.exec->nodes) {
        gs__nvtx_begin(GS_NVTX_CAPTURE, t->depth - t->cache.exec->from);
        rc = gs__capture_path(own, path, keys, t->cache.exec->from, t->depth, &e);
        gs__nvtx_end();
        if (rc == 0) {
            gs__exec_push_front(t, e);
            return e;
        }
    }
    e = *best;
    /* Cost 0: e holds these arguments already (each op with a key of its own
    ** has one applied with the same arguments), and what it records stays true. */
    rc = cost ? gs__exec_apply(own, e, path, keys, npatches) : 0;
    e->args_hash = h;
    e->args_known = rc >= 0; /* where a node was refused, e holds a mix */
    if (rc == GS_APPLY_REFUSED)
        return refused(own, t, n, path, keys);
    if (rc < 0) { /* it no longer knows its arguments: it goes, and its variants */
        gs__graph_drop_exec(t, own);
        return NULL;
    }
    *set = (uint32_t)rc;
    if (best != &t->cache.exec) { /* the one launched leads: compared first next time */
        *best = e->next;
        gs__exec_push_front(t, e);
    }
    return e;
}

int gs__graph_capture_keys(struct gs_graphs *own, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           struct gs_exec **x)
{
    int rc = gs__capture_keys(own, keys, n, reps, x);

    if (rc == 0)
        atomic_fetch_add(&nowned, 1);
    return rc;
}

void gs__graph_destroy_owned(struct gs_exec *x)
{
    if (!x)
        return;
    atomic_fetch_sub(&nowned, 1);
    gs__exec_free(x);
}

void gs__graph_used(struct gs_node *t)
{
    t->cache.last_used = atomic_fetch_add_explicit(&use_clock, 1, memory_order_relaxed);
}

void gs__graph_drop_exec(struct gs_node *n, void *stream)
{
    (void)stream;
    if (n->cache.exec) {
        pthread_mutex_lock(&cache_lock);
        for (int i = 0; i < nrecs; i++)
            if (recs[i].node == n) {
                rec_remove(i);
                break;
            }
        pthread_mutex_unlock(&cache_lock);
        gs__exec_free(n->cache.exec);
        n->cache.exec = NULL;
    }
}

void gs__graph_drop_node(struct gs_node *n, void *stream)
{
    gs__graph_drop_exec(n, stream);
    gs__staging_free(n);
}

void gs__graph_stats(struct gs_graph_stats *st)
{
    pthread_mutex_lock(&cache_lock);
    st->alive = nrecs + atomic_load(&nowned);
    gs__capture_counts(&st->captured, &st->failed);
    st->evicted = nevicted;
    pthread_mutex_unlock(&cache_lock);
}
