/*
** replay.h: the one graph launch of held work (replay.c): a sequence's
** graph at its end, an early chunk's, loop bodies', each counted for the open
** segment alike; and what a launch of held work did, as a name its callers
** switch on.
*/
#ifndef GS_REPLAY_H
#define GS_REPLAY_H

#include "stream.h"

/* What sending held ops out as a graph did (gs__launch_graph, gs__replay). */
enum gs_replay {
    GS_REPLAYED,        /* the graph went out (or early chunks had sent every op already) */
    GS_REPLAY_FAILED,   /* no graph could be made, or its launch failed: nothing went out */
    GS_REPLAY_BUSY,     /* no capture now (a context synchronize runs): nothing went out */
    GS_REPLAY_NOT_KEPT, /* a segment held again after a stall has no graph kept for its
                        ** ops (gs__launch_graph): nothing went out */
};

/* Launches executable e on st: nops held ops, named what for NVTX (nvtx.h).
** Counted for the open segment (its launches and host time in the driver,
** s->seg_cost) and for the report (ops_replayed) where it went out.
** GS_REPLAYED or GS_REPLAY_FAILED.  Called locked, in s's context. */
enum gs_replay gs__replay(struct gs_stream *s, const struct gs_exec *e, CUstream st, int what, uint32_t nops);

#endif
