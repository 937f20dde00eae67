/* fake_queue.c - FAKECUDA_PENDING=N: work that completes later, as on a GPU.
 *
 * Off (N = 0, the default), every operation runs when it is enqueued.  On,
 * work submitted to a stream that does not capture is appended to one global
 * FIFO in issue order and runs when something completes it:
 *   - a synchronize (stream, context, event) runs the FIFO up to what it waits for;
 *   - a query (stream, event) of pending work answers CUDA_ERROR_NOT_READY N times
 *     for the same target, and the next query runs the FIFO up to it and succeeds;
 *   - calls that wait on the real driver (synchronous copies, device frees, module
 *     unload, ...) run it all first: see queue_drain's callers.
 * Running a prefix of the FIFO is always a legal schedule: every dependency of an
 * operation (stream order, events waited on, the legacy stream's implicit
 * synchronization) was issued before it.  The file is divided into the queue
 * itself, completion, and the submission helpers the API functions call. */
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
    struct qent *next;
};

static int g_pending_n = -1;           /* FAKECUDA_PENDING, read once */
static struct qent *q_head, *q_tail;   /* guarded by g_lock */
static uint64_t q_issued, q_done;      /* sequence numbers: last issued, last run */
static int q_running;                  /* a completion is in progress (re-entry) */

int fake_pending(void)
{
    if (g_pending_n < 0) {
        const char *v = getenv("FAKECUDA_PENDING");
        int n = v && *v ? atoi(v) : 0;
        g_pending_n = n > 0 ? n : 0;
    }
    return g_pending_n;
}

/* ---- the queue ---------------------------------------------------------- */
static uint64_t queue_push(struct stream *s, struct qent *e)
{
    e->seq = ++q_issued;
    if (q_tail) q_tail->next = e;
    else q_head = e;
    q_tail = e;
    if (s) s->last_seq = e->seq;
    return e->seq;
}

/* Queues an operation of s; takes ownership of n's payload and of owned. */
void queue_node(struct stream *s, const struct node *n, void *owned)
{
    struct qent *e = calloc(1, sizeof *e);
    e->kind = Q_NODE;
    e->n = *n;
    e->owned = owned;
    LOCK();
    queue_push(s, e);
    UNLOCK();
}

/* An event record: the event counts as recorded at once (it is no longer a
 * captured event, a wait on it from a capture is an isolation error), and
 * complete once the FIFO has run up to here. */
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
    if (e->kind == Q_RECORD) {
        if (e->ev->seq == e->seq) e->ev->t_ms = fake_now_ms(); /* else recorded again since */
    } else {
        node_run(&e->n);      /* an error is sticky (node_run), as on a GPU */
        node_payload_free(&e->n);
    }
    free(e->owned);
    free(e);
}

/* Runs the FIFO up to sequence number upto, in issue order.  Returns the
 * sticky error, if any, as a synchronize does.  A host function that calls
 * back into the driver cannot get here (NOT_PERMITTED), but a call that does
 * not need a context could: it returns without running anything. */
CUresult queue_complete(uint64_t upto)
{
    LOCK();
    if (!q_running) {
        q_running = 1;
        while (q_head && q_head->seq <= upto) {
            struct qent *e = q_head;
            if (!(q_head = e->next)) q_tail = NULL;
            q_done = e->seq;
            qent_run(e);
        }
        q_running = 0;
    }
    UNLOCK();
    return fake_sticky();
}

/* Runs everything issued so far (a call that waits for the whole device). */
CUresult queue_drain(void)
{
    return fake_pending() ? queue_complete(q_issued) : CUDA_SUCCESS;
}

bool queue_done(uint64_t seq)
{
    LOCK();
    bool r = !q_head || q_head->seq > seq;
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
        queue_complete(q_issued);
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
 * with the launch. */
void queue_graph(struct stream *s, const struct graph *g)
{
    struct node t = {.type = CU_GRAPH_NODE_TYPE_GRAPH};
    t.u.child = graph_clone(g, 0);
    for (size_t i = 0; i < g->n; i++) node_bind_copy(t.u.child->nodes[i], g->nodes[i]);
    LOCK();
    queue_node(s, &t, NULL);
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
