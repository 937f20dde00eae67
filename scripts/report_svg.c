/*
** report_svg.c: `graphshim report --svg FILE`: the reports as one SVG picture.
**
** Per report its totals; then per stream a bar of its ops by how they ran
** (replayed in a graph, held and then issued eagerly by a bail, never held),
** its bails, each with its reason and its top call site, and a strip per
** learned sequence and loop body (report_strip.c).  The picture is written to
** memory first (its height is known at the end).  Strings of the report are
** escaped for a terminal first (esc), then for XML.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_svg.h"

void svg_text(FILE *f, int x, int y, const char *style, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(f, "<text x=\"%d\" y=\"%d\" %s>", x, y, style);
    for (const char *p = esc(line); *p; p++) {
        if (*p == '&')
            fputs("&amp;", f);
        else if (*p == '<')
            fputs("&lt;", f);
        else if (*p == '>')
            fputs("&gt;", f);
        else
            fputc(*p, f);
    }
    fputs("</text>\n", f);
}

void svg_rect(FILE *f, double x, int y, double w, int h, const char *fill)
{
    fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n", x, y, w, h, fill);
}

const char *str_of(const struct jv *o, const char *key, const char *none)
{
    const struct jv *v = get(o, key);
    return v && v->type == J_STR ? v->str : none;
}

long long count0(const struct jv *o, const char *key)
{
    long long n = count_of(o, key);
    return n < 0 ? 0 : n;
}

/* The count a value holds, 0 where it holds none. */
static long long count_in_kid(const struct jv *v)
{
    return v->type != J_NUM || !v->is_uint ? 0 : v->u > (unsigned long long)(~0ull >> 1) ? (long long)(~0ull >> 1)
                                                                                           : (long long)v->u;
}

/* Bail reason r's top site in the report's bail_sites, as words ("" if none). */
static void site_of(const struct jv *report, const char *r, char *out, size_t size)
{
    const struct jv *list = get(get(report, "bail_sites"), r), *x, *k;

    out[0] = '\0';
    if (!list || list->type != J_ARR || !list->n || list->kids[0].type != J_OBJ)
        return;
    x = &list->kids[0];
    k = get(x, "kernels");
    snprintf(out, size, " at %s (%s)%s%s%s%s", str_of(x, "site", "?"), str_of(x, "object", "?"),
             k && k->type == J_ARR && k->n > 0 && k->kids[0].type == J_STR ? ", after " : "",
             k && k->type == J_ARR && k->n > 0 && k->kids[0].type == J_STR ? k->kids[0].str : "",
             k && k->type == J_ARR && k->n > 1 && k->kids[1].type == J_STR ? ", " : "",
             k && k->type == J_ARR && k->n > 1 && k->kids[1].type == J_STR ? k->kids[1].str : "");
}

/* Stream s's bails, most first, a line each with a red mark. */
static void draw_bails(FILE *f, int *y, const struct jv *report, const struct jv *b)
{
    int shown = 0, n = b && b->type == J_OBJ ? b->n : 0;
    char *done = calloc((size_t)n + 1, 1), site[600];

    for (; done && shown < n && shown < MAX_BAILS; shown++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && (best < 0 || count_in_kid(&b->kids[i]) > count_in_kid(&b->kids[best])))
                best = i;
        done[best] = 1;
        site_of(report, b->keys[best], site, sizeof site);
        fprintf(f, "<path d=\"M%d %d l5 -9 l5 9 z\" fill=\"%s\"/>\n", X0, *y + 12, C_BAIL);
        svg_text(f, X0 + 14, *y + 12, "class=\"bail\"", "bailed %lld x %s%s", count_in_kid(&b->kids[best]), b->keys[best],
             site);
        *y += LINE;
    }
    if (n > shown)
        svg_text(f, X0 + 14, (*y += LINE) - 6, "class=\"small\"", "... %d more bail reasons", n - shown);
    free(done);
}

/* Stream s of report r: its line, the bar of its ops, its bails, its strips. */
static void draw_stream(FILE *f, int *y, const struct jv *r, const struct jv *s)
{
    long long ops = count0(s, "ops"), held = count0(s, "ops_held"), rep = count0(s, "ops_replayed");
    long long bailed = held > rep ? held - rep : 0, eager = ops > held ? ops - held : 0;
    const struct jv *seqs = get(s, "sequences"), *bodies = get(s, "bodies"), *ctx = get(s, "ctx");
    double px = ops ? (double)STRIP_W / (double)ops : 0;
    char c[24] = "none";

    if (ctx && ctx->type == J_NUM && ctx->is_uint)
        snprintf(c, sizeof c, "%llu", ctx->u);

    svg_text(f, X0, *y + 14, "class=\"stream\"", "stream %lld %s (%s, ctx %s)", count0(s, "id"),
         str_of(s, "stream", "?"), str_of(s, "kind", "?"), c);
    *y += LINE;
    svg_text(f, X0, *y + 14, "class=\"total\"",
         "%lld ops: %lld replayed as graphs (%.1f%%), %lld bailed, %lld never held; "
         "%lld replays, %lld early chunks, %lld loop-body graphs, %lld launches saved", ops, rep, ops ? 100.0 * rep / ops : 0.0,
         bailed, eager, count0(s, "replays"), count0(s, "chunks"), count0(s, "body_graphs"),
         count0(s, "launches_saved"));
    *y += LINE + 4;
    svg_rect(f, X0, *y, px * (double)rep, 12, C_GRAPH);
    svg_rect(f, X0 + px * (double)rep, *y, px * (double)bailed, 12, C_BAIL);
    svg_rect(f, X0 + px * (double)(rep + bailed), *y, px * (double)eager, 12, C_EAGER);
    *y += 18;
    draw_bails(f, y, r, get(s, "bails"));
    *y += 6;
    for (int i = 0; seqs && seqs->type == J_ARR && i < seqs->n; i++)
        draw_sequence(f, y, &seqs->kids[i]);
    for (int i = 0; bodies && bodies->type == J_ARR && i < bodies->n; i++)
        draw_body(f, y, &bodies->kids[i]);
    *y += 10;
}

/* Report r (file): its totals, then its streams. */
static void draw_report(FILE *f, int *y, const struct jv *r, const char *file)
{
    const struct jv *t = get(r, "totals"), *streams = get(r, "streams"), *e = get(r, "engine");
    long long ops = count0(t, "ops"), rep = count0(t, "ops_replayed"), bails = 0;

    for (int i = 0; get(t, "bails") && get(t, "bails")->type == J_OBJ && i < get(t, "bails")->n; i++)
        bails += count_in_kid(&get(t, "bails")->kids[i]);
    svg_text(f, X0, *y + 16, "class=\"title\"", "graphshim report: %s (engine %s)", file,
         e && e->type == J_BOOL && e->boolean ? "on" : "off: pass-through");
    svg_text(f, X0, *y + 36, "class=\"total\"",
         "ops %lld, replayed as graphs %lld: hit rate %.1f%%; %lld replays, %lld early chunks and %lld loop-body "
         "graphs saved %lld launches", ops, rep, ops ? 100.0 * rep / ops : 0.0, count0(t, "replays"),
         count0(t, "chunks"), count0(t, "body_graphs"), count0(t, "launches_saved"));
    svg_text(f, X0, *y + 54, "class=\"total\"", "graphs: %lld captured, %lld failed, %lld evicted, %lld alive; %lld bails",
         count0(t, "graphs_captured"), count0(t, "graph_failures"), count0(t, "graphs_evicted"),
         count0(t, "graphs_alive"), bails);
    *y += 70;
    for (int i = 0; streams && streams->type == J_ARR && i < streams->n && i < MAX_STREAMS; i++)
        if (streams->kids[i].type == J_OBJ)
            draw_stream(f, y, r, &streams->kids[i]);
    if (streams && streams->type == J_ARR && streams->n > MAX_STREAMS)
        svg_text(f, X0, (*y += LINE) - 4, "class=\"small\"", "... %d more streams (graphshim report lists them)",
             streams->n - MAX_STREAMS);
}

/* The colors' key, a line at *y. */
static void legend(FILE *f, int *y)
{
    static const char *const key[][2] = {
        {C_GRAPH, "replayed in a graph"}, {C_CHUNK, "early chunk"}, {C_EAGER, "eager (not replayed)"},
        {C_BAIL, "bailed (held, then issued eagerly)"}, {C_KERNEL, "K kernel"}, {C_COPY, "U D C copy"},
        {C_SET, "S memset"}, {"#000", "chunk boundary"}};
    int x = X0;

    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        svg_rect(f, x, *y + 2, i == 7 ? 3 : 12, 12, key[i][0]);
        svg_text(f, x + 16, *y + 13, "class=\"small\"", "%s", key[i][1]);
        x += 34 + 6 * (int)strlen(key[i][1]);
    }
    *y += 28;
}

int gs_svg_write(const char *path, const struct jv *const *reports, const char *const *files, int n)
{
    char *body = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&body, &len), *out;
    int y = 12;

    if (!m) {
        fprintf(stderr, "graphshim report: out of memory\n");
        return -1;
    }
    legend(m, &y);
    for (int i = 0; i < n; i++)
        draw_report(m, &y, reports[i], files[i]);
    fclose(m);
    out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (out) {
        fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
                     "<style>text { font-family: 'DejaVu Sans', Verdana, sans-serif; font-size: 12px; fill: #212121 }\n"
                     ".title { font-size: 16px; font-weight: bold } .total { font-size: 13px }\n"
                     ".stream { font-size: 13px; font-weight: bold } .bail { fill: #b71c1c }\n"
                     ".small { font-size: 10px } .op { font-size: 11px; fill: #fff; text-anchor: middle }</style>\n"
                     "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n%s</svg>\n",
                WIDTH, y + 8, WIDTH, y + 8, body);
    }
    free(body);
    if (!out || (out != stdout ? fclose(out) : fflush(out)) != 0) {
        fprintf(stderr, "graphshim report: cannot write %s (%s)\n", esc(path), strerror(errno));
        return -1;
    }
    return 0;
}

