/*
** issue.h: held ops going out, eagerly or as one graph (issue.c).
*/
#ifndef GS_ISSUE_H
#define GS_ISSUE_H

#include "../base/nvtx.h"
#include "replay.h"
#include "stream.h"

/* Before a staging buffer of s is overwritten: waits for the GPU to read it.
** 0, or -1 where the wait failed: the buffer must not be written then. */
int gs__staging_wait(struct gs_stream *s);
/* Whether the GPU has read every staging buffer of s, asked without waiting
** (an event query): 1, and none is pending any more, or 0 (not read yet, or
** the query failed). */
int gs__staging_read(struct gs_stream *s);
/* The stream's learning is forgotten: the staging event goes (an event not
** destroyed leaks). */
void gs__staging_drop(struct gs_stream *s);
/* Issues the held ops of s up to node to (those past s->chunk_depth) eagerly, in
** order; holding goes on after them. */
void gs__issue_held(struct gs_stream *s, struct gs_node *to);

/* Issues the held ops eagerly (a loop body's whole bodies as graphs) and stops
** holding, counting why (enum gs_bail). */
void gs__flush(struct gs_stream *s, int reason);

/* Launches the held ops up to t as one graph: what it did (replay.h).  what:
** GS_NVTX_REPLAY or GS_NVTX_CHUNK, the launch's NVTX range. */
enum gs_replay gs__launch_graph(struct gs_stream *s, struct gs_node *t, int what);

#endif
