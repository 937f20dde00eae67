/*
** report.c: graphshim-report, the program behind `graphshim report`.
**
**   graphshim report [--json] [--check CHECK]... [--svg FILE] FILE|FOLDER|-...
**
** Reads graphshim's JSON reports (docs/report.md; one per process) and prints,
** for all of them together: the totals, the streams and the sequences ranked by
** launches saved, and the bail reasons ranked by count, each with a line on what
** it means and what helps.  A FOLDER stands for every *.json file in it (a job's
** reports), - for standard input.  Where there are several reports, or a folder,
** a job's summary follows the totals: a row per report (its rank, hit rate,
** launches saved, graphs and bails) and the rank that gains least, with its top
** bail reasons.  --json prints a single report unchanged, or for several (or a
** folder) their summed totals, calls and bails and the job's rows as one JSON
** object.  --check prints only the checks that fail (../policy/base/check.h),
** exit status 1 if any does.  --svg draws the reports as a picture instead of
** the table (report_svg.c).  A file named twice (or by a folder and by name)
** counts once.
**
** The file is divided into: a small JSON reader (the whole grammar, strict, with
** line and column in its errors), the sum of the reports, the job's rows, the
** table, the JSON output, reading the input, and main.  Exit status: 0; 1 when a
** check fails; 2 on bad usage, a bad check, or an input that cannot be read or
** is not a graphshim report (a file of a folder that is none is skipped).
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../policy/base/check.h"
#include "report.h"

/* --- JSON reader ------------------------------------------------------------ */

struct parser {
    const char *s, *p, *file;
    int depth;
    char err[256];
};

#define MAX_DEPTH 64

static int fail(struct parser *ps, const char *fmt, ...)
{
    int line = 1, col = 1;
    va_list ap;
    char msg[160];

    if (ps->err[0])
        return -1;
    for (const char *q = ps->s; q < ps->p; q++) {
        if (*q == '\n')
            line++, col = 1;
        else
            col++;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, sizeof ps->err, "%s:%d:%d: not valid JSON: %s%s", esc(ps->file), line, col,
             *ps->p ? "" : "the file ends early: ", msg);
    return -1;
}

static void skip_ws(struct parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static void *grow(void *a, int *cap, int n, size_t size)
{
    if (n < *cap)
        return a;
    *cap = *cap ? 2 * *cap : 8;
    a = realloc(a, (size_t)*cap * size);
    if (!a) {
        fprintf(stderr, "graphshim report: out of memory\n");
        exit(1);
    }
    return a;
}

static void put_utf8(char **o, unsigned c)
{
    if (c < 0x80) {
        *(*o)++ = (char)c;
    } else if (c < 0x800) {
        *(*o)++ = (char)(0xc0 | c >> 6);
        *(*o)++ = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        *(*o)++ = (char)(0xe0 | c >> 12);
        *(*o)++ = (char)(0x80 | (c >> 6 & 0x3f));
        *(*o)++ = (char)(0x80 | (c & 0x3f));
    } else {
        *(*o)++ = (char)(0xf0 | c >> 18);
        *(*o)++ = (char)(0x80 | (c >> 12 & 0x3f));
        *(*o)++ = (char)(0x80 | (c >> 6 & 0x3f));
        *(*o)++ = (char)(0x80 | (c & 0x3f));
    }
}

static int hex4(struct parser *ps, unsigned *c)
{
    *c = 0;
    for (int i = 0; i < 4; i++) {
        char h = *ps->p++;
        *c <<= 4;
        if (h >= '0' && h <= '9')
            *c |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f')
            *c |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
            *c |= (unsigned)(h - 'A' + 10);
        else
            return ps->p--, fail(ps, "bad \\u escape in a string");
    }
    return 0;
}

/* Parses a string at ps->p (at its opening quote) into a new NUL-terminated buffer. */
static int parse_string(struct parser *ps, char **out)
{
    const char *q = ++ps->p;
    char *buf, *o;

    while (*q && *q != '"')
        q += *q == '\\' && q[1] ? 2 : 1;
    if (!*q)
        return fail(ps, "unterminated string");
    buf = o = malloc((size_t)(q - ps->p) + 1);
    while (*ps->p != '"') {
        unsigned char ch = (unsigned char)*ps->p;
        if (ch < 0x20) {
            free(buf);
            return fail(ps, "control character in a string");
        }
        if (ch != '\\') {
            *o++ = *ps->p++;
            continue;
        }
        ps->p++;
        switch (*ps->p++) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned c;
            if (hex4(ps, &c) != 0) {
                free(buf);
                return -1;
            }
            put_utf8(&o, c); /* 6 bytes of escape make at most 3 of UTF-8 */
            break;
        }
        default:
            ps->p--;
            free(buf);
            return fail(ps, "bad escape in a string");
        }
    }
    ps->p++;
    *o = '\0';
    *out = buf;
    return 0;
}

static int parse_number(struct parser *ps, struct jv *v)
{
    const char *start = ps->p;
    char *end;
    int integer = 1;

    if (*ps->p == '-')
        ps->p++;
    if (*ps->p == '0')
        ps->p++;
    else if (*ps->p >= '1' && *ps->p <= '9')
        while (*ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    else
        return fail(ps, "expected a value");
    if (*ps->p == '.') {
        integer = 0;
        ps->p++;
        if (*ps->p < '0' || *ps->p > '9')
            return fail(ps, "expected a digit after '.'");
        while (*ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (*ps->p == 'e' || *ps->p == 'E') {
        integer = 0;
        ps->p++;
        if (*ps->p == '+' || *ps->p == '-')
            ps->p++;
        if (*ps->p < '0' || *ps->p > '9')
            return fail(ps, "expected a digit in an exponent");
        while (*ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    v->type = J_NUM;
    v->num = strtod(start, NULL);
    if (integer && *start != '-') {
        errno = 0;
        v->u = strtoull(start, &end, 10);
        v->is_uint = errno == 0;
    }
    return 0;
}

static int parse_value(struct parser *ps, struct jv *v);

/* An array or object, at its opening bracket. */
static int parse_container(struct parser *ps, struct jv *v, int obj)
{
    char close = obj ? '}' : ']';

    if (++ps->depth > MAX_DEPTH)
        return fail(ps, "nested deeper than %d", MAX_DEPTH);
    v->type = obj ? J_OBJ : J_ARR;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (obj) {
            if (*ps->p != '"')
                return fail(ps, "expected a string key in an object");
            if (parse_string(ps, &key) != 0)
                return -1;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                return fail(ps, "expected ':' after a key");
            }
            ps->p++;
        }
        if (v->n == v->cap) {
            v->kids = grow(v->kids, &v->cap, v->n, sizeof *v->kids);
            if (obj) /* keys have the kids' capacity */
                v->keys = realloc(v->keys, (size_t)v->cap * sizeof *v->keys);
        }
        if (obj)
            v->keys[v->n] = key;
        memset(&v->kids[v->n], 0, sizeof v->kids[v->n]);
        if (parse_value(ps, &v->kids[v->n++]) != 0)
            return -1;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return fail(ps, obj ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
    }
}

static int parse_value(struct parser *ps, struct jv *v)
{
    skip_ws(ps);
    switch (*ps->p) {
    case '{': return parse_container(ps, v, 1);
    case '[': return parse_container(ps, v, 0);
    case '"': v->type = J_STR; return parse_string(ps, &v->str);
    case 't':
    case 'f':
    case 'n':
        if (strncmp(ps->p, "true", 4) == 0) {
            v->type = J_BOOL, v->boolean = 1, ps->p += 4;
        } else if (strncmp(ps->p, "false", 5) == 0) {
            v->type = J_BOOL, v->boolean = 0, ps->p += 5;
        } else if (strncmp(ps->p, "null", 4) == 0) {
            v->type = J_NULL, ps->p += 4;
        } else {
            return fail(ps, "expected a value");
        }
        return 0;
    case '\0': return fail(ps, "unexpected end of file");
    default: return parse_number(ps, v);
    }
}

/* Parses the whole text s.  Returns 0, or -1 with the error in ps->err. */
static int json_parse(struct parser *ps, const char *file, const char *s, struct jv *root)
{
    memset(ps, 0, sizeof *ps);
    memset(root, 0, sizeof *root);
    ps->s = ps->p = s;
    ps->file = file;
    if (parse_value(ps, root) != 0)
        return -1;
    skip_ws(ps);
    if (*ps->p)
        return fail(ps, "text after the end of the JSON value");
    return 0;
}

/* The value of key in object o, or NULL. */
const struct jv *get(const struct jv *o, const char *key)
{
    if (!o || o->type != J_OBJ)
        return NULL;
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return &o->kids[i];
    return NULL;
}

/* A count: a non-negative integer (one past LLONG_MAX reads as LLONG_MAX), or -1
** when absent or of another type. */
long long count_of(const struct jv *o, const char *key)
{
    const struct jv *v = get(o, key);
    if (!v || v->type != J_NUM || !v->is_uint)
        return -1;
    return v->u > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)v->u;
}

/* The count of a value known to be one (is_uint), as count_of reads it. */
static long long count_in(const struct jv *v)
{
    return v->u > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)v->u;
}

/* a + b for counts (both >= 0), LLONG_MAX where the sum is larger: a crafted
** report's counts must not overflow. */
static long long sat_add(long long a, long long b)
{
    return a > LLONG_MAX - b ? LLONG_MAX : a + b;
}

/* qsort, but for no elements (base may then be NULL, which qsort must not get). */
static void sort(void *base, int n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, (size_t)n, size, cmp);
}

/* The number at key of object o, or NAN where there is none. */
double num_of(const struct jv *o, const char *key)
{
    const struct jv *v = get(o, key);
    return v && v->type == J_NUM ? v->num : NAN;
}

/* --- Printing what a report says ---------------------------------------------- */

/* The length of the valid UTF-8 character at s (1 to 4), or 0 where the bytes
** are none: a stray continuation, an overlong form, a surrogate, past U+10FFFF. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0], min, n;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, c &= 0x07, min = 0x10000;
    else
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    return c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ? 0 : (int)n;
}

/* s, a string of a report or a file name, fit to print on a terminal: control
** characters and bytes that are not UTF-8 as \xNN, a backslash doubled, as the
** library prints knob values; into b (size bytes, at least 16), cut with "..."
** where it does not fit.  Returns b. */
static char *esc_into(char *b, size_t size, const char *s)
{
    char *o = b;
    const unsigned char *p = (const unsigned char *)s;

    while (*p && o < b + size - 8) {
        int n = utf8_len(p);
        if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
            *o++ = (char)*p++;
        } else if (n > 1) {
            memcpy(o, p, (size_t)n);
            o += n, p += n;
        } else {
            o += *p == '\\' ? sprintf(o, "\\\\") : sprintf(o, "\\x%02x", *p);
            p++;
        }
    }
    strcpy(o, *p ? "..." : "");
    return b;
}

/* s as esc_into prints it, in one of 8 buffers used in turn (so a printf may
** take several), cut past 1000 bytes. */
const char *esc(const char *s)
{
    static char bufs[8][1024];
    static int next;
    return esc_into(bufs[next++ & 7], sizeof bufs[0], s);
}

/* --- The sum of the reports ------------------------------------------------- */

/* The counters of totals, in the report's order; those from NREQUIRED on are
** newer than the first reports, and count 0 where a report has none. */
static const char *const total_keys[] = {"ops", "ops_held", "ops_replayed", "replays", "chunks", "launches_saved",
                                         "graphs_captured", "graph_failures", "graphs_evicted", "graphs_alive",
                                         "learned_dropped", "issue_errors", "body_graphs", "patched_launches",
                                         "nodes_patched", "own_calls"};
#define NTOTALS (int)(sizeof total_keys / sizeof total_keys[0])
#define NREQUIRED 12
enum { T_OPS, T_HELD, T_REPLAYED, T_REPLAYS, T_CHUNKS, T_SAVED, T_CAPTURED, T_FAILED, T_EVICTED, T_ALIVE,
       T_DROPPED, T_ERRORS, T_BODY, T_PATCHED, T_NODES_PATCHED, T_OWN };

struct named {
    char *name;
    long long n;
    size_t group; /* of a site: the length of its reason, the start of its name */
};

static int by_count(const void *a, const void *b);

/* Named counts summed over the reports (bail reasons, call classes), with a
** hash index of their names: a crafted report's 100,000 names stay linear. */
struct names {
    struct named *a;
    int n, cap;
    int *slot; /* index + 1 into a, 0: empty; nslot a power of two */
    int nslot;
};

struct stream_row {
    const char *file, *handle, *kind;
    long long ctx; /* the report's index of the stream's context; -1: none given */
    long long ops, replayed, replays, saved;
    int saved_bound; /* saved is an upper bound: the report has no per-stream chunks */
};

struct seq_row {
    const char *file, *handle, *graph;
    const char *ended_by, *gain; /* "-": the report has none (earlier versions) */
    long long ops, seen, replays, saved;
    long long graph_launches, nodes_set; /* -1: the report has none (earlier versions) */
    double host_us, eager_us, replay_us, saved_us, build_us; /* NAN: not in the report (not measured) */
};

/* One report of a job: its process's rank and what it gained. */
struct rank_row {
    const char *file;
    long long rank; /* the report's "rank"; -1: none (no launcher's rank, or an earlier report) */
    int engine;
    long long ops, replayed, saved, graphs, bails;
    const struct jv *bail_counts; /* its totals.bails object, or NULL */
};

struct sum {
    int nreports, engine_on, own_known; /* own_known: reports that count graphshim's own calls */
    long long totals[NTOTALS];
    struct names bails, calls;
    struct names sites; /* "REASON\tSITE (OBJECT)\tKERNELS": bails sampled there (bail_sites) */
    struct stream_row *streams;
    int nstreams, cstreams;
    struct seq_row *seqs;
    int nseqs, cseqs;
    struct rank_row *ranks; /* one per report, in the order read */
    int nranks, cranks;
};

static unsigned hash_of(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The slot of name in ns's index: where it is, or the empty one it goes to. */
static int *slot_of(const struct names *ns, const char *name)
{
    unsigned i = hash_of(name) & (unsigned)(ns->nslot - 1);
    while (ns->slot[i] && strcmp(ns->a[ns->slot[i] - 1].name, name) != 0)
        i = (i + 1) & (unsigned)(ns->nslot - 1);
    return &ns->slot[i];
}

/* Keeps the index at most half full: rebuilt at twice the size. */
static void index_names(struct names *ns)
{
    if (2 * (ns->n + 1) <= ns->nslot)
        return;
    free(ns->slot);
    ns->nslot = ns->nslot ? 2 * ns->nslot : 64;
    if (!(ns->slot = calloc((size_t)ns->nslot, sizeof *ns->slot))) {
        fprintf(stderr, "graphshim report: out of memory\n");
        exit(2);
    }
    for (int i = 0; i < ns->n; i++)
        *slot_of(ns, ns->a[i].name) = i + 1;
}

static void add_named(struct names *ns, const char *name, long long v)
{
    int *at;

    index_names(ns);
    at = slot_of(ns, name);
    if (*at) {
        ns->a[*at - 1].n = sat_add(ns->a[*at - 1].n, v);
        return;
    }
    ns->a = grow(ns->a, &ns->cap, ns->n, sizeof *ns->a);
    ns->a[ns->n].name = strdup(name);
    ns->a[ns->n++].n = v;
    *at = ns->n;
}

/* Adds the row of report r (already checked to be one) to the job's rows. */
static void add_rank_row(struct sum *t, const char *file, const struct jv *r)
{
    const struct jv *tot = get(r, "totals"), *engine = get(r, "engine"), *b = get(tot, "bails");
    struct rank_row *row;

    t->ranks = grow(t->ranks, &t->cranks, t->nranks, sizeof *t->ranks);
    row = &t->ranks[t->nranks++];
    memset(row, 0, sizeof *row);
    row->file = file;
    row->rank = count_of(r, "rank");
    row->engine = engine && engine->type == J_BOOL && engine->boolean;
    row->ops = count_of(tot, "ops");
    row->replayed = count_of(tot, "ops_replayed");
    row->saved = count_of(tot, "launches_saved");
    row->graphs = count_of(tot, "graphs_captured");
    row->bail_counts = b && b->type == J_OBJ ? b : NULL;
    for (int i = 0; row->bail_counts && i < b->n; i++)
        if (b->kids[i].type == J_NUM && b->kids[i].is_uint)
            row->bails = sat_add(row->bails, count_in(&b->kids[i]));
}

/* Adds a report's bail_sites (an object of reason: [site, ...]; absent from
** earlier reports) to t->sites. */
static void add_sites(struct sum *t, const struct jv *bs)
{
    for (int i = 0; bs && bs->type == J_OBJ && i < bs->n; i++)
        for (int j = 0; bs->kids[i].type == J_ARR && j < bs->kids[i].n; j++) {
            const struct jv *x = &bs->kids[i].kids[j], *site = get(x, "site"), *obj = get(x, "object");
            const struct jv *k = get(x, "kernels");
            char key[1024];
            int n;
            if (!site || site->type != J_STR || !obj || obj->type != J_STR || count_of(x, "count") < 0)
                continue;
            n = snprintf(key, sizeof key, "%s\t%s (%s)\t", bs->keys[i], site->str, obj->str);
            for (int m = 0; k && k->type == J_ARR && m < k->n && m < 2 && n < (int)sizeof key; m++)
                if (k->kids[m].type == J_STR)
                    n += snprintf(key + n, sizeof key - (size_t)n, "%s%s", m ? ", " : "after ", k->kids[m].str);
            add_named(&t->sites, key, count_of(x, "count"));
            t->sites.a[*slot_of(&t->sites, key) - 1].group = strlen(bs->keys[i]);
        }
}

/* The reason of site x (its name up to its group) against reason r, as strcmp. */
static int site_reason_cmp(const struct named *x, const char *r, size_t len)
{
    int c = memcmp(x->name, r, x->group < len ? x->group : len);
    return c ? c : (x->group > len) - (x->group < len);
}

/* Sites by reason, then most first: a reason's sites are found by bisection. */
static int by_reason_count(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = site_reason_cmp(x, y->name, y->group);
    return c ? c : by_count(a, b);
}

/* Prints the top sites of bail reason r, a line each; t->sites is sorted by
** by_reason_count, so its sites are found in log time: 100,000 reasons, each
** with its sites, stay linear. */
static void print_sites(const struct sum *t, const char *r)
{
    size_t len = strlen(r);
    int lo = 0, hi = t->sites.n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (site_reason_cmp(&t->sites.a[mid], r, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < t->sites.n && i < lo + 3 && site_reason_cmp(&t->sites.a[i], r, len) == 0; i++) {
        const char *key = t->sites.a[i].name, *site = key + len + 1, *kern;
        char at[1024];
        kern = strchr(site, '\t');
        snprintf(at, sizeof at, "%.*s", (int)(kern - site), site);
        printf("            at %s: %lld", esc(at), t->sites.a[i].n);
        printf("%s%s\n", kern[1] ? ", " : "", esc(kern + 1));
    }
}

/* Why the parsed JSON r is not a graphshim report, in why (n bytes); NULL
** where it is one. */
static const char *not_a_report(const struct jv *r, char *why, size_t n)
{
    const struct jv *tot = get(r, "totals"), *streams = get(r, "streams");

    if (r->type != J_OBJ || !tot || tot->type != J_OBJ || !streams || streams->type != J_ARR)
        return "not a graphshim report (no \"totals\" object or \"streams\" array)";
    for (int k = 0; k < NTOTALS; k++)
        if (count_of(tot, total_keys[k]) < 0 && (k < NREQUIRED || get(tot, total_keys[k]))) {
            snprintf(why, n, "totals.%s is missing or not a count", total_keys[k]);
            return why;
        }
    return NULL;
}

/* Adds one parsed report.  Returns 0, or -1 (message on stderr) if it is not a
** graphshim report. */
static int add_report(struct sum *t, const char *file, const struct jv *r)
{
    const struct jv *tot = get(r, "totals"), *calls = get(r, "calls"), *streams = get(r, "streams"), *b;
    const struct jv *engine = get(r, "engine");
    char why[96];

    if (not_a_report(r, why, sizeof why)) {
        fprintf(stderr, "graphshim report: %s: %s\n", esc(file), not_a_report(r, why, sizeof why));
        return -1;
    }
    for (int k = 0; k < NTOTALS; k++) {
        long long v = count_of(tot, total_keys[k]);
        t->totals[k] = sat_add(t->totals[k], v < 0 ? 0 : v);
    }
    t->own_known += count_of(tot, "own_calls") >= 0;
    add_sites(t, get(r, "bail_sites"));
    b = get(tot, "bails");
    for (int i = 0; b && b->type == J_OBJ && i < b->n; i++)
        if (b->kids[i].type == J_NUM && b->kids[i].is_uint)
            add_named(&t->bails, b->keys[i], count_in(&b->kids[i]));
    for (int i = 0; calls && calls->type == J_OBJ && i < calls->n; i++)
        if (calls->kids[i].type == J_NUM && calls->kids[i].is_uint)
            add_named(&t->calls, calls->keys[i], count_in(&calls->kids[i]));
    t->engine_on += engine && engine->type == J_BOOL && engine->boolean;
    t->nreports++;
    add_rank_row(t, file, r);
    for (int i = 0; i < streams->n; i++) {
        const struct jv *s = &streams->kids[i], *h = get(s, "stream"), *kind = get(s, "kind"), *seqs;
        struct stream_row *row;

        if (s->type != J_OBJ)
            continue;
        t->streams = grow(t->streams, &t->cstreams, t->nstreams, sizeof *t->streams);
        row = &t->streams[t->nstreams++];
        row->file = file;
        row->handle = h && h->type == J_STR ? h->str : "?";
        row->kind = kind && kind->type == J_STR ? kind->str : "?";
        row->ctx = count_of(s, "ctx");
        row->ops = count_of(s, "ops");
        row->replayed = count_of(s, "ops_replayed");
        row->replays = count_of(s, "replays");
        row->saved = count_of(s, "launches_saved");
        row->saved_bound = row->saved < 0;
        if (row->saved < 0) /* reports before per-stream chunks: at most this many */
            row->saved = row->replayed >= 0 && row->replays >= 0 ? row->replayed - row->replays : 0;
        seqs = get(s, "sequences");
        for (int j = 0; seqs && seqs->type == J_ARR && j < seqs->n; j++) {
            const struct jv *q = &seqs->kids[j], *g = get(q, "graph");
            struct seq_row *sr;
            if (q->type != J_OBJ)
                continue;
            t->seqs = grow(t->seqs, &t->cseqs, t->nseqs, sizeof *t->seqs);
            sr = &t->seqs[t->nseqs++];
            sr->file = file;
            sr->handle = row->handle;
            sr->graph = !g ? "?" : g->type == J_STR ? g->str : g->type == J_BOOL ? (g->boolean ? "yes" : "no") : "?";
            sr->ops = count_of(q, "ops");
            sr->seen = count_of(q, "seen");
            sr->replays = count_of(q, "replays");
            sr->saved = count_of(q, "launches_saved");
            sr->graph_launches = count_of(q, "graph_launches");
            sr->nodes_set = count_of(q, "nodes_set");
            sr->host_us = num_of(q, "graph_host_us");
            sr->eager_us = num_of(q, "eager_us");
            sr->replay_us = num_of(q, "replay_us");
            sr->saved_us = num_of(q, "saved_us");
            sr->build_us = num_of(q, "build_us");
            g = get(q, "ended_by");
            sr->ended_by = g && g->type == J_STR ? g->str : "-";
            g = get(q, "gain");
            sr->gain = g && g->type == J_STR ? g->str : "-";
        }
    }
    return 0;
}

/* --- The table ---------------------------------------------------------------- */

/* What a bail reason means and what helps, one line each (docs/report.md). */
static const char *hint(const char *reason)
{
    static const struct {
        const char *reason, *hint;
    } hints[] = {
        {"mismatch", "the next op continued no learned sequence: its function, grid, block, shared memory or "
                     "attributes differ between iterations (parameters alone are patched); keep them fixed"},
        {"body-end", "a loop's held bodies went out because another op followed the loop: its normal end; "
                     "many of them for few body graphs mean loops too short to pay (GRAPHSHIM_BODY_OPS)"},
        {"watchdog", "held work waited longer than GRAPHSHIM_MAX_DEFER_US: long host work or polling mid-sequence; "
                     "raise the knob, or synchronize before the host work"},
        {"graph-failed", "capturing, instantiating or launching the graph failed; GRAPHSHIM_LOG=debug shows the "
                         "driver's error; the sequence runs eagerly from then on"},
        {"legacy-stream-order", "the legacy default stream met held work on a blocking stream: create streams "
                                "with cudaStreamNonBlocking, or use the per-thread default stream"},
        {"app-capture", "the program captures graphs of its own: nothing is held meanwhile; nothing to tune"},
        {"exit", "the process exited in the middle of a sequence: harmless"},
        {"ctx-sync-in-progress", "another thread synchronized the context when a graph was to be captured; it is "
                                 "captured at a later replay; fewer cudaDeviceSynchronize calls help"},
        {"unholdable-op", "an op graphshim cannot hold (unknown parameter layout or launch attribute, NCCL, other "
                          "memory kinds) followed held ops; GRAPHSHIM_TRACE shows which"},
        {"no-gain", "the graph ran slower than the eager ops, so the sequence runs eagerly for good; "
                    "GRAPHSHIM_GAIN_CHECK=0 keeps the graph"},
        {"boundary-sync", "a synchronize or query came mid-sequence: the segment was not the learned one; "
                          "synchronize at the same place every iteration"},
        {"boundary-event", "an event record or wait came mid-sequence; record events at the same place every "
                           "iteration"},
        {"boundary-hostfn", "a host function came mid-sequence; launch it at the same place every iteration"},
        {"boundary-syncop", "a synchronous copy or memset came mid-sequence; use the async form, or move it to "
                            "the sequence's end"},
        {"boundary-alloc", "an allocation or free came mid-sequence; allocate before the loop or use a pool "
                           "(cudaMallocAsync pools also count: keep them out of the loop)"},
        {"boundary-stream", "a stream was destroyed mid-sequence; keep streams for the whole loop"},
        {"boundary-ctx", "a context was destroyed or reset mid-sequence"},
        {"boundary-module", "a module or library was unloaded mid-sequence; load code before the loop"},
        {"boundary-attr", "a limit or function attribute changed mid-sequence; set attributes before the loop"},
        {"boundary-capture", "the program began a capture or launched its own graph mid-sequence"},
        {"boundary-unclassified", "a driver call graphshim does not classify came mid-sequence; GRAPHSHIM_TRACE "
                                  "lines with class=unclassified name it; a row in driver/hooks.def classifies it"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (strcmp(hints[i].reason, reason) == 0)
            return hints[i].hint;
    return "not a reason this version knows: see docs/report.md";
}

static double pct(long long a, long long b)
{
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static int by_stream_saved(const void *a, const void *b)
{
    const struct stream_row *x = a, *y = b;
    return (x->saved < y->saved) - (x->saved > y->saved);
}

static int by_seq_saved(const void *a, const void *b)
{
    const struct seq_row *x = a, *y = b;
    return (x->saved < y->saved) - (x->saved > y->saved);
}

static int by_count(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    return x->n != y->n ? (x->n < y->n) - (x->n > y->n) : strcmp(x->name, y->name);
}

/* --- The job's rows -------------------------------------------------------------- */

/* Rows by rank (reports without one last), then by file. */
static int by_rank(const void *a, const void *b)
{
    const struct rank_row *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < 0 ? 1 : y->rank < 0 ? -1 : (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->file, y->file);
}

/* The row that gains least: the lowest hit rate, then the fewest launches saved.
** NULL where there are no rows. */
static const struct rank_row *least_gain(const struct sum *t)
{
    const struct rank_row *least = NULL;

    for (int i = 0; i < t->nranks; i++) {
        const struct rank_row *r = &t->ranks[i];
        double h = pct(r->replayed, r->ops), lh = least ? pct(least->replayed, least->ops) : 0;
        if (!least || h < lh || (h == lh && r->saved < least->saved))
            least = r;
    }
    return least;
}

/* The bail reasons of row r that counted, most first, in a new array *out (the
** names point into the report).  Returns how many. */
static int top_bails(const struct rank_row *r, struct named **out)
{
    const struct jv *b = r->bail_counts;
    int n = 0;

    *out = calloc((size_t)(b ? b->n : 0) + 1, sizeof **out);
    if (!*out) {
        fprintf(stderr, "graphshim report: out of memory\n");
        exit(1);
    }
    for (int i = 0; b && i < b->n; i++)
        if (b->kids[i].type == J_NUM && b->kids[i].is_uint && b->kids[i].u > 0) {
            (*out)[n].name = b->keys[i];
            (*out)[n++].n = count_in(&b->kids[i]);
        }
    sort(*out, n, sizeof **out, by_count);
    return n;
}

/* Why row r gains least, in words after its figures: its top three bail reasons,
** each with its hint on a line of its own below. */
#define TOP_WHY 3
static void print_least(const struct rank_row *r)
{
    struct named *b;
    int n = top_bails(r, &b);

    printf("  least gain: rank ");
    r->rank >= 0 ? printf("%lld", r->rank) : printf("-");
    printf(" (%s): hit rate %.1f%%, %lld launches saved", esc(r->file), pct(r->replayed, r->ops), r->saved);
    if (!r->engine)
        printf("; the engine was off (pass-through)\n");
    else if (!n)
        printf("; no bails: little of its work repeated the same way (its streams are below)\n");
    for (int i = 0; r->engine && i < n && i < TOP_WHY; i++)
        printf("%s %lld x %s", i ? "," : "; top bails:", b[i].n, esc(b[i].name));
    if (r->engine && n)
        printf("\n");
    for (int i = 0; r->engine && i < n && i < TOP_WHY; i++)
        printf("    %s: %s\n", esc(b[i].name), hint(b[i].name));
    free(b);
}

/* A row per report, by rank, and the rank that gains least (where there are two
** or more). */
static void print_job(struct sum *t)
{
    sort(t->ranks, t->nranks, sizeof *t->ranks, by_rank);
    printf("\nranks (%d report%s)\n", t->nranks, t->nranks == 1 ? "" : "s");
    printf("  %4s %8s %15s %8s %8s  %-26s %s\n", "rank", "hit_rate", "launches_saved", "graphs", "bails", "top bail",
           "report");
    for (int i = 0; i < t->nranks; i++) {
        const struct rank_row *r = &t->ranks[i];
        char rank[24] = "-", top[64] = "-";
        struct named *b;
        if (r->rank >= 0)
            snprintf(rank, sizeof rank, "%lld", r->rank);
        if (!r->engine)
            snprintf(top, sizeof top, "engine off");
        else if (top_bails(r, &b) > 0)
            snprintf(top, sizeof top, "%s %lld", esc(b[0].name), b[0].n);
        if (r->engine)
            free(b);
        printf("  %4s %7.1f%% %15lld %8lld %8lld  %-26s %s\n", rank, pct(r->replayed, r->ops), r->saved, r->graphs,
               r->bails, top, esc(r->file));
    }
    if (t->nranks > 1)
        print_least(least_gain(t));
}

#define MAX_ROWS 20

/* v into buf with one decimal, or "-" where the report has none (NAN). */
static const char *cell(char *buf, size_t size, double v)
{
    if (isnan(v))
        return "-";
    snprintf(buf, size, "%.1f", v);
    return buf;
}

/* Count n into buf, or "-" where the report has none (-1). */
static const char *count_cell(char *buf, size_t size, long long n)
{
    if (n < 0)
        return "-";
    snprintf(buf, size, "%lld", n);
    return buf;
}

/* The sequences ranked by launches saved, with what their graph launches cost
** and their times where measured ("-": not measured, or an earlier report). */
static void print_seqs(struct sum *t)
{
    sort(t->seqs, t->nseqs, sizeof *t->seqs, by_seq_saved);
    printf("\nsequences by launches saved (%d)\n", t->nseqs);
    printf("  %4s %15s %8s %8s %6s  %-8s %14s %9s %13s %10s %10s %12s %10s  %-8s %-8s  %-16s %s\n", "#",
           "launches_saved", "replays", "seen", "ops", "graph", "graph_launches", "nodes_set", "graph_host_us", "eager_us",
           "replay_us", "saved_us", "build_us", "ended_by", "gain", "stream", "report");
    for (int i = 0; i < t->nseqs && i < MAX_ROWS; i++) {
        const struct seq_row *s = &t->seqs[i];
        char c[7][32];
        printf("  %4d %15lld %8lld %8lld %6lld  %-8s %14s %9s %13s %10s %10s %12s %10s  %-8s %-8s  %-16s %s\n", i + 1,
               s->saved, s->replays, s->seen, s->ops, esc(s->graph),
               count_cell(c[0], sizeof c[0], s->graph_launches), count_cell(c[1], sizeof c[1], s->nodes_set),
               cell(c[2], sizeof c[2], s->host_us), cell(c[3], sizeof c[3], s->eager_us),
               cell(c[4], sizeof c[4], s->replay_us), cell(c[5], sizeof c[5], s->saved_us),
               cell(c[6], sizeof c[6], s->build_us), esc(s->ended_by), esc(s->gain), esc(s->handle), esc(s->file));
    }
    if (t->nseqs > MAX_ROWS)
        printf("  ... %d more\n", t->nseqs - MAX_ROWS);
}

static void print_table(struct sum *t, const char *label, int job)
{
    long long *v = t->totals, bails = 0;
    int bound = 0;

    printf("graphshim report: %d report%s", t->nreports, t->nreports == 1 ? "" : "s");
    if (label)
        printf(" (%s)", esc(label));
    printf(", engine on in %d\n", t->engine_on);
    printf("  ops %lld, replayed as graphs %lld: hit rate %.1f%%\n", v[T_OPS], v[T_REPLAYED],
           pct(v[T_REPLAYED], v[T_OPS]));
    printf("  %lld replays, %lld early chunks and %lld loop-body graphs saved %lld launches\n", v[T_REPLAYS],
           v[T_CHUNKS], v[T_BODY], v[T_SAVED]);
    if (t->own_known == t->nreports) { /* reports before own_calls cannot say */
        long long net = v[T_REPLAYED] - v[T_OWN];
        printf("  driver calls: net %lld %s than without graphshim (%lld ops replayed made none; graphshim made "
               "%lld of its own: graph launches, node sets, captures, queries)\n", net < 0 ? -net : net,
               net < 0 ? "more" : "fewer", v[T_REPLAYED], v[T_OWN]);
    }
    if (v[T_PATCHED])
        printf("  %lld graph launches set new parameters in place first (%lld nodes set)\n", v[T_PATCHED],
               v[T_NODES_PATCHED]);
    printf("  graphs: %lld captured, %lld failed, %lld evicted, %lld alive\n", v[T_CAPTURED], v[T_FAILED],
           v[T_EVICTED], v[T_ALIVE]);
    if (job)
        print_job(t);

    sort(t->streams, t->nstreams, sizeof *t->streams, by_stream_saved);
    printf("\nstreams by launches saved (%d)\n", t->nstreams);
    printf("  %4s %15s %8s %8s %10s  %-10s %3s %-16s %s\n", "#", "launches_saved", "hit_rate", "replays", "ops",
           "kind", "ctx", "stream", "report");
    for (int i = 0; i < t->nstreams && i < MAX_ROWS; i++) {
        const struct stream_row *s = &t->streams[i];
        char ctx[24] = "-";
        bound |= s->saved_bound;
        if (s->ctx >= 0)
            snprintf(ctx, sizeof ctx, "%lld", s->ctx);
        printf("  %4d %14lld%s %7.1f%% %8lld %10lld  %-10s %3s %-16s %s\n", i + 1, s->saved, s->saved_bound ? "*" : " ",
               pct(s->replayed, s->ops), s->replays, s->ops, esc(s->kind), ctx, esc(s->handle), esc(s->file));
    }
    if (t->nstreams > MAX_ROWS)
        printf("  ... %d more\n", t->nstreams - MAX_ROWS);
    if (bound)
        printf("  * at most: this report has no per-stream chunks (ops replayed less replays)\n");

    print_seqs(t);

    sort(t->bails.a, t->bails.n, sizeof *t->bails.a, by_count);
    for (int i = 0; i < t->bails.n; i++)
        bails = sat_add(bails, t->bails.a[i].n);
    printf("\nbails by count (%lld)\n", bails);
    if (!t->bails.n)
        printf("  none: held work always went out as graphs\n");
    sort(t->sites.a, t->sites.n, sizeof *t->sites.a, by_reason_count);
    for (int i = 0; i < t->bails.n; i++) {
        printf("  %8lld  %-22s %s\n", t->bails.a[i].n, esc(t->bails.a[i].name), hint(t->bails.a[i].name));
        print_sites(t, t->bails.a[i].name);
    }

    printf("\ncalls other than ops:");
    for (int i = 0; i < t->calls.n; i++)
        if (t->calls.a[i].n)
            printf(" %s %lld", esc(t->calls.a[i].name), t->calls.a[i].n);
    printf("\n");
}

/* --- JSON output ---------------------------------------------------------------- */

/* s as a JSON string, quotes included; a byte that is not UTF-8 as the
** character of its value (\u00NN), so the output is JSON whatever came in. */
static void print_jstr(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    putchar('"');
    while (*p) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (n == 0 || *p < 0x20 || *p == 0x7f)
            printf("\\u%04x", *p);
        else
            fwrite(p, 1, (size_t)n, stdout);
        p += n ? n : 1;
    }
    putchar('"');
}

static void print_named(const struct named *a, int n)
{
    printf("{");
    for (int i = 0; i < n; i++) {
        printf("%s", i ? ", " : "");
        print_jstr(a[i].name);
        printf(": %lld", a[i].n);
    }
    printf("}");
}

/* A row of the job as a JSON object: rank (null: none), report, and its figures,
** with its bail reasons most first (at most max of them). */
static void print_json_row(const struct rank_row *r, int max)
{
    struct named *b;
    int n = top_bails(r, &b);

    printf("{\"rank\": ");
    r->rank >= 0 ? printf("%lld", r->rank) : printf("null");
    printf(", \"report\": ");
    print_jstr(r->file);
    printf(", \"engine\": %s, \"ops\": %lld, \"ops_replayed\": %lld, \"hit_rate\": %.4f, \"launches_saved\": %lld, "
           "\"graphs_captured\": %lld, \"bails\": %lld, \"top_bails\": ",
           r->engine ? "true" : "false", r->ops, r->replayed, pct(r->replayed, r->ops) / 100.0, r->saved, r->graphs,
           r->bails);
    print_named(b, n < max ? n : max);
    printf("}");
    free(b);
}

/* The job's rows by rank, and the one that gains least (null for one row). */
static void print_json_job(struct sum *t)
{
    sort(t->ranks, t->nranks, sizeof *t->ranks, by_rank);
    printf(",\n  \"ranks\": [");
    for (int i = 0; i < t->nranks; i++) {
        printf("%s\n    ", i ? "," : "");
        print_json_row(&t->ranks[i], 1 << 30);
    }
    printf("\n  ],\n  \"least_gain\": ");
    if (t->nranks > 1)
        print_json_row(least_gain(t), TOP_WHY);
    else
        printf("null");
}

static void print_json(struct sum *t, int job)
{
    printf("{\n  \"reports\": %d,\n  \"engine_on\": %d,\n  \"totals\": {", t->nreports, t->engine_on);
    for (int k = 0; k < NTOTALS; k++) {
        printf("%s\"%s\": %lld", k ? ", " : "", total_keys[k], t->totals[k]);
        if (k == T_REPLAYED)
            printf(", \"hit_rate\": %.4f", pct(t->totals[T_REPLAYED], t->totals[T_OPS]) / 100.0);
        if (k == T_OWN && t->own_known == t->nreports)
            printf(", \"net_calls_saved\": %lld", t->totals[T_REPLAYED] - t->totals[T_OWN]);
    }
    printf(", \"bails\": ");
    print_named(t->bails.a, t->bails.n);
    printf("},\n  \"calls\": ");
    print_named(t->calls.a, t->calls.n);
    if (job)
        print_json_job(t);
    printf("\n}\n");
}

/* --- Reading the input ------------------------------------------------------------ */

/* The most bytes read from one input: a graphshim report is far smaller (at most
** 32 sequences and 12 loop bodies a stream), so more is no report. */
#define MAX_READ (64u << 20)

/* Reads all of f (name: what it is, for messages) into a new NUL-terminated
** buffer.  Returns it, or NULL after a message on stderr: a read error, a NUL
** byte (JSON text has none), more than MAX_READ bytes. */
static char *read_stream(FILE *f, const char *name)
{
    char *buf = NULL, *b;
    size_t n = 0, cap = 0, got;
    const char *why = NULL;

    for (;;) {
        if (n == cap) {
            if (cap == MAX_READ) {
                if (fgetc(f) != EOF)
                    why = "more than 64 MiB, so not a graphshim report";
                break;
            }
            cap = cap ? (2 * cap < MAX_READ ? 2 * cap : MAX_READ) : 65536;
            if (!(b = realloc(buf, cap + 1))) {
                why = "out of memory";
                break;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        if (memchr(buf + n, '\0', got)) {
            why = "a NUL byte in it, so not a graphshim report";
            break;
        }
        n += got;
    }
    if (!why && ferror(f))
        why = strerror(errno);
    if (why) {
        fprintf(stderr, "graphshim report: cannot read %s (%s)\n", esc(name), why);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* The text of input path: a file, or standard input for -.  NULL after a message. */
static char *read_input(const char *path)
{
    FILE *f;
    char *text;

    if (strcmp(path, "-") == 0)
        return read_stream(stdin, "standard input");
    if (!(f = fopen(path, "rb"))) {
        fprintf(stderr, "graphshim report: cannot read %s (%s)\n", esc(path), strerror(errno));
        return NULL;
    }
    text = read_stream(f, path);
    fclose(f);
    return text;
}

static int is_report_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

/* The inputs: their names, and for each whether a folder named it (such a file
** that is no report is skipped with a warning: a job's folder may hold a
** config.json), and its identity (a file named twice is read once). */
struct inputs {
    char **names;
    char *in_folder;
    dev_t *dev;
    ino_t *ino;
    int n, cap, cap2, cap3, cap4, folders;
};

/* Adds name (owned) to the inputs, unless it is a file already there: then says
** so and frees it. */
static void add_name(struct inputs *in, char *name, int in_folder)
{
    struct stat st;
    int have = strcmp(name, "-") != 0 && stat(name, &st) == 0;

    for (int i = 0; have && i < in->n; i++)
        if (in->dev[i] == st.st_dev && in->ino[i] == st.st_ino && in->names[i][0]) {
            if (strcmp(name, in->names[i]) == 0)
                fprintf(stderr, "graphshim report: %s is given twice: counted once\n", esc(name));
            else
                fprintf(stderr, "graphshim report: %s is the file %s, given already: counted once\n", esc(name),
                        esc(in->names[i]));
            free(name);
            return;
        }
    in->names = grow(in->names, &in->cap, in->n, sizeof *in->names);
    in->in_folder = grow(in->in_folder, &in->cap2, in->n, sizeof *in->in_folder);
    in->dev = grow(in->dev, &in->cap3, in->n, sizeof *in->dev);
    in->ino = grow(in->ino, &in->cap4, in->n, sizeof *in->ino);
    in->dev[in->n] = have ? st.st_dev : 0;
    in->ino[in->n] = have ? st.st_ino : 0;
    in->in_folder[in->n] = (char)in_folder;
    in->names[in->n++] = name;
}

/* Adds argument arg to the inputs: a folder adds every regular file named
** *.json in it (not those starting with a dot), in name order; anything else,
** - included, adds itself.  Returns 0, or -1 after a message where a folder
** cannot be read or holds no such file. */
static int add_input(struct inputs *in, const char *arg)
{
    struct dirent **ents;
    struct stat st;
    int k, found = 0;

    if (strcmp(arg, "-") == 0 || stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        add_name(in, strdup(arg), 0);
        return 0;
    }
    if ((k = scandir(arg, &ents, is_report_name, alphasort)) < 0) {
        fprintf(stderr, "graphshim report: cannot read the folder %s (%s)\n", esc(arg), strerror(errno));
        return -1;
    }
    in->folders++;
    for (int i = 0; i < k; i++) {
        size_t len = strlen(arg);
        char *path = malloc(len + strlen(ents[i]->d_name) + 2);
        if (!path) {
            fprintf(stderr, "graphshim report: out of memory\n");
            exit(2);
        }
        sprintf(path, "%s%s%s", arg, len && arg[len - 1] == '/' ? "" : "/", ents[i]->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            add_name(in, path, 1);
            found++;
        } else {
            free(path);
        }
        free(ents[i]);
    }
    free(ents);
    if (!found) {
        fprintf(stderr, "graphshim report: the folder %s holds no report (no regular file named *.json)\n", esc(arg));
        return -1;
    }
    return 0;
}

/* --- main ----------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: graphshim report [--json] [--check CHECK]... [--svg FILE] FILE|FOLDER|-...\n"
                    "  ranks streams and sequences by launches saved and bail reasons by count, over\n"
                    "  graphshim's JSON reports (GRAPHSHIM_REPORT=*.json; several are summed, with a\n"
                    "  row per rank and the rank that gains least); a FOLDER is every *.json in it (a\n"
                    "  job's reports; one that is no report is skipped), - is standard input; a file\n"
                    "  given twice counts once;\n"
                    "  --json: a single report unchanged, or the summed totals and the ranks of several\n"
                    "  --check 'hit_rate>=0.8': prints the checks that fail and exits 1 if any does\n"
                    "    ([streams.]FIELD OP NUMBER, OP one of >= <= > < == !=, at most %d; the same\n"
                    "    in the program: GRAPHSHIM_CHECK, GRAPHSHIM_CHECK_EXIT=1; docs/report.md)\n"
                    "  --svg step.svg: draws each stream's learned steps, how they ran and its bails\n"
                    "    as one SVG picture instead of the table (- for standard output)\n"
                    "exit status: 0; 1: a check failed; 2: bad usage, a bad check, or an input that\n"
                    "  cannot be read or is no report\n", GS_CHECKS_MAX);
    exit(2);
}

/* Reads the options into *json, checks and *svg; returns the index of the first
** input.  Exits with status 2 on bad usage or a bad check. */
static int parse_options(int argc, char **argv, int *json, struct gs_checks *checks, const char **svg)
{
    char err[2048];
    int first;

    for (first = 1; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        if (strcmp(argv[first], "--json") == 0) {
            *json = 1;
        } else if (strcmp(argv[first], "--check") == 0) {
            if (first + 1 >= argc) {
                fprintf(stderr, "graphshim report: --check needs a CHECK (--check 'hit_rate>=0.8')\n");
                usage();
            }
            if (gs__checks_parse(checks, argv[++first], err, sizeof err) != 0) {
                /* The message quotes the check: its control characters escaped. */
                static char shown[4 * sizeof err + 8];
                fprintf(stderr, "graphshim report: %s\n", esc_into(shown, sizeof shown, err));
                exit(2);
            }
        } else if (strcmp(argv[first], "--svg") == 0) {
            if (first + 1 >= argc || !argv[first + 1][0]) {
                fprintf(stderr, "graphshim report: --svg needs a FILE (--svg step.svg; - for standard output)\n");
                usage();
            }
            *svg = argv[++first];
        } else if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        } else if (strcmp(argv[first], "-h") == 0 || strcmp(argv[first], "--help") == 0) {
            usage();
        } else {
            fprintf(stderr, "graphshim report: unknown option %s\n", esc(argv[first]));
            usage();
        }
    }
    if (first >= argc)
        usage();
    return first;
}

/* Reads input i and adds it to t.  Returns its text, or NULL where it is no
** report: after a message, and *bad set, unless a folder named it (then it is
** skipped with a warning).  Its parsed tree in *root_out. */
static char *read_one(struct inputs *in, int i, struct sum *t, int *bad, struct jv *root_out)
{
    char *text = read_input(in->names[i]), why[96];
    const char *no = NULL;
    struct parser ps;
    struct jv root;

    if (!text) {
        *bad = 1;
        return NULL;
    }
    if (json_parse(&ps, in->names[i], text, &root) != 0)
        no = strncmp(text, "graphshim report: engine ", 25) == 0
                 ? "a text report: graphshim report reads JSON ones (GRAPHSHIM_REPORT or --report with a name "
                   "ending in .json)"
                 : ps.err;
    else if (in->in_folder[i])
        no = not_a_report(&root, why, sizeof why);
    if (no && in->in_folder[i]) {
        fprintf(stderr, "graphshim report: skipped %s (%s)\n", esc(in->names[i]), no);
    } else if (no == ps.err) {
        fprintf(stderr, "graphshim report: %s\n", no);
        *bad = 1;
    } else if (no) {
        fprintf(stderr, "graphshim report: %s: %s\n", esc(in->names[i]), no);
        *bad = 1;
    } else if (add_report(t, in->names[i], &root) != 0) {
        *bad = 1;
    } else {
        *root_out = root;
        return text; /* the parsed tree stays: the rows point into it */
    }
    free(text);
    return NULL;
}

int main(int argc, char **argv)
{
    int json = 0, first, bad = 0, job, n = 0;
    struct inputs in = {0};
    struct sum t;
    static struct gs_checks checks;
    char **texts, **names;
    const char *svg = NULL;
    struct jv *roots;
    const struct jv **rootp;
    const char **files;

    first = parse_options(argc, argv, &json, &checks, &svg);
    for (int i = first; i < argc; i++)
        bad |= add_input(&in, argv[i]) != 0;
    /* A job: several reports, or a folder of them. */
    job = in.n > 1 || in.folders > 0;
    memset(&t, 0, sizeof t);
    texts = calloc((size_t)in.n + 1, sizeof *texts);
    names = calloc((size_t)in.n + 1, sizeof *names);
    roots = calloc((size_t)in.n + 1, sizeof *roots);
    rootp = calloc((size_t)in.n + 1, sizeof *rootp);
    files = calloc((size_t)in.n + 1, sizeof *files);
    if (!texts || !names || !roots || !rootp || !files) {
        fprintf(stderr, "graphshim report: out of memory\n");
        return 2;
    }
    for (int i = 0; i < in.n; i++)
        if ((texts[n] = read_one(&in, i, &t, &bad, &roots[n])) != NULL) {
            rootp[n] = &roots[n];
            files[n] = in.names[i];
            names[n++] = strdup(esc(in.names[i])); /* for the checks' messages */
        }
    if (!bad && n == 0) {
        fprintf(stderr, "graphshim report: no report among the inputs\n");
        bad = 1;
    }
    if (bad)
        return 2;
    if (svg && gs_svg_write(svg, rootp, files, n) != 0)
        return 2;
    if (checks.n) {
        int failed = gs__checks_run(&checks, (const char *const *)texts, (const char *const *)names, n, stdout,
                                    "graphshim report: ");
        return failed < 0 ? 2 : failed > 0;
    }
    if (json && !job)
        fputs(texts[0], stdout);
    else if (json)
        print_json(&t, 1);
    else if (!svg)
        print_table(&t, argc - first == 1 ? argv[first] : NULL, job);
    return 0;
}
