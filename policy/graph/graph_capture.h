/*
** graph_capture.h: building a sequence's executables: its ops re-issued on a
** private non-blocking stream captured in thread-local mode (the program's other
** threads keep working, and the program's own code never runs inside the
** capture), the node each op became told by the capture, then instantiated.
*/
#ifndef GS_GRAPH_CAPTURE_H
#define GS_GRAPH_CAPTURE_H

#include "graph_exec.h"

/* What a capture returns where a context synchronize is in progress (nothing
** was tried). */
#define GS_CAPTURE_BUSY (-2)

/* Captures and instantiates ops path[from .. to-1] of own's stream (its lock held), op i
** issued with keys[i] (path[i]'s own key, or the held op's where its parameters
** differ), keeping the node of each op and the keys that are not the path's.
** Returns 0 and *out, -1 (counted as a failure), or GS_CAPTURE_BUSY. */
int gs__capture_path(struct gs_graphs *own, struct gs_node **path, const struct gs_key *const *keys, uint32_t from,
                     uint32_t to, struct gs_exec **out);

/* The same for keys[0 .. n-1], repeated reps times (loop bodies), without nodes. */
int gs__capture_keys(struct gs_graphs *own, const struct gs_key *const *keys, unsigned n, unsigned reps,
                     struct gs_exec **x);

/* Executables instantiated, and captures or instantiations that failed. */
void gs__capture_counts(long *captured, long *failed);

/* A context synchronize is invalid while any stream of the context captures,
** in whatever mode and thread (it returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
** The program's synchronizes go between these two calls, which wait for the
** engine's captures in progress to end; a capture does not start while a
** synchronize is in progress (GS_CAPTURE_BUSY).  Nothing here blocks on a
** synchronize, so no wait is added to the program's. */
void gs__graph_sync_enter(void);
void gs__graph_sync_leave(void);

/* Forgets the private capture streams: their context is going away, and the
** streams with it. */
void gs__graph_reset(void);

#endif
