/*
** graph_exec.c: the executable of a run of ops (graph_exec.h): what it owns,
** the arguments it holds where they are not its path's own, and setting its
** kernel nodes in place.
*/
#include "graph_exec.h"

#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/log.h"

atomic_uint gs__mem_epoch = 1;

/* Destroys e and what it owns, its variants too. */
void gs__exec_free(struct gs_exec *e)
{
    if (!e)
        return;
    gs__exec_free(e->next);
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
        if (keys[i] != &path[i]->key) {
            if (!(e->diff[n].key = malloc(path[i]->len)))
                return -1;
            memcpy(e->diff[n].key, keys[i], path[i]->len);
            e->diff[n++].op = i;
            e->ndiff = n;
        }
    return 0;
}

/* Sets node j of e to the arguments of launch key k: its grid and parameters.
** 0 or -1. */
static int set_node(struct gs_exec *e, uint32_t j, const struct gs_key *k)
{
    CUDA_KERNEL_NODE_PARAMS p;
    void *stack[64], **params;
    CUresult rc;

    if (k->kind != GS_OP_LAUNCH || !gs__real[GS_ID_cuGraphExecKernelNodeSetParams_v2] ||
        GS_REAL(cuGraphKernelNodeGetParams_v2)(e->nodes[j], &p) != CUDA_SUCCESS ||
        gs__key_param_ptrs(k, stack, &params) != CUDA_SUCCESS)
        return -1;
    p.gridDimX = k->grid[0];
    p.gridDimY = k->grid[1];
    p.gridDimZ = k->grid[2];
    p.kernelParams = params;
    p.extra = NULL;
    rc = GS_REAL(cuGraphExecKernelNodeSetParams_v2)(e->x, e->nodes[j], &p);
    gs__key_param_ptrs_free(params, stack);
    if (rc != CUDA_SUCCESS)
        gs__debug("setting a kernel node's parameters failed (error %d): the graph is built anew", rc);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

/* The nodes of e whose parameter bytes differ from keys' (see gs__exec_for). */
uint32_t gs__exec_cost(const struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys)
{
    uint32_t d = 0, cost = 0;

    for (uint32_t i = e->from; i < e->from + e->n; i++) {
        const struct gs_key *want = keys[i], *own = &path[i]->key, *have = own;
        if (d < e->ndiff && e->diff[d].op == i)
            have = e->diff[d++].key;
        else if (want == own)
            continue;
        cost += gs__key_args_differ(want, have);
    }
    return cost;
}

/* Gives e the parameters of keys: sets the kernel nodes whose parameter bytes
** differ from those applied now, and nothing else.  Returns the nodes set, or -1
** where a change cannot be made in place (the nodes are not known, or the
** driver refused one): e must then be dropped. */
int gs__exec_apply(struct gs_graphs *own, struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys,
                   uint32_t npatches)
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
        if (gs__key_args_differ(want, have)) {
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
    own->update_ns += gs__now_ns() - t0;
    return set;
}

/* Has the head of t's chain been asked for these arguments (hash h of keys'
** patched parameter bytes) among the last GS_VARIANTS times?  Records h. */
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
    memcpy(e->recent, t->exec->recent, sizeof e->recent);
    e->seen = t->exec->seen;
    e->next = t->exec;
    t->exec = e;
}
