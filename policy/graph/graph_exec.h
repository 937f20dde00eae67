/*
** graph_exec.h: the executable of a run of ops of a sequence, below the graph
** cache (graph_cache.h), which captures, keeps and evicts them.
*/
#ifndef GS_GRAPH_EXEC_H
#define GS_GRAPH_EXEC_H

#include <stdatomic.h>

#include "learner.h"
#include "../base/lock.h"

/* An instantiated graph of a run of ops, and what replaying it safely and
** updating it in place need:
**   - the captured graph is kept, and nodes[i] is the node op from + i became
**     (told by the capture itself, op by op): a replay whose ops come with
**     other arguments (gs__key_cmp) sets only the nodes that differ (kernel,
**     copy and memset nodes: graph_exec.c), never captures or updates the
**     whole graph again;
**   - diff lists the ops whose arguments in x are not their path node's own
**     (the last replay's patches), with the keys applied, in op order;
**   - a copy node that reads or writes host memory binds the host and the
**     device allocation it touches when it is made: once either is freed, the
**     node must never run again, even where an allocation of the same size came
**     back at the same address (measured on the H100: the launch succeeds and
**     the stream fails with "unspecified launch failure", or the driver
**     crashes).  epoch is gs__mem_epoch at the capture where an op copies to or
**     from host memory (0: none does); such a graph is stale, and built anew,
**     once any allocation call has run since. */
/* What the graphs of one stream share (a member of its state, stream.h): its
** lock, which eviction of one of them by another stream only tries
** (graph_cache.c); the context they are captured in; and the counters that the
** report and the capture budget read. */
struct gs_graphs {
    struct gs_lock *lock;
    CUcontext ctx;
    uint64_t builds;          /* executables instantiated or updated (graph_capture.c) */
    uint64_t instantiated;    /* of those, new executables */
    uint64_t capture_ns, instantiate_ns, update_ns; /* host time capturing, instantiating, setting nodes */
    uint64_t ops_built;       /* ops of the new executables: capture_ns and instantiate_ns per op (rules/capture.c) */
    uint64_t refused;         /* variants captured anew where the driver refused a node's change (graph_cache.c) */
};

#define GS_VARIANTS 3
#define GS_VARIANT_MIN_SETS 4
struct gs_diff {
    uint32_t op;
    struct gs_key *key;
};
/* A node's parameters as captured (graph_exec.c), kept from its first set. */
union gs_node_params {
    CUDA_KERNEL_NODE_PARAMS kernel;
    CUDA_MEMCPY3D copy;
    CUDA_MEMSET_NODE_PARAMS memset;
};
struct gs_exec {
    struct gs_exec *next;     /* the sequence's other variants (below), or NULL */
    CUgraphExec x;
    CUgraph g;
    CUgraphNode *nodes;       /* NULL: not known (no update in place) */
    union gs_node_params **got; /* per node, from its first set on; NULL until then */
    uint32_t from, n;         /* the ops from .. from + n - 1 of the path */
    uint32_t epoch;
    uint8_t reads_staging;    /* copies from staging buffers of its path's nodes */
    uint32_t ndiff;
    struct gs_diff *diff;
    /* gs__exec_args_hash of the arguments it holds, where args_known: a variant
    ** whose hash is that of the arguments wanted is compared first. */
    uint64_t args_hash;
    uint8_t args_known;
    /* The chain's head only: hashes of the last sets of arguments it was asked
    ** for (gs__exec_for), newest at recent[seen % GS_VARIANTS]. */
    uint64_t recent[GS_VARIANTS];
    uint32_t seen;
};

/* Bumped after every allocation or free of any kind (guard.c). */
extern atomic_uint gs__mem_epoch;
static inline int gs__exec_stale(const struct gs_exec *e)
{
    unsigned now = atomic_load_explicit(&gs__mem_epoch, memory_order_relaxed);
    for (; e; e = e->next) /* a sequence's variants (below) too */
        if (e->epoch && e->epoch != now)
            return 1;
    return 0;
}

/* Destroys e and what it owns, its variants too. */
void gs__exec_free(struct gs_exec *e);

/* Records in e (ops e->from .. e->from + e->n - 1) the keys of those ops that
** are not their path's own (npatches of them): its diff.  0, or -1 (no memory). */
int gs__exec_diff_set(struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys, uint32_t npatches);

/* A hash of the arguments keys[from .. to-1] hold where they are not their
** path's own (patches): equal for two sets of keys that would need no node set
** between them, unequal (but for collisions) otherwise. */
uint64_t gs__exec_args_hash(struct gs_node **path, const struct gs_key *const *keys, uint32_t from, uint32_t to);

/* The nodes of e whose arguments (gs__key_cmp) differ from keys'. */
uint32_t gs__exec_cost(const struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys);

/* Gives e the arguments of keys (s locked, for its update time): sets the
** nodes whose arguments differ from those applied now, and nothing else.
** Returns the nodes set; GS_APPLY_REFUSED where a change cannot be made in
** place (the nodes are not known, or the driver refused one, leaving it as it
** was), e still knowing what each node holds; or GS_APPLY_LOST where it no
** longer does: e must then be dropped. */
#define GS_APPLY_REFUSED (-1)
#define GS_APPLY_LOST (-2)
int gs__exec_apply(struct gs_graphs *own, struct gs_exec *e, struct gs_node **path, const struct gs_key *const *keys,
                   uint32_t npatches);

/* Has the chain whose head is head been asked for arguments of hash h among
** the last GS_VARIANTS times?  Records h. */
int gs__exec_came_before(struct gs_exec *head, uint64_t h);

/* Puts e, in no chain, at the head of t's chain: it takes over the ring of
** recent arguments. */
void gs__exec_push_front(struct gs_node *t, struct gs_exec *e);

#endif
