/*
** engine.c: the engine's start, exit and fork; the checks of GRAPHSHIM_CHECK
** after the report (report/gate.c).
*/
#define _GNU_SOURCE
#include "engine.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../base/config.h"
#include "../base/log.h"
#include "../base/nvtx.h"
#include "../base/prof.h"
#include "../graph/layout.h"
#include "../report/gate.h"
#include "../report/report.h"
#include "../rules/resolve.h"
#include "../rules/watchdog.h"
#include "../stream/stream.h"

void gs__engine_init(void)
{
    gs__gate_init();
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
    static atomic_int done;

    if (atomic_exchange(&done, 1))
        return;
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

const char *gs__engine_kernel_name(CUfunction f)
{
    /* With the engine on, the layout's query tells the handle's kind (once a
    ** kernel): a launch that passed unheld (an attribute no key holds) has no
    ** layout yet, and a guess would be refused for a library's CUkernel. */
    const char *name = gs__passthrough ? gs__kernel_name_seen(f) : gs__kernel_name(f);

    return *name ? name : "?";
}
