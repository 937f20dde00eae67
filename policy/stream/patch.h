/*
** patch.h: ops held with arguments of their own (patch.c).
*/
#ifndef GS_PATCH_H
#define GS_PATCH_H

#include "stream.h"

/* Keeps the key (len bytes) of the op held at depth, whose arguments differ
** from its node's.  Returns 0, or -1 (no memory: the op is not held). */
int gs__patch_add(struct gs_stream *s, uint32_t depth, const void *key, uint32_t len);
/* The held ops before depth went out: so did their patches. */
void gs__patches_done(struct gs_stream *s, uint32_t depth);
/* Forgets the patches of held launches (all held work went out). */
void gs__patches_reset(struct gs_stream *s);
/* The held ops, path[s->chunk_depth .. to->depth-1] and the keys they go out
** with, keys[] at the same indexes (npatches of them patches); on the stack or,
** for sequences longer than GS_HELD_STACK, the heap (gs__held_get); released by
** gs__held_free. */
#define GS_HELD_STACK 256 /* a training step of PyTorch: 150-170 ops */
struct gs_held {
    struct gs_node *path_stack[GS_HELD_STACK], **path;
    const struct gs_key *key_stack[GS_HELD_STACK], **keys;
    uint32_t npatches;
};
int gs__held_get(struct gs_stream *s, struct gs_node *to, struct gs_held *h);
void gs__held_free(struct gs_held *h);
#endif
