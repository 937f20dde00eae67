/*
** learner.c: the prefix tree of op sequences (see learner.h).
*/
#include "learner.h"

#include <stdlib.h>
#include <string.h>

static size_t node_size(const struct gs_node *n)
{
    return offsetof(struct gs_node, key) + n->len + (n->kids ? sizeof *n->kids : 0);
}

static uint32_t key_hash(const struct gs_node *c)
{
    return (uint32_t)gs__key_shape_hash(&c->key, c->len, c->cmp);
}

/* Gives wide node n its table of children (n->kids), or none if out of memory:
** the list is searched then.  Returns the bytes it took. */
static size_t kids_build(struct gs_node *n)
{
    struct gs_kids *k = malloc(sizeof *k);
    uint32_t i = 0;

    if (!k)
        return 0;
    for (struct gs_node *c = n->child; c; c = c->sibling, i++) {
        k->hash[i] = key_hash(c);
        k->node[i] = c;
    }
    n->kids = k;
    return sizeof *k;
}

/* Takes child c out of n's table (n->nchildren counts it still). */
static void kids_remove(struct gs_node *n, struct gs_node *c)
{
    uint32_t last = n->nchildren - 1;

    for (uint32_t i = 0; i <= last; i++)
        if (n->kids->node[i] == c) {
            n->kids->hash[i] = n->kids->hash[last];
            n->kids->node[i] = n->kids->node[last];
            return;
        }
}

struct gs_node *gs__trie_child_wide(struct gs_node *n, const void *key, uint32_t len, uint32_t cmp)
{
    uint32_t h = (uint32_t)gs__key_shape_hash(key, len, cmp);

    for (uint32_t i = 0; i < n->nchildren; i++) {
        struct gs_node *c;
        if (n->kids->hash[i] != h)
            continue;
        c = n->kids->node[i];
        if (c->len == len && c->cmp == cmp && gs__key_shape_eq(&c->key, key, len, cmp)) {
            c->matched = ++n->match_clock;
            n->next = c;
            return c;
        }
    }
    return NULL;
}

/* Frees the subtree at top (not linked from its parent any more). */
static void free_subtree(struct gs_trie *t, struct gs_node *top)
{
    struct gs_node *n = top;

    for (;;) {
        struct gs_node *p;
        while (n->child)
            n = n->child;
        p = n->parent;
        if (n != top)
            p->child = n->sibling;
        if (t->drop)
            t->drop(n, t->drop_arg);
        t->bytes -= node_size(n);
        free(n->kids);
        free(n);
        if (n == top)
            return;
        n = p->child ? p->child : p;
    }
}

/* Makes room for a child of full node n: drops its least recently matched child
** unless a stable sequence lies below it.  Returns 0 or -1. */
static int evict_child(struct gs_trie *t, struct gs_node *n)
{
    struct gs_node **pv = NULL, *v;

    for (struct gs_node **pc = &n->child; *pc; pc = &(*pc)->sibling)
        if (!pv || n->match_clock - (*pc)->matched > n->match_clock - (*pv)->matched)
            pv = pc;
    if (!pv || (*pv)->stable_below)
        return -1;
    v = *pv;
    *pv = v->sibling;
    if (n->next == v)
        n->next = NULL;
    if (n->kids)
        kids_remove(n, v);
    n->nchildren--;
    t->evicted++;
    free_subtree(t, v);
    return 0;
}

struct gs_node *gs__trie_add(struct gs_trie *t, struct gs_node *n, const void *key, uint32_t len, uint32_t cmp)
{
    size_t size = offsetof(struct gs_node, key) + len;
    struct gs_node *c;

    if (n->nchildren >= GS_TRIE_MAX_CHILDREN && evict_child(t, n) != 0)
        return NULL;
    if (t->bytes + size > GS_TRIE_MAX_BYTES || !(c = calloc(1, size)))
        return NULL;
    t->bytes += size;
    c->parent = n;
    c->len = len;
    c->cmp = cmp;
    c->depth = n->depth + 1;
    c->matched = ++n->match_clock;
    memcpy(&c->key, key, len);
    c->sibling = n->child;
    n->child = c;
    n->next = c;
    if (n->kids) {
        n->kids->hash[n->nchildren] = key_hash(c);
        n->kids->node[n->nchildren] = c;
    }
    if (++n->nchildren == GS_TRIE_WIDE && !n->kids)
        t->bytes += kids_build(n);
    return c;
}

static void add_stable_below(struct gs_node *n, int delta)
{
    for (; n; n = n->parent)
        n->stable_below = (uint32_t)((int)n->stable_below + delta);
}

int gs__trie_ended(struct gs_node *n, long warmup, long min_ops)
{
    if (n->depth == 0)
        return 0;
    n->seen++;
    if (n->stable || n->ungraphable || (n->seen - n->seen_mark < warmup && !n->eager_once) || n->depth < min_ops)
        return 0;
    n->eager_once = 0;
    n->stable = 1;
    add_stable_below(n, 1);
    return 1;
}

static void drop_stable(struct gs_node *n)
{
    if (n->stable) {
        n->stable = 0;
        add_stable_below(n, -1);
    }
}

void gs__trie_relearn(struct gs_node *n)
{
    drop_stable(n);
    n->seen_mark = n->seen;
    n->eager_once = 0;
}

void gs__trie_eager_once(struct gs_node *n)
{
    drop_stable(n);
    n->eager_once = 1;
}

static void restrain(struct gs_node *n, void *warmup)
{
    if (!n->stable)
        return;
    if (!n->cache.exec && n->seen - n->seen_mark < *(long *)warmup)
        drop_stable(n);
    else if (n->rebuilt && !n->gain.gain_paid)
        gs__trie_relearn(n);
}

void gs__trie_restrain(struct gs_node *root, long warmup)
{
    gs__trie_walk(root, restrain, &warmup);
}

void gs__trie_unstable(struct gs_node *n)
{
    drop_stable(n);
    n->ungraphable = 1;
}

void gs__trie_path(struct gs_node *n, uint32_t from, struct gs_node **path)
{
    for (; n && n->depth > from; n = n->parent)
        path[n->depth - 1] = n;
}

/* Both traversals are iterative: a tree may be a chain of many thousand ops. */
void gs__trie_walk(struct gs_node *root, void (*fn)(struct gs_node *, void *), void *arg)
{
    struct gs_node *n = root;

    for (;;) {
        fn(n, arg);
        if (n->child) {
            n = n->child;
            continue;
        }
        while (n != root && !n->sibling)
            n = n->parent;
        if (n == root)
            return;
        n = n->sibling;
    }
}

void gs__trie_clear(struct gs_trie *t)
{
    while (t->root.child) {
        struct gs_node *c = t->root.child;
        t->root.child = c->sibling;
        free_subtree(t, c);
    }
    free(t->root.kids);
    memset(&t->root, 0, sizeof t->root);
    t->bytes = 0;
}
