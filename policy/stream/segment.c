/*
** segment.c: a stream's segment (segment.h), its rarer steps: holding begins
** in the tree, held work goes out before the segment's end (a flush), the
** segment ends and the next begins.  Every function is called with s locked.
*/
#define _GNU_SOURCE
#include "segment.h"

#include "../base/assert.h"
#include "../base/nvtx.h"
#include "body.h"
#include "issue.h"
#include "sites.h"

int gs__seg_hold_tree(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    int resumed = s->seg_held && s->cur->depth; /* held again: the ops before went out */

    if (resumed) {
        s->seg_resumed = 1;
        s->resumes++;
    }
    s->seg_held = 1;
    gs__set_hold(s, GS_HOLD_TRIE);
    s->chunk_since = atomic_load_explicit(&s->held_since, memory_order_relaxed);
    gs__seg_check(s);
    return resumed;
}

void gs__seg_begin(struct gs_stream *s, struct gs_node *start, struct gs_node *replayed)
{
    gs__seg_cost_settle(s, replayed);
    s->seg_held = 0;
    s->seg_resumed = 0;
    s->seg_start = 0;
    s->cur = start;
    s->clean = 1;
    gs__seg_check(s);
}

void gs__flush(struct gs_stream *s, int reason)
{
    gs__site_bail(s, reason); /* while s->cur is still the last op held */
    if (s->holding == GS_HOLD_BODY) {
        gs__nvtx_begin(GS_NVTX_BAIL + reason, s->body.held);
        gs__body_flush(s, reason == GS_BAIL_WATCHDOG);
        gs__nvtx_end();
    } else {
        gs__nvtx_begin(GS_NVTX_BAIL + reason, s->cur->depth - s->chunk_depth);
        gs__issue_held(s, s->cur);
        gs__nvtx_end();
        gs__set_hold(s, GS_HOLD_NONE);
    }
    s->bails[reason]++;
    gs__seg_check(s);
}
