/*
** check.c: checks of a report's counters (see check.h), shared by the library
** (GRAPHSHIM_CHECK, at exit) and `graphshim report --check`.
**
** Divided into: the fields and operators, parsing a check, reading the
** numbers of a JSON report (a reader for text that is JSON already: the
** library wrote it, or report.c read it strictly before), and evaluation.
*/
#define _GNU_SOURCE
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* --- Fields and operators ---------------------------------------------------- */

/* The counters of the report's "totals" that a check may name. */
static const char *const total_fields[] = {
    "ops", "ops_held", "ops_replayed", "hit_rate", "replays", "chunks", "body_graphs", "launches_saved",
    "own_calls", "net_calls_saved", "patched_launches", "nodes_patched", "recaptures", "resumed", "capture_us", "instantiate_us", "update_us",
    "graphs_captured", "graph_failures", "graphs_evicted", "graphs_alive", "learned_dropped", "issue_errors",
    "oom_retries", "oom_retries_ok", "oom_freed_bytes"};
/* A stream's (after "streams."). */
static const char *const stream_fields[] = {
    "ops", "ops_held", "ops_replayed", "hit_rate", "replays", "chunks", "body_graphs", "launches_saved",
    "patched_launches", "nodes_patched", "warmup", "segments_rested"};
#define NFIELDS(a) (sizeof a / sizeof a[0])

/* Two-character operators first: ">=" is not ">" followed by "=". */
static const char *const ops[] = {">=", "<=", "==", "!=", ">", "<"};
enum { OP_GE, OP_LE, OP_EQ, OP_NE, OP_GT, OP_LT, NOPS };

static const char *field_named(const char *name, size_t len, int per_stream)
{
    const char *const *f = per_stream ? stream_fields : total_fields;
    size_t n = per_stream ? NFIELDS(stream_fields) : NFIELDS(total_fields);

    for (size_t i = 0; i < n; i++)
        if (strlen(f[i]) == len && memcmp(f[i], name, len) == 0)
            return f[i];
    return NULL;
}

/* Appends the names of fields to buf (of size n), separated by commas. */
static void list_fields(char *buf, size_t n, const char *const *f, size_t nf, const char *pre)
{
    for (size_t i = 0; i < nf; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s%s", i ? ", " : "", pre, f[i]);
    }
}

/* --- Parsing ----------------------------------------------------------------- */

static const char *blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The end of the number at p, as the docs define one: an optional sign, digits
** with an optional fraction (or a fraction alone), an optional exponent; no
** blank, nan, inf or hexadecimal.  p itself where there is none. */
static const char *number_end(const char *p)
{
    const char *q = p + (*p == '+' || *p == '-'), *d = q;

    while (*q >= '0' && *q <= '9')
        q++;
    if (*q == '.')
        for (q++; *q >= '0' && *q <= '9'; q++)
            ;
    if (q == d || (q == d + 1 && *d == '.'))
        return p;
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
        if (*e < '0' || *e > '9')
            return p;
        for (q = e; *q >= '0' && *q <= '9'; q++)
            ;
    }
    return q;
}

/* Parses one check s (len bytes, blanks allowed around its three parts only)
** into c.  0, or -1 with err. */
static int parse_one(struct gs_check *c, const char *s, size_t len, char *err, size_t errlen)
{
    char one[sizeof c->text];
    const char *p, *name, *num, *end;
    size_t nlen;
    int op;

    if (len >= sizeof one)
        return snprintf(err, errlen, "bad check '%.*s': too long", (int)len, s), -1;
    memcpy(one, s, len);
    one[len] = '\0';
    p = blanks(one);
    c->per_stream = strncmp(p, "streams.", 8) == 0;
    name = p += c->per_stream ? 8 : 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
           *p == '.')
        p++;
    nlen = (size_t)(p - name);
    p = blanks(p);
    for (op = 0; op < NOPS && strncmp(p, ops[op], strlen(ops[op])) != 0; op++)
        ;
    if (nlen == 0 || op == NOPS) {
        snprintf(err, errlen, "bad check '%s': expected FIELD OP NUMBER, OP one of >= <= > < == != "
                 "(hit_rate>=0.8, streams.launches_saved>=100; blanks only around the three parts)", one);
        return -1;
    }
    if (!(c->field = field_named(name, nlen, c->per_stream))) {
        char known[1024] = "";
        list_fields(known, sizeof known, total_fields, NFIELDS(total_fields), "");
        strncat(known, "; a stream's: ", sizeof known - strlen(known) - 1);
        list_fields(known, sizeof known, stream_fields, NFIELDS(stream_fields), "streams.");
        snprintf(err, errlen, "unknown field '%.*s%.*s' in check '%s'; the report's fields: %s",
                 c->per_stream ? 8 : 0, "streams.", (int)nlen, name, one, known);
        return -1;
    }
    c->op = op;
    num = blanks(p + strlen(ops[op]));
    end = number_end(num);
    if (end == num || *blanks(end)) {
        snprintf(err, errlen, "bad check '%s': '%s' is not a number (digits, with an optional sign, "
                 "fraction and exponent: 0.8, 1000, 1e3)", one, num);
        return -1;
    }
    c->value = strtod(num, NULL);
    /* The check as given, blanks removed: never longer than the text it came from. */
    return snprintf(c->text, sizeof c->text, "%s%.*s%s%.*s", c->per_stream ? "streams." : "", (int)nlen, name,
                    ops[op], (int)(end - num), num) < (int)sizeof c->text ? 0 : -1;
}

int gs__checks_parse(struct gs_checks *cs, const char *text, char *err, size_t errlen)
{
    const char *p = text;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (*blanks(p) == ',' || *blanks(p) == '\0') {
            snprintf(err, errlen, "bad check '%s': an empty check", text);
            return -1;
        }
        if (cs->n == GS_CHECKS_MAX) {
            snprintf(err, errlen, "more than %d checks", GS_CHECKS_MAX);
            return -1;
        }
        if (parse_one(&cs->c[cs->n], p, len, err, errlen) != 0)
            return -1;
        cs->n++;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* --- Reading a JSON report --------------------------------------------------------- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p at a value: the text after it, or NULL where the text is not JSON. */
static const char *skip(const char *p, int depth)
{
    char close;

    p = ws(p);
    if (depth > 64)
        return NULL;
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1])
                p++;
        return *p ? p + 1 : NULL;
    }
    if (*p != '{' && *p != '[') {
        const char *v = p;
        while (*p && !strchr(" \t\r\n,:}]", *p))
            p++;
        return p > v ? p : NULL;
    }
    close = *p == '{' ? '}' : ']';
    p = ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (*ws(p) != '"' || !(p = skip(p, depth + 1)) || *(p = ws(p)) != ':')
                return NULL;
            p++;
        }
        if (!(p = skip(p, depth + 1)))
            return NULL;
        p = ws(p);
        if (*p != ',')
            return *p == close ? p + 1 : NULL;
        p++;
    }
}

/* The value of key in the object at o, or NULL. */
static const char *member(const char *o, const char *key)
{
    size_t klen = strlen(key);
    const char *p = ws(o);

    if (*p != '{')
        return NULL;
    for (p = ws(p + 1); *p == '"'; p = ws(p + 1)) {
        const char *k = p + 1, *v = skip(p, 0);
        if (!v || *(v = ws(v)) != ':')
            return NULL;
        if ((size_t)(v - k) >= klen + 1 && ws(k + klen + 1) == v && memcmp(k, key, klen) == 0 && k[klen] == '"')
            return ws(v + 1);
        if (!(p = skip(v + 1, 0)) || *(p = ws(p)) != ',')
            return NULL;
    }
    return NULL;
}

/* The elements of the array at a: the first, and the one after e (NULL: none). */
static const char *first(const char *a)
{
    a = ws(a);
    if (*a != '[' || *ws(a + 1) == ']')
        return NULL;
    return ws(a + 1);
}

static const char *next(const char *e)
{
    if (!(e = skip(e, 0)) || *(e = ws(e)) != ',')
        return NULL;
    return ws(e + 1);
}

/* The number of field f in the object at o: 0 where it is absent or no number
** (a report of an earlier version). */
static double number(const char *o, const char *f)
{
    const char *v = member(o, f);
    char *end;
    double x;

    if (!v || !((*v >= '0' && *v <= '9') || *v == '-'))
        return 0;
    x = strtod(v, &end);
    return end > v ? x : 0;
}

/* The string of field f in the object at o (escapes kept, any byte outside
** printable ASCII as '?': it goes to a terminal), in buf; "?" where there is
** none. */
static const char *text_of(const char *o, const char *f, char *buf, size_t n)
{
    const char *v = member(o, f), *end;

    if (!v || *v != '"' || !(end = strchr(v + 1, '"')) || (size_t)(end - v) > n)
        return "?";
    memcpy(buf, v + 1, (size_t)(end - v - 1));
    buf[end - v - 1] = '\0';
    for (char *c = buf; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            *c = '?';
    return buf;
}

/* --- Evaluation ------------------------------------------------------------------- */

double gs__checks_ops(const char *text)
{
    const char *t = member(text, "totals");

    return t && *t == '{' ? number(t, "ops") : 0;
}

static int holds(int op, double a, double b)
{
    switch (op) {
    case OP_GE: return a >= b;
    case OP_LE: return a <= b;
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_GT: return a > b;
    default: return a < b;
    }
}

/* f of the object o; hit_rate from its counts, not its rounded figure. */
static double value_of(const char *o, const char *f)
{
    if (strcmp(f, "hit_rate") == 0) {
        double ops_n = number(o, "ops");
        return ops_n > 0 ? number(o, "ops_replayed") / ops_n : 0;
    }
    return number(o, f);
}

/* A check of the job: f summed over the reports' totals. */
static double job_value(const char *const *totals, int n, const char *f)
{
    double sum = 0, ops_n = 0;

    for (int i = 0; i < n; i++) {
        if (strcmp(f, "hit_rate") == 0) {
            sum += number(totals[i], "ops_replayed");
            ops_n += number(totals[i], "ops");
        } else {
            sum += number(totals[i], f);
        }
    }
    if (strcmp(f, "hit_rate") == 0)
        return ops_n > 0 ? sum / ops_n : 0;
    if (strcmp(f, "net_calls_saved") == 0) /* of the sums, as hit_rate */
        return job_value(totals, n, "ops_replayed") - job_value(totals, n, "own_calls");
    return sum;
}

int gs__checks_run(const struct gs_checks *cs, const char *const *texts, const char *const *names, int n,
                   FILE *out, const char *prefix)
{
    const char **totals = calloc((size_t)(n ? n : 1), sizeof *totals);
    int failed = 0;

    if (!totals)
        return fprintf(out, "%sno memory to check the report\n", prefix), -1;
    for (int i = 0; i < n; i++)
        if (!(totals[i] = member(texts[i], "totals")) || *totals[i] != '{') {
            fprintf(out, "%s%s: not a graphshim report (no \"totals\" object)\n", prefix, names[i]);
            free(totals);
            return -1;
        }
    if (job_value(totals, n, "ops") <= 0) {
        /* A gate that nothing was measured against fails: a check that holds
        ** "vacuously" (graph_failures==0 of no op) would pass a broken run. */
        fprintf(out, "%scheck failed: nothing was measured: %s no op (graphshim saw no kernel launch, copy or "
                "memset)\n", prefix, n > 1 ? "the reports count" : "the report counts");
        free(totals);
        return 1;
    }
    /* A report of a job that counts no op (a rank whose engine was off, or that
    ** never reached CUDA) would vanish from the sums: it fails the gate, named. */
    for (int i = 0; n > 1 && i < n; i++) {
        const char *e = member(texts[i], "engine");
        if (number(totals[i], "ops") > 0)
            continue;
        fprintf(out, "%scheck failed: nothing was measured in %s: %s\n", prefix, names[i],
                e && strncmp(e, "false", 5) == 0
                    ? "its engine was off (pass-through: GRAPHSHIM=0, a driver older than 12.4, no libcuda.so.1)"
                    : "it counts no op (no kernel launch, copy or memset reached graphshim)");
        failed++;
    }
    for (int k = 0; k < cs->n; k++) {
        const struct gs_check *c = &cs->c[k];
        int streams = 0;
        if (!c->per_stream) {
            double v = job_value(totals, n, c->field);
            if (!holds(c->op, v, c->value)) {
                fprintf(out, "%scheck failed: %s: %s is %.10g", prefix, c->text, c->field, v);
                fprintf(out, n > 1 ? " (%d reports)\n" : "\n", n);
                failed++;
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            const char *s = member(texts[i], "streams");
            for (s = s ? first(s) : NULL; s; s = next(s)) {
                double v = value_of(s, c->field);
                if (number(s, "ops") <= 0)
                    continue;
                streams++;
                if (holds(c->op, v, c->value))
                    continue;
                char kind[32], handle[32];
                fprintf(out, "%scheck failed: %s: stream %.0f (%s %s) of %s: %s is %.10g\n", prefix, c->text,
                        number(s, "id"), text_of(s, "kind", kind, sizeof kind),
                        text_of(s, "stream", handle, sizeof handle), names[i], c->field, v);
                failed++;
            }
        }
        if (!streams) { /* every stream of none holds it: that proves nothing */
            fprintf(out, "%scheck failed: %s: no stream saw an op, so no stream holds it\n", prefix, c->text);
            failed++;
        }
    }
    free(totals);
    return failed;
}
