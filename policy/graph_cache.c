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
#include <string.h>

#include "engine_int.h"
#include "log.h"

atomic_uint gs__mem_epoch = 1;

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

/* Destroys e and what it owns, its variants too. */
static void exec_free(struct gs_exec *e)
{
    if (!e)
        return;
    exec_free(e->next);
    if (gs__real[GS_ID_cuGraphExecDestroy])
        GS_REAL(cuGraphExecDestroy)(e->x);
    if (e->g && gs__real[GS_ID_cuGraphDestroy])
        GS_REAL(cuGraphDestroy)(e->g);
    for (uint32_t i = 0; i < e->ndiff; i++)
        free(e->diff[i].key);
    free(e->diff);
    free(e->nodes);
    free(e);
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
            exec_free(n->exec);
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
    uint64_t t0 = gs__now_ns();

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
    s->capture_ns += gs__now_ns() - t0;
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

/* Instantiates g into a new executable for stream s, which keeps g where nodes
** (the node of each of its n ops, or NULL) is given, and destroys it otherwise.
** Returns it, or NULL (counted; g destroyed, nodes freed).  A new executable
** counts in s->builds and s->instantiated, which the capture budget weighs. */
static struct gs_exec *instantiate(struct gs_stream *s, CUgraph g, unsigned nops, CUgraphNode *nodes)
{
    struct gs_exec *e = calloc(1, sizeof *e);
    uint64_t t0 = gs__now_ns();
    CUresult rc = e ? GS_REAL(cuGraphInstantiateWithFlags)(&e->x, g, 0) : CUDA_ERROR_OUT_OF_MEMORY;

    s->instantiate_ns += gs__now_ns() - t0;
    pthread_mutex_lock(&cache_lock);
    if (rc == CUDA_SUCCESS)
        ncaptured++;
    else
        nfailed++;
    pthread_mutex_unlock(&cache_lock);
    if (rc == CUDA_SUCCESS && nodes) {
        e->g = g;
        e->nodes = nodes;
    } else {
        GS_REAL(cuGraphDestroy)(g);
        free(nodes);
    }
    if (rc == CUDA_SUCCESS) {
        e->n = nops;
        s->builds++;
        s->instantiated++;
        return e;
    }
    free(e);
    gs__debug("instantiating a %u-op graph failed (error %d)", nops, rc);
    return NULL;
}

/* Does the op of k copy to or from host memory (a node that binds allocations)? */
static int host_copy(const struct gs_key *k)
{
    return k->kind == GS_OP_H2D || k->kind == GS_OP_H2D_PAGEABLE || k->kind == GS_OP_D2H;
}

/* The ops of a path, as gs__graph_capture() captures them; nodes[i - from] gets
** the node each became, as the capture tells (NULL nodes once it could not). */
struct path_ops {
    struct gs_node **path;
    const struct gs_key *const *keys;
    uint32_t from, to;
    int staging, host;
    CUgraphNode *nodes;
};

/* The node the op just issued on capturing stream p became: the capture's one
** dependency now, which must be new and of the op's kind.  NULL otherwise. */
static CUgraphNode captured_node(CUstream p, const struct gs_key *k, CUgraphNode last)
{
    CUstreamCaptureStatus st;
    const CUgraphNode *deps = NULL;
    size_t nd = 0;
    CUgraphNodeType type;

    if (!gs__real[GS_ID_cuStreamGetCaptureInfo_v2] ||
        GS_REAL(cuStreamGetCaptureInfo_v2)(p, &st, NULL, NULL, &deps, &nd) != CUDA_SUCCESS || nd != 1 ||
        deps[0] == last || GS_REAL(cuGraphNodeGetType)(deps[0], &type) != CUDA_SUCCESS)
        return NULL;
    if (type != (k->kind == GS_OP_LAUNCH ? CU_GRAPH_NODE_TYPE_KERNEL
                 : k->kind == GS_OP_SET  ? CU_GRAPH_NODE_TYPE_MEMSET
                                         : CU_GRAPH_NODE_TYPE_MEMCPY))
        return NULL;
    return deps[0];
}

static CUresult issue_path(CUstream p, void *arg)
{
    struct path_ops *o = arg;
    CUresult rc = CUDA_SUCCESS;
    CUgraphNode last = NULL;

    for (uint32_t i = o->from; i < o->to && rc == CUDA_SUCCESS; i++) {
        rc = gs__key_issue(o->keys[i], p, o->path[i]->staging);
        o->staging |= o->path[i]->staging != NULL;
        o->host |= host_copy(o->keys[i]);
        if (rc == CUDA_SUCCESS && o->nodes && !(last = o->nodes[i - o->from] = captured_node(p, o->keys[i], last))) {
            free(o->nodes);
            o->nodes = NULL;
        }
    }
    return rc;
}

/* Puts t's new executable e (ops from .. t->depth-1) in the cache. */
static void cache_add(struct gs_stream *s, struct gs_node *t, struct gs_exec *e)
{
    t->exec = e;
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

/* Records in e that ops from .. to-1 went in with keys (their path's, or
** others: those are e's diff).  0, or -1 (no memory: e cannot be updated in
** place). */
static int diff_set(struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys, uint32_t npatches)
{
    uint32_t n = 0;

    if (!npatches)
        return 0;
    if (!(e->diff = calloc(npatches, sizeof *e->diff)))
        return -1;
    for (uint32_t i = e->from; i < e->from + e->n && n < npatches; i++)
        if (keys[i] != &path[i]->key) {
            if (!(e->diff[n].key = malloc(path[i]->len)))
                return -1;
            memcpy(e->diff[n].key, keys[i], path[i]->len);
            e->diff[n++].op = i;
            e->ndiff = n;
        }
    return 0;
}

/* Captures and instantiates ops path[from .. to-1] with keys.  Returns 0 and
** *out, or -1 / GS_CAPTURE_BUSY as gs__graph_capture(). */
static int capture_path(struct gs_stream *s, struct gs_node **path, const struct gs_key *const *keys,
                        uint32_t from, uint32_t to, struct gs_exec **out)
{
    uint32_t n = to - from, npatches = 0;
    struct path_ops o = {path, keys, from, to, 0, 0, calloc(n, sizeof(CUgraphNode))};
    struct gs_exec *e;
    CUgraph g;
    int rc = capture_graph(s, issue_path, &o, n, &g);

    *out = NULL;
    if (rc != 0) {
        free(o.nodes);
        return rc;
    }
    if (!(e = instantiate(s, g, n, o.nodes)))
        return -1;
    e->from = from;
    e->reads_staging = (uint8_t)o.staging;
    e->epoch = o.host ? atomic_load(&gs__mem_epoch) : 0;
    for (uint32_t i = from; i < to; i++)
        npatches += keys[i] != &path[i]->key;
    if (diff_set(e, path, keys, npatches) != 0) {
        /* Without its diff, what e holds is not known: it could be launched
        ** with arguments of another replay. */
        exec_free(e);
        return -1;
    }
    *out = e;
    return 0;
}

int gs__graph_capture(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from)
{
    struct gs_exec *e;
    int rc = capture_path(s, path, keys, from, t->depth, &e);

    if (rc == 0)
        cache_add(s, t, e);
    return rc;
}

/* Sets node j of e to the parameters of launch key k.  0 or -1. */
static int set_node(struct gs_exec *e, uint32_t j, const struct gs_key *k)
{
    CUDA_KERNEL_NODE_PARAMS p;
    void *stack[64], **params;
    CUresult rc;

    if (k->kind != GS_OP_LAUNCH || !gs__real[GS_ID_cuGraphExecKernelNodeSetParams_v2] ||
        GS_REAL(cuGraphKernelNodeGetParams_v2)(e->nodes[j], &p) != CUDA_SUCCESS ||
        gs__key_param_ptrs(k, stack, &params) != CUDA_SUCCESS)
        return -1;
    p.kernelParams = params;
    p.extra = NULL;
    rc = GS_REAL(cuGraphExecKernelNodeSetParams_v2)(e->x, e->nodes[j], &p);
    gs__key_param_ptrs_free(params, stack);
    if (rc != CUDA_SUCCESS)
        gs__debug("setting a kernel node's parameters failed (error %d): the graph is built anew", rc);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

/* The nodes of e whose parameter bytes differ from keys' (see gs__exec_for). */
static uint32_t exec_cost(const struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys)
{
    uint32_t d = 0, cost = 0;

    for (uint32_t i = e->from; i < e->from + e->n; i++) {
        const struct gs_key *want = keys[i], *own = &path[i]->key, *have = own;
        if (d < e->ndiff && e->diff[d].op == i)
            have = e->diff[d++].key;
        else if (want == own)
            continue;
        cost += memcmp(gs__key_params(want), gs__key_params(have), want->nparams) != 0;
    }
    return cost;
}

/* Gives e the parameters of keys: sets the kernel nodes whose parameter bytes
** differ from those applied now, and nothing else.  Returns the nodes set, or -1
** where a change cannot be made in place (the nodes are not known, or the
** driver refused one): e must then be dropped. */
static int exec_apply(struct gs_stream *s, struct gs_exec *e, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t npatches)
{
    struct gs_diff *diff = NULL;
    uint32_t d = 0, nd = 0;
    int set = 0;
    uint64_t t0;

    if (!npatches && !e->ndiff)
        return 0;
    if (!e->nodes || (npatches && !(diff = calloc(npatches, sizeof *diff))))
        return -1;
    t0 = gs__now_ns();
    for (uint32_t i = e->from; i < e->from + e->n; i++) {
        const struct gs_key *want = keys[i], *own = &path[i]->key, *have = own;
        struct gs_diff *old = d < e->ndiff && e->diff[d].op == i ? &e->diff[d++] : NULL;
        if (old)
            have = old->key;
        if (want == own && !old)
            continue;
        if (memcmp(gs__key_params(want), gs__key_params(have), want->nparams) != 0) {
            if (set_node(e, i - e->from, want) != 0) {
                set = -1;
                break;
            }
            set++;
        }
        if (want != own) {
            /* Kept as applied: the old entry's bytes are reused. */
            struct gs_key *k = old ? old->key : malloc(path[i]->len);
            if (!k) {
                set = -1;
                break;
            }
            if (old)
                old->key = NULL;
            memcpy(k, want, path[i]->len);
            diff[nd].op = i;
            diff[nd++].key = k;
        }
    }
    for (uint32_t i = 0; i < e->ndiff; i++)
        free(e->diff[i].key);
    free(e->diff);
    e->diff = diff;
    e->ndiff = nd;
    s->update_ns += gs__now_ns() - t0;
    return set;
}

/* Has the head of t's chain been asked for these arguments (hash h of keys'
** patched parameter bytes) among the last GS_VARIANTS times?  Records h. */
static int came_before(struct gs_exec *head, uint64_t h)
{
    int found = 0;

    for (uint32_t i = 0; i < GS_VARIANTS && i < head->seen; i++)
        found |= head->recent[i] == h;
    head->recent[head->seen++ % GS_VARIANTS] = h;
    return found;
}

/* Puts e, in no chain, at the head of t's: it takes over the ring of recent
** arguments.  (The cache knows t, not its chain's head: any variant may lead.) */
static void push_front(struct gs_node *t, struct gs_exec *e)
{
    memcpy(e->recent, t->exec->recent, sizeof e->recent);
    e->seen = t->exec->seen;
    e->next = t->exec;
    t->exec = e;
}

struct gs_exec *gs__exec_for(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                             const struct gs_key *const *keys, uint32_t npatches, uint32_t *set)
{
    struct gs_exec **best = &t->exec, *e;
    uint32_t cost = UINT32_MAX, n = 0;
    uint64_t h = npatches;
    int rc;

    *set = 0;
    for (uint32_t i = t->exec->from; i < t->depth; i++)
        if (keys[i] != &path[i]->key)
            h = (h ^ gs__bytes_hash(gs__key_params(keys[i]), keys[i]->nparams)) * 0x9E3779B97F4A7C15ull + i;
    for (struct gs_exec **v = &t->exec; *v; v = &(*v)->next, n++) {
        uint32_t c = (npatches || (*v)->ndiff) ? exec_cost(*v, path, keys) : 0;
        if (c < cost)
            cost = c, best = v;
        if (!cost)
            break;
    }
    if (came_before(t->exec, h) && cost >= GS_VARIANT_MIN_SETS && n < GS_VARIANTS && t->exec->nodes) {
        gs__nvtx_begin(GS_NVTX_CAPTURE, t->depth - t->exec->from);
        rc = capture_path(s, path, keys, t->exec->from, t->depth, &e);
        gs__nvtx_end();
        if (rc == 0) {
            push_front(t, e);
            return e;
        }
    }
    e = *best;
    rc = exec_apply(s, e, path, keys, npatches);
    if (rc < 0) {
        /* It cannot take the change: it goes, and its variants with it. */
        gs__graph_drop_exec(t, s);
        return NULL;
    }
    *set = (uint32_t)rc;
    if (best != &t->exec) { /* the one launched leads: compared first next time */
        *best = e->next;
        push_front(t, e);
    }
    return e;
}

struct key_ops {
    const struct gs_key *const *keys;
    unsigned n, reps;
    int host;
};

static CUresult issue_keys(CUstream p, void *arg)
{
    struct key_ops *o = arg;
    CUresult rc = CUDA_SUCCESS;

    for (unsigned r = 0; r < o->reps; r++)
        for (unsigned i = 0; i < o->n && rc == CUDA_SUCCESS; i++) {
            rc = gs__key_issue(o->keys[i], p, NULL);
            o->host |= host_copy(o->keys[i]);
        }
    return rc;
}

int gs__graph_capture_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           struct gs_exec **x)
{
    struct key_ops o = {keys, n, reps, 0};
    CUgraph g;
    int rc = capture_graph(s, issue_keys, &o, n * reps, &g);

    *x = NULL;
    if (rc != 0)
        return rc;
    if (!(*x = instantiate(s, g, n * reps, NULL)))
        return -1;
    (*x)->epoch = o.host ? atomic_load(&gs__mem_epoch) : 0;
    atomic_fetch_add(&nowned, 1);
    return 0;
}

void gs__graph_destroy_owned(struct gs_exec *x)
{
    if (!x)
        return;
    atomic_fetch_sub(&nowned, 1);
    exec_free(x);
}

void gs__graph_used(struct gs_node *t)
{
    t->last_used = atomic_fetch_add_explicit(&use_clock, 1, memory_order_relaxed);
}

void gs__graph_drop_exec(struct gs_node *n, void *stream)
{
    (void)stream;
    if (n->exec) {
        pthread_mutex_lock(&cache_lock);
        for (int i = 0; i < nrecs; i++)
            if (recs[i].node == n) {
                rec_remove(i);
                break;
            }
        pthread_mutex_unlock(&cache_lock);
        exec_free(n->exec);
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
