/*
** patch.c: launches whose arguments change.  The prefix tree matches a launch by
** all but its parameter bytes; a held launch whose bytes differ from its node's
** keeps its own key here (a patch) and goes out with it, and a sequence keeps,
** beside its own graph, graphs built with other arguments (its extras).
*/
#define _GNU_SOURCE
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "graph_cache.h"
#include "log.h"
#include "key.h"
#include "nvtx.h"

/* --- Patches ---------------------------------------------------------------- */

/* The tree matches a launch by all but its parameter bytes.  A held launch whose
** bytes differ from its node's keeps its own key here, and goes out with it:
** issued eagerly, captured, or patched into the node's graph. */
int gs__patch_add(struct gs_stream *s, uint32_t depth, const void *key, uint32_t len)
{
    size_t need = (s->pused + len + 15) & ~(size_t)15;

    if (s->npatches == s->patch_cap) {
        uint32_t cap = s->patch_cap ? 2 * s->patch_cap : 16;
        struct gs_patch *p = realloc(s->patches, cap * sizeof *p);
        if (!p)
            return -1;
        s->patches = p;
        s->patch_cap = cap;
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
        s->pbuf = b;
        s->pcap = cap;
    }
    memcpy(s->pbuf + s->pused, key, len);
    s->patches[s->npatches++] = (struct gs_patch){depth, (uint32_t)s->pused};
    s->pused = need;
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
        s->patch_first++;
    if (s->patch_first == s->npatches)
        gs__patches_reset(s);
}

void gs__patches_reset(struct gs_stream *s)
{
    s->npatches = s->patch_first = 0;
    s->pused = 0;
}

/* --- Issuing held ops ------------------------------------------------------ */


int gs__held_get(struct gs_stream *s, struct gs_node *to, struct gs_held *h)
{
    h->path = h->path_stack;
    h->keys = h->key_stack;
    if (to->depth > 64) {
        h->path = malloc(to->depth * sizeof *h->path);
        h->keys = malloc(to->depth * sizeof *h->keys);
        if (!h->path || !h->keys) {
            free(h->path);
            free(h->keys);
            return -1;
        }
    }
    gs__trie_path(to, h->path);
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


/* --- Extras: graphs of other arguments ----------------------------------------- */

/* The patches of the held ops before depth t->depth (all of them in range). */
static void patches_in(const struct gs_stream *s, const struct gs_node *t, uint32_t *j0, uint32_t *j1)
{
    *j0 = *j1 = s->patch_first;
    while (*j1 < s->npatches && s->patches[*j1].depth < t->depth)
        (*j1)++;
}

/* Was extra e built from exactly the patches j0 .. j1-1 of s (hash: theirs)? */
static int extra_is(const struct gs_stream *s, struct gs_node **path, const struct gs_extra *e, uint64_t hash,
                    uint32_t j0, uint32_t j1)
{
    if (e->hash != hash || e->n != j1 - j0)
        return 0;
    for (uint32_t i = 0; i < e->n; i++) {
        const struct gs_patch *p = &s->patches[j0 + i];
        if (e->depth[i] != p->depth || memcmp(e->keys + e->off[i], s->pbuf + p->off, path[p->depth]->len) != 0)
            return 0;
    }
    return 1;
}

/* Records in e the patches j0 .. j1-1 of s it was just built from.  Returns 0 or
** -1 (no memory: e cannot be matched again). */
static int extra_set(const struct gs_stream *s, struct gs_node **path, struct gs_extra *e, uint64_t hash,
                     uint32_t j0, uint32_t j1)
{
    uint32_t n = j1 - j0;
    size_t head = ((size_t)2 * n * sizeof(uint32_t) + 15) & ~(size_t)15, bytes = 0;
    uint32_t *block;

    for (uint32_t j = j0; j < j1; j++)
        bytes += (path[s->patches[j].depth]->len + 15u) & ~15u;
    free(e->depth);
    e->depth = NULL;
    e->n = 0;
    if (!(block = aligned_alloc(16, head + bytes + 16)))
        return -1;
    e->depth = block;
    e->off = block + n;
    e->keys = (unsigned char *)block + head;
    bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct gs_patch *p = &s->patches[j0 + i];
        uint32_t len = path[p->depth]->len;
        e->depth[i] = p->depth;
        e->off[i] = (uint32_t)bytes;
        memcpy(e->keys + bytes, s->pbuf + p->off, len);
        bytes += (len + 15u) & ~15u;
    }
    e->n = n;
    e->hash = hash;
    return 0;
}

/* The executable for t's held ops (h: their keys) when some come with patches:
** the extra built from the same patches, or a new extra, or, all GS_EXTRAS in
** use, the least recently used one updated to these.  Returns 0 with *x, -1 or
** GS_CAPTURE_BUSY. */
int gs__extra_exec(struct gs_stream *s, struct gs_node *t, struct gs_held *h, uint32_t from, CUgraphExec *x)
{
    struct gs_extras *ex = t->extras;
    struct gs_extra *e = NULL;
    uint32_t j0, j1;
    uint64_t hash = 0;
    int rc;

    patches_in(s, t, &j0, &j1);
    for (uint32_t j = j0; j < j1; j++)
        hash = (hash ^ gs__bytes_hash(s->pbuf + s->patches[j].off, h->path[s->patches[j].depth]->len)) *
                   0x9E3779B97F4A7C15ull + s->patches[j].depth;
    if (!ex && !(ex = t->extras = calloc(1, sizeof *ex)))
        return -1;
    ex->from = from;
    for (uint32_t i = 0; i < ex->count && !e; i++)
        if (extra_is(s, h->path, &ex->e[i], hash, j0, j1))
            e = &ex->e[i];
    if (!e) {
        gs__debug("ops %u-%u of a sequence: %u of them with new arguments (hash %016llx), %u graphs of other "
                  "arguments kept: %s", from, t->depth - 1, j1 - j0, (unsigned long long)hash, ex->count,
                  ex->count < GS_EXTRAS ? "a new graph" : "the least recently used one updated");
        gs__nvtx_begin(ex->count < GS_EXTRAS ? GS_NVTX_CAPTURE : GS_NVTX_UPDATE, t->depth - from);
        if (ex->count < GS_EXTRAS) {
            e = &ex->e[ex->count];
            memset(e, 0, sizeof *e);
            rc = gs__graph_capture_keys(s, h->keys + from, t->depth - from, 1, &e->exec);
            if (rc == 0)
                ex->count++;
        } else {
            e = &ex->e[0];
            for (uint32_t i = 1; i < ex->count; i++)
                if (ex->e[i].used < e->used)
                    e = &ex->e[i];
            rc = gs__graph_update_keys(s, h->keys + from, t->depth - from, &e->exec);
            if (rc != 0 && !e->exec) {
                free(e->depth);
                *e = ex->e[--ex->count];
            }
        }
        gs__nvtx_end();
        if (rc != 0)
            return rc;
        if (extra_set(s, h->path, e, hash, j0, j1) != 0)
            e->hash = ~hash; /* never matched again, replaced when least recently used */
    }
    e->used = ++ex->clock;
    t->patched++;
    s->patched_launches++;
    s->nodes_patched += j1 - j0;
    *x = e->exec;
    return 0;
}
