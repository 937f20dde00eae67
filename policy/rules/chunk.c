/*
** chunk.c: early chunks of held work (see chunk.h).
*/
#define GS_OWNS_CHUNK /* this file writes its rooms (state.h, GS_ROOM) */
#define _GNU_SOURCE
#include "chunk.h"

#include "../base/assert.h"
#include "../base/clock.h"
#include "../base/config.h"
#include "../stream/issue.h"
#include "../stream/segment.h"

/* Held work leaves the GPU idle while the host goes on issuing.  Early chunks
** shorten that wait: the ops held so far go out as a graph of their own and
** holding goes on after them.  Chunks end at the same places every time a
** sequence repeats, so their graphs are reused:
**   GRAPHSHIM_CHUNK_OPS=n  by count, at depths n, 2n, 4n, ... of the segment (each
**                          chunk as long as all before it), a handful of graph
**                          launches however long the sequence;
**   GRAPHSHIM_CHUNK_MAX=m  but where the host took more than 1 us per op to
**                          issue m ops after a chunk, twice in a row, a chunk
**                          ends there:
**                          a slow host runs about as fast as the GPU, which would
**                          otherwise wait at the end for the last, longest chunk,
**                          while a fast host keeps its few long chunks (more graph
**                          launches cost a GPU that is busy anyway);
**   GRAPHSHIM_CHUNK_US=t   by time, where held ops have waited more than t twice
**                          at the same place;
** where a chunk ended at a place of the slow host (or of CHUNK_US) and was the
** segment's last, more than 2 * GS_TAIL_OPS ops before its end, one more chunk
** ends GS_TAIL_OPS ops before that end from then on: the last graph, which the
** GPU begins only at the boundary while the host waits, stays short (a slow
** host's GPU has caught up by then);
** but where a chunk was the segment's last and the host issued the rest of the
** segment in less than GS_CHUNK_MIN_NS, what the GPU gained by starting early
** was less than the graph launch cost it (about 1-2 us of GPU time each, bench's
** split rows): no chunk ends there any more, nor by count after it in the
** segment (tiny20 on a fast host: one graph, or 8 and 12 ops, instead of 8, 8
** and 4);
** and, whatever the settings, where the watchdog fired (watchdog.c).
** Called locked, after the op at s->cur was held. */
#define GS_SLOW_HOST_NS_PER_OP 1000
#define GS_TAIL_OPS 4
#define GS_CHUNK_MIN_NS 2000

/* The slow host's chunk length on s: GRAPHSHIM_CHUNK_MAX, or a power-of-two
** fraction of it where the GPU was still busy at the segments' ends (rule drain,
** below); never under GRAPHSHIM_CHUNK_OPS. */
static uint32_t chunk_limit(const struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    uint32_t m = (uint32_t)gs__cfg.chunk_max >> s->chunk_w.chunk_shift;

    return m > (uint32_t)gs__cfg.chunk_ops ? m : (uint32_t)gs__cfg.chunk_ops;
}

/* Rule drain may halve s's chunk length once more: to 4 ops at least, and to
** less than it is now (GRAPHSHIM_CHUNK_OPS may be the floor already). */
static int can_shorten(const struct gs_stream *s)
{
    return gs__cfg.chunk_max && (uint32_t)gs__cfg.chunk_max >> (s->chunk_w.chunk_shift + 1) >= 4 &&
           (uint32_t)gs__cfg.chunk_max >> s->chunk_w.chunk_shift > (uint32_t)gs__cfg.chunk_ops;
}

/* Does the GPU still run work of s?  1 busy, 0 done, -1 not asked: a
** cuStreamQuery of the stream, which another thread cannot name where s is a
** per-thread stream. */
static int gpu_query(struct gs_stream *s)
{
    CUcontext prev;
    CUresult rc;

    if (s->kind == GS_STREAM_PTDS && s->owner_tid != gs__tid())
        return -1;
    if (gs__enter_ctx(s, &prev) != 0)
        return -1;
    rc = GS_REAL(cuStreamQuery)(s->handle);
    gs__leave_ctx(s, prev);
    return rc == CUDA_ERROR_NOT_READY ? 1 : rc == CUDA_SUCCESS ? 0 : -1;
}

/* A chunk exists so that the GPU never waits for the host.  Where the GPU
** still runs the work that went out before (a cuStreamQuery, once a chunk's
** length of held ops: a microsecond against the tens the host took to issue
** them), another graph launch would only add its cost, and the held ops wait
** for nothing: chunks grow, by count (GRAPHSHIM_CHUNK_OPS's doubling), and a
** slow host's place becomes a chunk's end only where the GPU ran dry there,
** twice in a row (a decode step whose kernels each take longer than the host
** takes to issue them: 7 graphs a token, not 45).  A host slower than its GPU
** finds it idle at each such place, and its chunks stay the slow host's
** length. */
static int gpu_has_work(struct gs_stream *s)
{
    return !GS_DROPPED(GS_RULE_CHUNK_BUSY) && gpu_query(s) == 1;
}

static int chunk_ends_here(struct gs_stream *s, struct gs_node *c, uint32_t held)
{
    uint32_t limit = chunk_limit(s);

    if (c->depth == s->chunk_w.tail_at)
        return 1;
    if (gs__cfg.chunk_ops && held >= (uint32_t)gs__cfg.chunk_ops) {
        if (held >= s->chunk_depth)
            return 1;
        if (gs__cfg.chunk_max && held == limit) {
            /* Two slow passes in a row: a fast host that stalls once in a while
            ** (descheduled) keeps its few long chunks; and a GPU still running
            ** what went out before (rule chunk-busy) keeps its long chunks too. */
            if (c->chunk.chunk_votes < 2) {
                if (gs__now_ns() - s->chunk_since < (uint64_t)held * GS_SLOW_HOST_NS_PER_OP || gpu_has_work(s)) {
                    c->chunk.chunk_votes = 0;
                    return 0;
                }
                if (++c->chunk.chunk_votes < 2)
                    return 0;
            }
            s->chunk_w.chunk_slow = 1; /* a chunk by the slow host's length (rule drain) */
            return 1;
        }
    }
    if (!gs__cfg.chunk_us)
        return 0;
    if (c->chunk.chunk_votes >= 2)
        return 1;
    if (held & 3)
        return 0; /* the clock is read every fourth held op */
    return gs__now_ns() - s->chunk_since >= (uint64_t)gs__cfg.chunk_us * 1000u && ++c->chunk.chunk_votes >= 2;
}

/* The segment's ops up to c went out, and the next chunk begins after c: as
** after a chunk that ended at c, the last graph is kept short from there (rule
** short-tail), and c learns how far the segment's end is (gs__chunks_end); and,
** where a chunk's graph was launched at c (launched), how long the host issued
** after it (rule chunk-idle; not timed from ops that went out eagerly, or from
** where holding resumed, one op later than a chunk would have gone out). */
static void chunk_placed(struct gs_stream *s, struct gs_node *c, int launched)
{
    s->chunk_w.last_chunk = c->depth;
    s->chunk_w.last_chunk_ns = launched ? gs__now_ns() : 0;
    if (c->chunk.chunk_votes >= 2 && c->chunk.chunk_tail > 2 * GS_TAIL_OPS && !GS_DROPPED(GS_RULE_SHORT_TAIL))
        s->chunk_w.tail_at = c->depth + c->chunk.chunk_tail - GS_TAIL_OPS;
}

/* Launches the held ops up to c as an early chunk: what gs__launch_graph did
** (nothing went out where it did not replay). */
static enum gs_replay launch_chunk(struct gs_stream *s, struct gs_node *c)
{
    uint64_t t0 = gs__now_ns();
    enum gs_replay rc = gs__launch_graph(s, c, GS_NVTX_CHUNK);
    if (rc == GS_REPLAYED) {
        uint64_t d = gs__now_ns() - t0;
        s->chunk_w.chunk_cost_ns = s->chunk_w.chunk_cost_ns ? (3 * s->chunk_w.chunk_cost_ns + d) / 4 : d;
        s->chunks_w++;
        c->chunk.chunk_end = 1;
        chunk_placed(s, c, 1);
    } else if (rc == GS_REPLAY_NOT_KEPT) {
        chunk_placed(s, c, 0); /* its ops go out eagerly (gs__maybe_chunk) */
    } else if (rc == GS_REPLAY_FAILED) {
        c->chunk.chunk_failed = 1; /* its ops go out eagerly (gs__maybe_chunk), and from now on */
        s->bails[GS_BAIL_GRAPH_FAILED]++;
    }
    return rc;
}

void gs__chunks_resumed(struct gs_stream *s, struct gs_node *c)
{
    GS_ASSERT_LOCKED(s);
    gs__seg_issued_to(s, c->depth);
    chunk_placed(s, c, 0);
}

void gs__chunks_end(struct gs_stream *s, struct gs_node *end, uint64_t end_ns)
{
    GS_ASSERT_LOCKED(s);
    if (end && s->chunk_w.last_chunk && end->depth > s->chunk_w.last_chunk) {
        struct gs_node *c = end;
        while (c->depth > s->chunk_w.last_chunk)
            c = c->parent;
        c->chunk.chunk_tail = end->depth - s->chunk_w.last_chunk;
        if (s->chunk_w.last_chunk_ns && end_ns - s->chunk_w.last_chunk_ns < GS_CHUNK_MIN_NS && !GS_DROPPED(GS_RULE_CHUNK_IDLE))
            c->chunk.chunk_idle = 1;
    }
    gs__seg_issued_to(s, 0);
    s->chunk_w.last_chunk = 0;
    s->chunk_w.tail_at = 0;
    s->chunks_off_w = 0;
    s->chunk_w.chunk_slow = 0;
}

void gs__maybe_chunk(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    struct gs_node *c = s->cur;
    uint32_t held = c->depth - s->chunk_depth;

    /* A place where the watchdog fired sends out what is held whatever its count
    ** (a single op eagerly). */
    if (s->xs.open)
        return; /* a group's graph joins its members: whole segments only */
    if (!GS_WATCHDOG_CUT(c)) {
        if (held < 2 || c->chunk.chunk_failed || s->chunks_off || !chunk_ends_here(s, c, held))
            return;
        if (c->chunk.chunk_idle) {
            s->chunks_off_w = 1;
            return;
        }
    }
    if (held < 2 || c->chunk.chunk_failed || launch_chunk(s, c) != GS_REPLAYED)
        gs__issue_held(s, c);
    gs__held_none(s);
}

/* --- Rule drain ---------------------------------------------------------------
** Holding delays the GPU: a chunk's kernels begin only when the chunk goes out.
** Where the GPU runs nearly as long as the host takes to issue (ResNet-18 at
** batch 1: about 18 us of GPU time an op against 24 of the host's), it is still
** running the last chunks when the segment ends, and the synchronize waits for
** up to 16 ops of GPU time that eager work would have run while the host issued.
** Shorter chunks shorten that
** wait and cost graph launches (for n ops, a chunk every k, L of host time a
** launch and g of GPU time an op, the wait k * g and the launches n * L / k
** cost least at k^2 = n * L / g: 6 for resnet18, 15 for a PyTorch training step
** whose GPU idles).  So where a segment's chunks ended by the slow host's length
** and it ended at a synchronize (of the stream, or of its context), a GPU still
** busy with them when the last graph went out (a cuStreamQuery before its
** launch), whose synchronize then waited at least two chunk launches, votes for
** chunks half as long, and two such votes in a row halve them, down to 4 ops and
** GRAPHSHIM_CHUNK_OPS (16 to 8 by default).  A GPU that keeps up is idle at the
** end, whatever its wait.  Chunks never grow back: a segment whose GPU is busy
** at one synchronize and idle at the next would flip between two lengths and
** capture its chunks' graphs anew each time. */

int gs__chunks_gpu_busy(struct gs_stream *s, int reason)
{
    GS_ASSERT_LOCKED(s);
    if (!s->chunk_w.chunk_slow || reason != GS_BAIL_BOUNDARY + GS_SYNC || !can_shorten(s) || GS_DROPPED(GS_RULE_DRAIN))
        return -1;
    return gpu_query(s);
}

void gs__chunks_drain_start(struct gs_stream *s, int busy)
{
    s->chunk_w.drain_from = busy >= 0 ? gs__now_ns() : 0;
    s->chunk_w.drain_busy = busy > 0;
}

void gs__chunks_synced(struct gs_stream *s, int waited)
{
    GS_ASSERT_LOCKED(s);
    uint64_t d;

    if (!s->chunk_w.drain_from || !waited)
        goto done;
    d = gs__now_ns() - s->chunk_w.drain_from;
    if (!s->chunk_w.drain_busy || d < 2 * s->chunk_w.chunk_cost_ns) {
        s->chunk_w.drain_votes = 0; /* votes in a row */
    } else if (++s->chunk_w.drain_votes >= 2) {
        if (can_shorten(s))
            s->chunk_w.chunk_shift++;
        s->chunk_w.drain_votes = 0;
    }
done:
    s->chunk_w.drain_from = 0;
}

void gs__chunks_forget(struct gs_stream *s)
{
    GS_ASSERT_LOCKED(s);
    s->chunk_w.chunk_shift = 0;
    s->chunk_w.drain_votes = 0;
    s->chunk_w.drain_from = 0;
    s->chunk_w.chunk_cost_ns = 0;
}
