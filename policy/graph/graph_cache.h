/*
** graph_cache.h: the graphs of stable sequences, above graph_capture.h (which
** builds them) and graph_exec.h (what one is).  An executable per (sequence,
** stream), kept on the sequence's node with its variants for other arguments;
** at most GRAPHSHIM_MAX_GRAPHS nodes hold them, the least recently used
** destroyed first.
*/
#ifndef GS_GRAPH_CACHE_H
#define GS_GRAPH_CACHE_H

#include "graph_capture.h"

/* Builds t->exec for the ops path[from .. t->depth-1] of own's stream (its lock held); path
** holds the path's nodes from depth from on (gs__held_get), keys[i] the key op
** i is issued with (path[i]'s own, or the held op's where its parameters
** differ).  Returns 0, -1 if capture or instantiation failed, or
** GS_CAPTURE_BUSY if a context synchronize is in progress (nothing was tried);
** t->exec stays NULL on failure. */
int gs__graph_capture(struct gs_graphs *own, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from);

/* A sequence whose launches come back with a few sets of arguments in turn (a
** caching allocator's rotating buffers) keeps up to GS_VARIANTS executables,
** t->exec and those chained on its next, each with the arguments it last had.
** gs__exec_for() picks the one that needs the fewest nodes set for keys
** (path[i]'s own key, or the held launch's where its bytes differ; npatches of
** them differ), and sets those in place.  Where even that one needs
** GS_VARIANT_MIN_SETS nodes or more, fewer than GS_VARIANTS exist, and these
** arguments came before, among the last GS_VARIANTS sets, it captures a new
** one with them instead: arguments that rotate get a graph each, arguments
** that never come back (an optimizer's step) never cost a capture.  Returns
** the executable to launch, at the head of the chain, or NULL (the one picked
** could not take the change: t's executables are gone).  *set: the nodes set.
** Called with s locked. */
struct gs_exec *gs__exec_for(struct gs_graphs *own, struct gs_node *t, struct gs_node **path,
                             const struct gs_key *const *keys, uint32_t npatches, uint32_t *set);

/* Builds an executable of the ops keys[0 .. n-1], repeated reps times, for stream s
** (locked).  Returns 0 and *x, -1, or GS_CAPTURE_BUSY, as gs__graph_capture().
** The caller owns *x, outside the cache, and destroys it with
** gs__graph_destroy_owned(). */
int gs__graph_capture_keys(struct gs_graphs *own, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           struct gs_exec **x);
void gs__graph_destroy_owned(struct gs_exec *x);

/* t's graph was just launched. */
void gs__graph_used(struct gs_node *t);

/* A node is being freed (its stream is locked): destroys its graph and staging. */
void gs__graph_drop_node(struct gs_node *n, void *stream);

/* Destroys a node's graph only (walk callback). */
void gs__graph_drop_exec(struct gs_node *n, void *stream);

/* Counters for the report. */
struct gs_graph_stats {
    long alive, captured, failed, evicted;
};
void gs__graph_stats(struct gs_graph_stats *st);

#endif
