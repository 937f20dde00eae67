/*
** release.c: graphshim's own memory given back when an allocation of the
** program's fails for want of memory (see release.h).  As PyTorch's caching
** allocator frees its cached blocks and tries again, graphshim frees its
** graphs and staging buffers, and the wrapper (interpose/shims.c) makes the
** program's call once more.
*/
#define _GNU_SOURCE
#include "release.h"

#include <time.h>

#include "../base/assert.h"
#include "../base/clock.h"
#include "../graph/graph_cache.h"
#include "body.h"
#include "issue.h"
#include "segment.h"

atomic_ulong gs__oom_retries, gs__oom_retries_ok, gs__oom_freed_bytes;

/* Streams whose graphs went, waited for after the walk (at most this many;
** the executables of others are freed by the driver when they end), for at
** most WAIT_NS: a stream may wait for the host (a stream memory operation, a
** host function) to do what it does after the failed allocation returns. */
#define SYNC_MAX 16
#define WAIT_NS 2000000000ull

struct released {
    unsigned freed;
    int staging_done;       /* the stream being walked: the GPU read its staging */
    uint64_t bytes;         /* staging buffers' sizes, then device memory back */
    int nsync;
    struct gs_stream *sync[SYNC_MAX];
};

/* Walk callback: n's executables and staging buffer go.  A sequence that had
** a graph is learned again: graphed anew once it came GRAPHSHIM_WARMUP times
** more, as a sequence pays for its graph at first. */
static void release_node(struct gs_node *n, void *arg)
{
    struct released *r = arg;

    if (n->cache.exec)
        gs__trie_relearn(n);
    if (n->staging && r->staging_done) {
        r->freed++;
        r->bytes += n->key.size;
        gs__graph_drop_node(n, NULL);
    } else {
        gs__graph_drop_exec(n, NULL);
    }
}

/* Called locked (gs__each_stream). */
static void release_stream(struct gs_stream *s, void *arg)
{
    GS_ASSERT_LOCKED(s);
    struct released *r = arg;
    struct gs_graph_stats g0, g1;
    unsigned before = r->freed;

    if (!s->ready)
        return;
    gs__graph_stats(&g0);
    if (s->holding)
        gs__flush(s, GS_BAIL_BOUNDARY + GS_ALLOC);
    gs__body_forget(s, 0);
    /* Staging buffers go only where the GPU has read them: waiting here could
    ** wait for the host. */
    r->staging_done = gs__staging_read(s);
    gs__trie_walk(&s->trie.root, release_node, r);
    gs__graph_stats(&g1);
    if (g0.alive > g1.alive)
        r->freed += (unsigned)(g0.alive - g1.alive);
    if (r->freed != before && s->ctx && r->nsync < SYNC_MAX)
        r->sync[r->nsync++] = s;
}

unsigned gs__release_memory(void)
{
    struct released r = {0, 0, 0, 0, {NULL}};
    size_t free0 = 0, free1 = 0, total;
    int measured;

    gs__tls.depth++;
    measured = GS_REAL(cuMemGetInfo_v2)(&free0, &total) == CUDA_SUCCESS;
    gs__each_stream(release_stream, &r);
    /* Outside the streams' locks: a host function the GPU waits for may need
    ** another thread's op on one of them. */
    for (uint64_t until = gs__now_ns() + WAIT_NS; r.nsync > 0 && gs__now_ns() < until;) {
        struct gs_stream *s = r.sync[r.nsync - 1];
        CUcontext prev;
        CUresult q = CUDA_ERROR_INVALID_CONTEXT; /* a stream this thread cannot ask is not waited for */
        if (gs__enter_ctx(s, &prev) == 0) {
            q = GS_REAL(cuStreamQuery)(gs__issue_stream(s));
            gs__leave_ctx(s, prev);
        }
        if (q != CUDA_ERROR_NOT_READY)
            r.nsync--;
        else
            nanosleep(&(struct timespec){0, 20000}, NULL);
    }
    if (r.freed) {
        if (measured && GS_REAL(cuMemGetInfo_v2)(&free1, &total) == CUDA_SUCCESS && free1 > free0)
            r.bytes += free1 - free0;
        atomic_fetch_add(&gs__oom_freed_bytes, r.bytes);
    }
    gs__tls.depth--;
    return r.freed;
}
