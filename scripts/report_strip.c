/*
** report_strip.c: a learned step of the picture (report_svg.c): a sequence's
** or a loop body's ops as a strip.
**
** A sequence's strip has its ops in order (the report's "shape": a letter per
** op, "|" where an early chunk ended), each colored by how the sequence's
** replays ran it: in an early chunk, in the last graph, or eagerly where it
** never replayed; a black tick marks each chunk boundary.  Up to BOX_MAX ops a
** strip draws a box per op with its kind's letter; a longer one is drawn to
** scale: a rectangle per run of one color, its kinds in bins (a bin shows a
** copy or a memset where it holds one), its chunk boundaries as ticks,
** labelled with their op numbers where there is room.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_svg.h"

/* A sequence's ops: kinds[i] the letter of op i (NULL: the report has none),
** ends[] the op counts after which an early chunk ended, ascending. */
struct shape {
    long long n;
    const char *kinds;
    char *own;
    long long *ends;
    int nends;
};

static const char *kind_color(char k)
{
    return k == 'K' ? C_KERNEL : k == 'S' ? C_SET : C_COPY;
}

/* Sequence q's shape: from its "shape" where it has one that agrees with its
** "ops", else its length alone. */
static void shape_of(const struct jv *q, struct shape *s)
{
    const char *sh = str_of(q, "shape", NULL);
    long long k = 0;

    memset(s, 0, sizeof *s);
    s->n = count0(q, "ops");
    if (!sh || !(s->own = malloc(strlen(sh) + 1)) || !(s->ends = malloc((strlen(sh) + 1) * sizeof *s->ends)))
        return;
    for (const char *p = sh; *p; p++) {
        if (*p == '|' && k > 0 && k < s->n && (!s->nends || s->ends[s->nends - 1] < k))
            s->ends[s->nends++] = k;
        else if (strchr("KUDCS", *p) && *p)
            s->own[k++] = *p;
    }
    if (k == s->n)
        s->kinds = s->own;
    else
        s->nends = 0; /* a shape of another length: not this sequence's */
}

/* Op i's color: eager where the replays did not run it (ran 0), an early
** chunk's before split, else the last graph's. */
static const char *op_color(long long i, long long split, int ran)
{
    return !ran ? C_EAGER : i < split ? C_CHUNK : C_GRAPH;
}

/* A strip of at most BOX_MAX ops, a box each, at y. */
static void strip_boxes(FILE *f, int y, const struct shape *s, long long split, int ran)
{
    double bw = (double)STRIP_W / (double)s->n;

    if (bw > BOX_W_MAX)
        bw = BOX_W_MAX;
    for (long long i = 0; i < s->n; i++) {
        double x = X0 + bw * (double)i;
        svg_rect(f, x, y, bw > 4 ? bw - 1 : bw, STRIP_H, op_color(i, split, ran));
        if (!s->kinds)
            continue;
        svg_rect(f, x, y + STRIP_H + 1, bw > 4 ? bw - 1 : bw, KIND_H, kind_color(s->kinds[i]));
        if (bw >= 10)
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"op\">%c</text>\n", x + bw / 2 - 0.5, y + 15, s->kinds[i]);
    }
    for (int e = 0; e < s->nends; e++)
        fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"2\" height=\"%d\" fill=\"#000\"/>\n",
                X0 + bw * (double)s->ends[e] - 1.5, y - 3, STRIP_H + KIND_H + 5);
    svg_text(f, X0, y + STRIP_H + KIND_H + 13, "class=\"small\"", "op 1");
    if (s->n > 1)
        svg_text(f, (int)(X0 + bw * (double)s->n) - 4, y + STRIP_H + KIND_H + 13,
                 "class=\"small\" text-anchor=\"end\"", "op %lld", s->n);
}

/* Kinds of a long strip in bins of about 2 px: a copy where the bin holds one,
** else a memset where it holds one, else a kernel; a rectangle per run. */
static void kind_bins(FILE *f, int y, const struct shape *s)
{
    int nb = STRIP_W / 2, from = 0;
    const char *run = NULL;

    for (int b = 0; b <= nb; b++) {
        const char *c = NULL;
        if (b < nb) {
            long long lo = s->n * b / nb, hi = s->n * (b + 1) / nb > lo ? s->n * (b + 1) / nb : lo + 1;
            int copy = 0, set = 0;
            for (long long i = lo; i < hi; i++)
                copy |= strchr("UDC", s->kinds[i]) != NULL, set |= s->kinds[i] == 'S';
            c = copy ? C_COPY : set ? C_SET : C_KERNEL;
        }
        if (run && c != run) {
            svg_rect(f, X0 + 2.0 * from, y, 2.0 * (b - from), KIND_H, run);
            from = b;
        }
        run = c;
    }
}

/* A strip of more than BOX_MAX ops, to scale, at y. */
static void strip_scaled(FILE *f, int y, const struct shape *s, long long split, int ran)
{
    double px = (double)STRIP_W / (double)s->n, last = -100, label = X0;

    if (ran && split)
        svg_rect(f, X0, y, px * (double)split, STRIP_H, C_CHUNK);
    svg_rect(f, X0 + px * (double)(ran ? split : 0), y, px * (double)(s->n - (ran ? split : 0)), STRIP_H,
         ran ? C_GRAPH : C_EAGER);
    if (s->kinds)
        kind_bins(f, y + STRIP_H + 1, s);
    for (int e = 0; e < s->nends; e++) {
        double x = X0 + px * (double)s->ends[e];
        if (x - last >= 3) {
            fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"2\" height=\"%d\" fill=\"#000\"/>\n", x - 1, y - 3,
                    STRIP_H + KIND_H + 5);
            last = x;
        }
        if (x - label >= 44 && x < X0 + STRIP_W - 60) {
            svg_text(f, (int)x, y + STRIP_H + KIND_H + 13, "class=\"small\" text-anchor=\"middle\"", "%lld", s->ends[e]);
            label = x;
        }
    }
    svg_text(f, X0, y + STRIP_H + KIND_H + 13, "class=\"small\"", "op 1");
    svg_text(f, X0 + STRIP_W, y + STRIP_H + KIND_H + 13, "class=\"small\" text-anchor=\"end\"",
         "op %lld (to scale: %.1f ops a pixel)", s->n, 1 / px);
}

/* Counts of each kind in s, as words (" (8 kernels, 1 copy)"; "" where s has
** no kinds). */
static void kinds_said(const struct shape *s, char *out, size_t size)
{
    long long n[3] = {0, 0, 0};
    static const char *const one[] = {"kernel", "copy", "memset"}, *const many[] = {"kernels", "copies", "memsets"};
    size_t len = 0;

    out[0] = '\0';
    for (long long i = 0; s->kinds && i < s->n; i++)
        n[s->kinds[i] == 'K' ? 0 : s->kinds[i] == 'S' ? 2 : 1]++;
    for (int k = 0; s->kinds && k < 3 && len < size; k++)
        if (n[k])
            len += (size_t)snprintf(out + len, size - len, "%s%lld %s", len ? ", " : " (", n[k],
                                    n[k] == 1 ? one[k] : many[k]);
    if (len && len < size - 1)
        strcat(out, ")");
}

void draw_sequence(FILE *f, int *y, const struct jv *q)
{
    struct shape s;
    const struct jv *g = get(q, "graph");
    long long replays = count0(q, "replays"), seen = count0(q, "seen"), launches = count_of(q, "graph_launches");
    int failed = g && g->type == J_STR && strcmp(g->str, "failed") == 0, ran = replays > 0 && !failed;
    const char *state = !g ? "" : g->type == J_BOOL ? (g->boolean ? "graph alive" : "no graph at exit")
                        : failed ? "graph failed: runs eagerly" : "dropped (stream, context or module gone)";
    char kinds[128], runs[128];

    shape_of(q, &s);
    if (s.n <= 0) {
        free(s.own), free(s.ends);
        return;
    }
    /* Its replays' graph launches past one each were early chunks: the black
    ** ticks where such a chunk ended, and the ops before the last one drawn as
    ** chunks where most replays ran them so. */
    if (launches < 0) /* a report before graph_launches: one a replay, as far as it says */
        launches = replays;
    long long chunks = ran && launches > replays ? launches - replays : 0;
    long long split = chunks && s.nends && 2 * chunks >= replays ? s.ends[s.nends - 1] : 0;
    if (!chunks)
        s.nends = 0;
    kinds_said(&s, kinds, sizeof kinds);
    if (!replays)
        snprintf(runs, sizeof runs, "never replayed as a graph");
    else
        snprintf(runs, sizeof runs, chunks ? "replayed %lld as graphs, %lld eagerly; %lld graph launches, %lld of them "
                 "early chunks" : "replayed %lld as graphs, %lld eagerly; %lld graph launches",
                 replays, seen > replays ? seen - replays : 0, launches, chunks);
    svg_text(f, X0, *y + 12, "class=\"seq\"", "sequence of %lld ops%s: seen %lld, %s; %s", s.n, kinds, seen, runs,
             state);
    *y += LINE;
    if (s.n <= BOX_MAX)
        strip_boxes(f, *y, &s, split, ran);
    else
        strip_scaled(f, *y, &s, split, ran);
    *y += STRIP_H + KIND_H + 24;
    free(s.own), free(s.ends);
}

/* A loop body: its period's ops, all in graphs. */
void draw_body(FILE *f, int *y, const struct jv *q)
{
    struct shape s = {count0(q, "period"), NULL, NULL, NULL, 0};

    if (s.n <= 0 || s.n > BOX_MAX)
        return;
    svg_text(f, X0, *y + 12, "class=\"seq\"", "loop body of %lld ops: %lld graphs of %lld bodies or fewer, %lld ops replayed",
         s.n, count0(q, "graphs"), count0(q, "bodies_per_graph"), count0(q, "ops_replayed"));
    *y += LINE;
    strip_boxes(f, *y, &s, 0, 1);
    *y += STRIP_H + 24;
}

