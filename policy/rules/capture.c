/*
** capture.c: when a sequence is graphed (see capture.h).
*/
#define GS_OWNS_CAPTURE /* this file writes its rooms (state.h, GS_ROOM) */
#include "capture.h"

#include "../base/assert.h"
#include "../base/log.h"
#include "gain.h"

/* Host ns a captured and instantiated op costs, before a stream measured its
** own: 20 launches captured and instantiated took 41 us on an H200 (DESIGN.md's table of costs). */
#define GS_CAPTURE_NS_PER_OP 2000

/* What a graph saves a sequence whose eager runs kept the GPU busy
** (gs__gain_gpu_bound), as a part of its time: 1/400.  Such graphs save the GPU
** a few gaps between kernels at most, and holding makes the GPU start late:
** measured on an H200, 0.2-0.4 % slower replayed (four 4096-cubed products),
** 0.3 % faster (a decode loop of 20 us kernels), no faster (a prompt step of 265
** kernels, 40 ms), and 2.5 % faster (20 kernels of 60 us). */
#define GS_GPU_BOUND_SAVE 400

/* Host ns that capturing and instantiating the sequence ending at t would
** cost s: its ops at the stream's measured cost per op. */
static uint64_t capture_cost(const struct gs_stream *s, const struct gs_node *t)
{
    uint64_t ops = s->graphs.ops_built;
    uint64_t per = ops ? (s->graphs.capture_ns + s->graphs.instantiate_ns) / ops : GS_CAPTURE_NS_PER_OP;
    return per * t->depth;
}

/* Host ns of capture above which a sequence is graphed only once an eager run
** of it was timed (about 50 ops). */
#define GS_CAPTURE_UNTIMED_NS 100000

/* Times the sequence ending at t must be seen before it is graphed while none
** of its eager runs was timed: one more than the warmup where the gain check
** times the synchronize that ended it (its first occurrences' ends are counted
** before their synchronizes return) and its capture would cost much, so that
** capture-pays weighs it; the warmup otherwise. */
static long untimed_warmup(const struct gs_stream *s, const struct gs_node *t, int reason)
{
    long warmup = gs__warmup(s);

    if (gs__cfg.gain_check && reason == GS_BAIL_BOUNDARY + GS_SYNC && capture_cost(s, t) >= GS_CAPTURE_UNTIMED_NS)
        return warmup + 1;
    return warmup;
}

/* Times the sequence ending at t must be seen before it is graphed: the
** stream's warmup, or, where its last eager run kept the GPU busy, as many
** times as it takes for what its graph would have saved them to cover its
** capture's cost (rule capture-pays).  A capture is paid for by replays that
** may never come; buying once the rent paid so far equals the price costs at
** most twice what the best choice made knowing the future would. */
static long warmup_for(const struct gs_stream *s, const struct gs_node *t, int reason)
{
    long warmup = gs__warmup(s);
    uint64_t save, need;

    if (GS_DROPPED(GS_RULE_CAPTURE_PAYS) || t->cache.exec)
        return warmup; /* a graph kept (the gain check times it again) was paid for */
    if (!t->gain.eager_last_ns)
        return untimed_warmup(s, t, reason);
    if (!gs__gain_gpu_bound(t->gain.eager_last_ns, t->gain.eager_issue_ns))
        return warmup;
    save = t->gain.eager_last_ns / GS_GPU_BOUND_SAVE;
    need = save ? (capture_cost(s, t) + save - 1) / save : UINT32_MAX;
    if (need > UINT32_MAX)
        need = UINT32_MAX;
    if ((long)need > warmup && t->seen + 1 - t->seen_mark == (uint32_t)warmup + 1) /* once: just timed */
        gs__debug("a %u-op sequence keeps the GPU busy (%.1f us, %.1f us of it issuing): graphed after %llu times, "
                  "when its graph would have saved its capture's %.1f us", t->depth, t->gain.eager_last_ns / 1e3,
                  t->gain.eager_issue_ns / 1e3, (unsigned long long)need, capture_cost(s, t) / 1e3);
    return (long)need > warmup ? (long)need : warmup;
}

/* The key of the one-op sequence ending at t, as failed_keys holds it. */
static uint64_t key_of(const struct gs_node *t)
{
    return gs__key_shape_hash(&t->key, t->len, t->cmp);
}

/* Did a one-op sequence of key h fail before on s (rule failed-kept)? */
static int failed_before(const struct gs_stream *s, uint64_t h)
{
    for (uint32_t i = 0; i < s->capture_w.nfailed && i < GS_FAILED_KEYS; i++)
        if (s->capture_w.failed_keys[i] == h)
            return 1;
    return 0;
}

int gs__capture_counted(struct gs_stream *s, struct gs_node *t, int reason)
{
    GS_ASSERT_LOCKED(s);
    /* Asked once a node, where it ends its first segment: a node that lives on
    ** keeps its own mark (ungraphable). */
    if (t->depth == 1 && !t->seen && s->capture_w.nfailed && !GS_DROPPED(GS_RULE_FAILED_KEPT) &&
        failed_before(s, key_of(t))) {
        gs__debug("a one-op sequence whose graph failed before is learned again: it runs eagerly");
        gs__trie_unstable(t);
    }
    return gs__trie_ended(t, warmup_for(s, t, reason), gs__gain_min_ops(reason));
}

void gs__capture_failed(struct gs_stream *s, struct gs_node *t)
{
    uint64_t h;

    GS_ASSERT_LOCKED(s);
    gs__debug("graph of a %u-op sequence failed; it runs eagerly from now on", t->depth);
    gs__trie_unstable(t);
    if (t->depth != 1 || GS_DROPPED(GS_RULE_FAILED_KEPT))
        return;
    h = key_of(t);
    if (!failed_before(s, h))
        s->capture_w.failed_keys[s->capture_w.nfailed++ % GS_FAILED_KEYS] = h;
}

void gs__capture_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->capture_w.nfailed = 0;
}
