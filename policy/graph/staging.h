/*
** staging.h: the pinned staging buffer of a node whose op is a copy from
** pageable host memory (GS_OP_H2D_PAGEABLE).  Its bytes are snapshotted there
** at the op's call, and the op (eager or in a graph) copies from it.
**
** This room alone allocates and frees a node's buffer (scripts/owners): it is
** allocated at the first held occurrence of the node's op and lives, of the
** key's size, until the node is freed or graphshim's memory is given back.
** Called with the node's stream locked.
*/
#ifndef GS_STAGING_H
#define GS_STAGING_H

#include <stddef.h>

#include "learner.h"

/* n's staging buffer of size bytes (the size of n's copy: the same for every
** occurrence), allocated now where n has none; NULL where no pinned memory
** could be had (the op is not held). */
void *gs__staging_get(struct gs_node *n, size_t size);

/* Frees n's staging buffer, where it has one: the GPU has read it, or will
** not before the node goes (the caller's to know). */
void gs__staging_free(struct gs_node *n);

#endif
