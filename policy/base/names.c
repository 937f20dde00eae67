/*
** names.c: the names of bails, classes and rules (see names.h).
*/
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

atomic_long gs__calls_by_class[GS_NCLASSES];

static const char *const class_names[GS_NCLASSES] = {
    [GS_LAUNCH] = "launch", [GS_COPY] = "copy",       [GS_SET] = "set",         [GS_SYNC] = "sync",
    [GS_EVENT] = "event",   [GS_HOSTFN] = "hostfn",   [GS_SYNCOP] = "syncop",   [GS_ALLOC] = "alloc",
    [GS_STREAM] = "stream", [GS_CTX] = "ctx",         [GS_MODULE] = "module",   [GS_ATTR] = "attr",
    [GS_CAPTURE] = "capture", [GS_CURRENT] = "current", [GS_PROC] = "proc",
    [GS_QUERY] = "query",   [GS_UNCLASSIFIED] = "unclassified",
};

const char *gs__class_name(int cls)
{
    return cls >= 0 && cls < GS_NCLASSES ? class_names[cls] : "?";
}

const char *gs__bail_name(int b, char *buf, size_t len)
{
    static const char *const names[GS_BAIL_BOUNDARY] = {
        [GS_BAIL_MISMATCH] = "mismatch",         [GS_BAIL_WATCHDOG] = "watchdog",
        [GS_BAIL_GRAPH_FAILED] = "graph-failed", [GS_BAIL_OTHER_STREAM] = "legacy-stream-order",
        [GS_BAIL_APP_CAPTURE] = "app-capture",   [GS_BAIL_EXIT] = "exit",
        [GS_BAIL_UNHOLDABLE] = "unholdable-op",   [GS_BAIL_NO_GAIN] = "no-gain",
        [GS_BAIL_SYNC_BUSY] = "ctx-sync-in-progress", [GS_BAIL_BODY_END] = "body-end",
    };
    if (b < GS_BAIL_BOUNDARY)
        return names[b];
    snprintf(buf, len, "boundary-%s", gs__class_name(b - GS_BAIL_BOUNDARY));
    return buf;
}

#ifdef GS_TEST
int gs__dropped_rule;

static const char *const rule_names[] = {
    [GS_RULE_SYNC] = "sync", [GS_RULE_EVENT] = "event", [GS_RULE_HOSTFN] = "hostfn",
    [GS_RULE_ALLOC] = "alloc", [GS_RULE_SYNCOP] = "syncop", [GS_RULE_PAGEABLE_D2H] = "pageable-d2h",
    [GS_RULE_LEGACY] = "legacy", [GS_RULE_CAPTURE] = "capture", [GS_RULE_UNCLASSIFIED] = "unclassified",
    [GS_RULE_PARAMS] = "params", [GS_RULE_WATCHDOG] = "watchdog", [GS_RULE_STAGING] = "staging",
    [GS_RULE_STREAM_DESTROY] = "stream-destroy", [GS_RULE_MODULE] = "module",
    [GS_RULE_SYNC_CAPTURE] = "sync-capture", [GS_RULE_CURRENT] = "current", [GS_RULE_BUDGET] = "budget",
    [GS_RULE_ATTR_KEEP] = "attr-keep", [GS_RULE_HOPELESS_REST] = "hopeless-rest",
    [GS_RULE_SHORT_TAIL] = "short-tail", [GS_RULE_CHUNK_IDLE] = "chunk-idle", [GS_RULE_HOST_BIND] = "host-bind",
    [GS_RULE_BIG_BODY] = "big-body", [GS_RULE_COPY_RANGE] = "copy-range",
    [GS_RULE_DRAIN] = "drain", [GS_RULE_RESUME] = "resume",
};

void gs__drop_rule(void)
{
    const char *name = getenv("GRAPHSHIM_TEST_DROP_RULE");
    char q[GS_QUOTE_LEN];

    if (!name || !name[0])
        return;
    for (int r = 1; r < (int)(sizeof rule_names / sizeof rule_names[0]); r++)
        if (strcmp(name, rule_names[r]) == 0)
            gs__dropped_rule = r;
    if (gs__dropped_rule)
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s is set: the test build turns the %s rule off, so results "
                "may be wrong; unset it", rule_names[gs__dropped_rule], rule_names[gs__dropped_rule]);
    else
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_DROP_RULE=%s names no rule (%s): every rule stays on",
                gs__quote(name, q), GS_RULE_NAMES);
}
#endif
