/*
** engine.c: the engine's start, exit and fork; the checks of GRAPHSHIM_CHECK
** after the report.
*/
#define _GNU_SOURCE
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../base/check.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/nvtx.h"
#include "../base/prof.h"
#include "../report/report.h"
#include "../rules/resolve.h"
#include "../rules/watchdog.h"
#include "../stream/stream.h"

static struct gs_checks checks;

/* An exit handler (on_exit) registered before the one that writes the report,
** so it runs after it: prints the checks that fail on this process's report
** and, with GRAPHSHIM_CHECK_EXIT=1 where the program exits with status 0,
** exits with status 1. */
static void check_at_exit(int status, void *arg)
{
    const char *name = "this process's report";
    char *json;
    int failed;

    (void)arg;
    if (!gs__cfg.check || !(json = gs__report_json()))
        return;
    failed = gs__checks_run(&checks, (const char *const *)&json, &name, 1, stderr, "graphshim: ");
    free(json);
    if (failed > 0 && gs__cfg.check_exit && status == 0) {
        fflush(NULL);
        _exit(1);
    }
}

/* GRAPHSHIM_CHECK: a bad value is reported once, and nothing is checked. */
static void checks_init(void)
{
    char err[2048];

    if (!gs__cfg.check)
        return;
    if (gs__checks_parse(&checks, gs__cfg.path[GS_KNOB_check], err, sizeof err) != 0) {
        gs__warn("GRAPHSHIM_CHECK: %s: nothing is checked", err);
        gs__cfg.check = 0;
    } else if (on_exit(check_at_exit, NULL) != 0) {
        gs__cfg.check = 0;
    }
}

void gs__engine_init(void)
{
    checks_init();
    if (gs__passthrough)
        return;
    gs__drop_rule();
    gs__nvtx_init();
    if (GS_DROPPED(GS_RULE_WATCHDOG))
        return;
    if (gs__watchdog_start() != 0) {
        gs__warn("cannot start the watchdog thread: the engine is off");
        gs__passthrough = 1;
    }
}

void gs__engine_exit(void)
{
    if (!gs__passthrough) {
        gs__tls.depth++;
        gs__resolve_some(GS_RESOLVE_ALL, NULL, GS_BAIL_EXIT);
        gs__tls.depth--;
    }
    gs__report_write();
    gs__prof_print();
}

void gs__engine_fork(int phase)
{
    if (phase == 0) {
        pthread_mutex_lock(&gs__table_lock);
    } else {
        pthread_mutex_unlock(&gs__table_lock);
        if (phase == 2 && gs__watchdog_running()) {
            /* The child has no watchdog thread: it must hold nothing.  Nor
            ** does it write a report: its counters are the parent's, whose
            ** report would find the name taken. */
            gs__passthrough = 1;
            gs__cfg.report = 0;
            gs__cfg.check = 0;
        }
    }
}
