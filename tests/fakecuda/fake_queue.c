/* fake_queue.c - FAKECUDA_PENDING=N: work that completes later, as on a GPU.
 *
 * Off (N = 0, the default), every operation runs when it is enqueued.  On,
 * work submitted to a stream that does not capture is appended to one global
 * list in issue order and runs when something completes it:
 *   - a synchronize (stream, context, event) runs what it waits for;
 *   - a query (stream, event) of pending work answers CUDA_ERROR_NOT_READY N times
 *     for the same target, and the next query runs what it waits for and succeeds;
 *   - calls that wait on the real driver (synchronous copies, device frees, module
 *     unload, ...) run it all first: see queue_drain's callers.
 * By default the list runs as a FIFO: a prefix of it, which is always a legal
 * schedule (every dependency of an operation was issued before it).  With
 * FAKECUDA_ORDER=deps each entry keeps what it depends on, as the real driver
 * orders work: its stream's previous entry, the record of an event it waits on
 * (as of the wait call), and the legacy stream's implicit synchronization with
 * the blocking streams of its context.  A completion then runs only its target
 * and what that depends on, and among those, entries of independent streams in
 * an order chosen by FAKECUDA_ORDER_SEED (0, the default: the latest-issued
 * ready entry first; other values: a seeded pseudo-random ready entry).  The
 * file is divided into the queue itself, completion, and the submission helpers
 * the API functions call. */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <stdlib.h>
#include <string.h>

void node_bind_copy(struct node *dst, const struct node *src);

enum { Q_NODE, Q_RECORD };
struct qent {
    uint64_t seq;
    int kind;
    struct node n;        /* Q_NODE: the operation, its payload owned here */
    struct event *ev;     /* Q_RECORD */
    void *owned;          /* freed after the run (a pageable snapshot, a callback) */
    struct stream *s;     /* its stream */
    uint64_t *deps; size_t ndeps; /* FAKECUDA_ORDER=deps: entries it waits for */
    struct qent *next;
};

static int g_pending_n = -1;           /* FAKECUDA_PENDING, read once */
static int g_order_deps;               /* FAKECUDA_ORDER=deps */
static uint64_t g_order_rng;           /* FAKECUDA_ORDER_SEED; 0: latest ready first */
static struct qent *q_head, *q_tail;   /* guarded by g_lock */
static uint64_t q_issued, q_done;      /* sequence numbers: last issued, last run */
static int q_running;                  /* a completion is in progress (re-entry) */
/* FAKECUDA_ORDER=deps: each sequence number's state (Q_WAITING, Q_NEEDED by
 * the completion in progress, Q_RAN), indexed by sequence number. */
enum { Q_WAITING, Q_NEEDED, Q_RAN };
static unsigned char *q_state;
static size_t q_state_cap;

int fake_pending(void)
{
    if (g_pending_n < 0) {
        const char *v = getenv("FAKECUDA_PENDING");
        int n = v && *v ? atoi(v) : 0;
        const char *o = getenv("FAKECUDA_ORDER"), *seed = getenv("FAKECUDA_ORDER_SEED");
        g_order_deps = o && strcmp(o, "deps") == 0;
        g_order_rng = seed && *seed ? strtoull(seed, NULL, 0) : 0;
        if (g_order_deps && n <= 0) n = 1; /* the order needs work that completes later */
        g_pending_n = n > 0 ? n : 0;
    }
    return g_pending_n;
}

int fake_order_deps(void)
{
    return fake_pending(), g_order_deps;
}

/* The next of FAKECUDA_ORDER_SEED's numbers (splitmix64). */
static uint64_t order_rand(void)
{
    uint64_t z = (g_order_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t fake_order_choose(const size_t *ready, size_t n)
{
    size_t k = 0;
    if (g_order_rng) return (size_t)(order_rand() % n);
    for (size_t i = 1; i < n; i++)
        if (ready[i] > ready[k]) k = i;
    return k;
}

/* ---- the queue ---------------------------------------------------------- */
static bool ran(uint64_t seq) { return seq == 0 || (seq < q_state_cap && q_state[seq] == Q_RAN); }

static void dep_add(struct qent *e, uint64_t seq)
{
    if (ran(seq) || seq >= e->seq) return;
    for (size_t i = 0; i < e->ndeps; i++)
        if (e->deps[i] == seq) return;
    e->deps = realloc(e->deps, (e->ndeps + 1) * sizeof *e->deps);
    e->deps[e->ndeps++] = seq;
}

/* What e, of stream s, waits for besides an event (FAKECUDA_ORDER=deps): its
 * stream's previous entry, and the legacy stream's implicit synchronization
 * (CUDA programming guide, "Default Stream" / "Implicit Synchronization"): an
 * action of the legacy stream waits for the earlier work of every blocking
 * stream of its context, and an action of a blocking stream (per-thread
 * streams included) for the legacy stream's earlier work.  A stream's last
 * entry stands for all of its work: it waits for the ones before it. */
static void deps_of(struct qent *e, struct stream *s)
{
    if (!s) return;
    dep_add(e, s->last_seq);
    if (s->special == S_LEGACY) {
        for (struct qent *p = q_head; p; p = p->next)
            if (p->s && p->s != s && p->s->ctx == s->ctx && p->s->special != S_LEGACY &&
                stream_blocking(p->s) && p->seq == p->s->last_seq)
                dep_add(e, p->seq);
    } else if (stream_blocking(s) && s->ctx && s->ctx->legacy) {
        dep_add(e, s->ctx->legacy->last_seq);
    }
}

static uint64_t queue_push(struct stream *s, struct qent *e)
{
    e->seq = ++q_issued;
    e->s = s;
    if (g_order_deps) {
        if (q_issued >= q_state_cap) {
            size_t cap = q_state_cap ? 2 * q_state_cap : 4096;
            q_state = realloc(q_state, cap);
            memset(q_state + q_state_cap, Q_WAITING, cap - q_state_cap);
            q_state_cap = cap;
        }
        deps_of(e, s);
    }
    if (q_tail) q_tail->next = e;
    else q_head = e;
    q_tail = e;
    if (s) s->last_seq = e->seq;
    return e->seq;
}

/* Queues an operation of s that also waits for the entry after (0: none);
 * takes ownership of n's payload and of owned. */
static uint64_t push_after(struct stream *s, const struct node *n, void *owned, uint64_t after)
{
    struct qent *e = calloc(1, sizeof *e);
    e->kind = Q_NODE;
    e->n = *n;
    e->owned = owned;
    LOCK();
    uint64_t seq = queue_push(s, e);
    if (g_order_deps && after) dep_add(e, after);
    UNLOCK();
    return seq;
}

/* Queues an operation of s; takes ownership of n's payload and of owned. */
void queue_node(struct stream *s, const struct node *n, void *owned)
{
    push_after(s, n, owned, 0);
}

/* The same, for an operation that also waits for ev's last record as it is
 * now (cuEventRecord: "APIs such as cuStreamWaitEvent() use the most recently
 * captured state at the time of the API call"). */
void queue_wait(struct stream *s, const struct node *n, void *owned, const struct event *ev)
{
    LOCK();
    push_after(s, n, owned, ev && ev->recorded ? ev->seq : 0);
    UNLOCK();
}

/* An event record: the event counts as recorded at once (it is no longer a
 * captured event, a wait on it from a capture is an isolation error), and
 * complete once the queue has run it. */
void queue_record(struct stream *s, struct event *ev)
{
    struct qent *e = calloc(1, sizeof *e);
    e->kind = Q_RECORD;
    e->ev = ev;
    LOCK();
    ev->recorded = 1;
    ev->cap = NULL;
    ev->ext = 0;
    ev->seq = queue_push(s, e);
    UNLOCK();
}

/* ---- completion --------------------------------------------------------- */
static void qent_run(struct qent *e)
{
    if (g_order_deps) q_state[e->seq] = Q_RAN;
    if (e->kind == Q_RECORD) {
        if (e->ev->seq == e->seq) e->ev->t_ms = fake_now_ms(); /* else recorded again since */
    } else {
        node_run(&e->n);      /* an error is sticky (node_run), as on a GPU */
        node_payload_free(&e->n);
    }
    free(e->owned);
    free(e->deps);
    free(e);
}

/* Unlinks e (prev: the entry before it, NULL at the head). */
static void unlink_at(struct qent *prev, struct qent *e)
{
    if (prev) prev->next = e->next;
    else q_head = e->next;
    if (q_tail == e) q_tail = prev;
}

/* FAKECUDA_ORDER=deps: marks what target waits for, transitively: a reverse
 * pass, as an entry waits only for entries issued before it.  The number of
 * entries marked. */
static size_t order_mark(uint64_t upto, bool all)
{
    size_t n = 0, k = 0;
    for (struct qent *p = q_head; p; p = p->next) n++;
    struct qent **v = malloc((n ? n : 1) * sizeof *v);
    for (struct qent *p = q_head; p; p = p->next) v[k++] = p;
    size_t marked = 0;
    for (size_t i = n; i-- > 0;) {
        struct qent *e = v[i];
        if (all || e->seq == upto) q_state[e->seq] = Q_NEEDED;
        if (q_state[e->seq] != Q_NEEDED) continue;
        marked++;
        for (size_t d = 0; d < e->ndeps; d++)
            if (!ran(e->deps[d])) q_state[e->deps[d]] = Q_NEEDED;
    }
    free(v);
    return marked;
}

static bool ready(const struct qent *e)
{
    if (q_state[e->seq] != Q_NEEDED) return false;
    for (size_t d = 0; d < e->ndeps; d++)
        if (!ran(e->deps[d])) return false;
    return true;
}

/* The next ready entry to run: the latest issued (seed 0), or a pseudo-random
 * one (splitmix64 of the seed). */
static struct qent *order_pick(struct qent **prev_out)
{
    struct qent *pick = NULL, *pick_prev = NULL, *prev = NULL;
    size_t nready = 0;
    uint64_t r = 0;
    if (g_order_rng) r = order_rand();
    for (struct qent *p = q_head; p; prev = p, p = p->next) {
        if (!ready(p)) continue;
        /* reservoir choice among the ready ones; without a seed, the last */
        if (!g_order_rng || r % ++nready == 0) { pick = p; pick_prev = prev; }
        if (g_order_rng) r = r * 6364136223846793005ull + 1442695040888963407ull;
    }
    *prev_out = pick_prev;
    return pick;
}

static void order_complete(uint64_t upto, bool all)
{
    size_t n = order_mark(upto, all);
    for (; n > 0; n--) {
        struct qent *prev, *e = order_pick(&prev);
        if (!e) break; /* cannot happen: what is needed waits only for what is needed */
        unlink_at(prev, e);
        if (e->seq > q_done) q_done = e->seq;
        qent_run(e);
    }
}

/* Runs the queue up to sequence number upto: in issue order (a prefix), or
 * with FAKECUDA_ORDER=deps, that entry and what it waits for (all: every
 * entry).  Returns the sticky error, if any, as a synchronize does.  A host
 * function that calls back into the driver cannot get here (NOT_PERMITTED),
 * but a call that does not need a context could: it returns without running
 * anything. */
static CUresult complete(uint64_t upto, bool all)
{
    LOCK();
    if (!q_running) {
        q_running = 1;
        if (g_order_deps) {
            order_complete(upto, all);
        } else {
            while (q_head && q_head->seq <= upto) {
                struct qent *e = q_head;
                if (!(q_head = e->next)) q_tail = NULL;
                q_done = e->seq;
                qent_run(e);
            }
        }
        q_running = 0;
    }
    UNLOCK();
    return fake_sticky();
}

CUresult queue_complete(uint64_t upto) { return complete(upto, false); }

/* Runs everything issued so far (a call that waits for the whole device). */
CUresult queue_drain(void)
{
    return fake_pending() ? complete(q_issued, true) : CUDA_SUCCESS;
}

bool queue_done(uint64_t seq)
{
    LOCK();
    bool r = g_order_deps ? ran(seq) : !q_head || q_head->seq > seq;
    UNLOCK();
    return r;
}

/* A query of what ends at sequence number target, counted in qseq and qcount
 * (the stream's or the event's): NOT_READY the first N times it finds target
 * pending, then target completes and the query succeeds. */
CUresult queue_query(uint64_t target, uint64_t *qseq, unsigned *qcount)
{
    if (queue_done(target)) return CUDA_SUCCESS;
    LOCK();
    if (*qseq != target) { *qseq = target; *qcount = 0; }
    bool ready = *qcount >= (unsigned)g_pending_n;
    if (ready) *qcount = 0;
    else (*qcount)++;
    UNLOCK();
    if (!ready) return CUDA_ERROR_NOT_READY;
    queue_complete(target);
    return CUDA_SUCCESS;
}

/* ---- submission helpers ------------------------------------------------- */
static bool host_side(CUmemorytype t) { return t == CU_MEMORYTYPE_HOST; }

/* An async copy outside capture.  Its host sides follow the real driver: a
 * pageable source is staged at the call (the caller may reuse it on return),
 * a pageable destination makes the copy synchronous (it completes the queue,
 * then copies); pinned memory is read and written when the copy runs. */
CUresult queue_copy(struct stream *s, struct node *t)
{
    CUDA_MEMCPY3D *cp = &t->u.cp;
    if (host_side(cp->dstMemoryType) && !pinned_find((uintptr_t)cp->dstHost, NULL, NULL, NULL)) {
        queue_drain();
        return node_run(t);
    }
    void *snap = NULL;
    if (host_side(cp->srcMemoryType) && !pinned_find((uintptr_t)cp->srcHost, NULL, NULL, NULL)) {
        snap = malloc(cp->WidthInBytes ? cp->WidthInBytes : 1);
        memcpy(snap, cp->srcHost, cp->WidthInBytes);
        cp->srcHost = snap;
    }
    queue_node(s, t, snap);
    return CUDA_SUCCESS;
}

/* A graph launch outside capture: the executable's nodes as they are now (a
 * later set-params, update or destroy changes nothing in flight), each copy
 * node keeping the allocations it binds.  Its event record nodes complete
 * with the launch.  One entry: its nodes run together, after its stream's
 * earlier work and the executable's earlier launches (cuGraphLaunch: "each
 * launch is ordered behind both any previous work in hStream and any previous
 * launches of hGraphExec"), g being the executable's graph. */
void queue_graph(struct stream *s, struct graph *g)
{
    struct node t = {.type = CU_GRAPH_NODE_TYPE_GRAPH};
    t.u.child = graph_clone(g, 0);
    for (size_t i = 0; i < g->n; i++) node_bind_copy(t.u.child->nodes[i], g->nodes[i]);
    LOCK();
    g->launch_seq = push_after(s, &t, NULL, g->launch_seq);
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) g->nodes[i]->u.ev->seq = q_issued;
    UNLOCK();
}

/* cuStreamAddCallback outside capture: the callback runs in stream order. */
struct qcallback { CUstreamCallback cb; CUstream h; void *ud; };
static void callback_tramp(void *p)
{
    struct qcallback *c = p;
    c->cb(c->h, CUDA_SUCCESS, c->ud);
}

void queue_callback(struct stream *s, CUstreamCallback cb, CUstream h, void *ud)
{
    struct qcallback *c = malloc(sizeof *c);
    *c = (struct qcallback){cb, h, ud};
    struct node t = {.type = CU_GRAPH_NODE_TYPE_HOST};
    t.u.host.fn = callback_tramp;
    t.u.host.userData = c;
    queue_node(s, &t, c);
}
