/*
** resolve.h: the end of a segment: held work replayed as a graph or issued
** eagerly, learning counted, the capture budget (resolve.c).
*/
#ifndef GS_RESOLVE_H
#define GS_RESOLVE_H

#include "../stream/stream.h"
#include "gain.h" /* gs__gain_op: where the op path reads the step clock */

enum { GS_RESOLVE_ALL, GS_RESOLVE_BLOCKING, GS_RESOLVE_LEGACY };
/* Resolves every stream, or every blocking one, or the legacy stream(s), except
** one (NULL for none). */
void gs__resolve_some(int which, const struct gs_stream *except, int reason);
/* The legacy stream's implicit synchronization with blocking streams. */
void gs__legacy_rule(const struct gs_stream *s);

/* Resolves s: its held work out, its segment ended, counted under reason
** (enum gs_bail).  Takes s's lock. */
void gs__resolve(struct gs_stream *s, int reason);
/* The same, s locked. */
void gs__resolve_locked(struct gs_stream *s, int reason);
/* The stream's learning forgotten, every room's (resolve.c's table): with
** learned its sequences and every rule's state, else only its graphs.  Held
** work must be out already.  Called locked. */
void gs__rooms_forget(struct gs_stream *s, int learned);
/* An op of s that the engine issued failed: every room that keeps the segment
** hears it.  Called locked. */
void gs__rooms_failed(struct gs_stream *s);
/* Where s has a step (rules/step.h) and its segment holds a whole one, the
** segment ends before the op that comes (GS_BAIL_STEP): replayed as the step's
** graph where it is stable and held.  On every op's path.  Called locked. */
static inline void gs__step_end(struct gs_stream *s)
{
    if (GS_UNLIKELY(s->step_at) && s->cur && s->cur->depth == s->step_at)
        gs__resolve_locked(s, GS_BAIL_STEP);
}
/* The capture budget of s begins anew, as a new stream's: no warm-up shift,
** not hopeless, a new span.  Called locked. */
void gs__budget_forget(struct gs_stream *s);

#endif
