/*
** graph_exec.c: the executable of a run of ops (graph_exec.h): what it owns,
** the arguments it holds where they are not its path's own, and setting its
** nodes in place (kernels, device copies, memsets).
*/
#include "graph_exec.h"

#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/log.h"
#include "../base/prof.h"

atomic_uint gs__mem_epoch = 1;

/* Destroys e and what it owns, its variants too.  An executable or graph the
** driver does not destroy leaks: nothing of the program's uses it. */
void gs__exec_free(struct gs_exec *e)
{
    if (!e)
        return;
    gs__exec_free(e->next);
    GS_IGNORE(GS_REAL(cuGraphExecDestroy)(e->x));
    if (e->g)
        GS_IGNORE(GS_REAL(cuGraphDestroy)(e->g));
    for (uint32_t i = 0; i < e->ndiff; i++)
        free(e->diff[i].key);
    free(e->diff);
    if (e->got)
        for (uint32_t i = 0; i < e->n; i++)
            free(e->got[i]);
    free(e->got);
    free(e->nodes);
    free(e);
}

/* Records in e which of its ops went in with keys other than their path's
** (npatches of them): its diff.  0, or -1 (no memory: what e holds is not
** known, and the caller drops it). */
int gs__exec_diff_set(struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys, uint32_t npatches)
{
    uint32_t n = 0;

    if (!npatches)
        return 0;
    if (!(e->diff = calloc(npatches, sizeof *e->diff)))
        return -1;
    for (uint32_t i = e->from; i < e->from + e->n && n < npatches; i++)
        if (keys[i] != &path[i]->key && !gs__key_no_node(keys[i])) {
            if (!(e->diff[n].key = malloc(path[i]->len)))
                return -1;
            memcpy(e->diff[n].key, keys[i], path[i]->len);
            e->diff[n++].op = i;
            e->ndiff = n;
        }
    return 0;
}

/* What node j of e was captured with, as the driver tells of its graph node
** (whose parameters never change: sets go to the executable), asked once, at
** its first set, and kept for the next: a set then costs one driver call.
** NULL where the driver cannot tell, or no memory. */
static union gs_node_params *captured_params(struct gs_exec *e, uint32_t j, enum gs_op_kind kind)
{
    union gs_node_params *p;
    CUresult rc;

    if (e->got && e->got[j])
        return e->got[j];
    if (!gs__real[kind == GS_OP_LAUNCH ? GS_ID_cuGraphKernelNodeGetParams_v2
                  : kind == GS_OP_SET  ? GS_ID_cuGraphMemsetNodeGetParams
                                       : GS_ID_cuGraphMemcpyNodeGetParams] ||
        (!e->got && !(e->got = calloc(e->n, sizeof *e->got))) || !(p = calloc(1, sizeof *p)))
        return NULL;
    if (kind == GS_OP_LAUNCH) {
        rc = GS_REAL(cuGraphKernelNodeGetParams_v2)(e->nodes[j], &p->kernel);
        p->kernel.kernelParams = p->kernel.extra = NULL; /* the graph's, not ours to keep */
    } else {
        rc = kind == GS_OP_SET ? GS_REAL(cuGraphMemsetNodeGetParams)(e->nodes[j], &p->memset)
                               : GS_REAL(cuGraphMemcpyNodeGetParams)(e->nodes[j], &p->copy);
    }
    if (rc != CUDA_SUCCESS) {
        free(p);
        return NULL;
    }
    return e->got[j] = p;
}

/* Sets kernel node j of e to the arguments of launch key k: its grid and
** parameters. */
static CUresult set_kernel(struct gs_exec *e, uint32_t j, const struct gs_key *k)
{
    const union gs_node_params *got;
    CUDA_KERNEL_NODE_PARAMS p;
    void *stack[64], **params;
    CUresult rc;

    if (!gs__real[GS_ID_cuGraphExecKernelNodeSetParams_v2] || !(got = captured_params(e, j, GS_OP_LAUNCH)) ||
        gs__key_param_ptrs(k, stack, &params) != CUDA_SUCCESS)
        return CUDA_ERROR_NOT_SUPPORTED;
    p = got->kernel;
    p.gridDimX = k->grid[0];
    p.gridDimY = k->grid[1];
    p.gridDimZ = k->grid[2];
    p.kernelParams = params;
    p.extra = NULL;
    rc = GS_REAL(cuGraphExecKernelNodeSetParams_v2)(e->x, e->nodes[j], &p);
    gs__key_param_ptrs_free(params, stack);
    return rc;
}

/* Sets copy node j of e to copy k's arguments: a device-to-device copy's
** addresses and size, a host copy's device side (its host side and size stay:
** gs__key_cmp).  The driver refuses a move between memory of other kinds
** (cuMemAlloc and pool or VMM memory: measured), and the node is then
** unchanged. */
static CUresult set_copy(struct gs_exec *e, uint32_t j, const struct gs_key *k, CUcontext ctx)
{
    const union gs_node_params *got;
    CUDA_MEMCPY3D p;

    if (!gs__real[GS_ID_cuGraphExecMemcpyNodeSetParams] || !(got = captured_params(e, j, k->kind)) ||
        got->copy.Height != 1 || got->copy.Depth != 1)
        return CUDA_ERROR_NOT_SUPPORTED;
    p = got->copy;
    /* The key's addresses are whole: no offsets beside them. */
    p.srcXInBytes = p.srcY = p.srcZ = p.srcLOD = 0;
    p.dstXInBytes = p.dstY = p.dstZ = p.dstLOD = 0;
    if (k->kind == GS_OP_D2H) {
        if (p.srcMemoryType != CU_MEMORYTYPE_DEVICE || p.dstMemoryType != CU_MEMORYTYPE_HOST ||
            (uintptr_t)p.dstHost != k->dst || p.WidthInBytes != k->size)
            return CUDA_ERROR_NOT_SUPPORTED;
        p.srcDevice = (CUdeviceptr)k->src;
    } else if (k->kind == GS_OP_H2D) {
        if (p.srcMemoryType != CU_MEMORYTYPE_HOST || p.dstMemoryType != CU_MEMORYTYPE_DEVICE ||
            (uintptr_t)p.srcHost != k->src || p.WidthInBytes != k->size)
            return CUDA_ERROR_NOT_SUPPORTED;
        p.dstDevice = (CUdeviceptr)k->dst;
    } else {
        if (p.srcMemoryType != CU_MEMORYTYPE_DEVICE || p.dstMemoryType != CU_MEMORYTYPE_DEVICE)
            return CUDA_ERROR_NOT_SUPPORTED;
        p.dstDevice = (CUdeviceptr)k->dst;
        p.srcDevice = (CUdeviceptr)k->src;
        p.WidthInBytes = (size_t)k->size;
    }
    return GS_REAL(cuGraphExecMemcpyNodeSetParams)(e->x, e->nodes[j], &p, ctx);
}

/* Sets memset node j of e to memset k's address, value and count. */
static CUresult set_memset(struct gs_exec *e, uint32_t j, const struct gs_key *k, CUcontext ctx)
{
    const union gs_node_params *got;
    CUDA_MEMSET_NODE_PARAMS p;

    if (!gs__real[GS_ID_cuGraphExecMemsetNodeSetParams] || !(got = captured_params(e, j, GS_OP_SET)) ||
        got->memset.height != 1 || got->memset.elementSize != k->elem)
        return CUDA_ERROR_NOT_SUPPORTED;
    p = got->memset;
    p.dst = (CUdeviceptr)k->dst;
    p.value = (unsigned)k->src;
    p.width = (size_t)k->size;
    return GS_REAL(cuGraphExecMemsetNodeSetParams)(e->x, e->nodes[j], &p, ctx);
}

/* Sets node j of e to the arguments of key k (gs__key_cmp): a launch's grid and
** parameters, a device copy's or memset's addresses.  0 or -1. */
static int set_node(struct gs_exec *e, uint32_t j, const struct gs_key *k, CUcontext ctx)
{
    CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
    GS_PROF_START(t);

    if (k->kind == GS_OP_LAUNCH)
        rc = set_kernel(e, j, k);
    else if (k->kind == GS_OP_D2D || k->kind == GS_OP_D2H || k->kind == GS_OP_H2D)
        rc = set_copy(e, j, k, ctx);
    else if (k->kind == GS_OP_SET)
        rc = set_memset(e, j, k, ctx);
    GS_PROF_STOP(GS_PROF_NODE_SET, t);
    if (rc != CUDA_SUCCESS)
        gs__debug("setting a %s node's parameters failed (error %d): the graph is built anew",
                  k->kind == GS_OP_LAUNCH ? "kernel" : k->kind == GS_OP_SET ? "memset" : "copy", rc);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

uint64_t gs__exec_args_hash(struct gs_node **path, const struct gs_key *const *keys, uint32_t from, uint32_t to)
{
    uint64_t h = 0;

    for (uint32_t i = from; i < to; i++)
        if (keys[i] != &path[i]->key && !gs__key_no_node(keys[i]))
            h = (h ^ gs__key_args_hash(keys[i])) * 0x9E3779B97F4A7C15ull + i;
    return h;
}

/* The nodes of e whose arguments differ from keys' (see gs__exec_for). */
uint32_t gs__exec_cost(const struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys)
{
    uint32_t d = 0, cost = 0;

    for (uint32_t i = e->from; i < e->from + e->n; i++) {
        const struct gs_key *want = keys[i], *own = &path[i]->key, *have = own;
        if (gs__key_no_node(own))
            continue;
        if (d < e->ndiff && e->diff[d].op == i)
            have = e->diff[d++].key;
        else if (want == own)
            continue;
        cost += gs__key_args_differ(want, have);
    }
    return cost;
}

/* Gives e the arguments of keys: sets the nodes whose arguments differ from
** those applied now, and nothing else.  Returns the nodes set; or
** GS_APPLY_REFUSED where a change cannot be made in place (the nodes are not
** known, or the driver refused one, which leaves that node as it was:
** measured), e still knowing what each node holds; or GS_APPLY_LOST where e no
** longer does (no memory): e must then be dropped. */
int gs__exec_apply(struct gs_graphs *own, struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys,
                   uint32_t npatches)
{
    struct gs_diff *diff;
    uint32_t d = 0, nd = 0;
    int set = 0;
    uint64_t t0;
    CUcontext ctx = own->ctx;

    if (!npatches && !e->ndiff)
        return 0;
    /* Room for the new entries and, where a node is refused, the old ones of
    ** the ops not reached. */
    if (!e->nodes || !(diff = calloc((size_t)npatches + e->ndiff + 1, sizeof *diff)))
        return GS_APPLY_REFUSED;
    t0 = gs__now_ns();
    for (uint32_t i = e->from; i < e->from + e->n; i++) {
        const struct gs_key *want = keys[i], *own = &path[i]->key, *have = own;
        if (gs__key_no_node(own))
            continue;
        struct gs_diff *old = d < e->ndiff && e->diff[d].op == i ? &e->diff[d++] : NULL;
        if (old)
            have = old->key;
        if (want == own && !old)
            continue;
        if (gs__key_args_differ(want, have)) {
            if (set_node(e, i - e->from, want, ctx) != 0) {
                set = GS_APPLY_REFUSED;
                d -= old != NULL; /* this op keeps what it held */
                break;
            }
            set++;
        }
        if (want != own) {
            /* Kept as applied: the old entry's bytes are reused. */
            struct gs_key *k = old ? old->key : malloc(path[i]->len);
            if (!k) {
                set = GS_APPLY_LOST;
                break;
            }
            if (old)
                old->key = NULL;
            memcpy(k, want, path[i]->len);
            diff[nd].op = i;
            diff[nd++].key = k;
        }
    }
    if (set == GS_APPLY_REFUSED) /* the ops not reached hold what they held */
        for (; d < e->ndiff; d++) {
            diff[nd++] = e->diff[d];
            e->diff[d].key = NULL;
        }
    for (uint32_t i = 0; i < e->ndiff; i++)
        free(e->diff[i].key);
    free(e->diff);
    e->diff = diff;
    e->ndiff = nd;
    own->update_ns += gs__now_ns() - t0;
    return set;
}

/* Has the head of t's chain been asked for these arguments (hash h of the
** held ops' own arguments, gs__key_args_hash) among the last GS_VARIANTS
** times?  Records h. */
int gs__exec_came_before(struct gs_exec *head, uint64_t h)
{
    int found = 0;

    for (uint32_t i = 0; i < GS_VARIANTS && i < head->seen; i++)
        found |= head->recent[i] == h;
    head->recent[head->seen++ % GS_VARIANTS] = h;
    return found;
}

/* Puts e, in no chain, at the head of t's: it takes over the ring of recent
** arguments.  (The cache knows t, not its chain's head: any variant may lead.) */
void gs__exec_push_front(struct gs_node *t, struct gs_exec *e)
{
    memcpy(e->recent, t->cache.exec->recent, sizeof e->recent);
    e->seen = t->cache.exec->seen;
    e->next = t->cache.exec;
    t->cache.exec = e;
}
