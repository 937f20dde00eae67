/*
** patch.c: ops whose arguments change.  The prefix tree matches an op by all
** but its arguments (gs__key_cmp: a launch's grid and parameter bytes, a copy's
** or memset's device addresses, size and value); a held op whose arguments
** differ from its node's keeps its own key here (a patch) and goes out with it:
** issued eagerly, captured, or set into its node of the sequence's graph
** (graph_cache.c).
*/
#define _GNU_SOURCE
#define GS_OWNS_PATCH /* this file writes its rooms (state.h, GS_ROOM) */
#include "patch.h"

#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../graph/key.h"

/* --- Patches ---------------------------------------------------------------- */

/* The tree matches an op by all but its arguments.  A held op whose arguments
** differ from its node's keeps its own key here, and goes out with it: issued
** eagerly, captured, or set into the node's graph. */
int gs__patch_add(struct gs_stream *s, uint32_t depth, const void *key, uint32_t len)
{
    size_t need = (s->pused + len + 15) & ~(size_t)15;

    if (s->npatches == s->patch_cap) {
        uint32_t cap = s->patch_cap ? 2 * s->patch_cap : 16;
        struct gs_patch *p = realloc(s->patches, cap * sizeof *p);
        if (!p)
            return -1;
        s->patch_w.patches = p;
        s->patch_w.patch_cap = cap;
    }
    if (need > s->pcap) {
        size_t cap = s->pcap ? 2 * s->pcap : 4096;
        unsigned char *b;
        while (cap < need)
            cap *= 2;
        if (!(b = aligned_alloc(16, cap)))
            return -1;
        if (s->pused)
            memcpy(b, s->pbuf, s->pused);
        free(s->pbuf);
        s->patch_w.pbuf = b;
        s->patch_w.pcap = cap;
    }
    memcpy(s->pbuf + s->pused, key, len);
    s->patch_w.patches[s->patch_w.npatches++] = (struct gs_patch){depth, (uint32_t)s->pused};
    s->patch_w.pused = need;
    return 0;
}

/* keys[from .. n-1]: the key each held op on path goes out with.  Returns how
** many are patches. */
static uint32_t held_keys(const struct gs_stream *s, struct gs_node **path, uint32_t from, uint32_t n,
                          const struct gs_key **keys)
{
    uint32_t np = 0;

    for (uint32_t i = from; i < n; i++)
        keys[i] = &path[i]->key;
    for (uint32_t j = s->patch_first; j < s->npatches && s->patches[j].depth < n; j++, np++)
        keys[s->patches[j].depth] = (const struct gs_key *)(s->pbuf + s->patches[j].off);
    return np;
}

/* The held ops before depth went out: so did their patches. */
void gs__patches_done(struct gs_stream *s, uint32_t depth)
{
    while (s->patch_first < s->npatches && s->patches[s->patch_first].depth < depth)
        s->patch_w.patch_first++;
    if (s->patch_first == s->npatches)
        gs__patches_reset(s);
}

void gs__patches_reset(struct gs_stream *s)
{
    s->patch_w.npatches = s->patch_w.patch_first = 0;
    s->patch_w.pused = 0;
}

/* --- Held ops and their keys ------------------------------------------------- */

int gs__held_get(struct gs_stream *s, struct gs_node *to, struct gs_held *h)
{
    h->path = h->path_stack;
    h->keys = h->key_stack;
    if (to->depth > GS_HELD_STACK) {
        h->path = malloc(to->depth * sizeof *h->path);
        h->keys = malloc(to->depth * sizeof *h->keys);
        if (!h->path || !h->keys) {
            free(h->path);
            free(h->keys);
            return -1;
        }
    }
    gs__trie_path(to, s->chunk_depth, h->path);
    h->npatches = held_keys(s, h->path, s->chunk_depth, to->depth, h->keys);
    return 0;
}

void gs__held_free(struct gs_held *h)
{
    if (h->path != h->path_stack) {
        free(h->path);
        free(h->keys);
    }
}
