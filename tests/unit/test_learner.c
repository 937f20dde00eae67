/*
** test_learner.c: the prefix tree of sequences and the gain verdict.
*/
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "../../policy/graph/learner.h"
#include "../../policy/rules/gain.h"

static struct gs_key key_of(int i)
{
    struct gs_key k;
    memset(&k, 0, sizeof k);
    k.kind = GS_OP_LAUNCH;
    k.f = (CUfunction)(uintptr_t)(0x100 + i);
    return k;
}

/* Sums the bytes of the tree as learner.c accounts for them (its node_size): each
** node below the root, its header up to the key and its key's len bytes, and the
** table of every wide node, the root's included (the root itself lives in struct
** gs_trie).  Walks the children lists itself, and checks on the way that a wide
** node's table holds exactly its listed children. */
static size_t node_bytes(const struct gs_node *n)
{
    size_t sum = n->depth ? offsetof(struct gs_node, key) + n->len : 0;
    uint32_t listed = 0;

    if (n->kids)
        sum += sizeof *n->kids;
    for (const struct gs_node *c = n->child; c; c = c->sibling, listed++) {
        cr_assert_eq(c->parent, n);
        if (n->kids) {
            uint32_t i = 0;
            while (i < n->nchildren && n->kids->node[i] != c)
                i++;
            cr_assert_lt(i, n->nchildren, "a child at depth %u is not in its parent's table", c->depth);
        }
        sum += node_bytes(c);
    }
    cr_assert_eq(listed, n->nchildren, "depth %u", n->depth);
    return sum;
}

static void assert_bytes(const struct gs_trie *t, const char *when)
{
    size_t sum = node_bytes(&t->root);
    cr_assert_eq(t->bytes, sum, "%s: t.bytes %zu, the nodes take %zu", when, t->bytes, sum);
}

Test(learner, sequence_becomes_stable_after_warmup)
{
    struct gs_trie t;
    struct gs_node *n = NULL;
    memset(&t, 0, sizeof t);
    for (int occ = 0; occ < 3; occ++) {
        struct gs_node *cur = &t.root;
        for (int i = 0; i < 3; i++) {
            struct gs_key k = key_of(i);
            struct gs_node *c = gs__trie_child(cur, &k, sizeof k, sizeof k);
            cur = c ? c : gs__trie_add(&t, cur, &k, sizeof k, sizeof k);
        }
        n = cur;
        cr_assert_eq(gs__trie_ended(n, 2, 2), occ == 1, "occurrence %d", occ);
    }
    cr_assert(n->stable);
    cr_assert_eq(t.root.stable_below, 1);
    gs__trie_unstable(n);
    cr_assert_eq(t.root.stable_below, 0);
    cr_assert(n->ungraphable);
    assert_bytes(&t, "a chain of three");
    gs__trie_clear(&t);
}

Test(learner, short_sequences_never_stable)
{
    struct gs_trie t;
    struct gs_key k = key_of(0);
    struct gs_node *n;
    memset(&t, 0, sizeof t);
    n = gs__trie_add(&t, &t.root, &k, sizeof k, sizeof k);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(gs__trie_ended(n, 2, 2), 0);
    gs__trie_clear(&t);
}

Test(learner, full_node_drops_its_least_recently_matched_child)
{
    struct gs_trie t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < GS_TRIE_MAX_CHILDREN; i++) {
        struct gs_key k = key_of(i);
        struct gs_node *c = gs__trie_add(&t, &t.root, &k, sizeof k, sizeof k);
        cr_assert_not_null(c);
        if (i == 0) {
            /* Child 0 leads to a wide node and a grandchild: its whole subtree goes. */
            for (int j = 0; j < GS_TRIE_WIDE; j++) {
                struct gs_key kj = key_of(200 + j);
                struct gs_node *g = gs__trie_add(&t, c, &kj, sizeof kj, sizeof kj);
                cr_assert_not_null(g);
                if (j == 0)
                    cr_assert_not_null(gs__trie_add(&t, g, &kj, sizeof kj, sizeof kj));
            }
            cr_assert_not_null(c->kids);
        }
    }
    assert_bytes(&t, "a full root");
    {
        /* Child 0 was added first and matched never: it goes. Child 1 is matched. */
        struct gs_key k1 = key_of(1), kn = key_of(1000), k0 = key_of(0);
        cr_assert_not_null(gs__trie_child(&t.root, &k1, sizeof k1, sizeof k1));
        cr_assert_not_null(gs__trie_add(&t, &t.root, &kn, sizeof kn, sizeof kn));
        cr_assert_eq(t.evicted, 1);
        cr_assert_null(gs__trie_child(&t.root, &k0, sizeof k0, sizeof k0));
        cr_assert_not_null(gs__trie_child(&t.root, &k1, sizeof k1, sizeof k1));
    }
    assert_bytes(&t, "after an eviction");
    gs__trie_clear(&t);
}

/* A node with GS_TRIE_WIDE children or more finds them through its table of
** hashes; adds and evictions keep the table and the list the same set, and a key
** that differs only past the compared bytes (a launch's parameters) still
** matches. */
Test(learner, a_wide_node_finds_its_children_through_its_table)
{
    struct gs_trie t;
    struct gs_key keys[GS_TRIE_MAX_CHILDREN + 16];
    const uint32_t nkeys = sizeof keys / sizeof keys[0];

    memset(&t, 0, sizeof t);
    for (uint32_t i = 0; i < nkeys; i++)
        keys[i] = key_of((int)i);
    for (uint32_t i = 0; i < GS_TRIE_MAX_CHILDREN; i++) {
        cr_assert_not_null(gs__trie_add(&t, &t.root, &keys[i], sizeof keys[i], sizeof keys[i]));
        cr_assert_eq(t.root.kids != NULL, i + 1 >= GS_TRIE_WIDE, "%u children", i + 1);
        assert_bytes(&t, "adding");
    }
    /* Match the odd ones: the even ones are then the least recently matched, and
    ** the next 16 adds drop them, oldest first. */
    for (uint32_t i = 1; i < GS_TRIE_MAX_CHILDREN; i += 2)
        cr_assert_not_null(gs__trie_child(&t.root, &keys[i], sizeof keys[i], sizeof keys[i]));
    for (uint32_t i = GS_TRIE_MAX_CHILDREN; i < nkeys; i++)
        cr_assert_not_null(gs__trie_add(&t, &t.root, &keys[i], sizeof keys[i], sizeof keys[i]));
    cr_assert_eq(t.evicted, 16);
    cr_assert_eq(t.root.nchildren, GS_TRIE_MAX_CHILDREN);
    assert_bytes(&t, "after 16 evictions");
    for (uint32_t i = 0; i < nkeys; i++) {
        int in_list = 0;
        for (struct gs_node *c = t.root.child; c; c = c->sibling)
            in_list |= memcmp(&c->key, &keys[i], sizeof keys[i]) == 0;
        cr_assert_eq(in_list, i >= GS_TRIE_MAX_CHILDREN || i % 2 == 1, "key %u", i);
        cr_assert_eq(gs__trie_child(&t.root, &keys[i], sizeof keys[i], sizeof keys[i]) != NULL, in_list, "key %u", i);
    }
    {
        /* the same key with other bytes past the compared ones */
        struct { struct gs_key k; uint64_t param; } a = {keys[1], 7}, b = {keys[1], 8};
        struct gs_node *n = gs__trie_add(&t, &t.root, &a, sizeof a, sizeof a.k);
        cr_assert_not_null(n);
        cr_assert_eq(gs__trie_child(&t.root, &b, sizeof b, sizeof b.k), n);
    }
    assert_bytes(&t, "a key with parameters");
    gs__trie_clear(&t);
}

/* A tree of one sequence of one op, seen twice: stable under a warmup of 2. */
static struct gs_node *one_stable(struct gs_trie *t)
{
    struct gs_key k = {0};
    struct gs_node *a;

    memset(t, 0, sizeof *t);
    a = gs__trie_add(t, &t->root, &k, sizeof k, sizeof k);
    cr_assert_not_null(a);
    gs__trie_ended(a, 2, 1);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 1);
    cr_assert_eq(t->root.stable_below, 1);
    return a;
}

Test(learner, relearn_waits_for_warmup_again)
{
    struct gs_trie t;
    struct gs_node *a = one_stable(&t);

    gs__trie_relearn(a);
    cr_assert_eq(t.root.stable_below, 0);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 0);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 1); /* stable again, unlike after gs__trie_unstable */
    gs__trie_unstable(a);
    gs__trie_ended(a, 2, 1);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 0);
    gs__trie_clear(&t);
}

Test(learner, eager_once_takes_one_occurrence_whatever_the_warmup)
{
    struct gs_trie t;
    struct gs_node *a = one_stable(&t);

    /* seen 2: the warmup may have grown past it since (the capture budget) */
    for (long warmup = 1; warmup <= 64; warmup *= 2) {
        gs__trie_eager_once(a);
        cr_assert_eq(t.root.stable_below, 0);
        cr_assert_eq(gs__trie_ended(a, warmup, 1), 1, "warmup %ld", warmup); /* this one ran eagerly */
        cr_assert_eq(t.root.stable_below, 1);
    }
    /* learned again, it waits for the whole warmup, eager_once or not */
    gs__trie_eager_once(a);
    gs__trie_relearn(a);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 0);
    cr_assert_eq(gs__trie_ended(a, 2, 1), 1);
    gs__trie_clear(&t);
}

/* When the capture budget fires (gs__trie_restrain with a larger warmup), a graph
** that was rebuilt for its last launch but that the gain check found paying keeps
** its sequence stable; one rebuilt and not found paying is learned again, from its
** current count; one replayed from the cache (not rebuilt) is kept; a stable
** sequence with no graph yet waits until it has been seen `warmup` times in all. */
Test(learner, restrain_keeps_graphs_that_pay)
{
    struct gs_trie t;
    struct gs_key ku = key_of(1), kp = key_of(2), kc = key_of(3), kn = key_of(4);
    struct gs_node *unpaid, *paid, *cached, *nograph;
    struct gs_exec *exec = (struct gs_exec *)(uintptr_t)0x10; /* never launched: t.drop is NULL */

    memset(&t, 0, sizeof t);
    unpaid = gs__trie_add(&t, &t.root, &ku, sizeof ku, sizeof ku);
    paid = gs__trie_add(&t, unpaid, &kp, sizeof kp, sizeof kp); /* below unpaid: the walk reaches it */
    cached = gs__trie_add(&t, &t.root, &kc, sizeof kc, sizeof kc);
    nograph = gs__trie_add(&t, &t.root, &kn, sizeof kn, sizeof kn);
    cr_assert(unpaid && paid && cached && nograph);
    for (int i = 0; i < 3; i++) {
        gs__trie_ended(unpaid, 2, 1);
        gs__trie_ended(paid, 2, 1);
        gs__trie_ended(cached, 2, 1);
        gs__trie_ended(nograph, 2, 1);
    }
    cr_assert(unpaid->stable && paid->stable && cached->stable && nograph->stable);
    cr_assert_eq(t.root.stable_below, 4);
    unpaid->cache.exec = paid->cache.exec = cached->cache.exec = exec;
    unpaid->rebuilt = 1, unpaid->gain.gain_paid = 0;
    paid->rebuilt = 1, paid->gain.gain_paid = 1;
    cached->rebuilt = 0, cached->gain.gain_paid = 0;

    gs__trie_restrain(&t.root, 4);
    cr_assert(paid->stable, "a rebuilt graph that pays was dropped");
    cr_assert_eq(paid->seen_mark, 0, "a rebuilt graph that pays was learned again");
    cr_assert_eq(paid->cache.exec, exec);
    cr_assert_not(paid->ungraphable);
    cr_assert(cached->stable);
    cr_assert_eq(cached->seen_mark, 0);
    cr_assert_not(unpaid->stable, "a rebuilt graph not found paying stays stable");
    cr_assert_eq(unpaid->seen_mark, 3);
    cr_assert_not(unpaid->ungraphable);
    cr_assert_not(nograph->stable);
    cr_assert_eq(nograph->seen_mark, 0);
    cr_assert_eq(t.root.stable_below, 2);
    cr_assert_eq(unpaid->stable_below, 1);

    /* unpaid is stable again after 4 more occurrences, nograph after 4 in all */
    for (int i = 0; i < 3; i++)
        cr_assert_eq(gs__trie_ended(unpaid, 4, 1), 0);
    cr_assert_eq(gs__trie_ended(unpaid, 4, 1), 1);
    cr_assert_eq(gs__trie_ended(nograph, 4, 1), 1);
    gs__trie_clear(&t);
}

Test(learner, gain_verdict)
{
    cr_assert_eq(gs__gain_slow(1000, 500, 0), 0);      /* twice as fast */
    cr_assert_eq(gs__gain_slow(1000, 1100, 0), 0);     /* within 10% */
    cr_assert_eq(gs__gain_slow(1000, 1110, 0), 1);     /* slower */
    cr_assert_eq(gs__gain_slow(841000, 1267000, 0), 1);
    cr_assert_eq(gs__gain_slow(0, 1267000, 0), 0);     /* no eager time */
    cr_assert_eq(gs__gain_slow(1000, 1000, 1), 0);     /* on trial: as fast */
    cr_assert_eq(gs__gain_slow(1000, 1010, 1), 1);     /* on trial: any slower */
    cr_assert_eq(gs__gain_slow(0, 1010, 1), 0);
    cr_assert_eq(gs__gain_verdict(7, 7, 8), -1);          /* too few replays */
    cr_assert_eq(gs__gain_verdict(0, 8, 8), 1);
    cr_assert_eq(gs__gain_verdict(5, 8, 8), 1);           /* a few slow ones: noise */
    cr_assert_eq(gs__gain_verdict(6, 8, 8), 0);           /* three in four */
    cr_assert_eq(gs__gain_verdict(8, 8, 8), 0);
    cr_assert_eq(gs__gain_verdict(3, 3, 4), -1);          /* a first window of 4 */
    cr_assert_eq(gs__gain_verdict(3, 4, 4), 0);
    cr_assert_eq(gs__gain_verdict(2, 4, 4), 1);
}

/* A copy's match (gs__key_cmp, gs__key_shape_eq, gs__key_shape_hash): a device
** copy's addresses and size and a memset's address, value and count are
** arguments, set in place; a copy between device and pinned host memory has
** only its device side as an argument, and one of another host address or
** size is another op (its node binds its host allocation, never moved); a
** pageable copy (staged) is matched whole. */
Test(learner, a_copy_is_matched_by_all_but_its_arguments)
{
    static const struct {
        int kind;
        uint64_t dst, src, size, dst2, src2, size2;
        int same_shape;
    } c[] = {
        {GS_OP_D2D, 0x1000, 0x2000, 64, 0x5000, 0x6000, 32, 1},
        {GS_OP_SET, 0x1000, 7, 64, 0x5000, 9, 32, 1},
        {GS_OP_D2H, 0x1000, 0x2000, 64, 0x1000, 0x6000, 64, 1},  /* device source moved */
        {GS_OP_D2H, 0x1000, 0x2000, 64, 0x5000, 0x2000, 64, 0},  /* host destination moved */
        {GS_OP_D2H, 0x1000, 0x2000, 64, 0x1000, 0x2000, 32, 0},  /* size */
        {GS_OP_H2D, 0x1000, 0x2000, 64, 0x5000, 0x2000, 64, 1},  /* device destination moved */
        {GS_OP_H2D, 0x1000, 0x2000, 64, 0x1000, 0x6000, 64, 0},  /* host source moved */
        {GS_OP_H2D_PAGEABLE, 0x1000, 0x2000, 64, 0x5000, 0x2000, 64, 0},
        {GS_OP_D2D, 0x1000, 0x2000, 0, 0x5000, 0x6000, 0, 0},   /* zero-length: matched whole */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        unsigned char a[sizeof(struct gs_key)], b[sizeof(struct gs_key)];
        int la = c[i].kind == GS_OP_SET ? gs__key_set(a, c[i].dst, (uint32_t)c[i].src, 4, c[i].size)
                                        : gs__key_copy(a, c[i].kind, c[i].dst, c[i].src, c[i].size);
        int lb = c[i].kind == GS_OP_SET ? gs__key_set(b, c[i].dst2, (uint32_t)c[i].src2, 4, c[i].size2)
                                        : gs__key_copy(b, c[i].kind, c[i].dst2, c[i].src2, c[i].size2);
        uint32_t cmp = gs__key_cmp((const struct gs_key *)a, (uint32_t)la, 1);
        cr_assert_eq(la, lb);
        cr_assert_eq(gs__key_shape_eq(a, b, (uint32_t)la, cmp), c[i].same_shape, "case %zu", i);
        if (c[i].same_shape) {
            cr_assert_eq(gs__key_shape_hash(a, (uint32_t)la, cmp), gs__key_shape_hash(b, (uint32_t)lb, cmp),
                         "case %zu", i);
            cr_assert(gs__key_args_differ((const struct gs_key *)a, (const struct gs_key *)b), "case %zu", i);
        }
        /* A zero-length op never shares a node with one of another length. */
        if (!c[i].size) {
            unsigned char z[sizeof(struct gs_key)];
            int lz = gs__key_copy(z, c[i].kind, c[i].dst, c[i].src, 64);
            cr_assert_neq(gs__key_cmp((const struct gs_key *)z, (uint32_t)lz, 1), cmp, "case %zu", i);
        }
        /* Without patching every copy is matched whole. */
        cr_assert_eq(gs__key_cmp((const struct gs_key *)a, (uint32_t)la, 0), (uint32_t)la);
        cr_assert_not(gs__key_shape_eq(a, b, (uint32_t)la, (uint32_t)la), "case %zu", i);
    }
    /* Memsets of other element sizes are other ops. */
    {
        unsigned char a[sizeof(struct gs_key)], b[sizeof(struct gs_key)];
        int la = gs__key_set(a, 0x1000, 7, 4, 64), lb = gs__key_set(b, 0x1000, 7, 1, 256);
        uint32_t cmp = gs__key_cmp((const struct gs_key *)a, (uint32_t)la, 1);
        cr_assert_eq(la, lb);
        cr_assert_not(gs__key_shape_eq(a, b, (uint32_t)la, cmp));
    }
}
