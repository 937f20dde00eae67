/*
** hold.c: the hold-or-issue decision for each launch, copy and memset: the
** entry of every op into the engine (early chunks: rules/chunk.c; held ops going
** out: stream/issue.c).
*/
#define _GNU_SOURCE
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/prof.h"
#include "../graph/key.h"
#include "../rules/chunk.h"
#include "../rules/resolve.h"
#include "../stream/issue.h"
#include "../stream/patch.h"
#include "../stream/stream.h"

/* --- Ops ------------------------------------------------------------------- */

/* fp with an op's shape mixed in: its kind and function, launch dimensions and
** shared memory, or a copy's or memset's addresses and size, as shape_mix()
** passes them (a handful of multiplies: what a resting stream pays an op). */
static inline uint64_t mix_shape(uint64_t fp, int kind, CUfunction f, const unsigned grid[3], const unsigned block[3],
                                 unsigned shmem, uint64_t dst, uint64_t src, uint64_t size)
{
    uint64_t h = (uint64_t)(uintptr_t)f ^ (uint64_t)kind << 56;

    h = (h ^ ((uint64_t)grid[0] << 32 | grid[1])) * 0x9E3779B97F4A7C15ull;
    h = (h ^ ((uint64_t)grid[2] << 32 | block[0])) * 0xC2B2AE3D27D4EB4Full;
    h = (h ^ ((uint64_t)block[1] << 48 ^ (uint64_t)block[2] << 32 ^ shmem)) * 0x165667B19E3779F9ull;
    h = (h ^ dst ^ src * 31 ^ size * 131) * 0x9E3779B97F4A7C15ull;
    return (fp ^ h ^ h >> 29) * 0xD6E8FEB86659FD93ull + 1;
}

/* The same for the op of key: a launch mixes as resting_launch() mixes it from
** its arguments, so one shape is one fingerprint whichever way it came; a copy
** or memset without its arguments (gs__key_cmp), but a host copy with its host
** side and size, as the tree matches it. */
static uint64_t shape_mix(uint64_t fp, const struct gs_key *k)
{
    uint64_t dst = k->dst, src = k->src, size = k->size;

    if (k->kind != GS_OP_LAUNCH && gs__key_cmp(k, sizeof *k, gs__cfg.patch) < sizeof *k) {
        dst = k->kind == GS_OP_D2H ? k->dst : 0;
        src = k->kind == GS_OP_H2D ? k->src : 0;
        size = k->kind == GS_OP_D2H || k->kind == GS_OP_H2D ? k->size : k->elem;
    }
    return mix_shape(fp, k->kind, k->f, k->grid, k->block, k->shmem, dst, src, size);
}

/* May s hold an op now?  Its state is known and usable, and no capture of the
** program's own is open.  Called locked. */
static inline int stream_open(const struct gs_stream *s)
{
    return s->usable && !s->app_capturing && !atomic_load_explicit(&gs__app_captures, memory_order_relaxed);
}

/* May s, holding nothing, begin to hold an op that follows s->cur?  At a
** segment's start; and where the segment held ops that went out before its end
** (the watchdog's: a host that stalled; an op that could not be held), after a
** place where an early chunk of the sequence ended: its next chunk begins
** there, as every time, so its graphs are the ones kept (gs__chunks_resumed
** keeps the chunks' places as after a chunk there; where they moved since, the
** held ops go out eagerly, gs__launch_graph's GS_NOT_KEPT, rather than as graphs
** of their own that whole segments would replace).  Before, the rest of such a
** segment went out eagerly: a PyTorch training step whose host stalled in 62 of
** 418 steps (H100, MLP AdamW) ran 6 % of its ops eagerly.  Called locked. */
static inline int may_hold_from(const struct gs_stream *s)
{
    return s->cur->depth == 0 ||
           (s->seg_held && s->cur->chunk_end && !s->cur->chunk_idle && !GS_DROPPED(GS_RULE_RESUME));
}

/* The op expected next on s, if launch a is it: the child of s->cur last taken,
** compared in place (no key built, no search).  *same: 1 if its arguments
** (grid and parameter bytes) are a's too (its key is then a's, byte for byte),
** -1 if a differs in them alone (then it is the child a's key finds, the engine
** patching them).
** Called locked. */
static struct gs_node *expected(struct gs_stream *s, const struct gs_launch *a, int *same)
{
    struct gs_node *c;
    int how;

    if (!a->plain || !s->cur || !(c = s->cur->next) || s->holding == GS_HOLD_BODY || !stream_open(s))
        return NULL;
    how = gs__key_launch_is(&c->key, a);
    /* Without patching, parameter bytes are the tree's to compare. */
    if (how == GS_KEY_OTHER || (how == GS_KEY_SHAPE && !gs__cfg.patch))
        return NULL;
    *same = how == GS_KEY_SAME ? 1 : -1;
    c->matched = ++s->cur->match_clock; /* as gs__trie_child() does */
    return c;
}

#ifdef GS_PROFILE
/* Why a launch's key is built (the profile build's table): the op expected next
** came with new arguments, or was not a's (and why). */
static int key_phase(const struct gs_stream *s, const struct gs_launch *a, const struct gs_node *c)
{
    if (c)
        return GS_PROF_KEY_ARGS;
    if (!a->plain)
        return GS_PROF_MISS_ATTR;
    if (s->holding == GS_HOLD_BODY)
        return GS_PROF_MISS_BODY;
    return s->cur && s->cur->next ? GS_PROF_MISS_OTHER : GS_PROF_MISS_NONE;
}
#endif

/* A launch on a stream whose learning rests (s->cur NULL), where the search for
** loop bodies rests too: all it does is add its shape to the segment's
** fingerprint, and that comes from its arguments, without its key (work that
** never repeats pays no key, no layout lookup and no parameter copy).  1 if it
** was taken so; 0 where its key is needed (the search for bodies looks at it, or
** its layout is unknown: then it passes through, uncounted).  Called locked. */
static int resting_launch(struct gs_stream *s, const struct gs_launch *a)
{
    if (!a->plain || !a->params || s->holding || !stream_open(s))
        return 0;
    if (a->f != s->rest_f) {
        if (!gs__layout_known(a->f))
            return 0;
        s->rest_f = a->f;
    }
    if (gs__cfg.body_ops && !gs__body_pass(s))
        return 0;
    s->fp = mix_shape(s->fp, GS_OP_LAUNCH, a->f, a->grid, a->block, a->shmem, 0, 0, 0);
    return 1;
}

/* Says, at debug level, how the op of key differs from the one last taken
** after s->cur, where a held sequence bails out at it (mismatch); or, where it
** matched its node (c), that it could not be held there. */
static void mismatch_debug(const struct gs_stream *s, const struct gs_key *k, const struct gs_node *c)
{
    const struct gs_key *e = s->cur->next ? &s->cur->next->key : NULL;
    const char *what = c                            ? "it matched, but could not be held (no stable sequence below it)"
                       : !e                         ? "no op was expected"
                       : e->kind != k->kind         ? "another kind of op"
                       : e->f != k->f               ? "another function"
                       : memcmp(e->block, k->block, sizeof e->block) ? "another block"
                       : e->shmem != k->shmem       ? "other dynamic shared memory"
                       : e->nattrs != k->nattrs     ? "other launch attributes"
                       : e->kind != GS_OP_LAUNCH    ? "other addresses, size or value"
                                                    : "other grid, attributes or parameters";
    gs__debug("held ops bail out after %u ops at op kind %u: %s (shared memory %u, expected %u; grid %u,%u,%u; "
              "block %u; size %llu)", s->cur->depth, k->kind, what, k->shmem, e ? e->shmem : 0, k->grid[0],
              k->grid[1], k->grid[2], k->block[0], (unsigned long long)k->size);
}

/* op_begin's answer for a launch that resting_launch() took: the caller issues
** it, with the stream unlocked (as GS_OP_PASS). */
#define OP_RESTED (GS_OP_HELD + 1)

/* gs__engine_op_begin(), for a launch too (a != NULL): then the key is built
** only if the launch is not the op expected next, or differs from it in its
** arguments (same = -1 then), and it may answer OP_RESTED. */
static int op_begin(struct gs_stream **out, CUstream stream, void *key, int len, const void *stage_src,
                    const struct gs_launch *a)
{
    struct gs_stream *s;
    struct gs_node *c = NULL;
    uint32_t cmp = 0;
    int same = 0;

    *out = NULL;
    if (gs__passthrough)
        return GS_OP_PASS;
    s = gs__stream_get(stream);
    if (GS_UNLIKELY(atomic_load_explicit(&gs__app_captures, memory_order_relaxed))) {
        /* The program captures: nothing is held, and a new stream's state is not
        ** even completed (its queries could disturb the capture).  What a stream
        ** held before goes out first. */
        if (s->ready) {
            gs__lock(&s->lock);
            if (s->holding)
                gs__flush(s, GS_BAIL_APP_CAPTURE);
            s->cur = NULL;
            gs__unlock(&s->lock);
        }
        return GS_OP_PASS;
    }
    if (GS_UNLIKELY(!s->ready)) {
        gs__lock(&s->lock);
        if (!s->ready)
            gs__stream_ready(s);
        gs__unlock(&s->lock);
    }
    if (atomic_load_explicit(&gs__legacy_holding, memory_order_relaxed) ||
        (s->kind == GS_STREAM_LEGACY && atomic_load_explicit(&gs__blocking_holding, memory_order_relaxed)))
        gs__legacy_rule(s);
    /* A default stream's state is its context's (gs__stream_get): its held ops
    ** and graphs go out in the context they came from. */
    gs__lock(&s->lock);
    if (a && (c = expected(s, a, &same)) != NULL && same > 0) {
        key = &c->key; /* its key, byte for byte */
        len = (int)c->len;
        goto found;
    }
    if (a && !s->cur && s->resting && resting_launch(s, a)) {
        /* Nothing of the segment is learned or held: the launch goes out
        ** unlocked, and nothing follows it (op_end's work is for learned ops). */
        s->ops_seen++;
        gs__unlock(&s->lock);
        return OP_RESTED;
    }
    if (a) {
        GS_PROF_START(t);
        len = gs__key_launch(key, a);
        GS_PROF_STOP2(GS_PROF_KEY, key_phase(s, a, c), t);
    }
    if (GS_UNLIKELY(len < 0 || !stream_open(s))) {
        /* An op the engine cannot hold (a collective, an unknown layout) ends
        ** the segment as an event record does: the held ops go out before it,
        ** as their graph where they are a whole stable sequence, and the ops
        ** after it begin a segment of their own, so the work between a stream's
        ** collectives is learned.  Where the program captures, what the stream
        ** holds goes out. */
        if (len < 0)
            gs__resolve_locked(s, GS_BAIL_UNHOLDABLE);
        else if (s->holding)
            gs__flush(s, GS_BAIL_APP_CAPTURE);
        gs__unlock(&s->lock);
        return GS_OP_PASS;
    }
    /* An op matches its node whatever its arguments (a launch's parameter
    ** bytes and grid, a device copy's or memset's addresses: gs__key_cmp): those
    ** are patched (unless GRAPHSHIM_PATCH=0). */
    cmp = gs__key_cmp(key, (uint32_t)len, gs__cfg.patch);
    if (!c)
        c = s->cur ? gs__trie_child(s->cur, key, (uint32_t)len, cmp) : NULL;
found:
    s->ops_seen++;
    *out = s;
    /* The gain check times a segment from its first op, where it may come to be
    ** a sequence long enough to be graphed: an op the tree knows, and has seen
    ** followed (a segment of one launch and a synchronize reads no clock). */
    if (!s->seg_start && gs__cfg.gain_check && c && c->depth == 1 && (c->nchildren || gs__cfg.min_ops <= 1))
        s->seg_start = gs__now_ns();
    if (c && c->stable_below && (s->holding == GS_HOLD_TRIE || (s->holding == GS_HOLD_NONE && may_hold_from(s)))) {
        /* Hold: the call returns success, the op waits for its sequence's end. */
        if (same <= 0) {
            if (((struct gs_key *)key)->kind == GS_OP_H2D_PAGEABLE) {
                if (!c->staging &&
                    GS_REAL(cuMemAllocHost_v2)(&c->staging, ((struct gs_key *)key)->size) != CUDA_SUCCESS)
                    c->staging = NULL;
                if (!c->staging) { /* no staging buffer: the copy goes out eagerly */
                    if (s->holding != GS_HOLD_TRIE)
                        s->bails[GS_BAIL_UNHOLDABLE]++; /* else counted by the flush below */
                    else
                        gs__flush(s, GS_BAIL_UNHOLDABLE);
                    goto issue;
                }
                gs__staging_wait(s);
                memcpy(c->staging, stage_src, ((struct gs_key *)key)->size);
            }
            /* Arguments of its own: kept, to go out with it (unless a test
            ** turned the parameter rule off).  A copy or memset moved where the
            ** driver would refuse it goes out now, to fail at its call. */
            if (cmp != (uint32_t)len && !GS_DROPPED(GS_RULE_PARAMS) &&
                (same < 0 || gs__key_args_differ(&c->key, key))) {
                if (GS_UNLIKELY(!GS_DROPPED(GS_RULE_COPY_RANGE) &&
                                !gs__key_moves_ok(key, &c->key, &s->ranges,
                                                  atomic_load_explicit(&gs__mem_epoch, memory_order_relaxed)))) {
                    if (s->holding != GS_HOLD_TRIE)
                        s->bails[GS_BAIL_UNHOLDABLE]++;
                    else
                        gs__flush(s, GS_BAIL_UNHOLDABLE);
                    goto issue;
                }
                if (gs__patch_add(s, c->depth - 1, key, (uint32_t)len) != 0)
                    goto issue;
            }
        }
        if (!s->holding) {
            if (s->seg_held && s->cur->depth) { /* held again: the ops before went out */
                gs__chunks_resumed(s, s->cur);
                s->seg_resumed = 1;
                s->resumes++;
            }
            s->seg_held = 1;
            gs__set_hold(s, GS_HOLD_TRIE);
            s->chunk_since = atomic_load_explicit(&s->held_since, memory_order_relaxed);
        } else if (GS_UNLIKELY(!s->chunk_since)) {
            /* The first op held after an early chunk. */
            s->chunk_since = gs__now_ns();
            gs__held_from(s, s->chunk_since);
        }
        s->cur = c;
        s->ops_held++;
        if ((gs__cfg.chunk_ops | gs__cfg.chunk_us) || GS_UNLIKELY(GS_WATCHDOG_CUT(c))) {
            GS_PROF_START(t);
            gs__maybe_chunk(s);
            GS_PROF_STOP(GS_PROF_CHUNK, t);
        }
        gs__unlock(&s->lock);
        *out = NULL;
        return GS_OP_HELD;
    }
issue:
    if (s->holding == GS_HOLD_TRIE) {
        if (GS_UNLIKELY(gs__log_level >= GS_LOG_DEBUG))
            mismatch_debug(s, key, c);
        gs__flush(s, GS_BAIL_MISMATCH);
    }
    if (s->cur)
        s->cur = c ? c : gs__trie_add(&s->trie, s->cur, key, (uint32_t)len, cmp);
    else if (s->resting) /* learning rests: the segment's fingerprint */
        s->fp = shape_mix(s->fp, key);
    /* Not the tree's: perhaps the body of a loop.  The tree goes on learning the
    ** segment through the ops a body holds. */
    if (gs__cfg.body_ops && gs__body_op(s, key, (uint32_t)len)) {
        gs__unlock(&s->lock);
        *out = NULL;
        return GS_OP_HELD;
    }
    return GS_OP_ISSUE;
}

int gs__engine_op_begin(struct gs_stream **out, CUstream stream, void *key, int len, const void *stage_src)
{
    return op_begin(out, stream, key, len, stage_src, NULL);
}

void gs__engine_op_end(struct gs_stream *s, CUresult rc)
{
    if (rc != CUDA_SUCCESS) {
        s->clean = 0;
        s->cur = NULL; /* a failed op is never part of a learned sequence, */
        gs__body_failed(s); /* nor of a body */
    }
    gs__unlock(&s->lock);
}

/* The calling thread's buffer for a launch key (up to 32 KiB of parameters: too
** much for the stack of every thread that launches).  NULL if out of memory. */
static pthread_key_t key_buffer_key;
static pthread_once_t key_buffer_once = PTHREAD_ONCE_INIT;
static GS_TLS unsigned char *key_buf;

static void key_buffer_init(void)
{
    pthread_key_create(&key_buffer_key, free);
}

static unsigned char *key_buffer(void)
{
    if (GS_UNLIKELY(!key_buf)) {
        pthread_once(&key_buffer_once, key_buffer_init);
        key_buf = aligned_alloc(16, (GS_KEY_MAX + 15) & ~(size_t)15);
        pthread_setspecific(key_buffer_key, key_buf); /* freed when the thread exits */
    }
    return key_buf;
}

CUresult gs__engine_launch(int id, const struct gs_launch *a, CUstream stream, CUstream app_stream)
{
    GS_PROF_START(t_launch);
    unsigned char *key = key_buffer();
    struct gs_stream *s;
    CUresult rc;
    int op;

    {
        GS_PROF_START(t);
        /* op_begin builds the key when it must (never while the program captures:
        ** no driver call of ours then). */
        op = op_begin(&s, stream, key, -1, NULL, key ? a : NULL);
        GS_PROF_STOP2(GS_PROF_BEGIN,
                      op == GS_OP_HELD     ? GS_PROF_HELD
                      : op == OP_RESTED ? GS_PROF_RESTED
                      : !s              ? GS_PROF_PASSED
                      : s->cur          ? GS_PROF_LEARNED
                                        : GS_PROF_ISSUED,
                      t);
    }
    if (op == GS_OP_HELD) {
        GS_PROF_STOP(GS_PROF_LAUNCH, t_launch);
        return CUDA_SUCCESS;
    }
    {
        GS_PROF_START(t);
        rc = gs__launch_real(id, a->cfg != NULL, a, app_stream);
        GS_PROF_STOP(s || !atomic_load_explicit(&gs__app_captures, memory_order_relaxed) ? GS_PROF_DRIVER
                                                                                          : GS_PROF_DRIVER_OFF,
                     t);
    }
    if (s) {
        GS_PROF_START(t);
        gs__engine_op_end(s, rc);
        GS_PROF_STOP(GS_PROF_END, t);
    }
    GS_PROF_STOP(GS_PROF_LAUNCH, t_launch);
    return rc;
}
