/*
** hold.c: the hold-or-issue decision for each op, and the door of launches.
** op_begin() finds the stream's state unlocked (op_stream), then, locked, takes
** the common case (op_expected: the op expected next, the same bytes) or builds
** and looks up the key (op_keyed).  (Copies' door: copy.c; held ops out: issue.c.)
*/
#define _GNU_SOURCE
#define GS_OWNS_HOLD /* this file writes its rooms (state.h, GS_ROOM) */
#include "engine.h"

#include <string.h>
#include "limit.h"
#include "../base/log.h"
#include "../base/prof.h"
#include "../graph/key.h"
#include "../graph/staging.h"
#include "../rules/chunk.h"
#include "../rules/resolve.h"
#include "../rules/rest.h"
#include "../rules/xgroup.h"
#include "../stream/body.h"
#include "../stream/issue.h"
#include "../stream/patch.h"
#include "../stream/segment.h"

/* May s hold an op now?  Its state is known and usable, and no capture of the
** program's own is open.  Called locked. */
static inline int stream_open(const struct gs_stream *s)
{
    return s->usable && !s->app_capturing && !atomic_load_explicit(&gs__app_captures, memory_order_relaxed);
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
** was taken so (and counted); 0 where its key is needed (the search for bodies looks at it, or
** its layout is unknown: then it passes through, uncounted).  Called locked. */
static inline int resting_launch(struct gs_stream *s, const struct gs_launch *a)
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
    s->fp = gs__shape_mix(s->fp, GS_OP_LAUNCH, a->f, a->grid, a->block, a->shmem, 0, 0, 0);
    s->ops_seen_w++; /* nothing of the segment is learned or held */
    return 1;
}

/* Says, at debug level, how the op of key differs from the one last taken
** after s->cur, where a held sequence bails out at it (mismatch); or, where it
** matched its node (c), that it could not be held there. */
static void mismatch_debug(const struct gs_stream *s, const struct gs_key *k, const struct gs_node *c)
{
    const struct gs_key *e = s->cur->next ? &s->cur->next->key : NULL;

    gs__debug("held ops bail out after %u ops at op kind %u: %s (shared memory %u, expected %u; grid %u,%u,%u; "
              "block %u; size %llu)", s->cur->depth, k->kind,
              c ? "it matched, but could not be held (no stable sequence below it)" : gs__key_differs(e, k),
              k->shmem, e ? e->shmem : 0, k->grid[0], k->grid[1], k->grid[2], k->block[0],
              (unsigned long long)k->size);
}

#define OP_RESTED (GS_OP_HELD + 1) /* op_begin's: resting_launch() took it (issued as GS_OP_PASS) */

/* The program captures: nothing is held, a new stream's state is not even
** completed (its queries could disturb the capture), what s held goes out
** first.  Called unlocked. */
static void app_capturing(struct gs_stream *s)
{
    if (!s->ready)
        return;
    gs__lock(&s->lock);
    if (s->holding)
        gs__flush(s, GS_BAIL_APP_CAPTURE);
    gs__seg_unlearned(s);
    gs__unlock(&s->lock);
}

/* An op s cannot hold (len < 0: a collective, an unknown layout) ends the
** segment as an event record does: the held ops go out before it (as their
** graph where they are a whole stable sequence), and the work between a
** stream's collectives is learned.  Where the program captures (s is not
** open), what s holds goes out.  Called locked. */
static void cannot_hold(struct gs_stream *s, int len)
{
    if (len < 0)
        gs__resolve_locked(s, GS_BAIL_UNHOLDABLE);
    else if (s->holding)
        gs__flush(s, GS_BAIL_APP_CAPTURE);
}

/* An op that cannot be held where it matched: what s holds in the tree goes out
** before it, counted as unholdable.  Returns -1, admit()'s answer.  Called locked. */
static int refuse(struct gs_stream *s)
{
    if (s->holding != GS_HOLD_TRIE)
        s->bails[GS_BAIL_UNHOLDABLE]++;
    else
        gs__flush(s, GS_BAIL_UNHOLDABLE);
    return -1;
}

/* May the op of key (len bytes, cmp of them compared by the tree, same as
** expected() said), matched at node c, be held?  A pageable source is copied
** into c's staging buffer now; arguments of its own (unless the test build
** turned the parameter rule off) are kept to go out with it.  0: it may be
** held.  -1: it goes out now: no staging buffer (or none the GPU is known to
** be done reading: its wait failed), or a copy or memset moved
** where the driver would refuse it (to fail at its call; refuse()), or no room
** for its arguments.  Called locked. */
static int admit(struct gs_stream *s, struct gs_node *c, void *key, int len, uint32_t cmp, int same,
                 const void *stage_src)
{
    const struct gs_key *k = key;

    if (k->kind == GS_OP_H2D_PAGEABLE) {
        void *buf = gs__staging_get(c, k->size);

        if (!buf || gs__staging_wait(s) != 0) /* a buffer the GPU may still read is not written */
            return refuse(s);
        memcpy(buf, stage_src, k->size);
    }
    if (cmp != (uint32_t)len && !GS_DROPPED(GS_RULE_PARAMS) && (same < 0 || gs__key_args_differ(&c->key, key))) {
        if (GS_UNLIKELY(!GS_DROPPED(GS_RULE_COPY_RANGE) &&
                        !gs__key_moves_ok(key, &c->key, &s->ranges_w,
                                          atomic_load_explicit(&gs__mem_epoch, memory_order_relaxed))))
            return refuse(s);
        if (gs__patch_add(s, c->depth - 1, key, (uint32_t)len) != 0)
            return -1;
    }
    return 0;
}

/* s holds in its tree from the op about to be held on: holding begins (and
** where the segment resumes, its chunks are placed as after one that ended at
** s->cur), or, after an early chunk took what it held, the clocks start again.
** Called locked. */
static void hold_begins(struct gs_stream *s)
{
    if (!s->holding) {
        if (gs__seg_hold_tree(s))
            gs__chunks_resumed(s, s->cur);
    } else {
        gs__seg_clocks_start(s);
    }
}

/* Holds the op matched at c (holdable()) until its sequence's end or an early
** chunk.  Called locked. */
static inline void hold(struct gs_stream *s, struct gs_node *c)
{
    if (GS_UNLIKELY(!s->holding || !s->chunk_since))
        hold_begins(s);
    gs__seg_advance(s, c);
    s->ops_held += c->key.kind < GS_OP_RECORD; /* a group's records and waits are no ops of the report's */
    if ((gs__cfg.chunk_ops | gs__cfg.chunk_us) || GS_UNLIKELY(GS_WATCHDOG_CUT(c))) {
        GS_PROF_START(t);
        gs__maybe_chunk(s);
        GS_PROF_STOP(GS_PROF_CHUNK, t);
    }
}

/* The op of key, matched at c (or NULL), is not the tree's to hold: what s holds
** there goes out (mismatch), the tree learns the op, and a loop body may hold
** it.  GS_OP_HELD where a body held it; else GS_OP_ISSUE.  Called locked. */
static int not_held(struct gs_stream *s, struct gs_node *c, void *key, int len, uint32_t cmp)
{
    if (s->holding == GS_HOLD_TRIE) {
        if (GS_UNLIKELY(gs__log_level >= GS_LOG_DEBUG))
            mismatch_debug(s, key, c);
        gs__flush(s, GS_BAIL_MISMATCH);
    }
    if (s->cur)
        gs__seg_advance(s, c ? c : gs__trie_add(&s->trie, s->cur, key, (uint32_t)len, cmp));
    else if (s->resting) /* learning rests: the segment's fingerprint */
        s->fp = gs__shape_mix_key(s->fp, key);
    /* Not the tree's: perhaps a loop body's (not while a sequence runs eagerly to
    ** be timed, gain.c).  The tree goes on learning through the ops a body holds. */
    if (gs__cfg.body_ops && !s->gain.timing_eager && !s->xs.open && gs__body_op(s, key, (uint32_t)len))
        return GS_OP_HELD;
    return GS_OP_ISSUE;
}

/* May s hold the op matched at c?  Where c lies on a path to a stable
** sequence, and s holds in its tree, or holds nothing and may begin after
** s->cur: at the segment's start, or where it resumes (rules/chunk.h). */
static inline int holdable(const struct gs_stream *s, const struct gs_node *c)
{
    return c->stable_below &&
           (s->holding == GS_HOLD_TRIE ||
            (s->holding == GS_HOLD_NONE && (s->cur->depth == 0 || (s->seg_held && gs__chunks_resume_at(s->cur)))));
}

/* The common case: launch a is the op expected next (c), byte for byte, so its
** key is c's and nothing is admitted: held where holdable(), else learned as
** not_held() says.  GS_OP_HELD or GS_OP_ISSUE.  Called locked; returns
** locked. */
static inline int op_expected(struct gs_stream *s, struct gs_node *c)
{
    s->ops_seen_w += c->key.kind < GS_OP_RECORD;
    gs__gain_op(s, c);
    if (holdable(s, c)) {
        hold(s, c);
        return GS_OP_HELD;
    }
    return not_held(s, c, &c->key, (int)c->len, 0);
}

/* Every other op: a launch (a) not the op expected next, or differing from it
** in its arguments (c that op, same -1), and not taken by resting_launch(); or
** a copy or memset (its key, len bytes).  GS_OP_PASS (it cannot be held, s is
** not open), or as op_expected().  Inline in op_begin(): work that never
** repeats takes it at every launch.  Called locked; returns locked. */
static inline __attribute__((always_inline)) int op_keyed(struct gs_stream *s, struct gs_node *c, int same,
                                                         void *key, int len, const void *stage_src,
                                                         const struct gs_launch *a)
{
    uint32_t cmp;

    if (a) {
        GS_PROF_START(t);
        len = gs__key_launch(key, a);
        GS_PROF_STOP2(GS_PROF_KEY, key_phase(s, a, c), t);
    }
    if (GS_UNLIKELY(len < 0 || !stream_open(s))) {
        cannot_hold(s, len);
        return GS_OP_PASS;
    }
    /* An op matches its node whatever its arguments (a launch's parameter bytes
    ** and grid, a device copy's or memset's addresses: gs__key_cmp): those are
    ** patched (unless GRAPHSHIM_PATCH=0). */
    cmp = gs__key_cmp(key, (uint32_t)len, gs__cfg.patch);
    if (!c)
        c = s->cur ? gs__trie_child(s->cur, key, (uint32_t)len, cmp) : NULL;
    s->ops_seen_w += ((const struct gs_key *)key)->kind < GS_OP_RECORD;
    gs__gain_op(s, c);
    if (c && holdable(s, c) && admit(s, c, key, len, cmp, same, stage_src) == 0) {
        hold(s, c);
        return GS_OP_HELD;
    }
    return not_held(s, c, key, len, cmp);
}

/* The state of stream, ready, for an op: NULL where the op passes (the program
** captures: what it held went out).  The legacy rule issues what the streams
** it waits for hold.  Called unlocked; returns unlocked. */
static inline __attribute__((always_inline)) struct gs_stream *op_stream(CUstream stream)
{
    struct gs_stream *s = gs__stream_get(stream);

    if (GS_UNLIKELY(s == &gs__nomem_stream)) /* no state: every held op out, its own passes */
        return gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_NO_MEMORY), NULL;
    if (GS_UNLIKELY(atomic_load_explicit(&gs__app_captures, memory_order_relaxed))) {
        app_capturing(s);
        return NULL;
    }
    if (GS_UNLIKELY(!s->ready))
        gs__stream_make_ready(s);
    if (atomic_load_explicit(&gs__legacy_holding, memory_order_relaxed) ||
        (s->kind == GS_STREAM_LEGACY && atomic_load_explicit(&gs__blocking_holding, memory_order_relaxed)))
        gs__legacy_rule(s);
    return s;
}

/* gs__engine_op_begin(), for a launch too (a != NULL): then the key is built
** only if the launch is not the op expected next, or differs from it in its
** arguments, and it may answer OP_RESTED (the caller issues the launch, as
** GS_OP_PASS).  The steps above run locked; the stream stays locked only
** where this answers GS_OP_ISSUE (*out).  One function, out of line, for
** launches and for copies and memsets alike. */
static __attribute__((noinline)) int op_begin(struct gs_stream **out, CUstream stream, void *key, int len,
                                              const void *stage_src, const struct gs_launch *a)
{
    struct gs_stream *s;
    struct gs_node *c = NULL;
    int same = 0, op;

    *out = NULL;
    if (gs__passthrough || !(s = op_stream(stream)))
        return GS_OP_PASS;
    if (GS_UNLIKELY(atomic_load_explicit(&gs__xs_members, memory_order_relaxed)) && gs__xs_origin(s))
        s = gs__xg_route(s, key, &len, &a); /* a member's op: its group's origin's */
    /* A default stream's state is its context's (gs__stream_get): its held ops
    ** and graphs go out in the context they came from. */
    gs__lock(&s->lock);
    gs__step_end(s); /* a step's end (resolve.h) */
    if (a && (c = expected(s, a, &same)) != NULL && same > 0)
        op = op_expected(s, c);
    else if (a && !s->cur && s->resting && resting_launch(s, a))
        op = OP_RESTED;
    else
        op = op_keyed(s, c, same, key, len, stage_src, a);
    if (op == GS_OP_ISSUE)
        *out = s;
    else
        gs__unlock(&s->lock);
    return op;
}

int gs__engine_op_begin(struct gs_stream **out, CUstream stream, void *key, int len, const void *stage_src)
{
    return op_begin(out, stream, key, len, stage_src, NULL);
}

void gs__engine_op_end(struct gs_stream *s, CUresult rc)
{
    GS_ASSERT_LOCKED(s);
    if (rc != CUDA_SUCCESS)
        gs__rooms_failed(s); /* a failed op is never part of a learned sequence, nor of a body */
    gs__unlock(&s->lock);
}

CUresult gs__engine_launch(int id, const struct gs_launch *a, CUstream stream, CUstream app_stream)
{
    GS_PROF_START(t_launch);
    unsigned char *key = gs__key_buffer();
    struct gs_stream *s;
    CUresult rc;
    int op;

    {
        GS_PROF_START(t);
        /* the key built where it must be (never while the program captures, nor
        ** for a launch over its function's lowered limit: limit.h) */
        op = op_begin(&s, stream, key, -1, NULL, key && !gs__smem_refused(a) ? a : NULL);
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
    GS_ASSERT_NO_LOCK();
    return rc;
}
