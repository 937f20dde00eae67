/*
** gain.h: the gain check at synchronizes (gain.c): a sequence whose graph runs
** slower than its ops did eagerly runs eagerly for good.
*/
#ifndef GS_GAIN_H
#define GS_GAIN_H

#include "../stream/stream.h"

/* The segment of s ended at node t (NULL: not learned), for reason (enum
** gs_bail), replayed as a graph or not: where a synchronize ended it and it may
** be graphed, it is timed when the synchronize returns.  Called locked, before
** the segment's records are reset (stream/segment.h). */
void gs__gain_segment_ended(struct gs_stream *s, struct gs_node *t, int reason, int replayed);
/* The fewest ops a sequence that a segment ending for reason (enum gs_bail)
** completes needs to become stable: GRAPHSHIM_MIN_OPS, or 1 where a synchronize
** ended it and the gain check times it (GRAPHSHIM_SHORT_TRIAL: a shorter
** sequence is graphed on trial, and kept only where its replays are no slower
** than its eager runs). */
static inline long gs__gain_min_ops(int reason)
{
    return gs__cfg.short_trial && gs__cfg.gain_check && reason == GS_BAIL_BOUNDARY + GS_SYNC ? 1 : gs__cfg.min_ops;
}
/* Did a sequence's eager run, eager_ns from its first op to the synchronize's
** return and issue_ns of that the host's, keep the GPU busy GS_GPU_BOUND times
** as long as the host took to issue it (rule busy-gpu)?  Its graph can save
** the GPU no more than a few gaps between kernels. */
#define GS_GPU_BOUND 8
static inline int gs__gain_gpu_bound(uint64_t eager_ns, uint64_t issue_ns)
{
    return !GS_DROPPED(GS_RULE_BUSY_GPU) && issue_ns && eager_ns > GS_GPU_BOUND * issue_ns;
}
/* s forgets the segment it was to time (its tree or graphs go).  Called locked. */
void gs__gain_forget(struct gs_stream *s);
/* After a stream synchronize returned successfully: the segment it ended is timed. */
void gs__gain_synced(CUstream stream);
/* After a context synchronize returned successfully: every stream's segment that
** ended at it. */
void gs__gain_ctx_synced(void);

#endif
