/*
** rest.h: learning rests where work does not repeat (rest.c).
*/
#ifndef GS_REST_H
#define GS_REST_H

#include "../stream/stream.h"

/* Where the next segment of s starts: the tree's root, or NULL while learning
** rests (its ops then only mix their shapes into s->fp). */
struct gs_node *gs__segment_start(struct gs_stream *s);
/* A segment that ended while learning rested: where it came back, learning
** resumes. */
void gs__rested_segment(struct gs_stream *s);

#endif
