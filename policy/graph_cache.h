/*
** graph_cache.h: the graphs of stable sequences.
**
** A sequence's graph is built by re-issuing its ops on a private non-blocking
** stream captured in thread-local mode (the program's other threads keep working,
** and the program's own code never runs inside the capture), then instantiated.
** One executable per (sequence, stream), kept on the sequence's node; at most
** GRAPHSHIM_MAX_GRAPHS of them, the least recently used destroyed first.
*/
#ifndef GS_GRAPH_CACHE_H
#define GS_GRAPH_CACHE_H

#include <stdatomic.h>

#include "learner.h"
#include "stream.h"

/* An instantiated graph of a run of ops, and what replaying it safely and
** updating it in place need:
**   - the captured graph is kept, and nodes[i] is the node op from + i became
**     (told by the capture itself, op by op): a replay whose launches come with
**     other parameter bytes sets only the nodes that differ
**     (cuGraphExecKernelNodeSetParams), never captures or updates the whole
**     graph again;
**   - diff lists the ops whose parameters in x are not their path node's own
**     (the last replay's patches), with the bytes applied, in op order;
**   - a copy node that reads or writes host memory binds the host and the
**     device allocation it touches when it is made: once either is freed, the
**     node must never run again, even where an allocation of the same size came
**     back at the same address (measured on the H100: the launch succeeds and
**     the stream fails with "unspecified launch failure", or the driver
**     crashes).  epoch is gs__mem_epoch at the capture where an op copies to or
**     from host memory (0: none does); such a graph is stale, and built anew,
**     once any allocation call has run since. */
#define GS_VARIANTS 3
#define GS_VARIANT_MIN_SETS 4
struct gs_diff {
    uint32_t op;
    struct gs_key *key;
};
struct gs_exec {
    struct gs_exec *next;     /* the sequence's other variants (below), or NULL */
    CUgraphExec x;
    CUgraph g;
    CUgraphNode *nodes;       /* NULL: not known (no update in place) */
    uint32_t from, n;         /* the ops from .. from + n - 1 of the path */
    uint32_t epoch;
    uint8_t reads_staging;    /* copies from staging buffers of its path's nodes */
    uint32_t ndiff;
    struct gs_diff *diff;
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

/* Builds t->exec for the ops path[from .. t->depth-1] of stream s (locked); path
** holds the whole path from the root, keys[i] the key op i is issued with (path[i]'s
** own, or the held op's where its parameters differ).  Returns 0, -1 if capture or
** instantiation failed, or GS_CAPTURE_BUSY if a context synchronize is in progress
** (nothing was tried); t->exec stays NULL on failure. */
#define GS_CAPTURE_BUSY (-2)
int gs__graph_capture(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from);

/* A sequence whose launches come back with a few sets of arguments in turn (a
** caching allocator's rotating buffers) keeps up to GS_VARIANTS executables,
** t->exec and those chained on its next, each with the arguments it last had.
** gs__exec_for() picks the one that needs the fewest kernel nodes set for keys
** (path[i]'s own key, or the held launch's where its bytes differ; npatches of
** them differ), and sets those in place.  Where even that one needs
** GS_VARIANT_MIN_SETS nodes or more, fewer than GS_VARIANTS exist, and these
** arguments came before, among the last GS_VARIANTS sets, it captures a new
** one with them instead: arguments that rotate get a graph each, arguments
** that never come back (an optimizer's step) never cost a capture.  Returns
** the executable to launch, at the head of the chain, or NULL (the one picked
** could not take the change: t's executables are gone).  *set: the nodes set.
** Called with s locked. */
struct gs_exec *gs__exec_for(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                             const struct gs_key *const *keys, uint32_t npatches, uint32_t *set);

/* Builds an executable of the ops keys[0 .. n-1], repeated reps times, for stream s
** (locked).  Returns 0 and *x, -1, or GS_CAPTURE_BUSY, as gs__graph_capture().
** The caller owns *x, outside the cache, and destroys it with
** gs__graph_destroy_owned(). */
int gs__graph_capture_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           struct gs_exec **x);
void gs__graph_destroy_owned(struct gs_exec *x);

/* A context synchronize is invalid while any stream of the context captures,
** in whatever mode and thread (it returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
** The program's synchronizes go between these two calls, which wait for the
** engine's captures in progress to end; a capture does not start while a
** synchronize is in progress (GS_CAPTURE_BUSY).  Nothing here blocks on a
** synchronize, so no wait is added to the program's. */
void gs__graph_sync_enter(void);
void gs__graph_sync_leave(void);

/* t's graph was just launched. */
void gs__graph_used(struct gs_node *t);

/* A node is being freed (its stream is locked): destroys its graph and staging. */
void gs__graph_drop_node(struct gs_node *n, void *stream);

/* Destroys a node's graph only (walk callback). */
void gs__graph_drop_exec(struct gs_node *n, void *stream);

/* Forgets the private capture streams: their context is going away, and the
** streams with it. */
void gs__graph_reset(void);

/* Counters for the report. */
struct gs_graph_stats {
    long alive, captured, failed, evicted;
};
void gs__graph_stats(struct gs_graph_stats *st);

#endif
