/*
** test_step.c: the search for a step in a sequence (policy/rules/step.c,
** gs__step_period), over paths of the prefix tree built op by op.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../../policy/graph/learner.h"
#include "../../policy/rules/step.h"

/* A path of the tree, one op at a time: a launch of function `shape` with 8
** parameter bytes `arg` (compared as its argument, as the tree compares). */
struct path {
    struct gs_trie t;
    struct gs_node *cur;
};

static void path_start(struct path *p)
{
    memset(&p->t, 0, sizeof p->t);
    p->cur = &p->t.root;
}

static void op(struct path *p, int shape, uint64_t arg)
{
    union {
        struct gs_key k;
        unsigned char b[sizeof(struct gs_key) + 8];
    } key;
    uint32_t len = sizeof key.b;

    memset(&key, 0, sizeof key);
    key.k.kind = GS_OP_LAUNCH;
    key.k.f = (CUfunction)(uintptr_t)(0x100 + shape);
    key.k.nparams = 8;
    memcpy(key.b + sizeof(struct gs_key), &arg, 8);
    p->cur = gs__trie_add(&p->t, p->cur, &key, len, gs__key_cmp(&key.k, len, 1));
    cr_assert_not_null(p->cur);
}

/* One step of 36 ops of 36 shapes, the 4 ops at multiples of 9 taking the step
** count n, the others their place; from op `from` on. */
static void step36(struct path *p, uint64_t n, int from)
{
    for (int j = from; j < 36; j++)
        op(p, j, j % 9 == 0 ? n : (uint64_t)j);
}

/* gs__step_period of the path: 1 with unit and off, or 0. */
static int period(struct path *p, uint32_t *unit, uint32_t *off)
{
    int found = gs__step_period(p->cur, unit, off);
    gs__trie_clear(&p->t);
    return found;
}

Test(step, steps_from_the_segments_start)
{
    struct path p;
    uint32_t unit = 0, off = 99;

    path_start(&p);
    for (int n = 0; n < 10; n++)
        step36(&p, (uint64_t)n, 0);
    for (int j = 0; j < 3; j++) /* a tail after them */
        op(&p, 100 + j, 0);
    cr_assert(period(&p, &unit, &off));
    cr_assert_eq(unit, 36);
    cr_assert_eq(off, 0);
}

/* Work before the steps, and a step begun late: found from the end backwards,
** units end at the sequence's end, the first after the head and the part of a
** step (5 + 10 ops). */
Test(step, steps_after_a_head_end_at_the_sequences_end)
{
    struct path p;
    uint32_t unit = 0, off = 0;

    path_start(&p);
    for (int j = 0; j < 5; j++)
        op(&p, 200 + j, 0);
    step36(&p, 0, 26);
    for (int n = 1; n <= 10; n++)
        step36(&p, (uint64_t)n, 0);
    cr_assert(period(&p, &unit, &off));
    cr_assert_eq(unit, 36);
    cr_assert_eq(off, 15);
}

/* Three ops a step, one of them with the step count: taken three at a time
** (GS_STEP_MIN_OPS). */
Test(step, short_steps_are_taken_several_at_a_time)
{
    struct path p;
    uint32_t unit = 0, off = 0;

    path_start(&p);
    for (int n = 0; n < 10; n++)
        for (int j = 0; j < 3; j++)
            op(&p, j, j ? (uint64_t)j : (uint64_t)n);
    cr_assert(period(&p, &unit, &off));
    cr_assert_eq(unit, 9);
}

/* Five kernels in turn, each op's argument its place in a step of 2,000: a
** period of five by shape, of 2,000 byte for byte. */
Test(step, a_long_step_over_a_short_period_of_shapes)
{
    struct path p;
    uint32_t unit = 0, off = 0;

    path_start(&p);
    for (int n = 0; n < 3; n++)
        for (int j = 0; j < 2000; j++)
            op(&p, j % 5, (uint64_t)j);
    cr_assert(period(&p, &unit, &off));
    cr_assert_eq(unit, 2000);
}

Test(step, no_step)
{
    struct path p;
    uint32_t unit, off;

    /* Layers of one shape on weights of their own. */
    path_start(&p);
    for (int l = 0; l < 8; l++)
        for (int j = 0; j < 3; j++)
            op(&p, j, (uint64_t)(l * 3 + j));
    cr_assert_not(period(&p, &unit, &off), "layers");
    /* A loop of three ops the same byte for byte: the loop bodies'. */
    path_start(&p);
    for (int n = 0; n < 10; n++)
        for (int j = 0; j < 3; j++)
            op(&p, j, 7);
    cr_assert_not(period(&p, &unit, &off), "a loop body");
    /* One kernel on other buffers 4,000 times. */
    path_start(&p);
    for (int j = 0; j < 4000; j++)
        op(&p, 0, (uint64_t)j);
    cr_assert_not(period(&p, &unit, &off), "one kernel");
    /* Steps over less than half of the sequence. */
    path_start(&p);
    for (int j = 0; j < 100; j++)
        op(&p, 300 + j, 0);
    for (int n = 0; n < 2; n++)
        step36(&p, (uint64_t)n, 0);
    cr_assert_not(period(&p, &unit, &off), "a short run");
}
