/*
** rest.c: learning rests on a stream whose work does not repeat (stream.h):
** the fingerprint of a resting segment's shapes, where each segment starts
** learning, and how a rested segment that comes back ends the rest.
*/
#define GS_OWNS_REST /* this file writes its rooms (state.h, GS_ROOM) */
#define _GNU_SOURCE
#include "rest.h"

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../base/log.h"

uint64_t gs__shape_mix_key(uint64_t fp, const struct gs_key *k)
{
    uint64_t dst = k->dst, src = k->src, size = k->size;

    if (k->kind != GS_OP_LAUNCH && gs__key_cmp(k, sizeof *k, gs__cfg.patch) < sizeof *k) {
        dst = k->kind == GS_OP_D2H ? k->dst : 0;
        src = k->kind == GS_OP_H2D ? k->src : 0;
        size = k->kind == GS_OP_D2H || k->kind == GS_OP_H2D ? k->size : k->elem;
    }
    return gs__shape_mix(fp, k->kind, k->f, k->grid, k->block, k->shmem, dst, src, size);
}

#define GS_DORMANT_MAX 4096
#define GS_FPS 512
#define GS_FP_NEAR 32

/* New segments in a row after which learning rests: GRAPHSHIM_REST_AFTER, or a
** quarter of it (at least 1) where it rested before and nothing replayed since.
** A segment that comes back during a rest ends it (its fingerprint), so a
** learning run between two rests need not be long to catch work that repeats;
** what it costs, every op a node, is paid again each time a rest runs out. */
static uint32_t new_run(const struct gs_stream *s)
{
    uint32_t n = (uint32_t)gs__cfg.rest_after;

    return s->rests_w.dormant_len ? (n + 3) / 4 : n;
}

/* Where the next segment of s starts: the root, or NULL (not learned) while
** learning rests.  Learning rests when GRAPHSHIM_REST_AFTER segments in a row
** came for the first time (fewer after a rest ran out: new_run), or the tree keeps dropping subtrees to make room and
** nothing replays: the stream's work does not repeat, and learning it costs every
** op a node (an allocation, and the caches it fills: 70400 of them in norepeat's
** 3520 segments).  It rests too where the capture budget found that nothing
** pays and warmup + GRAPHSHIM_REST_AFTER segments were learned without a replay:
** the work repeats, too rarely to be graphed, and learning it costs every op a
** walk of a tree that never replays (bench's rare: ~600 ns a launch on the H100's
** host).  While it rests an op costs a mix of its shape into the segment's
** fingerprint (shape_mix, hold.c), and a segment that comes back ends the rest
** (gs__rested_segment). */
struct gs_node *gs__segment_start(struct gs_stream *s)
{
    s->resting_w = 0;
    if (s->rests_w.dormant) {
        s->rests_w.dormant--;
        s->rests_w.segments_rested++;
        s->resting_w = s->rests_w.fps != NULL;
        return NULL;
    }
    if (s->replays != s->rests_w.replays_mark) {
        s->rests_w.replays_mark = s->replays;
        s->rests_w.evicted_mark = s->trie.evicted;
        s->rests_w.dormant_len = 0;
        s->rests_w.dry_segments = 0;
    } else if (gs__cfg.rest_after && (s->trie.evicted - s->rests_w.evicted_mark >= (uint64_t)gs__cfg.rest_after ||
                                      s->rests_w.new_segments >= new_run(s) ||
                                      (s->budget.hopeless && !GS_DROPPED(GS_RULE_HOPELESS_REST) &&
                                       s->rests_w.dry_segments >= gs__warmup(s) + gs__cfg.rest_after))) {
        s->rests_w.dormant_len = s->rests_w.dormant_len ? (s->rests_w.dormant_len < GS_DORMANT_MAX ? 2 * s->rests_w.dormant_len : GS_DORMANT_MAX)
                                        : (uint32_t)gs__cfg.rest_after;
        s->rests_w.dormant = s->rests_w.dormant_len;
        s->rests_w.evicted_mark = s->trie.evicted;
        s->rests_w.new_segments = 0;
        if (!s->rests_w.fps)
            s->rests_w.fps = calloc(GS_FPS, sizeof *s->rests_w.fps);
        else
            memset(s->rests_w.fps, 0, GS_FPS * sizeof *s->rests_w.fps);
        s->resting_w = s->rests_w.fps != NULL;
        s->rests_w.segments_rested++;
        return NULL;
    }
    return &s->trie.root;
}

/* A segment that ended while learning rested: where its ops came as they did in
** one since the rest began (where the budget found nothing pays: within
** GS_FP_NEAR segments), the work repeats, and learning resumes.  An entry of fps
** holds a fingerprint's high 48 bits and, below them, the rested segment it was
** last seen at. */
void gs__rested_segment(struct gs_stream *s)
{
    uint64_t fp = (s->fp | 1ull << 16) & ~0xffffull; /* 0 marks an empty entry */
    uint64_t now = s->rests_w.segments_rested & 0xffff;
    uint64_t *e = &s->rests_w.fps[(fp >> 16) % GS_FPS];

    s->fp = 0;
    if ((*e & ~0xffffull) == fp && (!s->budget.hopeless || ((now - *e) & 0xffff) <= GS_FP_NEAR)) {
        gs__debug("stream %d: a segment came back while learning rested: it learns again", s->id);
        s->rests_w.dormant = s->rests_w.dormant_len = 0;
        s->rests_w.replays_mark = s->replays;
        s->rests_w.dry_segments = 0;
    }
    *e = fp | now;
}

void gs__rest_learned(struct gs_stream *s, int first_time, int replayed)
{
    GS_ASSERT_LOCKED(s);
    s->rests_w.new_segments = first_time ? s->rests_w.new_segments + 1 : 0;
    s->rests_w.dry_segments += !replayed;
}

void gs__rest_forget(struct gs_stream *s)
{
    s->rests_w.dormant = s->rests_w.dormant_len = s->rests_w.new_segments = s->rests_w.dry_segments = 0;
    s->resting_w = 0;
    s->rest_f = NULL;
}
