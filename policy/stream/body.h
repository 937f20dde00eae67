/*
** body.h: loop bodies inside one segment.
**
** Timing loops, solvers and scans launch the same few ops hundreds of times
** before one synchronize; the segment as a whole may never repeat.  A body is a
** run of P ops (1 <= P <= GS_BODY_MAX_PERIOD) that follows itself back to back
** inside a segment.  Once it has run GRAPHSHIM_WARMUP + 1 times in a row, each
** op that matches the body's next op is held, and every K bodies held go out as
** one graph of K bodies (K a power of two, K * P about GRAPHSHIM_BODY_OPS).  At a
** boundary the whole bodies held go out as graphs of 2^j bodies, the rest of a
** body eagerly; an op that does not match issues what is held, in order, and the
** body is set aside, kept with its graphs for when the loop comes back.
**
** A segment that repeats as a whole is the prefix tree's (learner.h): while it
** holds, bodies are not looked for.  Everything here is guarded by the stream's
** lock.
*/
#ifndef GS_BODY_H
#define GS_BODY_H

#include "body_find.h"

/* For the report (the stream locked): fn on each body that went out as graphs,
** forgotten or kept; graph launches of all of them. */
struct gs_stream;
void gs__body_rows(const struct gs_stream *s, void (*fn)(void *, const struct gs_body_row *), void *arg);
uint64_t gs__body_graphs(const struct gs_stream *s);

/* The engine's calls (each with s locked; body.c). */
/* An op the prefix tree does not hold: 1 if the body holds it, 0 if the caller
** issues it (it is remembered for finding bodies). */
int gs__body_op(struct gs_stream *s, const void *key, uint32_t len);
/* A launch the search for bodies would pass over without its key (no body
** active, the search rests): counts it as gs__body_op() would, 1; else 0. */
int gs__body_pass(struct gs_stream *s);
/* The op just issued failed: it is no part of a body. */
void gs__body_failed(struct gs_stream *s);
/* Issues the held body ops (whole bodies as graphs) and stops holding; for the
** watchdog (watchdog set) or at a bail of the program's own call. */
void gs__body_flush(struct gs_stream *s, int watchdog);
/* At a boundary: issues what is held; the next segment is searched anew, and
** may go on with the body it had. */
void gs__body_segment_end(struct gs_stream *s);
/* The watchdog issued a body's ops held too long: the body is set aside until it
** is found again; where the hits say the host waits for bodies (two in a row,
** or many for the loops run: body.c wd_clean), the stream holds none for good. */
void gs__body_watchdog(struct gs_stream *s);
/* Issues what is held and drops the body's graphs; with learned, forgets the
** body too (its functions may be gone). */
void gs__body_forget(struct gs_stream *s, int learned);

#endif
