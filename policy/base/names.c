/*
** names.c: the names of bails, classes and rules (see names.h).
*/
#include "names.h"

#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

atomic_long gs__calls_by_class[GS_NCLASSES];

static const char *const class_names[GS_NCLASSES] = {
#define GS_CLASS_NAME(id, name, rule, doc) [GS_##id] = name,
    GS_CLASSES(GS_CLASS_NAME)
#undef GS_CLASS_NAME
};

const char *gs__class_name(int cls)
{
    return cls >= 0 && cls < GS_NCLASSES ? class_names[cls] : "?";
}

const char *gs__bail_name(int b, char *buf, size_t len)
{
    static const char *const names[GS_BAIL_BOUNDARY] = {
#define GS_BAIL_NAME(id, name, doc) [GS_BAIL_##id] = name,
        GS_BAILS(GS_BAIL_NAME)
#undef GS_BAIL_NAME
    };
    if (b < GS_BAIL_BOUNDARY)
        return names[b];
    snprintf(buf, len, "boundary-%s", gs__class_name(b - GS_BAIL_BOUNDARY));
    return buf;
}

#ifdef GS_TEST
uint64_t gs__dropped_rules;
uint64_t (*gs__test_clock)(void); /* base/clock.h, set by interpose/test_clock.c */

static const char *const rule_names[] = {
#define GS_RULE_NAME(id, name, doc) [GS_RULE_##id] = name,
    GS_RULES(GS_RULE_NAME)
#undef GS_RULE_NAME
};
#define GS_NRULES (int)(sizeof rule_names / sizeof rule_names[0])
_Static_assert(sizeof rule_names / sizeof rule_names[0] <= 64, "gs__dropped_rules: a bit a rule");

/* The rule called name (len bytes), or 0. */
static int rule_named(const char *name, size_t len)
{
    for (int r = 1; r < GS_NRULES; r++)
        if (strlen(rule_names[r]) == len && strncmp(name, rule_names[r], len) == 0)
            return r;
    return 0;
}

void gs__drop_rule(void)
{
    const char *names = getenv("GRAPHSHIM_TEST_DROP_RULE");
    char q[GS_QUOTE_LEN], all[768] = "";

    if (!names || !names[0])
        return;
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ",");
        int r = rule_named(p, len);
        if (!r) {
            gs__dropped_rules = 0;
            for (r = 1; r < GS_NRULES; r++)
                snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", r > 1 ? ", " : "", rule_names[r]);
            gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s names no rule (%s): every rule stays on",
                    gs__quote(names, q), all);
            return;
        }
        gs__dropped_rules |= 1ull << r;
        p += len + (p[len] == ',');
    }
    gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s is set: the test build turns these rules off, so results "
            "may be wrong; unset it", gs__quote(names, q));
}
#endif
