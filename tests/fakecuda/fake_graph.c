/* fake_graph.c - graphs, graph nodes, executable graphs (instantiate, launch,
 * update).  Node creation order is a topological order (dependencies always
 * name earlier nodes), so graphs run their nodes in creation order. */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

CUresult run_copy3d(const CUDA_MEMCPY3D *p);
CUresult run_memset(const CUDA_MEMSET_NODE_PARAMS *m);
CUresult run_kernel(const struct knode *k);
void run_memfree(CUdeviceptr p);
void event_mark(struct event *e);
void fake_set_sticky(CUresult rc);

struct graph *graph_new(int registered)
{
    struct graph *g = calloc(1, sizeof *g);
    g->registered = registered;
    if (registered) reg_add(g, K_GRAPH);
    return g;
}

void node_payload_free(struct node *n)
{
    if (n->type == CU_GRAPH_NODE_TYPE_KERNEL) {
        free(n->u.k.buf);
        free(n->u.k.ptrs);
        n->u.k.buf = NULL;
        n->u.k.ptrs = NULL;
    } else if (n->type == CU_GRAPH_NODE_TYPE_GRAPH && n->u.child) {
        graph_free(n->u.child);
        n->u.child = NULL;
    }
}

CUresult node_payload_copy(struct node *dst, const struct node *src)
{
    dst->type = src->type;
    dst->u = src->u;
    if (src->type == CU_GRAPH_NODE_TYPE_KERNEL) {
        const struct kdef *kd = src->u.k.kd;
        dst->u.k.buf = malloc(kd->total ? kd->total : 1);
        memcpy(dst->u.k.buf, src->u.k.buf, kd->total);
        dst->u.k.ptrs = calloc(kd->n + 1, sizeof(void *));
        for (size_t i = 0; i < kd->n; i++) dst->u.k.ptrs[i] = dst->u.k.buf + kd->offs[i];
    } else if (src->type == CU_GRAPH_NODE_TYPE_GRAPH) {
        dst->u.child = graph_clone(src->u.child, 0);
    }
    return CUDA_SUCCESS;
}

void graph_free(struct graph *g)
{
    if (!g) return;
    LOCK();
    for (size_t i = 0; i < g->n; i++) {
        struct node *n = g->nodes[i];
        if (g->registered) reg_del(n);
        node_payload_free(n);
        free(n->deps);
        free(n);
    }
    if (g->registered) reg_del(g);
    free(g->nodes);
    free(g);
    UNLOCK();
}

/* Takes ownership of tmpl's payload. */
struct node *graph_append(struct graph *g, const struct node *tmpl,
                          struct node *const *deps, size_t ndeps)
{
    struct node *n = calloc(1, sizeof *n);
    n->type = tmpl->type;
    n->u = tmpl->u;
    n->g = g;
    n->idx = g->n;
    if (ndeps) {
        n->deps = malloc(ndeps * sizeof *n->deps);
        memcpy(n->deps, deps, ndeps * sizeof *n->deps);
    }
    n->ndeps = ndeps;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    g->nodes[g->n++] = n;
    if (g->registered) reg_add(n, K_NODE);
    return n;
}

struct graph *graph_clone(const struct graph *src, int keep_orig)
{
    struct graph *g = graph_new(0);
    for (size_t i = 0; i < src->n; i++) {
        const struct node *s = src->nodes[i];
        struct node t = {0};
        node_payload_copy(&t, s);
        struct node **deps = s->ndeps ? malloc(s->ndeps * sizeof *deps) : NULL;
        for (size_t j = 0; j < s->ndeps; j++) deps[j] = g->nodes[s->deps[j]->idx];
        struct node *n = graph_append(g, &t, deps, s->ndeps);
        free(deps);
        if (keep_orig) n->orig = (struct node *)s;
    }
    return g;
}

/* A copy node of an executable that touches host memory binds the allocations
** on both sides when it is made (measured on the H100, driver 580): once either
** is freed, running the node faults the context ("unspecified launch failure";
** at times the driver crashes instead), even where an allocation of the same
** size came back at the same address.  Setting its parameters again binds anew.
** Device-to-device copies and memsets bind nothing: they run on whatever is at
** their addresses. */
static uintptr_t copy_side(const CUDA_MEMCPY3D *p, int dst)
{
    if (dst) return p->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->dstHost : p->dstDevice;
    return p->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->srcHost : p->srcDevice;
}

/* Pool memory (cuMemAllocAsync) is a kind of mapping of its own: a set may
** not move a side of a copy between it and cuMemAlloc memory, nor between
** cuMemMap memory and cuMemAlloc memory (both measured,
** bench/copy_node_probe.cu).  1: pool, 2: cuMemMap, 0: other. */
static int copy_side_pool(const CUDA_MEMCPY3D *p, int dst)
{
    CUmemorytype t = dst ? p->dstMemoryType : p->srcMemoryType;
    if (t != CU_MEMORYTYPE_DEVICE) return 0;
    return alloc_pool(copy_side(p, dst)) ? 1 : alloc_vmm(copy_side(p, dst)) ? 2 : 0;
}

void node_bind(struct node *n)
{
    n->binds = n->type == CU_GRAPH_NODE_TYPE_MEMCPY &&
               (n->u.cp.srcMemoryType == CU_MEMORYTYPE_HOST || n->u.cp.dstMemoryType == CU_MEMORYTYPE_HOST ||
                !in_arena(&g_dev, copy_side(&n->u.cp, 0)) || !in_arena(&g_dev, copy_side(&n->u.cp, 1)));
    for (int d = 0; d < 2; d++) {
        n->bound[d] = n->binds ? alloc_serial(copy_side(&n->u.cp, d)) : 0;
        n->pool[d] = n->type == CU_GRAPH_NODE_TYPE_MEMCPY && copy_side_pool(&n->u.cp, d);
    }
}

/* A snapshot of an executable's node (FAKECUDA_PENDING) binds what it binds. */
void node_bind_copy(struct node *dst, const struct node *src)
{
    dst->binds = src->binds;
    memcpy(dst->bound, src->bound, sizeof dst->bound);
}

static bool binding_lost(const struct node *n)
{
    for (int d = 0; n->binds && d < 2; d++)
        if (n->bound[d] && alloc_serial(copy_side(&n->u.cp, d)) != n->bound[d])
            return true;
    return false;
}

CUresult node_run(struct node *n)
{
    CUresult rc = CUDA_SUCCESS;
    if (binding_lost(n)) {
        fake_set_sticky(CUDA_ERROR_LAUNCH_FAILED);
        return CUDA_ERROR_LAUNCH_FAILED;
    }
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: rc = run_kernel(&n->u.k); fake_gpu_kernel(); break;
    case CU_GRAPH_NODE_TYPE_MEMCPY: rc = run_copy3d(&n->u.cp); break;
    case CU_GRAPH_NODE_TYPE_MEMSET: rc = run_memset(&n->u.ms); break;
    case CU_GRAPH_NODE_TYPE_HOST:
        t_in_callback++;
        n->u.host.fn(n->u.host.userData);
        t_in_callback--;
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: event_mark(n->u.ev); break;
    case CU_GRAPH_NODE_TYPE_MEM_FREE: run_memfree(n->u.mf); break;
    case CU_GRAPH_NODE_TYPE_GRAPH: rc = graph_run(n->u.child); break;
    default: break;   /* empty, wait event, mem alloc */
    }
    if (rc == CUDA_ERROR_ILLEGAL_ADDRESS) fake_set_sticky(rc);
    return rc;
}

/* A graph's nodes run in the order they were added, or, under
 * FAKECUDA_ORDER=deps, in an order its edges allow, as a GPU runs independent
 * branches of a graph at once: among the nodes whose dependencies ran, the
 * latest added first, or one FAKECUDA_ORDER_SEED chooses (fake_queue.c). */
CUresult graph_run(struct graph *g)
{
    size_t n = g->n, nready = 0, *left = NULL, *ready = NULL;
    CUresult rc = CUDA_SUCCESS;
    if (!fake_order_deps() || n < 2 || !(left = calloc(n, sizeof *left)) || !(ready = malloc(n * sizeof *ready))) {
        free(left);
        for (size_t i = 0; i < n && !rc; i++) rc = node_run(g->nodes[i]);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        if (!(left[i] = g->nodes[i]->ndeps)) ready[nready++] = i;
    while (nready && !rc) {
        size_t k = fake_order_choose(ready, nready), i = ready[k];
        ready[k] = ready[--nready];
        rc = node_run(g->nodes[i]);
        for (size_t j = 0; j < n; j++) /* the nodes that waited for i */
            for (size_t d = 0; d < g->nodes[j]->ndeps; d++)
                if (g->nodes[j]->deps[d]->idx == i && --left[j] == 0) ready[nready++] = j;
    }
    free(left), free(ready);
    return rc;
}

/* ------------------------------------------------------------------------ */
static CUresult graph_arg(CUgraph hg, struct graph **out)
{
    if (!hg) return CUDA_ERROR_INVALID_VALUE;
    if (!(*out = reg_get(hg, K_GRAPH))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

static CUresult deps_arg(struct graph *g, const CUgraphNode *deps, size_t n)
{
    if (n && !deps) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        struct node *d = reg_get(deps[i], K_NODE);
        if (!d || d->g != g) return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult add_node(CUgraphNode *pn, CUgraph hg, const CUgraphNode *deps, size_t nd,
                         struct node *t)
{
    struct graph *g;
    CUresult rc;
    if (!pn) rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(rc = graph_arg(hg, &g)) && !(rc = deps_arg(g, deps, nd)))
        *pn = (CUgraphNode)graph_append(g, t, (struct node *const *)deps, nd);
    if (rc) node_payload_free(t);
    return rc;
}

CUresult x_GraphCreate(CUgraph *pg, unsigned flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pg || flags) return CUDA_ERROR_INVALID_VALUE;
    *pg = (CUgraph)graph_new(1);
    return CUDA_SUCCESS;
}

CUresult x_GraphDestroy(CUgraph hg)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct graph *g;
    LOCK();
    if (!(rc = graph_arg(hg, &g))) graph_free(g);
    UNLOCK();
    return rc;
}

CUresult x_GraphAddKernelNode(CUgraphNode *pn, CUgraph hg, const CUgraphNode *deps, size_t nd,
                              const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUfunction f = p->func ? p->func : (CUfunction)p->kern;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    struct node t = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
    LOCK();
    if (!(rc = knode_build(&t.u.k, f, grid, block, p->sharedMemBytes, p->kernelParams, p->extra)))
        rc = add_node(pn, hg, deps, nd, &t);
    UNLOCK();
    return rc;
}

static bool copy_side_ok(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    if (t == CU_MEMORYTYPE_HOST) return host != NULL;
    if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) return dev != 0;
    return false;   /* arrays are not modelled */
}

/* A copy's parameters as a node keeps them (unified operands are device
** operands), or INVALID_VALUE. */
static CUresult copy_params(const CUDA_MEMCPY3D *p, CUDA_MEMCPY3D *out)
{
    if (!p || !copy_side_ok(p->srcMemoryType, p->srcHost, p->srcDevice) ||
        !copy_side_ok(p->dstMemoryType, p->dstHost, p->dstDevice))
        return CUDA_ERROR_INVALID_VALUE;
    *out = *p;
    if (out->srcMemoryType == CU_MEMORYTYPE_UNIFIED) out->srcMemoryType = CU_MEMORYTYPE_DEVICE;
    if (out->dstMemoryType == CU_MEMORYTYPE_UNIFIED) out->dstMemoryType = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}

CUresult x_GraphAddMemcpyNode(CUgraphNode *pn, CUgraph hg, const CUgraphNode *deps, size_t nd,
                              const CUDA_MEMCPY3D *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_MEMCPY};
    if ((rc = copy_params(p, &t.u.cp))) return rc;
    LOCK();
    rc = add_node(pn, hg, deps, nd, &t);
    UNLOCK();
    return rc;
}

/* A memset's parameters as a node keeps them, or INVALID_VALUE: element size
** 1, 2 or 4, nothing empty, dst aligned to the element, valid memory. */
static CUresult memset_params(const CUDA_MEMSET_NODE_PARAMS *p, CUDA_MEMSET_NODE_PARAMS *out)
{
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
        !p->width || !p->height || (p->height > 1 && p->pitch < p->width * p->elementSize) ||
        p->dst % p->elementSize)
        return CUDA_ERROR_INVALID_VALUE;
    size_t span = (p->height - 1) * p->pitch + p->width * p->elementSize;
    if (!dev_range_ok(p->dst, span)) return CUDA_ERROR_INVALID_VALUE;
    *out = *p;
    if (out->height == 1) out->pitch = p->width * p->elementSize;
    return CUDA_SUCCESS;
}

CUresult x_GraphAddMemsetNode(CUgraphNode *pn, CUgraph hg, const CUgraphNode *deps, size_t nd,
                              const CUDA_MEMSET_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_MEMSET};
    if ((rc = memset_params(p, &t.u.ms))) return rc;
    LOCK();
    rc = add_node(pn, hg, deps, nd, &t);
    UNLOCK();
    return rc;
}

CUresult x_GraphAddHostNode(CUgraphNode *pn, CUgraph hg, const CUgraphNode *deps, size_t nd,
                            const CUDA_HOST_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_HOST};
    t.u.host = *p;
    LOCK();
    rc = add_node(pn, hg, deps, nd, &t);
    UNLOCK();
    return rc;
}

CUresult x_GraphGetNodes(CUgraph hg, CUgraphNode *nodes, size_t *num)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!num) return CUDA_ERROR_INVALID_VALUE;
    struct graph *g;
    LOCK();
    if (!(rc = graph_arg(hg, &g))) {
        if (!nodes) {
            *num = g->n;
        } else {
            size_t k = *num < g->n ? *num : g->n;
            for (size_t i = 0; i < *num; i++) nodes[i] = i < k ? (CUgraphNode)g->nodes[i] : NULL;
            *num = k;
        }
    }
    UNLOCK();
    return rc;
}

CUresult x_GraphNodeGetType(CUgraphNode hn, CUgraphNodeType *type)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    struct node *n = reg_get(hn, K_NODE);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

CUresult x_GraphKernelNodeGetParams(CUgraphNode hn, CUDA_KERNEL_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct node *n = reg_get(hn, K_NODE);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL) rc = CUDA_ERROR_INVALID_VALUE;
    else {
        const struct knode *k = &n->u.k;
        memset(p, 0, sizeof *p);
        p->func = k->handle;
        if (reg_get(k->handle, K_KERNEL)) p->kern = (CUkernel)k->handle;
        p->gridDimX = k->grid[0]; p->gridDimY = k->grid[1]; p->gridDimZ = k->grid[2];
        p->blockDimX = k->block[0]; p->blockDimY = k->block[1]; p->blockDimZ = k->block[2];
        p->sharedMemBytes = k->shmem;
        p->kernelParams = k->ptrs;
        p->extra = NULL;
        p->ctx = (CUcontext)cur_ctx();
    }
    UNLOCK();
    return rc;
}

/* The parameters of a node of a graph (an executable's nodes are not handed
** out): what it was made with; setting an executable's node leaves it as it is. */
static CUresult node_params(CUgraphNode hn, CUgraphNodeType type, void *p, size_t size)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct node *n = reg_get(hn, K_NODE);
    if (!n || n->type != type) rc = CUDA_ERROR_INVALID_VALUE;
    else memcpy(p, &n->u, size);
    UNLOCK();
    return rc;
}

CUresult x_GraphMemcpyNodeGetParams(CUgraphNode hn, CUDA_MEMCPY3D *p)
{
    return node_params(hn, CU_GRAPH_NODE_TYPE_MEMCPY, p, sizeof *p);
}

CUresult x_GraphMemsetNodeGetParams(CUgraphNode hn, CUDA_MEMSET_NODE_PARAMS *p)
{
    return node_params(hn, CU_GRAPH_NODE_TYPE_MEMSET, p, sizeof *p);
}

CUresult x_GraphInstantiate(CUgraphExec *pe, CUgraph hg, unsigned long long flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pe) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                       CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                       CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                       CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    struct graph *g;
    LOCK();
    if (!(rc = graph_arg(hg, &g)) && (graph_mem_take() != 0 || exec_mem_take(exec_mem_size(g->n)) != 0))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (!rc) {
        struct exec *x = calloc(1, sizeof *x);
        x->mem = exec_mem_size(g->n);
        x->g = graph_clone(g, 1);
        for (size_t i = 0; i < x->g->n; i++) node_bind(x->g->nodes[i]);
        x->flags = flags;
        x->ctx = cur_ctx();
        reg_add(x, K_EXEC);
        *pe = (CUgraphExec)x;
        fake_count_exec(1);
    }
    UNLOCK();
    return rc;
}

static CUresult exec_arg(CUgraphExec he, struct exec **out)
{
    if (!he) return CUDA_ERROR_INVALID_VALUE;
    if (!(*out = reg_get(he, K_EXEC))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult x_GraphLaunch(CUgraphExec he, CUstream h, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct exec *x;
    struct stream *s;
    LOCK();
    if (!(rc = exec_arg(he, &x)) && !(rc = stream_prep(h, pt, &s))) {
        if (s->ctx != x->ctx) {
            /* An executable runs in the context it was instantiated in. */
            rc = CUDA_ERROR_INVALID_CONTEXT;
        } else if (s->cap) {
            struct node t = {.type = CU_GRAPH_NODE_TYPE_GRAPH};
            t.u.child = graph_clone(x->g, 0);
            rc = stream_submit(s, &t);
        } else if (fake_pending()) {
            queue_graph(s, x->g);
        } else {
            rc = graph_run(x->g);
        }
        if (!rc && !s->cap)
            fake_count_graph(x->g);
    }
    UNLOCK();
    if (!rc)
        fake_spend_us(fake_graph_launch_us());
    return rc;
}

CUresult x_GraphExecDestroy(CUgraphExec he)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct exec *x;
    LOCK();
    if (!(rc = exec_arg(he, &x))) {
        reg_del(x);
        graph_free(x->g);
        exec_mem_give(x->mem); /* on the real driver, once a launch in flight ends */
        fake_count_exec(-1);
        free(x);
    }
    UNLOCK();
    return rc;
}

static void reset_exec(void *obj, void *arg)
{
    struct exec *x = obj;
    if (x->ctx != arg) return;
    reg_del(x);
    graph_free(x->g);
    exec_mem_give(x->mem);
    free(x);
}

void execs_reset(struct ctx *c)
{
    reg_each(K_EXEC, reset_exec, c);
}

static int cmp_idx(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static bool same_deps(const struct node *a, const struct node *b)
{
    if (a->ndeps != b->ndeps) return false;
    size_t n = a->ndeps, ia[n ? n : 1], ib[n ? n : 1];
    for (size_t i = 0; i < n; i++) { ia[i] = a->deps[i]->idx; ib[i] = b->deps[i]->idx; }
    qsort(ia, n, sizeof *ia, cmp_idx);
    qsort(ib, n, sizeof *ib, cmp_idx);
    return !memcmp(ia, ib, n * sizeof *ia);
}

static bool same_topology(const struct graph *a, const struct graph *b)
{
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->nodes[i]->type != b->nodes[i]->type || !same_deps(a->nodes[i], b->nodes[i]))
            return false;
        if (a->nodes[i]->type == CU_GRAPH_NODE_TYPE_GRAPH &&
            !same_topology(a->nodes[i]->u.child, b->nodes[i]->u.child))
            return false;
    }
    return true;
}

CUresult x_GraphExecUpdate(CUgraphExec he, CUgraph hg, CUgraphExecUpdateResultInfo *info)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!info) return CUDA_ERROR_INVALID_VALUE;
    struct exec *x;
    struct graph *g;
    LOCK();
    if ((rc = exec_arg(he, &x)) || (rc = graph_arg(hg, &g))) goto out;
    memset(info, 0, sizeof *info);
    struct graph *xg = x->g;
    CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    struct node *err = NULL;
    if (xg->n != g->n) {
        res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    } else {
        for (size_t i = 0; i < g->n && !res; i++) {
            struct node *a = xg->nodes[i], *b = g->nodes[i];
            if (a->type != b->type) res = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
            else if (!same_deps(a, b)) res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
            else if (a->type == CU_GRAPH_NODE_TYPE_KERNEL && a->u.k.kd != b->u.k.kd)
                res = CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED;
            else if (a->type == CU_GRAPH_NODE_TYPE_MEMCPY &&
                     (a->u.cp.srcMemoryType != b->u.cp.srcMemoryType ||
                      a->u.cp.dstMemoryType != b->u.cp.dstMemoryType))
                res = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            else if (a->type == CU_GRAPH_NODE_TYPE_MEMSET &&
                     a->u.ms.elementSize != b->u.ms.elementSize)
                res = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            else if (a->type == CU_GRAPH_NODE_TYPE_GRAPH && !same_topology(a->u.child, b->u.child))
                res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
            else if ((a->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || a->type == CU_GRAPH_NODE_TYPE_MEM_FREE) &&
                     memcmp(&a->u, &b->u, sizeof a->u))
                res = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
            if (res) err = b;
        }
    }
    info->result = res;
    info->errorNode = (CUgraphNode)err;
    info->errorFromNode = NULL;
    if (res) { rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE; goto out; }
    for (size_t i = 0; i < g->n; i++) {
        struct node *a = xg->nodes[i];
        node_payload_free(a);
        node_payload_copy(a, g->nodes[i]);
        node_bind(a);
        a->upd = g->nodes[i];
    }
out:
    UNLOCK();
    return rc;
}

/* The node of executable x that stands for hn, a node of the graph x was
** instantiated from (or last updated from), if it is of that type. */
static struct node *exec_node(struct exec *x, CUgraphNode hn, CUgraphNodeType type)
{
    for (size_t i = 0; i < x->g->n; i++) {
        struct node *a = x->g->nodes[i];
        if (a->orig == (struct node *)hn || a->upd == (struct node *)hn)
            return a->type == type ? a : NULL;
    }
    return NULL;
}

CUresult x_GraphExecKernelNodeSetParams(CUgraphExec he, CUgraphNode hn, const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p || !hn) return CUDA_ERROR_INVALID_VALUE;
    struct exec *x;
    LOCK();
    if ((rc = exec_arg(he, &x))) goto out;
    struct node *a = exec_node(x, hn, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!a) { rc = CUDA_ERROR_INVALID_VALUE; goto out; }
    CUfunction f = p->func ? p->func : (CUfunction)p->kern;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    struct knode k;
    if ((rc = knode_build(&k, f, grid, block, p->sharedMemBytes, p->kernelParams, p->extra))) goto out;
    if (k.kd != a->u.k.kd) {      /* the function of an instantiated kernel node cannot change */
        free(k.buf); free(k.ptrs);
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    free(a->u.k.buf);
    free(a->u.k.ptrs);
    a->u.k = k;
out:
    UNLOCK();
    return rc;
}

/* Where a side of a 1-dimensional copy starts. */
static uintptr_t copy_start(const CUDA_MEMCPY3D *p, int dst)
{
    size_t w = p->WidthInBytes, hgt = p->Height ? p->Height : 1;
    size_t pitch = (dst ? p->dstPitch : p->srcPitch) ? (dst ? p->dstPitch : p->srcPitch) : w;
    size_t h = (dst ? p->dstHeight : p->srcHeight) ? (dst ? p->dstHeight : p->srcHeight) : hgt;
    size_t off = dst ? (p->dstZ * h + p->dstY) * pitch + p->dstXInBytes
                     : (p->srcZ * h + p->srcY) * pitch + p->srcXInBytes;
    return copy_side(p, dst) + off;
}

/* Sets the executable's copy node only, never the graph's node.  Measured on
** the H100 (driver 580, bench/copy_node_probe.cu, a captured device-to-device
** copy): moving to other cuMemAlloc memory, or to an offset into it, and
** changing the width work; moving a side between cuMemAlloc and cuMemAllocAsync
** memory, either way, gives INVALID_VALUE and leaves the node as it was.
** Documented: both the old and the new operands must be 1-dimensional, and
** zero-length copies are not supported (INVALID_VALUE).  A new device range
** must be valid memory, as when a node is added. */
CUresult x_GraphExecMemcpyNodeSetParams(CUgraphExec he, CUgraphNode hn, const CUDA_MEMCPY3D *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p || !hn) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D cp;
    if ((rc = copy_params(p, &cp))) return rc;
    if (!cp.WidthInBytes || cp.Height != 1 || cp.Depth != 1) return CUDA_ERROR_INVALID_VALUE;
    struct exec *x;
    LOCK();
    if ((rc = exec_arg(he, &x))) goto out;
    struct node *a = exec_node(x, hn, CU_GRAPH_NODE_TYPE_MEMCPY);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (!a || a->u.cp.Height > 1 || a->u.cp.Depth > 1) goto out;
    for (int d = 0; d < 2; d++) {
        CUmemorytype t = d ? cp.dstMemoryType : cp.srcMemoryType;
        CUmemorytype given = d ? p->dstMemoryType : p->srcMemoryType;
        uintptr_t start = copy_start(&cp, d);
        if (t != (d ? a->u.cp.dstMemoryType : a->u.cp.srcMemoryType)) goto out;
        /* a device operand must be valid memory; a unified one may be host memory */
        if (t == CU_MEMORYTYPE_DEVICE && (given == CU_MEMORYTYPE_DEVICE || in_arena(&g_dev, start)) &&
            !dev_range_ok(start, cp.WidthInBytes))
            goto out;
        if (copy_side_pool(&cp, d) != a->pool[d]) goto out;
    }
    a->u.cp = cp;
    node_bind(a);
    rc = CUDA_SUCCESS;
out:
    UNLOCK();
    return rc;
}

/* Sets the executable's memset node only, never the graph's node.  Measured on
** the H100 (bench/copy_node_probe.cu, a captured cuMemsetD32Async): a new
** destination anywhere in device memory (cuMemAlloc, an offset into it,
** cuMemAllocAsync, managed, cuMemMap, from cuMemAlloc, pool or managed
** memory), a new value, a halved width, element size 4 -> 1 or 2 with the
** same bytes: all work.  Documented: zero-sized memsets are not supported, a
** change of height is rejected, and so is any change of dimensions of a 2-d
** memset. */
CUresult x_GraphExecMemsetNodeSetParams(CUgraphExec he, CUgraphNode hn, const CUDA_MEMSET_NODE_PARAMS *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p || !hn) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMSET_NODE_PARAMS ms;
    if ((rc = memset_params(p, &ms))) return rc;
    struct exec *x;
    LOCK();
    if ((rc = exec_arg(he, &x))) goto out;
    struct node *a = exec_node(x, hn, CU_GRAPH_NODE_TYPE_MEMSET);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (!a || ms.height != a->u.ms.height) goto out;
    if (ms.height > 1 && (ms.width != a->u.ms.width || ms.elementSize != a->u.ms.elementSize ||
                          ms.pitch != a->u.ms.pitch))
        goto out;
    a->u.ms = ms;
    node_bind(a);
    rc = CUDA_SUCCESS;
out:
    UNLOCK();
    return rc;
}
