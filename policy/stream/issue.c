/*
** issue.c: held ops going out: eagerly, in order ("flush"), or as one graph,
** its nodes set in place first where their arguments changed; the
** staging buffers of pageable copies they read.
*/
#define _GNU_SOURCE
#define GS_OWNS_ISSUE /* this file writes its rooms (state.h, GS_ROOM) */
#include "issue.h"

#include <stdlib.h>
#include <string.h>

#include "../base/assert.h"
#include "../base/log.h"
#include "../base/prof.h"
#include "../graph/graph_cache.h"
#include "../graph/key.h"
#include "body.h"
#include "patch.h"
#include "segment.h"
#include "sites.h"
#include "xs.h"

/* --- Staging ------------------------------------------------------------------ */

/* Records that the last issue on stream st read staging buffers of s: an event
** after them, or, where there is none, the host waits for st now.  Where that
** wait fails too, the stream failed (its error is the program's at its next
** synchronize), and the buffers may be overwritten while a copy reads them: a
** warning says so. */
static void staging_issued(struct gs_stream *s, CUstream st)
{
    CUresult rc;

    if (!s->staging_done && GS_REAL(cuEventCreate)(&s->staging_done_w, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        s->staging_done_w = NULL;
    if (s->staging_done && GS_REAL(cuEventRecord)(s->staging_done, st) == CUDA_SUCCESS)
        s->staging_pending_w = 1;
    else if ((rc = GS_REAL(cuStreamSynchronize)(st)) != CUDA_SUCCESS)
        gs__warn("pageable copies' staging buffers could not be waited for (cuStreamSynchronize failed, error %d)",
                 (int)rc);
}

/* Before a staging buffer of s is overwritten: the GPU must be done reading it.
** 0, or -1 where the wait failed: the buffer may still be read, and must not be
** written (the wait is tried again next time). */
int gs__staging_wait(struct gs_stream *s)
{
    CUresult rc;

    if (s->staging_pending) {
        if ((rc = GS_REAL(cuEventSynchronize)(s->staging_done)) != CUDA_SUCCESS) {
            gs__debug("a staging buffer's event could not be waited for (error %d): its copy goes out eagerly",
                      (int)rc);
            return -1;
        }
        s->staging_pending_w = 0;
    }
    return 0;
}

int gs__staging_read(struct gs_stream *s)
{
    /* a query that fails tells nothing: the buffers may still be read */
    if (s->staging_pending && GS_REAL(cuEventQuery)(s->staging_done) != CUDA_SUCCESS)
        return 0;
    s->staging_pending_w = 0;
    return 1;
}

void gs__staging_drop(struct gs_stream *s)
{
    if (!s->staging_done)
        return;
    GS_IGNORE(GS_REAL(cuEventDestroy_v2)(s->staging_done)); /* an event not destroyed leaks */
    s->staging_done_w = NULL;
    s->staging_pending_w = 0;
}

/* --- Issuing held ops ------------------------------------------------------ */

/* Issues the held ops of s up to node to (those past s->chunk_depth) eagerly, in
** order; where s's context cannot be made current, none (they would go to
** another context), counted as issue errors.  Called locked. */
void gs__issue_held(struct gs_stream *s, struct gs_node *to)
{
    GS_ASSERT_LOCKED(s);
    GS_PROF_START(t_all);
    struct gs_held h;
    unsigned n = to->depth;
    int staged = 0, listed = gs__held_get(s, to, &h) == 0;
    uint32_t j = s->patch_first;
    CUstream st = gs__issue_stream(s);
    CUcontext prev;
    int entered = gs__enter_ctx(s, &prev) == 0;

    if (!entered)
        s->issue_errors += n - s->chunk_depth;
    for (unsigned i = s->chunk_depth; entered && i < n; i++) {
        struct gs_node *node = listed ? h.path[i] : to;
        const struct gs_key *k;
        if (!listed) /* no memory for the list: find each op from the end, slowly */
            while (node->depth > i + 1)
                node = node->parent;
        k = &node->key;
        if (j < s->npatches && s->patches[j].depth == i)
            k = (const struct gs_key *)(s->pbuf + s->patches[j++].off);
        if (gs__key_issue(k, GS_UNLIKELY(k->member) ? gs__xs_stream(s, k->member) : st, node->staging) != CUDA_SUCCESS)
            s->issue_errors++;
        staged |= node->staging != NULL;
    }
    if (entered) {
        if (staged)
            staging_issued(s, st);
        gs__issued_on(s, st);
        gs__leave_ctx(s, prev);
    }
    if (listed)
        gs__held_free(&h);
    gs__seg_issued_to(s, n);
    gs__patches_done(s, n);
    GS_PROF_STOP(GS_PROF_EAGER, t_all);
}

/* The executable of t for the held ops' arguments (h), its nodes whose
** arguments differ set in place (gs__exec_for), counted for the stream and for
** the open segment, with the host time setting them (the graphs' update_ns).
** NULL where none could take them: the caller captures one. */
static struct gs_exec *exec_set(struct gs_stream *s, struct gs_node *t, const struct gs_held *h)
{
    struct gs_exec *e;
    uint32_t set;
    uint64_t refused = s->graphs.refused, update_ns = s->graphs.update_ns;
    GS_PROF_START(t_set);

    gs__nvtx_begin(GS_NVTX_UPDATE, h->npatches);
    e = gs__exec_for(&s->graphs, t, h->path, h->keys, h->npatches, &set);
    GS_PROF_STOP(GS_PROF_GRAPH_SET, t_set);
    gs__nvtx_end();
    s->recaptures += s->graphs.refused - refused;
    gs__seg_cost_add(s, 0, 0, s->graphs.update_ns - update_ns);
    if (!e) {
        s->recaptures++;
    } else if (set > 0) {
        t->runs.patched++;
        s->patched_launches_w++;
        s->nodes_patched_w += set;
        gs__seg_cost_add(s, 0, set, 0);
    }
    return e;
}

/* Launches the held ops up to node t (those past s->chunk_depth) as one graph:
** its graph as it is, or with the nodes of ops whose arguments differ set in
** place, or, where it has none yet (or one that is stale, of
** another range, or cannot take the change in place), captured first, through
** gs__replay.  Returns GS_REPLAYED, or GS_REPLAY_FAILED if no graph could be
** made or launched, or GS_REPLAY_BUSY if it could not be captured now, or
** GS_REPLAY_NOT_KEPT (nothing was issued then): a segment held
** again after a stall launches only graphs kept for whole segments, beginning
** where its held ops do (chunk places that moved since its place was marked
** would otherwise make it capture graphs of its own, replacing theirs, and each
** whole segment after it capture theirs again).  what names the launch for NVTX
** (nvtx.h).  Called locked. */
enum gs_replay gs__launch_graph(struct gs_stream *s, struct gs_node *t, int what)
{
    GS_ASSERT_LOCKED(s);
    GS_PROF_START(t_all);
    CUstream st = gs__issue_stream(s);
    CUcontext prev;
    struct gs_exec *e = t->cache.exec;
    enum gs_replay rc = GS_REPLAYED;
    int cap = 0;
    uint32_t from = s->chunk_depth;
    uint64_t builds = s->graphs.builds;
    int patched = s->patch_first < s->npatches && s->patches[s->patch_first].depth < t->depth;

    if (t->depth == from)
        return GS_REPLAYED; /* everything already went out in chunks */
    if (s->seg.seg_resumed && (!e || e->from != from || gs__exec_stale(e)))
        return GS_REPLAY_NOT_KEPT;
    if (gs__enter_ctx(s, &prev) != 0)
        return GS_REPLAY_FAILED; /* no graph launched into another context: held work goes out eagerly */
    GS_PROF_START(t_set);
    if (e && (e->from != from || gs__exec_stale(e))) { /* its variants go too */
        gs__debug("a %u-op sequence's graph %s: it is built again", t->depth,
                  e->from != from ? "began at another op" : "copies to or from memory freed or allocated since");
        gs__graph_drop_exec(t, s);
        e = NULL;
        s->recaptures++;
    }
    if (!e || patched || e->ndiff) {
        /* A new graph, or one whose parameters may have to change. */
        struct gs_held h;
        if (gs__held_get(s, t, &h) != 0) {
            gs__leave_ctx(s, prev);
            return GS_REPLAY_FAILED;
        }
        if (e)
            e = exec_set(s, t, &h);
        if (!e) {
            gs__debug("ops %u-%u of a sequence: captured", from, t->depth - 1);
            gs__nvtx_begin(GS_NVTX_CAPTURE, t->depth - from);
            GS_PROF_RESTART(t_set);
            cap = gs__graph_capture(&s->graphs, t, h.path, h.keys, from);
            GS_PROF_STOP(GS_PROF_GRAPH_CAPTURE, t_set);
            gs__nvtx_end();
            e = t->cache.exec;
        }
        gs__held_free(&h);
    }
    GS_PROF_RESTART(t_set);
    if (GS_UNLIKELY(s->xs.open) && e && cap == 0)
        gs__xs_bridge_before(s, st); /* the members' earlier work first */
    uint32_t nops = t->depth - from;
    if (GS_UNLIKELY(s->xs.open))
        nops -= gs__xs_event_ops(t, from); /* a group's records and waits are no ops of the report's */
    if (!e || cap != 0 || gs__replay(s, e, st, what, nops) != GS_REPLAYED) {
        rc = cap == GS_CAPTURE_BUSY ? GS_REPLAY_BUSY : GS_REPLAY_FAILED;
    } else {
        if (GS_UNLIKELY(s->xs.open))
            gs__xs_bridge_after(s, st); /* the program's events, and the members' later work after it */
        gs__graph_used(t);
        t->rebuilt = s->graphs.builds != builds; /* the capture budget's */
        gs__seg_issued_to(s, t->depth);
        gs__patches_done(s, t->depth);
        if (e->reads_staging)
            staging_issued(s, st);
        GS_PROF_STOP(GS_PROF_GRAPH_LAUNCH, t_set);
    }
    if (rc == GS_REPLAYED)
        gs__issued_on(s, st);
    gs__leave_ctx(s, prev);
    GS_PROF_STOP(GS_PROF_GRAPH, t_all);
    return rc;
}

/* --- Flush --------------------------------------------------------------------- */

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
        gs__seg_held_out(s);
    }
    s->bails[reason]++;
    gs__seg_check(s);
}
