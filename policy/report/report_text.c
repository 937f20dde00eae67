/*
** report_text.c: the report's text form, for people (GRAPHSHIM_REPORT not
** ending in .json, and the table on stderr at GRAPHSHIM_LOG=info): the totals,
** then a line per stream with its bails, sequences and loop bodies.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/names.h"
#include "../stream/body.h"
#include "../stream/release.h"
#include "../stream/sites.h"
#include "report_int.h"

/* --- Text ------------------------------------------------------------------ */

/* A time of us microseconds into buf, for people: in us below a millisecond. */
static const char *text_time(char *buf, size_t size, double us)
{
    int small = us > -1e3 && us < 1e3;

    snprintf(buf, size, small ? "%.1f us" : "%.1f ms", small ? us : us / 1e3);
    return buf;
}

static void text_row(struct out *o, const struct gs_seq_row *r, const char *graph, int streams)
{
    char host[32], built[32], eager[32] = "-", replay[32] = "-", saved[32] = "-"; /* "-": not measured */
    const char *gained = "saved";

    if (o->nseq++ >= 8)
        return;
    if (r->eager_ns)
        text_time(eager, sizeof eager, (double)r->eager_ns / 1e3);
    if (r->timed_replays)
        text_time(replay, sizeof replay, gs__seq_replay_us(r));
    if (r->eager_ns && r->timed_replays) {
        double us = gs__seq_saved_us(r);
        if (us < 0)
            gained = "lost", us = -us;
        saved[0] = '~'; /* an estimate */
        text_time(saved + 1, sizeof saved - 1, us);
    }
    fprintf(o->f, "      sequence of %4u ops: seen %6u, replayed %6llu, %s; %llu graph launches (%.1f a replay), "
            "%llu nodes set, %s in the driver, built in %s; ended by %s, gain %s; eager %s, replay %s, %s %s\n",
            r->ops, r->seen,
            (unsigned long long)r->replays, graph, (unsigned long long)r->cost.graph_launches,
            r->replays ? (double)r->cost.graph_launches / (double)r->replays : 0.0,
            (unsigned long long)r->cost.nodes_set, text_time(host, sizeof host, (double)r->cost.driver_ns / 1e3),
            text_time(built, sizeof built, (double)r->cost.build_ns / 1e3), ended_by(r), gain_word(r), eager, replay,
            gained, saved);
    if (streams > 1)
        fprintf(o->f, "        a group across %d streams: the stream's ops and its members', one graph\n", streams);
}

static void text_sequence(struct gs_node *n, void *arg)
{
    if (gs__trie_reported(n)) {
        struct gs_seq_row r = gs__seq_row(n);
        int failed = n->ungraphable && r.verdict != GS_VERDICT_NO_GAIN; /* not the gain check's drop */
        text_row(arg, &r, n->cache.exec ? "graph" : failed ? "graph failed" : "no graph", seq_streams(n));
    }
}

static void text_body(void *f, const struct gs_body_row *r)
{
    fprintf(f, "      loop body of %4u ops: %llu graphs of %u bodies or fewer, %llu ops replayed\n", r->period,
            (unsigned long long)r->graphs, r->per_graph, (unsigned long long)r->ops_replayed);
}

static void text_stream(struct gs_stream *s, void *arg)
{
    struct out *o = arg;
    struct out seq = {o->f, 1, 0};
    char buf[64];

    fprintf(o->f, "  stream %d %-14p %-10s ctx %2d  ops %9llu  replayed %9llu (%5.1f%%)  replays %7llu\n", s->id,
            (void *)s->handle, kind_name(s), s->ctx_id, (unsigned long long)s->ops_seen,
            (unsigned long long)s->ops_replayed, 100 * rate(s->ops_replayed, s->ops_seen), (unsigned long long)s->replays);
    if (s->budget.warmup_peak)
        fprintf(o->f, "      sequences graphed only after %ld times: its graphs were launched too few times to pay "
                "for building them (a capture, or an update for new arguments)\n", peak_warmup(s));
    if (s->rests.segments_rested)
        fprintf(o->f, "      %llu segments not learned: learning rested where the work did not repeat\n",
                (unsigned long long)s->rests.segments_rested);
    for (int b = 0; b < GS_NBAIL; b++)
        if (s->bails[b])
            fprintf(o->f, "      bailed out %6llu x  %s\n", (unsigned long long)s->bails[b],
                    gs__bail_name(b, buf, sizeof buf));
    if (s->xs.groups)
        fprintf(o->f, "      %llu groups across streams opened here (the origin), of up to %llu streams\n",
                (unsigned long long)s->xs.groups, (unsigned long long)s->xs.streams_max);
    gs__trie_walk(&s->trie.root, text_sequence, &seq);
    for (uint32_t i = 0; i < s->nretired; i++)
        text_row(&seq, &s->retired[i], "graph dropped (stream, context or module gone)", 0);
    gs__body_rows(s, text_body, o->f);
}

void gs__report_text(FILE *f, const struct totals *t, const struct gs_graph_stats *g)
{
    struct gs_site *sites;
    int nsites;
    struct out o = {f, 1, 0};
    char buf[64];

    fprintf(f, "graphshim report: engine %s\n", gs__passthrough ? "off (pass-through)" : "on");
    fprintf(f, "  ops %llu, replayed as graphs %llu: hit rate %.1f%%; %llu replays, %llu early chunks "
            "and %llu loop-body graphs saved %lld launches\n",
            (unsigned long long)t->ops, (unsigned long long)t->replayed, 100 * rate(t->replayed, t->ops),
            (unsigned long long)t->replays, (unsigned long long)t->chunks, (unsigned long long)t->body_graphs,
            (long long)saved(t));
    if (t->replays_chunked)
        fprintf(f, "  %llu of the replays launched no graph: their ops had all gone out in early chunks\n",
                (unsigned long long)t->replays_chunked);
    fprintf(f, "  driver calls: net %lld %s than without graphshim (%llu ops replayed made none; graphshim made "
            "%llu of its own: graph launches, node sets, captures, queries)\n",
            net_saved(t) < 0 ? -net_saved(t) : net_saved(t), net_saved(t) < 0 ? "more" : "fewer",
            (unsigned long long)t->replayed, (unsigned long long)t->own_calls);
    fprintf(f, "  graphs: %ld captured, %ld failed, %ld evicted, %ld alive\n", g->captured, g->failed,
            g->evicted, g->alive);
    if (t->patched)
        fprintf(f, "  %llu graph launches set new parameters in place first (%llu nodes set)\n",
                (unsigned long long)t->patched, (unsigned long long)t->nodes_patched);
    if (t->recaptures)
        fprintf(f, "  %llu graphs built again (stale, or a change that could not be made in place)\n",
                (unsigned long long)t->recaptures);
    if (t->resumed)
        fprintf(f, "  %llu segments held again after their held ops went out early\n", (unsigned long long)t->resumed);
    if (atomic_load(&gs__oom_retries))
        fprintf(f, "  out of memory: %lu allocations made again after graphshim freed %.1f MiB of its own, "
                "%lu of them succeeded\n", atomic_load(&gs__oom_retries),
                atomic_load(&gs__oom_freed_bytes) / 1048576.0, atomic_load(&gs__oom_retries_ok));
    fprintf(f, "  host time: capturing %.1f ms, instantiating %.1f ms, setting nodes %.1f ms\n",
            t->capture_ns / 1e6, t->instantiate_ns / 1e6, t->update_ns / 1e6);
    nsites = gs__sites_collect(&sites);
    for (int b = 0; b < GS_NBAIL; b++)
        if (t->bails[b]) {
            fprintf(f, "  bailed out %llu x  %s\n", (unsigned long long)t->bails[b], gs__bail_name(b, buf, sizeof buf));
            gs__report_sites_text(f, sites, nsites, b);
        }
    free(sites);
    fprintf(f, "  calls other than ops:");
    for (int c = GS_SYNC; c < GS_NCLASSES; c++)
        if (atomic_load(&gs__calls_by_class[c]))
            fprintf(f, " %s %ld", gs__class_name(c), atomic_load(&gs__calls_by_class[c]));
    fprintf(f, "\n");
    gs__each_stream(text_stream, &o);
}

