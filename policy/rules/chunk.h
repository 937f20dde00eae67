/*
** chunk.h: early chunks: held work going out before its segment ends, as a graph
** of its own, so the GPU does not wait for the whole sequence (chunk.c says where
** chunks end).
*/
#ifndef GS_CHUNK_H
#define GS_CHUNK_H

#include "../stream/stream.h"

/* After the op at s->cur was held: where a chunk ends there, the ops held so far
** go out (as a graph, or eagerly where it cannot be one) and holding goes on
** after them.  Called locked. */
void gs__maybe_chunk(struct gs_stream *s);

/* Rule resume.  May a segment whose held ops went out before its end (the
** watchdog's: a host that stalled; an op that could not be held), holding
** nothing now, hold again after cur?  Where an early chunk of the sequence
** ended at cur, and no chunk-idle mark stops chunks there: its next chunk
** begins there, as every time, so its graphs are the ones kept
** (gs__chunks_resumed keeps the chunks' places as after a chunk there; where
** they moved since, the held ops go out eagerly, gs__launch_graph's
** GS_REPLAY_NOT_KEPT, rather than as graphs of their own that whole segments would
** replace). */
static inline int gs__chunks_resume_at(const struct gs_node *cur)
{
    return cur->chunk.chunk_end && !cur->chunk.chunk_idle && !GS_DROPPED(GS_RULE_RESUME);
}

/* Holding resumes after c, in a segment whose held ops went out before its end
** (entry/hold.c): the ops up to c are issued, and chunks go on from c as
** after a chunk that ended there.  Called locked. */
void gs__chunks_resumed(struct gs_stream *s, struct gs_node *c);

/* The segment ended: its early chunks are forgotten.  end: where the segment was
** replayed up to that node (NULL otherwise), the place of the last chunk learns
** how far it was from the end, in ops and in the host's time up to end_ns, when
** the boundary came.  Called locked. */
void gs__chunks_end(struct gs_stream *s, struct gs_node *end, uint64_t end_ns);

/* Rule drain (chunk.c).  Before the segment's last graph goes out at a boundary
** of reason: 1 where the GPU still runs its chunks (and they may shorten), 0
** where not, -1 not asked.  Called locked. */
int gs__chunks_gpu_busy(struct gs_stream *s, int reason);

/* At every resolve: busy, gs__chunks_gpu_busy's answer where the last graph went
** out (-1 otherwise); from now on the synchronize's wait is timed.  Called
** locked. */
void gs__chunks_drain_start(struct gs_stream *s, int busy);

/* A synchronize returned; waited: it waited for s (a context synchronize, for
** streams of its context only).  How long it waited since the last graph went
** out may halve the slow host's chunk length.  Called locked. */
void gs__chunks_synced(struct gs_stream *s, int waited);

/* s is emptied of what it learned: its chunk length starts anew.  Called locked. */
void gs__chunks_forget(struct gs_stream *s);

#endif
