/*
** gate.c: graphshim-gate, the judge of `graphshim run` under GRAPHSHIM_CHECK.
**
**   graphshim-gate LIBRARY PROGRAM [ARGS...]
**
** The launcher (scripts/graphshim) execs it in place of PROGRAM where
** GRAPHSHIM_CHECK is set.  It reads the gate's settings before anything runs
** (a check or a GRAPHSHIM_CHECK_EXIT that cannot be read: nothing runs, exit
** status 2), makes a folder of its own, named to the run's processes in
** GRAPHSHIM_GATE_DIR, runs PROGRAM with LIBRARY first in LD_PRELOAD, and waits
** for it.  Each process of the run that starts graphshim leaves its marks in
** the folder (policy/report/gate.c): "start.PID" ("on" or "off") and, at exit,
** "end.PID" ("measured", "measured failed", "none" or "off").  From them, once
** the program has ended, this process judges the whole run:
**
**   - a process whose check failed fails the run, whatever the program's
**     status (a shell that ran `true` after it exits 0);
**   - a process that started graphshim and ended without its exit handlers
**     (_exit, as os._exit and dash do) was never checked: the run fails;
**   - where no process measured anything, it says why (no CUDA call, the
**     engine off, no launch, copy or memset) and the run fails.
**
** A failure changes an exit status of 0 to 1 with GRAPHSHIM_CHECK_EXIT=1; it
** is said on stderr either way.  A program killed by a signal: this process
** judges, then dies of the same signal.  SIGTERM, SIGHUP and SIGQUIT, and a
** SIGINT another process sent (not the terminal's, which reached the program
** too), are passed on to the program.  The folder is removed at the end.  A
** graphshim run inside a judged run (a script that calls it) runs its program
** at once: the run above judges its processes with its own.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../policy/base/check.h"

#define P "graphshim: "

static volatile sig_atomic_t child;

/* Passes a signal on to the program; the terminal's SIGINT reached it already. */
static void pass_on(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (child > 0 && !(sig == SIGINT && si && si->si_code == SI_KERNEL))
        kill((pid_t)child, sig);
}

/* GRAPHSHIM_CHECK_EXIT as the library reads it: 0 or 1, -1 where it cannot be read. */
static int check_exit_value(void)
{
    static const char *const on[] = {"1", "on", "true", "yes"}, *const off[] = {"0", "off", "false", "no"};
    const char *v = getenv("GRAPHSHIM_CHECK_EXIT");

    if (!v)
        return 0;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, on[i]) == 0)
            return 1;
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    }
    return -1;
}

/* What the run's processes left: counts of each kind of mark, and the pids of
** the first processes that started graphshim and never ended through exit. */
struct marks {
    int started, off, measured, failed, none, unended;
    long unended_pid[4];
};

static void read_mark(const char *dir, const char *name, char *buf, size_t len)
{
    char path[4096];
    ssize_t n = -1;
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
        n = read(fd, buf, len - 1);
        close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    unlink(path);
}

/* Reads and removes the marks of folder dir, then the folder. */
static void read_marks(const char *dir, struct marks *m)
{
    struct dirent **e;
    int n = scandir(dir, &e, NULL, alphasort);

    memset(m, 0, sizeof *m);
    for (int i = 0; i < n; i++) {
        char what[64], end[64], endname[300];
        const char *name = e[i]->d_name;
        if (strncmp(name, "start.", 6) == 0) {
            read_mark(dir, name, what, sizeof what);
            snprintf(endname, sizeof endname, "end.%s", name + 6);
            read_mark(dir, endname, end, sizeof end);
            m->started++;
            m->off += strcmp(what, "off") == 0 || strcmp(end, "off") == 0;
            m->measured += strncmp(end, "measured", 8) == 0;
            m->failed += strcmp(end, "measured failed") == 0;
            m->none += strcmp(end, "none") == 0;
            if (!*end && m->unended++ < 4)
                m->unended_pid[m->unended - 1] = atol(name + 6);
        }
    }
    for (int i = 0; i < n; i++) { /* an end without a start: a process that forked */
        if (strncmp(e[i]->d_name, "end.", 4) == 0) {
            char end[64];
            read_mark(dir, e[i]->d_name, end, sizeof end);
            m->measured += strncmp(end, "measured", 8) == 0;
            m->failed += strcmp(end, "measured failed") == 0;
        }
        free(e[i]);
    }
    if (n >= 0)
        free(e);
    rmdir(dir);
}

/* Says what failed the run; returns 1 where it failed, 0 where it passed. */
static int judge(const struct marks *m)
{
    int bad = 0;

    if (m->failed) {
        fprintf(stderr, P "check failed: %d process%s of this run failed %s checks (above), so the run fails\n",
                m->failed, m->failed > 1 ? "es" : "", m->failed > 1 ? "their" : "its");
        bad = 1;
    }
    if (m->unended) {
        fprintf(stderr, P "check failed: %d process%s of this run (pid %ld%s) started CUDA under graphshim and "
                "ended without running exit handlers (_exit, as os._exit and dash do): %s counters were never "
                "checked, so the run fails\n", m->unended, m->unended > 1 ? "es" : "", m->unended_pid[0],
                m->unended > 1 ? ", ..." : "", m->unended > 1 ? "their" : "its");
        bad = 1;
    }
    if (m->off && m->measured)
        fprintf(stderr, P "check failed: graphshim's engine was off in %d process%s of this run (GRAPHSHIM=0, a "
                "driver older than 12.4, or no libcuda.so.1: see the warning above): %s work was not measured\n",
                m->off, m->off > 1 ? "es" : "", m->off > 1 ? "their" : "its");
    if (m->measured)
        return bad || m->off;
    if (!m->started)
        fprintf(stderr, P "check failed: nothing was measured: no process of this run made a CUDA driver call "
                "(graphshim starts at the first), so GRAPHSHIM_CHECK holds nothing\n");
    else if (m->off)
        fprintf(stderr, P "check failed: nothing was measured: graphshim's engine was off in %d process%s of this "
                "run (GRAPHSHIM=0, a driver older than 12.4, or no libcuda.so.1: see the warning above)\n", m->off,
                m->off > 1 ? "es" : "");
    else if (m->none)
        fprintf(stderr, P "check failed: nothing was measured: the run's CUDA calls launched no kernel, copy or "
                "memset\n");
    return 1;
}

/* Puts lib first in LD_PRELOAD, as the launcher does; returns 0 or -1. */
static int preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *v;

    if (asprintf(&v, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0)
        return -1;
    return setenv("LD_PRELOAD", v, 1);
}

/* Runs PROGRAM; returns its wait status. */
static int run(char **argv)
{
    struct sigaction sa = {0};
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT}, status;
    pid_t pid, w;

    sa.sa_sigaction = pass_on;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    if ((pid = fork()) < 0) {
        fprintf(stderr, P "cannot start %s: %s\n", argv[0], strerror(errno));
        return 126 << 8;
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, P "%s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    child = pid;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    return w < 0 ? 2 << 8 : status;
}

/* Inside a run judged already (graphshim run started by a process of
** another's): the folder of that run's gate, which judges this one's processes
** with its own. */
static int judged_above(void)
{
    const char *above = getenv("GRAPHSHIM_GATE_DIR");
    struct stat st;

    return above && *above == '/' && stat(above, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
    const char *check = getenv("GRAPHSHIM_CHECK"), *tmp = getenv("TMPDIR");
    static struct gs_checks cs;
    char err[2048], dir[4096];
    struct marks m;
    int on = check_exit_value(), status, failed;

    if (argc < 3) {
        fprintf(stderr, "usage: graphshim-gate LIBRARY PROGRAM [ARGS...] (graphshim run starts it)\n");
        return 2;
    }
    if (on < 0) {
        fprintf(stderr, P "GRAPHSHIM_CHECK_EXIT cannot be read (expected 1 or 0, or on/off, true/false, yes/no, "
                "without blanks) under GRAPHSHIM_CHECK: the gate fails closed, and %s is not run (exit status 2)\n",
                argv[2]);
        return 2;
    }
    if (judged_above()) {
        if (preload(argv[1]) != 0)
            return 2;
        execvp(argv[2], argv + 2);
        fprintf(stderr, P "%s: %s\n", argv[2], strerror(errno));
        return errno == ENOENT ? 127 : 126;
    }
    if (!check || gs__checks_parse(&cs, check, err, sizeof err) != 0) {
        fprintf(stderr, P "GRAPHSHIM_CHECK: %s%s\n", check ? err : "not set",
                on ? ": the program is not run (exit status 2)" : ": nothing is checked");
        if (on || preload(argv[1]) != 0)
            return 2;
        execvp(argv[2], argv + 2);
        fprintf(stderr, P "%s: %s\n", argv[2], strerror(errno));
        return errno == ENOENT ? 127 : 126;
    }
    snprintf(dir, sizeof dir, "%s/graphshim-gate.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir) && (snprintf(dir, sizeof dir, "/tmp/graphshim-gate.XXXXXX"), !mkdtemp(dir))) {
        fprintf(stderr, P "cannot make a folder for the gate (%s): the run is not judged, and fails\n",
                strerror(errno));
        return 2;
    }
    if (setenv("GRAPHSHIM_GATE_DIR", dir, 1) != 0 || preload(argv[1]) != 0) {
        rmdir(dir);
        return 2;
    }
    status = run(argv + 2);
    read_marks(dir, &m);
    failed = judge(&m);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    status = WEXITSTATUS(status);
    return failed && on && status == 0 ? 1 : status;
}
