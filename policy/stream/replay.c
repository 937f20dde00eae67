/*
** replay.c: the one graph launch of held work (see replay.h).
*/
#define GS_OWNS_REPLAY /* this file writes its rooms (state.h, GS_ROOM) */
#include "replay.h"

#include "segment.h"

#include "../base/assert.h"
#include "../base/nvtx.h"

enum gs_replay gs__replay(struct gs_stream *s, const struct gs_exec *e, CUstream st, int what, uint32_t nops)
{
    GS_ASSERT_LOCKED(s);
    uint64_t t0 = gs__now_ns(); /* two clock reads a graph launch, which costs microseconds */
    CUresult rc;

    gs__nvtx_begin(what, nops);
    rc = GS_REAL(cuGraphLaunch)(e->x, st);
    gs__nvtx_end();
    gs__seg_cost_add(s, 0, 0, gs__now_ns() - t0);
    if (rc != CUDA_SUCCESS)
        return GS_REPLAY_FAILED;
    gs__seg_cost_add(s, 1, 0, 0);
    s->ops_replayed_w += nops;
    return GS_REPLAYED;
}
