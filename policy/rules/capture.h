/*
** capture.h: when a sequence is graphed (capture.c).  A segment that ended
** clean counts one more occurrence of its sequence; the sequence becomes
** stable, to be held and captured from its next occurrence on, where it was
** seen often enough (GRAPHSHIM_WARMUP times, more where the capture budget
** raised it, rules/resolve.c), is long enough (GRAPHSHIM_MIN_OPS, or 1 on
** trial, gain.h), its capture is expected to pay (rule capture-pays), and its
** graph did not fail before (rule failed-kept).
*/
#ifndef GS_CAPTURE_H
#define GS_CAPTURE_H

#include "../stream/stream.h"

/* The segment of s that ended for reason (enum gs_bail) with every op issued
** successfully completed the sequence ending at t: counted, and made stable
** where it is ready.  Returns 1 if it just became stable.  Called locked. */
int gs__capture_counted(struct gs_stream *s, struct gs_node *t, int reason);

/* The graph of the sequence ending at t failed (its capture, instantiation or
** launch): it runs eagerly from now on, and a one-op sequence is not captured
** again after its node was dropped and learned anew.  Called locked. */
void gs__capture_failed(struct gs_stream *s, struct gs_node *t);

/* s forgets the sequences whose graphs failed (its tree went).  Called locked. */
void gs__capture_forget(struct gs_stream *s);

#endif
