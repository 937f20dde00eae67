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
**
** Under `graphshim run` the launcher judges instead (scripts/gate.c): it names
** a folder of its own in GRAPHSHIM_GATE_DIR, and each process of the run that
** starts graphshim leaves its marks there (gate_dir_mark): "start.PID" at the
** start, holding "on" or "off" (the engine's state), and "end.PID" at exit,
** holding "measured", "measured failed" (a check failed), "none" or "off".  The
** launcher waits for the whole run, so it judges where a process ended with
** _exit, a shell ran another command after the failing one, or TMPDIR changed.
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
static int bad; /* GRAPHSHIM_CHECK (or GRAPHSHIM_CHECK_EXIT under it) could not be read */
static char gate_dir[GS_KNOB_TEXT_MAX]; /* GRAPHSHIM_GATE_DIR: the launcher's folder; "" where none */

/* Writes the mark NAME.PID holding what into the launcher's folder. */
static void gate_dir_mark(const char *name, const char *what)
{
    char path[GS_KNOB_TEXT_MAX + 64];
    int fd;

    if (snprintf(path, sizeof path, "%s/%s.%ld", gate_dir, name, (long)getpid()) >= (int)sizeof path)
        return;
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
        return;
    if (write(fd, what, strlen(what)) < 0) {
        /* The launcher reads an empty mark as one it cannot tell: it fails closed. */
    }
    close(fd);
}

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

/* Leaves the mark that something was measured, for the run's first process:
** a byte 'f' appended where a check failed (the mark stays failed whatever
** later processes of the run append). */
static void mark_measured(const char *value, int failed)
{
    struct gs_run r = gs__run_walk_knob(GS_KNOB_check, value);
    char path[4096];
    int fd;

    if (mark_path(&r, path, sizeof path) == 0 &&
        (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
        if (failed && write(fd, "f", 1) != 1) {
            /* An empty mark: measured, failed unseen; the process's own status says it. */
        }
        close(fd);
    }
}

/* In the run's first process, at exit: did a process of the run measure
** something (1), and did one fail a check (2)?  0 where none measured.  Takes
** the mark away.  1 where it cannot tell (no /proc): a gate that cannot judge
** says nothing rather than fail a good run. */
static int run_measured(const char *value)
{
    struct gs_run r = gs__run_walk_knob(GS_KNOB_check, value);
    char path[4096], f = 0;
    int fd;

    if (mark_path(&r, path, sizeof path) != 0)
        return 1;
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return 0;
    if (read(fd, &f, 1) != 1)
        f = 0;
    close(fd);
    unlink(path);
    if (f != 'f')
        return 1;
    fprintf(stderr, "graphshim: check failed: a process of this run failed its checks (above), so the run "
                    "fails\n");
    return 2;
}

/* The end of a process that measured nothing: where it begins the run and no
** process of the run measured anything, the gate fails, saying why.  Returns 1
** where it failed. */
static int nothing_measured(const char *value)
{
    int m;

    if (!gs__run_begins_here_knob(GS_KNOB_check, value) || (m = run_measured(value)) == 1)
        return 0;
    if (m == 2)
        return 1;
    fprintf(stderr, "graphshim: check failed: nothing was measured: no process of this run that ended through "
                    "its exit handlers launched a kernel, copy or memset through CUDA with graphshim's engine on "
                    "(the program made no CUDA call, GRAPHSHIM=0 or a driver older than 12.4 turned the engine off, "
                    "a process ended with _exit, or TMPDIR changed on the way), so GRAPHSHIM_CHECK holds nothing; "
                    "graphshim run judges the whole run\n");
    return 1;
}

/* Ends the process with status v where the gate failed (v not 0) and the
** program exits with status 0 under GRAPHSHIM_CHECK_EXIT=1. */
static void fail_exit(int status, int v)
{
    if (!v || status != 0)
        return;
    if (v == GATE_BAD)
        fprintf(stderr, "graphshim: GRAPHSHIM_CHECK or GRAPHSHIM_CHECK_EXIT could not be read (see the warning "
                        "above), so the run fails with exit status %d\n", GATE_BAD);
    fflush(NULL);
    _exit(v);
}

/* Judges this process, once: prints the checks that fail on its report, leaves
** its marks, and, in the run's first process, says where the run measured
** nothing.  Returns 0 where the gate passes, 1 where it fails, GATE_BAD where
** the checks could not be read. */
static int judge_once(void)
{
    static int verdict = -1;
    const char *name = "this process's report", *value = gs__cfg.path[GS_KNOB_check];
    char *json;
    int failed, child_failed = 0;

    if (verdict >= 0)
        return verdict;
    verdict = 0;
    if (bad)
        return verdict = GATE_BAD;
    if (!(json = gs__report_json()))
        return verdict;
    if (gs__checks_ops(json) <= 0) { /* the run's first process, or the launcher, judges */
        free(json);
        if (gate_dir[0])
            gate_dir_mark("end", gs__passthrough ? "off" : "none");
        else
            verdict = nothing_measured(value);
        return verdict;
    }
    failed = gs__checks_run(&checks, (const char *const *)&json, &name, 1, stderr, "graphshim: ");
    free(json);
    if (gate_dir[0])
        gate_dir_mark("end", failed != 0 ? "measured failed" : "measured"); /* the launcher judges the run */
    else if (gs__run_begins_here_knob(GS_KNOB_check, value))
        child_failed = run_measured(value) == 2; /* takes away any mark a child left */
    else
        mark_measured(value, failed != 0);
    return verdict = failed > 0 || child_failed;
}

/* An exit handler (on_exit) registered before the one that writes the report,
** so it runs after it: judges the process (judge_once) and, with
** GRAPHSHIM_CHECK_EXIT=1 where the program exits with status 0, exits with
** status 1 where the gate failed (2 for checks that could not be read). */
static void check_at_exit(int status, void *arg)
{
    int v;

    (void)arg;
    if (!gs__cfg.check)
        return;
    v = judge_once();
    if (gs__cfg.check_exit)
        fail_exit(status, v);
}

void gs__gate_judge(void)
{
    if (gs__cfg.check)
        judge_once();
}

/* GRAPHSHIM_CHECK_EXIT's value under a set GRAPHSHIM_CHECK: 0 or 1, or -1 where
** it is set but cannot be read (' 1', 2, enabled, empty): a gate that cannot
** tell whether it is on fails closed. */
static int check_exit_value(void)
{
    const char *ex = getenv(gs__knobs[GS_KNOB_check_exit].name);
    long on = 0;

    if (!ex)
        return 0;
    return *ex && gs__knob_parse(&gs__knobs[GS_KNOB_check_exit], ex, &on, NULL) == 0 ? (int)on : -1;
}

void gs__gate_init(void)
{
    const char *dir = getenv("GRAPHSHIM_GATE_DIR");
    char err[2048];

    if (!gs__cfg.check)
        return;
    if (dir && *dir == '/' && strlen(dir) < sizeof gate_dir)
        memcpy(gate_dir, dir, strlen(dir) + 1);
    if (check_exit_value() < 0) {
        char q[GS_QUOTE_LEN];
        bad = 1;
        gs__cfg.check_exit = 1;
        gs__warn("GRAPHSHIM_CHECK_EXIT=\"%s\" cannot be read (expected 1 or 0, or on/off, true/false, yes/no, "
                 "without blanks) under GRAPHSHIM_CHECK: the gate fails closed, and the run fails",
                 gs__quote(getenv(gs__knobs[GS_KNOB_check_exit].name), q));
    } else if (gs__checks_parse(&checks, gs__cfg.path[GS_KNOB_check], err, sizeof err) != 0) {
        bad = 1;
        gs__warn("GRAPHSHIM_CHECK: %s: nothing is checked%s", err,
                 gs__cfg.check_exit ? ", and the run fails (GRAPHSHIM_CHECK_EXIT=1)" : "");
    }
    if (gate_dir[0])
        gate_dir_mark("start", gs__passthrough ? "off" : "on");
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
    if (getenv("GRAPHSHIM_GATE_DIR")) /* the launcher judges the run */
        return;
    if (check_exit_value() < 0) {
        fprintf(stderr, "graphshim: GRAPHSHIM_CHECK_EXIT cannot be read (expected 1 or 0) under GRAPHSHIM_CHECK\n");
        fail_exit(status, GATE_BAD);
        return;
    }
    if (gs__checks_parse(&cs, value, err, sizeof err) != 0) {
        fprintf(stderr, "graphshim: GRAPHSHIM_CHECK: %s\n", err);
        fail_exit(status, GATE_BAD);
        return;
    }
    fail_exit(status, nothing_measured(value));
}

__attribute__((constructor)) static void gate_register(void)
{
    /* A GRAPHSHIM_CHECK_EXIT that cannot be read counts as on: fail closed. */
    if (getenv(gs__knobs[GS_KNOB_check].name) && check_exit_value() != 0)
        on_exit(unstarted_at_exit, NULL);
}
