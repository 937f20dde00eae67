/*
** config.c: parsing of the GRAPHSHIM_* knobs (see config.h).
**
** Parsing is uniform: every knob is read by type from its descriptor.  An
** unparsable or out-of-range value gives one warning naming the variable and the
** default that is used instead.
*/
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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

static const char *const level_names[] = {"error", "warn", "info", "debug"};

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

/* Parses s as knob k.  Returns 0 and the value in *out, or -1 if it is bad. */
static int parse_value(const struct gs_knob *k, const char *s, long *out)
{
    char *end;
    long v;

    if (k->type == GS_KNOB_LEVEL) {
        for (int i = 0; i <= GS_LOG_DEBUG; i++) {
            if (strcasecmp(s, level_names[i]) == 0) {
                *out = i;
                return 0;
            }
        }
        return -1;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < k->min || v > k->max)
        return -1;
    *out = v;
    return 0;
}

static const char *knob_range_text(const struct gs_knob *k, char *buf, size_t len)
{
    if (k->type == GS_KNOB_LEVEL)
        return "error, warn, info or debug";
    snprintf(buf, len, "an integer from %ld to %ld", k->min, k->max);
    return buf;
}

int gs__config_load(void)
{
    long *fields[] = {
#define GS_KNOB_PTR(field, name, type, def, min, max, doc) &gs__cfg.field,
        GS_KNOBS(GS_KNOB_PTR)
#undef GS_KNOB_PTR
    };
    int bad = 0;

    for (int i = 0; i < GS_NKNOBS; i++) {
        const struct gs_knob *k = &gs__knobs[i];
        const char *s = getenv(k->name);
        char dbuf[32], rbuf[64];

        *fields[i] = k->def;
        gs__cfg.path[i][0] = '\0';
        if (!s || !*s)
            continue;
        if (k->type == GS_KNOB_PATH || k->type == GS_KNOB_TEXT) {
            snprintf(gs__cfg.path[i], sizeof gs__cfg.path[i], "%s", s);
            *fields[i] = 1;
        } else if (parse_value(k, s, fields[i]) != 0) {
            bad++;
            *fields[i] = k->def;
            gs__warn("%s=\"%s\" is not valid (expected %s); using the default, %s", k->name, s,
                     knob_range_text(k, rbuf, sizeof rbuf), gs__knob_default_text(k, dbuf, sizeof dbuf));
        }
    }
    for (int i = 0; i < GS_NKNOBS; i++) {
        const struct gs_knob *k = &gs__knobs[i];
        char vbuf[32];
        const char *v = vbuf;

        if (k->type == GS_KNOB_PATH || k->type == GS_KNOB_TEXT)
            v = gs__cfg.path[i][0] ? gs__cfg.path[i] : "unset";
        else if (k->type == GS_KNOB_LEVEL)
            v = level_names[*fields[i]];
        else
            snprintf(vbuf, sizeof vbuf, "%ld", *fields[i]);
        gs__debug("setting %s=%s", k->name, v);
    }
    return bad;
}
