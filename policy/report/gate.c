/*
** gate.c: GRAPHSHIM_CHECK at exit, a gate for CI (see gate.h).
**
** Three ways a gate could pass a run it should fail, each closed here: a
** check that cannot be read (with GRAPHSHIM_CHECK_EXIT the run fails, status
** 2); a process that measured nothing (no op: it never reached CUDA, or made
** no launch, copy or memset), judged for the whole run by its first process;
** and a check that fails (status 1).  The checks themselves are
** policy/base/check.c, shared with `graphshim report --check`.
**
** The run is the line of processes that carry the same GRAPHSHIM_CHECK (run.h):
** a process that measured something leaves a mark for it, a file in the
** temporary folder named by the run, which its first process reads and
** removes at its exit.  So a shell or launcher that starts the CUDA program
** passes where the program did, and fails where none measured anything.  A
** first process that ends with _exit (dash does) runs no exit handler: it
** neither judges nor removes the mark.
*/
#define _GNU_SOURCE
#include "gate.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../driver/driver.h"
#include "../base/check.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/run.h"
#include "report.h"

#define GATE_BAD 2 /* the exit status of a run whose checks could not be read */

static struct gs_checks checks;
static int bad; /* GRAPHSHIM_CHECK could not be read */

/* The mark of run r (a process of it measured something) into out (len
** bytes).  Returns 0, or -1 where the run has no name. */
static int mark_path(const struct gs_run *r, char *out, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char id[sizeof r->id];

    if (!r->id[0])
        return -1;
    snprintf(id, sizeof id, "%s", r->id);
    for (char *c = id; *c; c++)
        if (*c == ':')
            *c = '-';
    return snprintf(out, len, "%s/graphshim-gate.%u.%s", dir && *dir ? dir : "/tmp", (unsigned)getuid(), id) <
                   (int)len ? 0 : -1;
}

/* Leaves the mark that something was measured, for the run's first process. */
static void mark_measured(const char *value)
{
    struct gs_run r = gs__run_walk_knob(GS_KNOB_check, value);
    char path[4096];
    int fd;

    if (mark_path(&r, path, sizeof path) == 0 &&
        (fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0)
        close(fd);
}

/* In the run's first process, at exit: did a process of the run measure
** something?  Takes the mark away.  1 where it cannot tell (no /proc): a gate
** that cannot judge says nothing rather than fail a good run. */
static int run_measured(const char *value)
{
    struct gs_run r = gs__run_walk_knob(GS_KNOB_check, value);
    char path[4096];

    if (mark_path(&r, path, sizeof path) != 0)
        return 1;
    return unlink(path) == 0;
}

/* The end of a process that measured nothing: where it begins the run and no
** process of the run measured anything, the gate fails, saying why. */
static void nothing_measured(int status, const char *value)
{
    if (!gs__run_begins_here_knob(GS_KNOB_check, value) || run_measured(value))
        return;
    fprintf(stderr, "graphshim: check failed: nothing was measured: no process of this run launched a kernel, "
                    "copy or memset through CUDA (graphshim starts at the first driver call), so GRAPHSHIM_CHECK "
                    "holds nothing\n");
    if (status == 0) {
        fflush(NULL);
        _exit(1);
    }
}

/* The end of a run whose GRAPHSHIM_CHECK could not be read (warned at start). */
static void bad_at_exit(int status)
{
    if (status != 0)
        return;
    fprintf(stderr, "graphshim: GRAPHSHIM_CHECK could not be read (see the warning above), so the run fails "
                    "with exit status %d (GRAPHSHIM_CHECK_EXIT=1)\n", GATE_BAD);
    fflush(NULL);
    _exit(GATE_BAD);
}

/* An exit handler (on_exit) registered before the one that writes the report,
** so it runs after it: prints the checks that fail on this process's report
** and, with GRAPHSHIM_CHECK_EXIT=1 where the program exits with status 0,
** exits with status 1 (2 for checks that could not be read). */
static void check_at_exit(int status, void *arg)
{
    const char *name = "this process's report", *value = gs__cfg.path[GS_KNOB_check];
    char *json;
    int failed;

    (void)arg;
    if (!gs__cfg.check)
        return;
    if (bad) {
        if (gs__cfg.check_exit)
            bad_at_exit(status);
        return;
    }
    if (!(json = gs__report_json()))
        return;
    if (gs__checks_ops(json) <= 0) { /* the run's first process judges */
        free(json);
        nothing_measured(gs__cfg.check_exit ? status : 1, value);
        return;
    }
    if (gs__run_begins_here_knob(GS_KNOB_check, value))
        run_measured(value); /* takes away any mark a child left */
    else
        mark_measured(value);
    failed = gs__checks_run(&checks, (const char *const *)&json, &name, 1, stderr, "graphshim: ");
    free(json);
    if (failed > 0 && gs__cfg.check_exit && status == 0) {
        fflush(NULL);
        _exit(1);
    }
}

void gs__gate_init(void)
{
    char err[2048];

    if (!gs__cfg.check)
        return;
    if (gs__checks_parse(&checks, gs__cfg.path[GS_KNOB_check], err, sizeof err) != 0) {
        bad = 1;
        gs__warn("GRAPHSHIM_CHECK: %s: nothing is checked%s", err,
                 gs__cfg.check_exit ? ", and the run fails (GRAPHSHIM_CHECK_EXIT=1)" : "");
    }
    if (on_exit(check_at_exit, NULL) != 0)
        gs__cfg.check = 0;
}

/* --- A process where graphshim never started ---------------------------------- */

/* Registered at load, so it runs after every exit handler the program
** registers: in a process that made no driver call, with GRAPHSHIM_CHECK and
** GRAPHSHIM_CHECK_EXIT set, the run's first process fails the gate where
** nothing was measured, and any process where the checks cannot be read. */
static void unstarted_at_exit(int status, void *arg)
{
    const char *value = getenv(gs__knobs[GS_KNOB_check].name);
    static struct gs_checks cs;
    char err[2048];

    (void)arg;
    if (atomic_load_explicit(&gs__ready, memory_order_acquire) || !value || !*value)
        return;
    if (gs__checks_parse(&cs, value, err, sizeof err) != 0) {
        fprintf(stderr, "graphshim: GRAPHSHIM_CHECK: %s\n", err);
        bad_at_exit(status);
        return;
    }
    nothing_measured(status, value);
}

__attribute__((constructor)) static void gate_register(void)
{
    const char *ex = getenv(gs__knobs[GS_KNOB_check_exit].name);
    long on = 0;

    if (ex && *ex && gs__knob_parse(&gs__knobs[GS_KNOB_check_exit], ex, &on, NULL) == 0 && on &&
        getenv(gs__knobs[GS_KNOB_check].name))
        on_exit(unstarted_at_exit, NULL);
}
