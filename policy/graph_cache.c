/*
** graph_cache.c: capture, instantiation and eviction of sequence graphs (see
** graph_cache.h).
**
** The cache lock guards the list of live executables.
** It is taken with a stream's lock held, so it never waits for a stream's lock:
** eviction of another stream's graph only tries that lock.
*/
#include "graph_cache.h"

#include <sched.h>
#include <stdlib.h>

#include "log.h"

struct exec_rec {
    struct gs_node *node;
    struct gs_stream *s;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct exec_rec *recs;
static int nrecs, caprecs;
static atomic_ulong use_clock;
static long ncaptured, nfailed, nevicted;
static atomic_long nowned; /* executables outside the cache: loop bodies */

/* Context synchronizes and the engine's captures in progress (sequentially
** consistent: each side raises its count, then reads the other's). */
static atomic_int ctx_syncs, captures;

void gs__graph_sync_enter(void)
{
    for (;;) {
        atomic_fetch_add(&ctx_syncs, 1);
        if (!atomic_load(&captures))
            return;
        atomic_fetch_sub(&ctx_syncs, 1);
        while (atomic_load(&captures))
            sched_yield(); /* a capture issues a few ops: microseconds */
    }
}

void gs__graph_sync_leave(void)
{
    atomic_fetch_sub(&ctx_syncs, 1);
}

/* One private capture stream per thread and context: two threads never capture
** on one stream.  A reset (context teardown) bumps the generation, and a thread
** then makes new ones. */
#define MAX_CTX 8
static GS_TLS struct {
    CUcontext ctx;
    CUstream stream;
} privs[MAX_CTX];
static GS_TLS int nprivs;
static GS_TLS unsigned privs_gen;
static atomic_uint reset_gen;

static CUstream private_stream(CUcontext ctx)
{
    CUstream p = NULL;

    if (privs_gen != atomic_load(&reset_gen)) {
        nprivs = 0; /* their context is gone, and the streams with it */
        privs_gen = atomic_load(&reset_gen);
    }
    for (int i = 0; i < nprivs; i++)
        if (privs[i].ctx == ctx)
            return privs[i].stream;
    if (nprivs < MAX_CTX && GS_REAL(cuStreamCreate)(&p, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
        privs[nprivs].ctx = ctx;
        privs[nprivs++].stream = p;
    }
    return p;
}

static void rec_remove(int i)
{
    recs[i] = recs[--nrecs];
}

/* Destroys the least recently used graph other than keep's.  Called with the
** cache lock; s (locked by the caller) may be used without its lock. */
static void evict_one(struct gs_stream *s, struct gs_node *keep)
{
    for (int tries = 0; tries < 4; tries++) {
        int victim = -1;
        for (int i = 0; i < nrecs; i++)
            if (recs[i].node != keep && (victim < 0 || recs[i].node->last_used < recs[victim].node->last_used))
                victim = i;
        if (victim < 0)
            return;
        if (recs[victim].s == s || gs__trylock(&recs[victim].s->lock)) {
            struct gs_node *n = recs[victim].node;
            struct gs_stream *owner = recs[victim].s;
            GS_REAL(cuGraphExecDestroy)(n->exec);
            n->exec = NULL;
            rec_remove(victim);
            nevicted++;
            if (owner != s)
                gs__unlock(&owner->lock);
            return;
        }
        /* Its stream is busy: touch it so another is picked next time. */
        recs[victim].node->last_used = atomic_fetch_add(&use_clock, 1);
    }
}

/* Captures, on s's private stream, what issue() issues there, into *g.  Returns
** 0, -1 (counted as a failure), or GS_CAPTURE_BUSY if a context synchronize is in
** progress (nothing was tried).  Called with s locked. */
static int capture_graph(struct gs_stream *s, CUresult (*issue)(CUstream, void *), void *arg, unsigned nops,
                         CUgraph *g)
{
    CUstream p;
    CUresult rc;

    *g = NULL;
    p = private_stream(s->ctx);
    if (!p)
        goto failed;
    atomic_fetch_add(&captures, 1);
    if (atomic_load(&ctx_syncs)) {
        atomic_fetch_sub(&captures, 1);
        return GS_CAPTURE_BUSY;
    }
    rc = GS_REAL(cuStreamBeginCapture_v2)(p, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (rc == CUDA_SUCCESS) {
        CUresult end;
        rc = issue(p, arg);
        end = GS_REAL(cuStreamEndCapture)(p, g);
        if (rc == CUDA_SUCCESS)
            rc = end;
    }
    atomic_fetch_sub(&captures, 1);
    if (rc == CUDA_SUCCESS)
        return 0;
    gs__debug("capture of a %u-op sequence failed (error %d)", nops, rc);
    if (*g)
        GS_REAL(cuGraphDestroy)(*g);
    *g = NULL;
failed:
    pthread_mutex_lock(&cache_lock);
    nfailed++;
    pthread_mutex_unlock(&cache_lock);
    return -1;
}

/* Instantiates g into *x for stream s and destroys g.  Returns 0 or -1 (counted;
** a new executable also in s->builds and s->instantiated, which the capture
** budget weighs). */
static int instantiate(struct gs_stream *s, CUgraph g, unsigned nops, CUgraphExec *x)
{
    CUresult rc = GS_REAL(cuGraphInstantiateWithFlags)(x, g, 0);

    GS_REAL(cuGraphDestroy)(g);
    pthread_mutex_lock(&cache_lock);
    if (rc == CUDA_SUCCESS)
        ncaptured++;
    else
        nfailed++;
    pthread_mutex_unlock(&cache_lock);
    if (rc == CUDA_SUCCESS) {
        s->builds++;
        s->instantiated++;
        return 0;
    }
    *x = NULL;
    gs__debug("instantiating a %u-op graph failed (error %d)", nops, rc);
    return -1;
}

/* Gives executable x of stream s the content of g in place (cuGraphExecUpdate,
** counted in s->builds: a capture and an update cost about what a new graph
** does) and destroys g.  Returns 0, or -1 with g left to the caller, who
** instantiates it anew (the driver refuses updates that change what x is, not
** only its parameters). */
static int update(struct gs_stream *s, CUgraphExec x, CUgraph g, unsigned nops)
{
    CUgraphExecUpdateResultInfo info;

    if (GS_REAL(cuGraphExecUpdate_v2)(x, g, &info) == CUDA_SUCCESS) {
        GS_REAL(cuGraphDestroy)(g);
        s->builds++;
        return 0;
    }
    gs__debug("update of a %u-op graph failed (result %d): instantiating it anew", nops, info.result);
    return -1;
}

/* capture_graph(), then instantiate(). */
static int capture(struct gs_stream *s, CUresult (*issue)(CUstream, void *), void *arg, unsigned nops,
                   CUgraphExec *x)
{
    CUgraph g;
    int rc = capture_graph(s, issue, arg, nops, &g);

    *x = NULL;
    return rc ? rc : instantiate(s, g, nops, x);
}

struct path_ops {
    struct gs_node **path;
    const struct gs_key *const *keys;
    uint32_t from, to;
    int staging;
};

static CUresult issue_path(CUstream p, void *arg)
{
    struct path_ops *o = arg;
    CUresult rc = CUDA_SUCCESS;

    for (uint32_t i = o->from; i < o->to && rc == CUDA_SUCCESS; i++) {
        rc = gs__key_issue(o->keys[i], p, o->path[i]->staging);
        o->staging |= o->path[i]->staging != NULL;
    }
    return rc;
}

/* Puts a new executable of t (ops from .. t->depth-1) in the cache. */
static void cache_add(struct gs_stream *s, struct gs_node *t, CUgraphExec x, uint32_t from, int staging)
{
    t->exec = x;
    t->exec_from = from;
    t->reads_staging = (uint8_t)staging;
    t->last_used = atomic_fetch_add(&use_clock, 1);
    pthread_mutex_lock(&cache_lock);
    if (nrecs == caprecs) {
        caprecs = caprecs ? 2 * caprecs : 64;
        recs = realloc(recs, (size_t)caprecs * sizeof *recs);
    }
    recs[nrecs].node = t;
    recs[nrecs++].s = s;
    while (nrecs > gs__cfg.max_graphs) {
        int before = nrecs;
        evict_one(s, t);
        if (nrecs == before)
            break;
    }
    pthread_mutex_unlock(&cache_lock);
}

int gs__graph_capture(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from)
{
    struct path_ops o = {path, keys, from, t->depth, 0};
    CUgraphExec x;
    int rc = capture(s, issue_path, &o, t->depth - from, &x);

    if (rc == 0)
        cache_add(s, t, x, from, o.staging);
    return rc;
}

int gs__graph_update(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                     const struct gs_key *const *keys, uint32_t from)
{
    struct path_ops o = {path, keys, from, t->depth, 0};
    CUgraphExec x;
    CUgraph g;
    int rc = capture_graph(s, issue_path, &o, t->depth - from, &g);

    if (rc != 0)
        return rc;
    if (update(s, t->exec, g, t->depth - from) == 0) {
        t->reads_staging = (uint8_t)o.staging;
        return 0;
    }
    gs__graph_drop_exec(t, s);
    if (instantiate(s, g, t->depth - from, &x) != 0)
        return -1;
    cache_add(s, t, x, from, o.staging);
    return 0;
}

struct key_ops {
    const struct gs_key *const *keys;
    unsigned n, reps;
};

static CUresult issue_keys(CUstream p, void *arg)
{
    struct key_ops *o = arg;
    CUresult rc = CUDA_SUCCESS;

    for (unsigned r = 0; r < o->reps; r++)
        for (unsigned i = 0; i < o->n && rc == CUDA_SUCCESS; i++)
            rc = gs__key_issue(o->keys[i], p, NULL);
    return rc;
}

int gs__graph_capture_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           CUgraphExec *x)
{
    struct key_ops o = {keys, n, reps};
    int rc = capture(s, issue_keys, &o, n * reps, x);
    if (rc == 0)
        atomic_fetch_add(&nowned, 1);
    return rc;
}

int gs__graph_update_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, CUgraphExec *x)
{
    struct key_ops o = {keys, n, 1};
    CUgraph g;
    int rc = capture_graph(s, issue_keys, &o, n, &g);

    if (rc != 0)
        return rc;
    if (update(s, *x, g, n) == 0)
        return 0;
    gs__graph_destroy_owned(*x);
    *x = NULL;
    if (instantiate(s, g, n, x) != 0)
        return -1;
    atomic_fetch_add(&nowned, 1);
    return 0;
}

void gs__graph_destroy_owned(CUgraphExec x)
{
    if (!x)
        return;
    atomic_fetch_sub(&nowned, 1);
    if (gs__real[GS_ID_cuGraphExecDestroy])
        GS_REAL(cuGraphExecDestroy)(x);
}

void gs__graph_used(struct gs_node *t)
{
    t->last_used = atomic_fetch_add_explicit(&use_clock, 1, memory_order_relaxed);
}

void gs__graph_drop_exec(struct gs_node *n, void *stream)
{
    (void)stream;
    if (n->extras) {
        for (uint32_t i = 0; i < n->extras->count; i++) {
            gs__graph_destroy_owned(n->extras->e[i].exec);
            free(n->extras->e[i].depth);
        }
        free(n->extras);
        n->extras = NULL;
    }
    if (n->exec) {
        pthread_mutex_lock(&cache_lock);
        for (int i = 0; i < nrecs; i++)
            if (recs[i].node == n) {
                rec_remove(i);
                break;
            }
        pthread_mutex_unlock(&cache_lock);
        if (gs__real[GS_ID_cuGraphExecDestroy])
            GS_REAL(cuGraphExecDestroy)(n->exec);
        n->exec = NULL;
    }
}

void gs__graph_drop_node(struct gs_node *n, void *stream)
{
    gs__graph_drop_exec(n, stream);
    if (n->staging) {
        GS_REAL(cuMemFreeHost)(n->staging);
        n->staging = NULL;
    }
}

void gs__graph_reset(void)
{
    atomic_fetch_add(&reset_gen, 1);
}

void gs__graph_stats(struct gs_graph_stats *st)
{
    pthread_mutex_lock(&cache_lock);
    st->alive = nrecs + atomic_load(&nowned);
    st->captured = ncaptured;
    st->failed = nfailed;
    st->evicted = nevicted;
    pthread_mutex_unlock(&cache_lock);
}
