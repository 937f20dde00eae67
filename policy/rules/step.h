/*
** step.h: the step, a period found in a learned sequence, and the segment's
** end at each step (step.c).
**
** Training and inference loops synchronize every 10 or 100 steps, not every
** step: their segment is one step repeated back to back, too long and too
** rarely back whole to be graphed as one sequence.  Where a segment ends for the
** first time, its sequence is searched for a period: a run of P ops that
** repeats at least twice, shape for shape as the tree compares ops, and at
** least half of it byte for byte (the same work again, not the same kernels on
** other data, as the layers of a model are).  From the next segment on, the
** stream ends its segment every P ops (a unit; several periods where P is
** shorter than GS_STEP_MIN_OPS), after a head of `off` ops where the period
** began late in the sequence: each step is a sequence of its own that the tree
** learns, holds and replays as it does any segment's, with its patches, early
** chunks and variants, ended by the next step instead of a synchronize.  A unit
** that ends at another sequence than the first unit did ends the steps.
**
** The held path pays one compare of the segment's depth an op; the search
** runs once per new sequence, at its end, over its path in the tree.
*/
#ifndef GS_STEP_H
#define GS_STEP_H

#include "../stream/stream.h"

/* Shortest unit a stream ends its segments at: shorter periods are taken
** several at a time (a graph launch each 8 ops at least). */
#define GS_STEP_MIN_OPS 8

/* The segment of s ended at t (NULL: not learned), for reason (enum gs_bail;
** GS_BAIL_STEP: the stream's own step end): where t is a sequence seen for the
** first time, it is searched for a period, and a period found makes the stream
** end its next segments at each step; a unit's end checks that the steps go on.
** Sets where the segment that begins now ends (s->step_at).  Called locked, by
** the segment's end (resolve.c) after the sequence was counted. */
void gs__step_segment_ended(struct gs_stream *s, const struct gs_node *t, int reason);

/* The tree of s was emptied: the periods found in it are forgotten, and the
** steps end.  Called locked. */
void gs__step_forget(struct gs_stream *s);

/* The period of the sequence ending at t, as the stream uses it: 1 and *unit
** (ops a segment ends after), *off (ops of the head before the first unit; 0:
** none) where t has one; 0 where it has none.  Exposed for the unit tests. */
int gs__step_period(const struct gs_node *t, uint32_t *unit, uint32_t *off);

#endif
