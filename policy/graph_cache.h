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

#include "learner.h"
#include "stream.h"

/* Builds t->exec for the ops path[from .. t->depth-1] of stream s (locked); path
** holds the whole path from the root, keys[i] the key op i is issued with (path[i]'s
** own, or the held op's where its parameters differ).  Returns 0, -1 if capture or
** instantiation failed, or GS_CAPTURE_BUSY if a context synchronize is in progress
** (nothing was tried); t->exec stays NULL on failure. */
#define GS_CAPTURE_BUSY (-2)
int gs__graph_capture(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                      const struct gs_key *const *keys, uint32_t from);

/* Gives t->exec (of the ops from .. t->depth-1) the parameters of keys: captures
** them again and updates the executable (cuGraphExecUpdate), or, where the driver
** refuses the update, replaces it.  Returns as gs__graph_capture(); on -1 t->exec
** may be gone. */
int gs__graph_update(struct gs_stream *s, struct gs_node *t, struct gs_node **path,
                     const struct gs_key *const *keys, uint32_t from);

/* Builds an executable of the ops keys[0 .. n-1], repeated reps times, for stream s
** (locked).  Returns 0 and *x, -1, or GS_CAPTURE_BUSY, as gs__graph_capture().
** The caller owns *x, outside the cache, and destroys it with
** gs__graph_destroy_owned(). */
int gs__graph_capture_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, unsigned reps,
                           CUgraphExec *x);
void gs__graph_destroy_owned(CUgraphExec x);

/* A sequence whose held launches come with parameters of their own (patches,
** hold.c) keeps, beside its own graph, up to GS_EXTRAS graphs of other
** parameters, each with the patches it was built from: a program that rotates
** among a few buffer sets replays each set's graph as it is, and only a new set
** updates the least recently used one.  Owned by the node; destroyed with its
** graph (gs__graph_drop_exec). */
#define GS_EXTRAS 3
struct gs_extra {
    CUgraphExec exec;
    uint64_t hash, used;
    uint32_t n;              /* patches: depth[i] and the key at keys + off[i] */
    uint32_t *depth, *off;
    unsigned char *keys;
};
struct gs_extras {
    uint32_t from, count;    /* the ops from .. depth-1, like exec_from */
    uint64_t clock;
    struct gs_extra e[GS_EXTRAS];
};

/* Gives the owned executable *x the ops keys[0 .. n-1]: captures them and
** updates *x in place, or replaces it where the driver refuses the update.
** Returns 0, -1 (*x may be NULL then) or GS_CAPTURE_BUSY. */
int gs__graph_update_keys(struct gs_stream *s, const struct gs_key *const *keys, unsigned n, CUgraphExec *x);

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

/* Destroys a node's graphs, its own and its extras, only (walk callback). */
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
