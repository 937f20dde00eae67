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
int gs__dropped_rule;
uint64_t (*gs__test_clock)(void); /* base/clock.h, set by interpose/test_clock.c */

static const char *const rule_names[] = {
#define GS_RULE_NAME(id, name, doc) [GS_RULE_##id] = name,
    GS_RULES(GS_RULE_NAME)
#undef GS_RULE_NAME
};

void gs__drop_rule(void)
{
    const char *name = getenv("GRAPHSHIM_TEST_DROP_RULE");
    char q[GS_QUOTE_LEN], all[512] = "";

    if (!name || !name[0])
        return;
    for (int r = 1; r < (int)(sizeof rule_names / sizeof rule_names[0]); r++)
        if (strcmp(name, rule_names[r]) == 0)
            gs__dropped_rule = r;
    if (gs__dropped_rule)
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s is set: the test build turns the %s rule off, so results "
                "may be wrong; unset it", rule_names[gs__dropped_rule], rule_names[gs__dropped_rule]);
    else {
        for (int r = 1; r < (int)(sizeof rule_names / sizeof rule_names[0]); r++)
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", r > 1 ? ", " : "", rule_names[r]);
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s names no rule (%s): every rule stays on",
                gs__quote(name, q), all);
    }
}
#endif
