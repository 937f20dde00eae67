/*
** report.c: the report at exit (see report.h and docs/report.md).
**
** Totals, then per stream its counters and its stable sequences, as JSON (the
** text form is report_text.c).  Hit rate is ops replayed as part of a graph
** over ops seen by the engine; launches saved is driver calls avoided (a
** replay of an n-op sequence is one call instead of n).
*/
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphshim.h"

#include "../base/config.h"
#include "../base/log.h"
#include "../base/names.h"
#include "../base/outfile.h"
#include "../graph/graph_cache.h"
#include "../stream/body.h"
#include "../stream/release.h"
#include "../stream/stream.h"
#include "report_int.h"

/* Adds stream s's counters to the totals at arg. */
static void add_stream(struct gs_stream *s, void *arg)
{
    struct totals *t = arg;
    t->ops += s->ops_seen;
    t->held += s->ops_held;
    t->replayed += s->ops_replayed;
    t->replays += s->replays;
    t->replays_chunked += s->replays_chunked;
    t->chunks += s->chunks;
    t->patched += s->patched_launches;
    t->nodes_patched += s->nodes_patched;
    t->recaptures += s->recaptures;
    t->resumed += s->resumes;
    t->capture_ns += s->graphs.capture_ns;
    t->instantiate_ns += s->graphs.instantiate_ns;
    t->update_ns += s->graphs.update_ns;
    t->body_graphs += gs__body_graphs(s);
    t->evicted += s->trie.evicted;
    t->issue_errors += s->issue_errors;
    for (int b = 0; b < GS_NBAIL; b++)
        t->bails[b] += s->bails[b];
    t->nstreams++;
}

/* The totals over all streams, and the graph cache's counters.  graphshim's
** own calls are those made through GS_REAL, less the held ops it issued eagerly
** (held, not replayed): the program would have made those calls itself. */
static void collect(struct totals *t, struct gs_graph_stats *g)
{
    uint64_t all = atomic_load(&gs__own_calls);

    memset(t, 0, sizeof *t);
    gs__each_stream(add_stream, t);
    gs__graph_stats(g);
    t->own_calls = all > t->held - t->replayed ? all - (t->held - t->replayed) : 0;
}

/* --- JSON ------------------------------------------------------------------ */

static void json_bails(FILE *f, const uint64_t *bails)
{
    char buf[64];
    int first = 1;
    fprintf(f, "{");
    for (int b = 0; b < GS_NBAIL; b++) {
        if (!bails[b])
            continue;
        fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", gs__bail_name(b, buf, sizeof buf), (unsigned long long)bails[b]);
        first = 0;
    }
    fprintf(f, "}");
}

/* A sequence's times, each where it was measured: no key otherwise. */
static void json_times(FILE *f, const struct gs_seq_row *r)
{
    if (r->eager_ns)
        fprintf(f, ", \"eager_us\": %.1f", (double)r->eager_ns / 1e3);
    if (r->timed_replays)
        fprintf(f, ", \"replay_us\": %.1f", gs__seq_replay_us(r));
    if (r->eager_ns && r->timed_replays)
        fprintf(f, ", \"saved_us\": %.1f", gs__seq_saved_us(r));
}

/* The sequence ending at n, op by op from its first: a letter per op (K a
** kernel launch, U a copy to the device, D one to the host, C one within the
** device, S a memset, R an event record and W a wait of a group across
** streams), and "|" after each op where an early chunk ended. */
static void json_shape(FILE *f, const struct gs_node *n)
{
    char *b = malloc(2 * (size_t)n->depth + 1), *o;

    if (!b)
        return;
    o = b + 2 * (size_t)n->depth;
    *o = '\0';
    for (const struct gs_node *x = n; x && x->depth > 0; x = x->parent) {
        if (x->chunk.chunk_end && x != n)
            *--o = '|';
        *--o = "KUUDCSRW"[x->key.kind <= GS_OP_WAIT ? x->key.kind : 0];
    }
    fprintf(f, ", \"shape\": \"%s\"", o);
    free(b);
}

static void json_row(struct out *o, const struct gs_seq_row *r, const char *graph, const struct gs_node *n)
{
    if (o->nseq++ >= 32)
        return;
    fprintf(o->f, "%s\n        {\"ops\": %u, \"seen\": %u, \"replays\": %llu, \"launches_saved\": %llu, "
            "\"patched\": %llu, \"graph\": %s, \"graph_launches\": %llu, \"nodes_set\": %llu, "
            "\"graph_host_us\": %.1f, \"build_us\": %.1f",
            o->first ? "" : ",", r->ops, r->seen, (unsigned long long)r->replays,
            (unsigned long long)(r->replays * (r->ops - 1)), (unsigned long long)r->patched, graph,
            (unsigned long long)r->cost.graph_launches, (unsigned long long)r->cost.nodes_set,
            (double)r->cost.driver_ns / 1e3, (double)r->cost.build_ns / 1e3);
    json_times(o->f, r);
    fprintf(o->f, ", \"ended_by\": \"%s\", \"gain\": \"%s\"", ended_by(r), gain_word(r));
    if (n) {
        json_shape(o->f, n);
        fprintf(o->f, ", \"streams\": %d", seq_streams(n));
    }
    fputc('}', o->f);
    o->first = 0;
}

static void json_sequence(struct gs_node *n, void *arg)
{
    if (gs__trie_reported(n)) {
        struct gs_seq_row r = gs__seq_row(n);
        int failed = n->ungraphable && r.verdict != GS_VERDICT_NO_GAIN; /* not the gain check's drop */
        json_row(arg, &r, n->cache.exec ? "true" : failed ? "\"failed\"" : "false", n);
    }
}

static void json_body(void *arg, const struct gs_body_row *r)
{
    struct out *o = arg;
    fprintf(o->f, "%s{\"period\": %u, \"bodies_per_graph\": %u, \"graphs\": %llu, \"ops_replayed\": %llu}",
            o->first ? "" : ", ", r->period, r->per_graph, (unsigned long long)r->graphs,
            (unsigned long long)r->ops_replayed);
    o->first = 0;
}

static void json_stream(struct gs_stream *s, void *arg)
{
    struct out *o = arg;
    struct out seq = {o->f, 1, 0};
    char ctx[16] = "null";

    if (s->ctx_id >= 0)
        snprintf(ctx, sizeof ctx, "%d", s->ctx_id);
    fprintf(o->f, "%s\n    {\"id\": %d, \"stream\": \"%p\", \"kind\": \"%s\", \"ctx\": %s, \"ops\": %llu, "
            "\"ops_held\": %llu, \"ops_replayed\": %llu, \"replays\": %llu, \"chunks\": %llu, \"body_graphs\": %llu, "
            "\"launches_saved\": %lld, \"patched_launches\": %llu, \"nodes_patched\": %llu, \"hit_rate\": %.4f, "
            "\"warmup\": %ld, \"segments_rested\": %llu, \"groups\": %llu, \"group_streams_max\": %llu, "
            "\"bails\": ",
            o->first ? "" : ",", s->id, (void *)s->handle, kind_name(s), ctx, (unsigned long long)s->ops_seen,
            (unsigned long long)s->ops_held, (unsigned long long)s->ops_replayed, (unsigned long long)s->replays,
            (unsigned long long)s->chunks, (unsigned long long)gs__body_graphs(s),
            /* negative where graph launches replaced only a group's records and waits (no ops) */
            (long long)(s->ops_replayed - (s->replays - s->replays_chunked) - s->chunks - gs__body_graphs(s)),
            (unsigned long long)s->patched_launches, (unsigned long long)s->nodes_patched,
            rate(s->ops_replayed, s->ops_seen), peak_warmup(s), (unsigned long long)s->rests.segments_rested,
            (unsigned long long)s->xs.groups, (unsigned long long)s->xs.streams_max);
    json_bails(o->f, s->bails);
    fprintf(o->f, ", \"sequences\": [");
    gs__trie_walk(&s->trie.root, json_sequence, &seq);
    for (uint32_t i = 0; i < s->nretired; i++)
        json_row(&seq, &s->retired[i], "\"dropped\"", NULL);
    fprintf(o->f, "%s], \"bodies\": [", seq.first ? "" : "\n      ");
    seq.first = 1;
    gs__body_rows(s, json_body, &seq);
    fprintf(o->f, "]}");
    o->first = 0;
}

static void write_json(FILE *f, const struct totals *t, const struct gs_graph_stats *g)
{
    struct out o = {f, 1, 0};
    const char *rank = gs__job_rank();
    char rbuf[16] = "null";

    if (strcmp(rank, "x") != 0) /* at most 9 digits, perhaps with leading zeros */
        snprintf(rbuf, sizeof rbuf, "%ld", strtol(rank, NULL, 10));
    fprintf(f, "{\n  \"engine\": %s,\n  \"rank\": %s,\n", gs__passthrough ? "false" : "true", rbuf);
    fprintf(f, "  \"totals\": {\"ops\": %llu, \"ops_held\": %llu, \"ops_replayed\": %llu, \"hit_rate\": %.4f, "
            "\"replays\": %llu, \"chunks\": %llu, \"body_graphs\": %llu, \"launches_saved\": %lld, "
            "\"own_calls\": %llu, \"net_calls_saved\": %lld, "
            "\"patched_launches\": %llu, \"nodes_patched\": %llu, \"recaptures\": %llu, \"resumed\": %llu, "
            "\"capture_us\": %llu, "
            "\"instantiate_us\": %llu, \"update_us\": %llu, \"graphs_captured\": %ld, "
            "\"graph_failures\": %ld, "
            "\"graphs_evicted\": %ld, \"graphs_alive\": %ld, \"learned_dropped\": %llu, \"issue_errors\": %llu, "
            "\"oom_retries\": %lu, \"oom_retries_ok\": %lu, \"oom_freed_bytes\": %lu, \"bails\": ",
            (unsigned long long)t->ops, (unsigned long long)t->held, (unsigned long long)t->replayed,
            rate(t->replayed, t->ops), (unsigned long long)t->replays, (unsigned long long)t->chunks,
            (unsigned long long)t->body_graphs, (long long)saved(t), (unsigned long long)t->own_calls,
            net_saved(t), (unsigned long long)t->patched,
            (unsigned long long)t->nodes_patched, (unsigned long long)t->recaptures, (unsigned long long)t->resumed,
            (unsigned long long)(t->capture_ns / 1000), (unsigned long long)(t->instantiate_ns / 1000),
            (unsigned long long)(t->update_ns / 1000), g->captured, g->failed, g->evicted, g->alive,
            (unsigned long long)t->evicted, (unsigned long long)t->issue_errors, atomic_load(&gs__oom_retries),
            atomic_load(&gs__oom_retries_ok), atomic_load(&gs__oom_freed_bytes));
    json_bails(f, t->bails);
    fprintf(f, "},\n  \"calls\": {");
    for (int c = GS_SYNC; c < GS_NCLASSES; c++)
        if (c != GS_PROC && c != GS_QUERY) /* not counted: they pass straight through */
            fprintf(f, "%s\"%s\": %ld", c > GS_SYNC ? ", " : "", gs__class_name(c),
                    atomic_load(&gs__calls_by_class[c]));
    fprintf(f, "},\n");
    gs__report_sites_json(f);
    fprintf(f, "  \"streams\": [");
    gs__each_stream(json_stream, &o);
    fprintf(f, "%s]\n}\n", o.first ? "" : "\n  ");
}

GS_EXPORT int gs_stats(struct gs_stats *st)
{
    struct totals t;
    struct gs_graph_stats g;

    memset(st, 0, sizeof *st);
    if (!atomic_load_explicit(&gs__ready, memory_order_acquire) || gs__passthrough)
        return -1;
    collect(&t, &g);
    st->ops = t.ops;
    st->ops_held = t.held;
    st->ops_replayed = t.replayed;
    st->replays = t.replays;
    st->graphs = (unsigned long long)g.captured;
    st->hit_rate = rate(t.replayed, t.ops);
    return 0;
}

char *gs__report_json(void)
{
    struct totals t;
    struct gs_graph_stats g;
    char *data = NULL;
    size_t len = 0;
    FILE *f;

    collect(&t, &g);
    if (!(f = open_memstream(&data, &len)))
        return NULL;
    write_json(f, &t, &g);
    if (fclose(f) != 0) {
        free(data);
        return NULL;
    }
    return data;
}

/* The report goes to GRAPHSHIM_REPORT through outfile.c, which writes it whole
** or not at all; it is built in memory first. */
int gs__report_write(void)
{
    struct totals t;
    struct gs_graph_stats g;
    char *data = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    collect(&t, &g);
    if (gs__cfg.log >= GS_LOG_INFO)
        gs__report_text(stderr, &t, &g);
    if (!gs__cfg.report)
        return 0;
    if (!(f = open_memstream(&data, &len))) {
        gs__warn("cannot write GRAPHSHIM_REPORT (%s): no memory for it", strerror(errno));
        return -1;
    }
    if (gs__out_is_json(GS_KNOB_report))
        write_json(f, &t, &g);
    else
        gs__report_text(f, &t, &g);
    if (fclose(f) != 0) {
        free(data);
        gs__warn("cannot write GRAPHSHIM_REPORT (%s): no memory for it", strerror(errno));
        return -1;
    }
    rc = gs__out_replace(GS_KNOB_report, data, len);
    free(data);
    return rc;
}
