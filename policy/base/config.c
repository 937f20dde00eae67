/*
** config.c: parsing of the GRAPHSHIM_* knobs (see config.h).
**
** Parsing is uniform: every knob is read by type from its descriptor, by one
** grammar (config.h).  An unparsable or out-of-range value gives one warning
** naming the variable, the value (escaped, see gs__quote) and the default that
** is used instead.  Then a GRAPHSHIM_* variable of the environment that names no
** knob gets a warning with the closest name, so a misspelled knob is not silently
** ignored.  Last come the expansion of %p, %r and %% in path knobs, shared by the
** report and the trace.
*/
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

extern char **environ;

const struct gs_knob gs__knobs[] = {
#define GS_KNOB_DESC(field, name, type, def, min, max, doc) {name, type, def, min, max, doc},
    GS_KNOBS(GS_KNOB_DESC)
#undef GS_KNOB_DESC
};

struct gs_config gs__cfg = {
#define GS_KNOB_INIT(field, name, type, def, min, max, doc) .field = def,
    GS_KNOBS(GS_KNOB_INIT)
#undef GS_KNOB_INIT
};

/* GRAPHSHIM_* variables that are no knob but are read by graphshim's own
** scripts (samples/gpu-test.sh, samples/sanitize.sh), so they reach programs. */
static const char *const script_names[] = {
    "GRAPHSHIM_LIB",
    "GRAPHSHIM_GATE_DIR", /* the launcher's folder for the gate's marks (report/gate.c) */
#ifdef GS_TEST
    "GRAPHSHIM_TEST_FAULT", /* the test build's failing graph calls (interpose/test_fault.c) */
    "GRAPHSHIM_TEST_FAULT_RANK",
    "GRAPHSHIM_TEST_NO_ENTRY", /* the test build's driver without some entry points (interpose/test_fault.c) */
    "GRAPHSHIM_TEST_FAIL_ALLOC", /* the test build's failing allocations of its own (interpose/test_alloc.c) */
    "GRAPHSHIM_TEST_OWN_FAIL",   /* the test build's failing own driver calls (interpose/test_own.c) */
    "GRAPHSHIM_TEST_OWN_COUNTS", /* and where it writes how many it made */
    "GRAPHSHIM_TEST_DROP_RULE", /* the test build's guard rule turned off (base/names.h) */
    "GRAPHSHIM_TEST_CLOCK",     /* the test build's clock: fake (interpose/test_clock.c) */
#endif
};

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* The words of an on/off knob, in any case: those of on_words turn it on, those
** of off_words off. */
static const char *const on_words[] = {"1", "on", "true", "yes"};
static const char *const off_words[] = {"0", "off", "false", "no"};

const char *gs__knob_default_text(const struct gs_knob *k, char *buf, int len)
{
    switch (k->type) {
    case GS_KNOB_LEVEL:
        return level_names[k->def];
    case GS_KNOB_PATH:
    case GS_KNOB_TEXT:
        return "unset";
    default:
        snprintf(buf, (size_t)len, "%ld", k->def);
        return buf;
    }
}

/* Is s an integer by the grammar: an optional sign, then decimal digits only? */
static int is_integer(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int gs__knob_parse(const struct gs_knob *k, const char *s, long *out, const char **why)
{
    static const char *const blanks = "blanks around a value are not accepted";
    size_t n = strlen(s);
    const char *dummy;
    long v;

    if (!why)
        why = &dummy;
    *why = NULL;
    if (n && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]))) {
        *why = blanks;
        return -1;
    }
    switch (k->type) {
    case GS_KNOB_BOOL:
        for (size_t i = 0; i < sizeof on_words / sizeof on_words[0]; i++) {
            if (strcasecmp(s, on_words[i]) == 0 || strcasecmp(s, off_words[i]) == 0) {
                *out = strcasecmp(s, on_words[i]) == 0;
                return 0;
            }
        }
        return -1;
    case GS_KNOB_LEVEL:
        for (int i = 0; i <= GS_LOG_DEBUG; i++) {
            if (strcasecmp(s, level_names[i]) == 0) {
                *out = i;
                return 0;
            }
        }
        return -1;
    case GS_KNOB_PATH:
    case GS_KNOB_TEXT:
        if (n >= (k->type == GS_KNOB_PATH ? GS_KNOB_PATH_MAX : GS_KNOB_TEXT_MAX)) {
            *why = k->type == GS_KNOB_PATH ? "longer than 1023 bytes" : "longer than 4095 bytes";
            return -1;
        }
        *out = 1;
        return 0;
    default:
        if (!is_integer(s))
            return -1;
        errno = 0;
        v = strtol(s, NULL, 10);
        if (errno || v < k->min || v > k->max)
            return -1;
        *out = v;
        return 0;
    }
}

static const char *knob_range_text(const struct gs_knob *k, char *buf, size_t len)
{
    if (k->type == GS_KNOB_LEVEL)
        return "expected error, warn, info or debug";
    if (k->type == GS_KNOB_BOOL)
        return "expected 1 or 0 (or on/off, true/false, yes/no)";
    snprintf(buf, len, "expected an integer from %ld to %ld", k->min, k->max);
    return buf;
}

/* The optimal string alignment distance between a and b, upper case: edits of
** one character (insert, delete, replace, swap two neighbours) from one to the
** other.  Names longer than 63 bytes are compared by their first 63. */
static int name_distance(const char *a, const char *b)
{
    enum { M = 64 };
    int d[M][M];
    int n = (int)strnlen(a, M - 1), m = (int)strnlen(b, M - 1);

    for (int i = 0; i <= n; i++)
        d[i][0] = i;
    for (int j = 0; j <= m; j++)
        d[0][j] = j;
    for (int i = 1; i <= n; i++) {
        for (int j = 1; j <= m; j++) {
            int ca = toupper((unsigned char)a[i - 1]), cb = toupper((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == toupper((unsigned char)b[j - 2]) && toupper((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

/* Warns about each variable of the environment whose name starts with GRAPHSHIM
** (in any case) and is no knob, naming the closest knob where one is near. */
static void check_names(void)
{
    for (char **e = environ; e && *e; e++) {
        char name[128], q[GS_QUOTE_LEN];
        size_t n = strcspn(*e, "=");
        int known = 0, best = -1, best_d = 1 << 30;

        if (strncasecmp(*e, "GRAPHSHIM", 9) != 0)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), *e);
        for (int i = 0; i < GS_NKNOBS && !known; i++)
            known = n == strlen(gs__knobs[i].name) && strncmp(*e, gs__knobs[i].name, n) == 0;
        for (size_t i = 0; i < sizeof script_names / sizeof script_names[0] && !known; i++)
            known = n == strlen(script_names[i]) && strncmp(*e, script_names[i], n) == 0;
        if (known)
            continue;
        for (int i = 0; i < GS_NKNOBS; i++) {
            int d = name_distance(name, gs__knobs[i].name);
            if (d < best_d)
                best_d = d, best = i;
        }
        if (best >= 0 && best_d <= 3)
            gs__warn("%s is not a graphshim setting (did you mean %s?); it is ignored", gs__quote(name, q),
                     gs__knobs[best].name);
        else
            gs__warn("%s is not a graphshim setting (the settings are listed in docs/knobs.md); it is ignored",
                     gs__quote(name, q));
    }
}

int gs__config_load(void)
{
    long *fields[] = {
#define GS_KNOB_PTR(field, name, type, def, min, max, doc) &gs__cfg.field,
        GS_KNOBS(GS_KNOB_PTR)
#undef GS_KNOB_PTR
    };
    int bad = 0;

    /* GRAPHSHIM_LOG first: it decides which of the warnings below are shown. */
    for (int j = -1; j < GS_NKNOBS; j++) {
        int i = j < 0 ? GS_KNOB_log : j;
        const struct gs_knob *k = &gs__knobs[i];
        const char *s = getenv(k->name), *why;
        char dbuf[32], rbuf[64], q[GS_QUOTE_LEN];

        if (j == 0) /* GRAPHSHIM_LOG is read */
            gs__log_level = (int)gs__cfg.log;
        if (j == GS_KNOB_log)
            continue;
        *fields[i] = k->def;
        gs__cfg.path[i][0] = '\0';
        if (!s)
            continue;
        if (i == GS_KNOB_check_exit && getenv(gs__knobs[GS_KNOB_check].name) &&
            (!*s || gs__knob_parse(k, s, fields[i], NULL) != 0)) {
            *fields[i] = k->def;
            bad++; /* no default under a set GRAPHSHIM_CHECK: the gate fails closed (report/gate.c says so) */
            continue;
        }
        if (!*s) {
            bad++;
            gs__warn("%s is set to the empty string, which is no value; using the default, %s (unset it, or "
                     "give it a value)",
                     k->name, gs__knob_default_text(k, dbuf, sizeof dbuf));
            continue;
        }
        if (gs__knob_parse(k, s, fields[i], &why) != 0) {
            bad++;
            *fields[i] = k->def;
            gs__warn("%s=\"%s\" is not valid (%s); using the default, %s", k->name, gs__quote(s, q),
                     why ? why : knob_range_text(k, rbuf, sizeof rbuf), gs__knob_default_text(k, dbuf, sizeof dbuf));
        } else if (k->type == GS_KNOB_PATH || k->type == GS_KNOB_TEXT) {
            memcpy(gs__cfg.path[i], s, strlen(s) + 1);
        }
    }
    check_names();
    for (int i = 0; i < GS_NKNOBS; i++) {
        const struct gs_knob *k = &gs__knobs[i];
        char vbuf[32], q[GS_QUOTE_LEN];
        const char *v = vbuf;

        if (k->type == GS_KNOB_PATH || k->type == GS_KNOB_TEXT)
            v = gs__cfg.path[i][0] ? gs__quote(gs__cfg.path[i], q) : "unset";
        else if (k->type == GS_KNOB_LEVEL)
            v = level_names[*fields[i]];
        else
            snprintf(vbuf, sizeof vbuf, "%ld", *fields[i]);
        gs__debug("setting %s=%s", k->name, v);
    }
    return bad;
}

/* --- Paths ------------------------------------------------------------------ */

const char *gs__job_rank(void)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"};

    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        size_t n = v ? strspn(v, "0123456789") : 0;
        if (n > 0 && n <= 9 && v[n] == 0)
            return v;
    }
    return "x";
}

int gs__path_expand(const char *in, char *out, size_t len)
{
    size_t n = 0;

    for (; *in; in++) {
        char pid[24];
        const char *put = NULL;
        size_t m;

        if (in[0] == '%' && in[1] == 'p') {
            snprintf(pid, sizeof pid, "%ld", (long)getpid());
            put = pid;
        } else if (in[0] == '%' && in[1] == 'r') {
            put = gs__job_rank();
        } else if (in[0] == '%' && in[1] == '%') {
            put = "%";
        }
        if (put)
            in++;
        else
            pid[0] = *in, pid[1] = '\0', put = pid;
        m = strlen(put);
        if (n + m >= len)
            return -1;
        memcpy(out + n, put, m);
        n += m;
    }
    if (n >= len)
        return -1;
    out[n] = '\0';
    return 0;
}

int gs__path_is_stderr(const char *s)
{
    return strcmp(s, "-") == 0 || strcmp(s, "stderr") == 0;
}
