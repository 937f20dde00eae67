/*
** report_int.h: what the report's two forms share (report.c writes JSON,
** report_text.c the text): the totals over all streams, and small helpers.
*/
#ifndef GS_REPORT_INT_H
#define GS_REPORT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "../base/config.h"
#include "../base/names.h"
#include "../graph/graph_cache.h"
#include "../stream/stream.h"

struct totals {
    uint64_t ops, held, replayed, replays, chunks, body_graphs, patched, nodes_patched, issue_errors, evicted;
    uint64_t replays_chunked; /* replays that launched no graph: their ops went out in early chunks */
    uint64_t recaptures, resumed, capture_ns, instantiate_ns, update_ns;
    uint64_t bails[GS_NBAIL];
    uint64_t own_calls; /* graphshim's driver calls but the held ops it issued eagerly */
    int nstreams;
};

struct out {
    FILE *f;
    int first;   /* first element of the current list */
    int nseq;
};

/* Driver calls avoided: ops replayed, less the graph launches that replayed
** them (a replay whose ops all went out in early chunks launched none). */
static inline uint64_t saved(const struct totals *t)
{
    return t->replayed - (t->replays - t->replays_chunked) - t->chunks - t->body_graphs;
}

/* Driver calls the program's run made fewer than without graphshim (negative:
** more): the ops replayed, which made no call, less graphshim's own calls. */
static inline long long net_saved(const struct totals *t)
{
    return (long long)t->replayed - (long long)t->own_calls;
}

/* What ended a sequence's last segment: the boundary's class (a synchronize,
** an event record or wait, a host function, ...), or "other". */
static inline const char *ended_by(const struct gs_seq_row *r)
{
    return r->ended == GS_GAIN_END_STEP ? "step" : r->ended ? gs__class_name(r->ended - 1) : "other";
}

/* The gain check's word on a sequence's graph: it pays, it is on trial, it
** lost (no-gain: eager for good), its replays are being judged, or untimed. */
static inline const char *gain_word(const struct gs_seq_row *r)
{
    switch (r->verdict) {
    case GS_VERDICT_PAYS: return "pays";
    case GS_VERDICT_TRIAL: return "trial";
    case GS_VERDICT_NO_GAIN: return "no-gain";
    default: return r->timed_replays ? "judging" : "untimed";
    }
}

static inline double rate(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* The highest warmup the capture budget raised the stream's to (a reset at the
** program's end starts it over). */
static inline long peak_warmup(const struct gs_stream *s)
{
    return gs__cfg.warmup << s->budget.warmup_peak;
}

/* The streams the sequence ending at n spans: its stream, and each member of a
** group across streams (stream/xs.h) one of its ops goes to (key.member). */
static inline int seq_streams(const struct gs_node *n)
{
    uint32_t members = 0;

    for (const struct gs_node *x = n; x && x->depth > 0; x = x->parent)
        if (x->key.member && x->key.member < 32)
            members |= 1u << x->key.member;
    return 1 + __builtin_popcount(members);
}

static inline const char *kind_name(const struct gs_stream *s)
{
    return s->kind == GS_STREAM_LEGACY ? "legacy" : s->kind == GS_STREAM_PTDS ? "per-thread" : "created";
}

struct gs_site;

/* The call sites of bails (report_sites.c): the top ones of each reason as the
** JSON report's "bail_sites" member (a line of its own, ending in a comma);
** and, for the text, the top ones of one reason, as lines. */
void gs__report_sites_json(FILE *f);
void gs__report_sites_text(FILE *f, const struct gs_site *sites, int n, int reason);

/* Writes the text form of the report to f. */
void gs__report_text(FILE *f, const struct totals *t, const struct gs_graph_stats *g);

#endif
