/*
** graph_capture.c: building executables (graph_capture.h): capture on a private
** stream, node by node, and instantiation; the gate between the engine's
** captures and the program's context synchronizes.
*/
#include "graph_capture.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/log.h"
#include "../base/names.h"

static atomic_long ncaptured, nfailed;

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
#define XS_MEMBERS 4 /* GS_XS_MEMBERS (stream/state.h) */
#define XS_EVENTS 8  /* GS_XS_EVENTS */
static GS_TLS struct {
    CUcontext ctx;
    CUstream stream;
    CUstream mem[XS_MEMBERS + 1]; /* a group's member streams, made at first need */
    CUevent ev[XS_EVENTS + XS_MEMBERS + 1]; /* a group's events, in a capture; then each member's join */
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
        memset(&privs[nprivs], 0, sizeof privs[nprivs]);
        privs[nprivs].ctx = ctx;
        privs[nprivs++].stream = p;
    }
    return p;
}

/* The slot of this thread's private capture stream p (-1: none). */
static int private_slot(CUstream p)
{
    for (int i = 0; i < nprivs; i++)
        if (privs[i].stream == p)
            return i;
    return -1;
}

/* The private stream of member k of a group (k >= 1), or its event j, for the
** capture on private stream p (made at first need); NULL where none could be. */
static CUstream private_member(CUstream p, uint32_t k)
{
    int i = private_slot(p);

    if (i < 0)
        return NULL;
    if (!privs[i].mem[k] && GS_REAL(cuStreamCreate)(&privs[i].mem[k], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        privs[i].mem[k] = NULL;
    return privs[i].mem[k];
}
static CUevent private_event(CUstream p, uint32_t j)
{
    int i = private_slot(p);

    if (i < 0)
        return NULL;
    if (!privs[i].ev[j] && GS_REAL(cuEventCreate)(&privs[i].ev[j], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        privs[i].ev[j] = NULL;
    return privs[i].ev[j];
}

void gs__graph_reset(void)
{
    atomic_fetch_add(&reset_gen, 1);
}

/* Captures, on s's private stream, what issue() issues there, into *g.  Returns
** 0, -1 (counted as a failure), or GS_CAPTURE_BUSY if a context synchronize is in
** progress (nothing was tried).  Called with s locked. */
static int capture_graph(struct gs_graphs *own, CUresult (*issue)(CUstream, void *), void *arg, unsigned nops,
                         CUgraph *g)
{
    CUstream p;
    CUresult rc;
    uint64_t t0 = gs__now_ns();

    *g = NULL;
    p = private_stream(own->ctx);
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
    own->capture_ns += gs__now_ns() - t0;
    if (rc == CUDA_SUCCESS)
        return 0;
    gs__debug("capture of a %u-op sequence failed (error %d)", nops, rc);
    if (*g)
        GS_IGNORE(GS_REAL(cuGraphDestroy)(*g)); /* a graph not destroyed leaks */
    *g = NULL;
failed:
    atomic_fetch_add(&nfailed, 1);
    return -1;
}

/* Instantiates g into a new executable for stream s, which keeps g where nodes
** (the node of each of its n ops, or NULL) is given, and destroys it otherwise.
** Returns it, or NULL (counted; g destroyed, nodes freed).  A new executable
** counts in own->builds and own->instantiated, which the capture budget weighs. */
static struct gs_exec *instantiate(struct gs_graphs *own, CUgraph g, unsigned nops, CUgraphNode *nodes)
{
    struct gs_exec *e = calloc(1, sizeof *e);
    uint64_t t0 = gs__now_ns();
    CUresult rc = e ? GS_REAL(cuGraphInstantiateWithFlags)(&e->x, g, 0) : CUDA_ERROR_OUT_OF_MEMORY;

    own->instantiate_ns += gs__now_ns() - t0;
    atomic_fetch_add(rc == CUDA_SUCCESS ? &ncaptured : &nfailed, 1);
    if (rc == CUDA_SUCCESS && nodes) {
        e->g = g;
        e->nodes = nodes;
    } else {
        GS_IGNORE(GS_REAL(cuGraphDestroy)(g)); /* a graph not destroyed leaks */
        free(nodes);
    }
    if (rc == CUDA_SUCCESS) {
        e->n = nops;
        own->ops_built += nops;
        own->builds++;
        own->instantiated++;
        return e;
    }
    free(e);
    gs__debug("instantiating a %u-op graph failed (error %d)", nops, rc);
    return NULL;
}

/* The ops of a path, as gs__graph_capture() captures them; nodes[i - from] gets
** the node each became, as the capture tells (NULL nodes once it could not). */
struct path_ops {
    struct gs_node **path;
    const struct gs_key *const *keys;
    uint32_t from, to;
    int reads_staging, host;
    CUgraphNode *nodes;
    CUgraphNode last[XS_MEMBERS + 1];  /* each stream's last node, a group's members after the origin */
    uint32_t recorded;                 /* a group's event slots recorded in the capture (bits) */
    uint32_t members;                  /* the members the capture used (bits) */
};

/* The stream op k of a group goes to in the capture on p: p, or a member's. */
static CUstream op_stream(CUstream p, const struct gs_key *k)
{
    return k->member && k->member <= XS_MEMBERS ? private_member(p, k->member) : p;
}

/* An event record or wait of a group, in the capture on p: on graphshim's
** private event that stands for the program's (whose record must stay
** outside any capture: it is recorded again after the graph's launch,
** stream/xs.c).  A fork (a member's wait on the origin's record) and a join
** (the origin's wait on a member's record) are such waits; a capture whose
** members are not all joined fails (CUDA_ERROR_STREAM_CAPTURE_UNJOINED). */
static CUresult event_op(struct path_ops *o, CUstream p, const struct gs_key *k)
{
    CUstream st = op_stream(p, k);
    uint32_t j = k->elem - 1; /* the event's slot in its group (gs__key_event) */

    if (!st || j >= XS_EVENTS || (k->kind == GS_OP_WAIT && !(o->recorded >> j & 1)))
        return CUDA_ERROR_INVALID_VALUE; /* a wait on an event the capture did not record */
    o->recorded |= 1u << j;
    CUevent e = private_event(p, j);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (k->kind == GS_OP_RECORD)
        return GS_REAL(cuEventRecord)(e, st);
    if (k->member == 0 && GS_DROPPED(GS_RULE_XS_JOIN))
        return CUDA_SUCCESS; /* the test build's planted missing join */
    return GS_REAL(cuStreamWaitEvent)(st, e, 0);
}

/* Every member the capture used, joined back to p after its last op: the
** driver refuses a capture whose streams are not all joined (a chunk, a step
** whose member's work runs on into the next), and a graph's launch ends when
** all its nodes did: the join orders nothing that the launch did not. */
static CUresult join_members(struct path_ops *o, CUstream p)
{
    CUresult rc = CUDA_SUCCESS;

    for (uint32_t k = 1; k <= XS_MEMBERS && rc == CUDA_SUCCESS; k++) {
        if (!(o->members >> k & 1))
            continue;
        CUstream m = private_member(p, k);
        CUevent e = private_event(p, XS_EVENTS + k);
        if (!m || !e)
            return CUDA_ERROR_OUT_OF_MEMORY;
        rc = GS_REAL(cuEventRecord)(e, m);
        if (rc == CUDA_SUCCESS)
            rc = GS_REAL(cuStreamWaitEvent)(p, e, 0);
    }
    return rc;
}

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

    for (uint32_t i = o->from; i < o->to && rc == CUDA_SUCCESS; i++) {
        const struct gs_key *k = o->keys[i];
        CUstream st = op_stream(p, k);
        o->members |= k->member <= XS_MEMBERS ? 1u << k->member : 0;
        if (k->kind >= GS_OP_RECORD) { /* no node of its own (NULL) */
            rc = event_op(o, p, k);
            continue;
        }
        rc = st ? gs__key_issue(k, st, o->path[i]->staging) : CUDA_ERROR_INVALID_VALUE;
        o->reads_staging |= o->path[i]->staging != NULL;
        o->host |= gs__key_host_copy(k);
        if (rc == CUDA_SUCCESS && o->nodes &&
            !(o->last[k->member] = o->nodes[i - o->from] = captured_node(st, k, o->last[k->member]))) {
            free(o->nodes);
            o->nodes = NULL;
        }
    }
    return rc == CUDA_SUCCESS ? join_members(o, p) : rc;
}

int gs__capture_path(struct gs_graphs *own, struct gs_node **path, const struct gs_key *const *keys,
                        uint32_t from, uint32_t to, struct gs_exec **out)
{
    uint32_t n = to - from, npatches = 0;
    struct path_ops o = {path, keys, from, to, 0, 0, calloc(n, sizeof(CUgraphNode)), {0}, 0, 0};
    struct gs_exec *e;
    CUgraph g;
    int rc = capture_graph(own, issue_path, &o, n, &g);

    *out = NULL;
    if (rc != 0) {
        free(o.nodes);
        return rc;
    }
    if (!(e = instantiate(own, g, n, o.nodes)))
        return -1;
    e->from = from;
    e->reads_staging = (uint8_t)o.reads_staging;
    e->epoch = o.host ? atomic_load(&gs__mem_epoch) : 0;
    for (uint32_t i = from; i < to; i++)
        npatches += keys[i] != &path[i]->key;
    e->args_hash = gs__exec_args_hash(path, keys, from, to);
    e->args_known = 1;
    if (gs__exec_diff_set(e, path, keys, npatches) != 0) {
        /* Without its diff, what e holds is not known: it could be launched
        ** with arguments of another replay. */
        gs__exec_free(e);
        return -1;
    }
    *out = e;
    return 0;
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
            o->host |= gs__key_host_copy(o->keys[i]);
        }
    return rc;
}

int gs__capture_keys(struct gs_graphs *own, const struct gs_key *const *keys, unsigned n, unsigned reps,
                     struct gs_exec **x)
{
    struct key_ops o = {keys, n, reps, 0};
    CUgraph g;
    int rc = capture_graph(own, issue_keys, &o, n * reps, &g);

    *x = NULL;
    if (rc != 0)
        return rc;
    if (!(*x = instantiate(own, g, n * reps, NULL)))
        return -1;
    (*x)->epoch = o.host ? atomic_load(&gs__mem_epoch) : 0;
    return 0;
}

void gs__capture_counts(long *captured, long *failed)
{
    *captured = atomic_load(&ncaptured);
    *failed = atomic_load(&nfailed);
}
