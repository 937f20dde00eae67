/*
** issue.h: held ops going out, eagerly or as one graph (issue.c).
*/
#ifndef GS_ISSUE_H
#define GS_ISSUE_H

#include "../base/nvtx.h"
#include "../graph/graph_capture.h" /* GS_CAPTURE_BUSY */
#include "stream.h"

/* Before a staging buffer of s is overwritten: waits for the GPU to read it.
** 0, or -1 where the wait failed: the buffer must not be written then. */
int gs__staging_wait(struct gs_stream *s);
/* Issues the held ops of s up to node to (those past s->chunk_depth) eagerly, in
** order; holding goes on after them. */
void gs__issue_held(struct gs_stream *s, struct gs_node *to);

/* Issues the held ops eagerly (a loop body's whole bodies as graphs) and stops
** holding, counting why (enum gs_bail). */
void gs__flush(struct gs_stream *s, int reason);

/* gs__launch_graph in a segment held again after a stall (entry/hold.c), where no
** graph kept for the whole segments begins where its held ops do: nothing went out. */
#define GS_NOT_KEPT (-3)

/* Launches the held ops up to t as one graph: 0, -1, GS_CAPTURE_BUSY or GS_NOT_KEPT.  what:
** GS_NVTX_REPLAY or GS_NVTX_CHUNK, the launch's NVTX range. */
int gs__launch_graph(struct gs_stream *s, struct gs_node *t, int what);

#endif
