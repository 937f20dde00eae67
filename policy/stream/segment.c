/*
** segment.c: a stream's segment (segment.h), its rarer steps: holding begins
** in the tree, the segment ends and the next begins (every function called
** with s locked); the counts of holding streams and the watchdog's wake, which
** its holding marks keep.  It calls nothing above it: held work goes out in
** issue.c (gs__flush).
*/
#define _GNU_SOURCE
#define GS_OWNS_SEG /* this file writes the segment's rooms (state.h, GS_ROOM) */
#include "segment.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/assert.h"

atomic_int gs__blocking_holding, gs__legacy_holding;

/* The watchdog (rules/watchdog.c) sleeps on gs__watchdog_idle while no stream
** holds work; the first stream to hold wakes it (gs__held_from). */
atomic_int gs__watchdog_idle;

void gs__watchdog_wake(void)
{
    if (atomic_exchange(&gs__watchdog_idle, 0))
        syscall(SYS_futex, &gs__watchdog_idle, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int gs__seg_hold_tree(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    int resumed = s->seg_held && s->cur->depth; /* held again: the ops before went out */

    if (resumed) {
        s->seg_w.seg_resumed = 1;
        s->resumes_w++;
    }
    s->seg_held_w = 1;
    seg_set_hold(s, GS_HOLD_TRIE);
    s->chunk_since_w = atomic_load_explicit(&s->seg.held_since, memory_order_relaxed);
    gs__seg_check(s);
    return resumed;
}

GS_TLS uint64_t gs__thread_driver_ns;

void gs__seg_begin(struct gs_stream *s, struct gs_node *start, struct gs_node *replayed)
{
    gs__seg_cost_settle(s, replayed);
    s->seg_held_w = 0;
    s->seg_w.seg_resumed = 0;
    s->seg_w.seg_start = 0;
    s->cur_w = start;
    s->seg_w.clean = 1;
    gs__seg_check(s);
}
