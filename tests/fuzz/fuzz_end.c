/*
** fuzz_end.c: how a program ends, under FUZZ_END (tests/fuzz/README.md, "Ends").
**
** Unset, a program returns from main.  FUZZ_END=seed ends it as its seed draws,
** one of the ends a program meets besides exit: a signal at its default action
** (SIGTERM, SIGINT sent twice at once, SIGHUP), a signal the program handles and
** goes on after (its handler installed again inside it, as signal() once did),
** a handler that cleans up, puts the default back and sends the signal again
** (SA_SIGINFO), an ignored signal, a forked child that ends by a signal while the
** parent goes on, and a Python's end after Ctrl-C (the program is a Python for
** graphshim: Py_IsInitialized and Py_AtExit are exported; it handles SIGINT
** itself, runs what Py_AtExit registered at the end of its finalization, then
** puts SIGINT's default back and kills itself with it, as CPython does), a
** Python's end at exit (what Py_AtExit registered runs, then the process
** exits), and a handler of SA_SIGINFO's kind that installs itself again.
** FUZZ_END=NAME picks one by name.  A Python's end by SIGINT writes no
** counters of the coverage build (gcov writes them at exit; graphshim's own
** dump before a signal, interpose/cov_dump.c, is in its kill() alone, which
** CPython's end does not call): the end at exit counts what it runs.  Everything the program printed is flushed
** first: a process killed by a signal flushes nothing, and the output up to the
** signal is compared.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzzprog.h"

static const char *const end_names[] = {"term",   "int-twice", "hup",         "handled",     "die-handler",
                                        "ignored", "child",   "python", "python-exit", "handled-info"};
#define NENDS (int)(sizeof end_names / sizeof end_names[0])
enum {
    END_TERM, END_INT_TWICE, END_HUP, END_HANDLED, END_DIE_HANDLER, END_IGNORED, END_CHILD, END_PYTHON,
    END_PYTHON_EXIT, END_HANDLED_INFO
};

static int g_end = -1;             /* the end drawn, or -1: return from main */
static volatile sig_atomic_t g_handled;
static int g_py_up;                /* a Python, as graphshim asks */
static void (*g_py_exit[4])(void); /* what Py_AtExit registered */
static int g_npy_exit;

/* Python's C API, as graphshim looks for it (interpose/init.c). */
__attribute__((visibility("default"))) int Py_IsInitialized(void)
{
    return g_py_up;
}

__attribute__((visibility("default"))) int Py_AtExit(void (*fn)(void))
{
    if (g_npy_exit >= 4)
        return -1;
    g_py_exit[g_npy_exit++] = fn;
    return 0;
}

/* A handler of the old kind: counts, and installs itself again. */
static void handled(int sig)
{
    g_handled++;
    signal(sig, handled);
}

/* The same of SA_SIGINFO's kind: counts, and installs itself again. */
static void handled_info(int sig, siginfo_t *si, void *ctx)
{
    struct sigaction sa;

    (void)si, (void)ctx;
    g_handled++;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = handled_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
}

/* Cleans up (nothing here), puts the default back and sends the signal again. */
static void die_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)si, (void)ctx;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* CPython's SIGINT handler notes the signal for the interpreter's loop. */
static void python_sigint(int sig)
{
    (void)sig;
    g_handled++;
}

void fuzz_end_begin(uint64_t seed)
{
    const char *v = getenv("FUZZ_END");
    struct sigaction sa;

    if (!v || !*v)
        return;
    if (strcmp(v, "seed") == 0) {
        uint64_t r = seed ^ 0x656e640000000000ull;
        g_end = (int)rnd(&r, NENDS);
    }
    for (int i = 0; i < NENDS && g_end < 0; i++)
        if (strcmp(v, end_names[i]) == 0)
            g_end = i;
    if (g_end < 0) {
        fprintf(stderr, "fuzzprog: FUZZ_END=%s: not seed or one of the ends\n", v);
        exit(2);
    }
    /* A program started in the background of a shell inherits SIGINT and
    ** SIGQUIT ignored, and any parent may block signals: the ends begin from
    ** the dispositions of a program started at a terminal. */
    sigset_t ends;
    sigemptyset(&ends);
    for (int i = 0; i < 3; i++) {
        signal((int[]){SIGTERM, SIGINT, SIGHUP}[i], SIG_DFL);
        sigaddset(&ends, (int[]){SIGTERM, SIGINT, SIGHUP}[i]);
    }
    sigprocmask(SIG_UNBLOCK, &ends, NULL);
    /* what the program does with its signals before its first CUDA call */
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (g_end == END_HANDLED) {
        signal(SIGTERM, handled);
    } else if (g_end == END_DIE_HANDLER || g_end == END_HANDLED_INFO) {
        sa.sa_sigaction = g_end == END_DIE_HANDLER ? die_handler : handled_info;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGTERM, &sa, NULL);
    } else if (g_end == END_IGNORED) {
        signal(SIGHUP, SIG_IGN);
    } else if (g_end == END_PYTHON || g_end == END_PYTHON_EXIT) {
        signal(SIGINT, python_sigint);
        g_py_up = 1;
    }
}

/* Ends by sig at its default action (or by what the program made of it). */
static void end_by(int sig, int times)
{
    printf("end: signal %d\n", sig);
    fflush(stdout);
    for (int i = 0; i < times; i++)
        raise(sig);
    for (;;)
        pause(); /* graphshim's thread writes the report, then the signal ends the process */
}

int fuzz_end_finish(void)
{
    pid_t child;
    int st = 0;

    switch (g_end) {
    case END_TERM: end_by(SIGTERM, 1); break;
    case END_INT_TWICE: end_by(SIGINT, 2); break;
    case END_HUP: end_by(SIGHUP, 1); break;
    case END_DIE_HANDLER: end_by(SIGTERM, 1); break;
    case END_HANDLED:
    case END_HANDLED_INFO:
        raise(SIGTERM);
        raise(SIGTERM);
        printf("end: handled %d\n", (int)g_handled);
        break;
    case END_IGNORED:
        raise(SIGHUP);
        printf("end: ignored\n");
        break;
    case END_CHILD:
        fflush(stdout);
        if ((child = fork()) == 0) {
            raise(SIGTERM);
            _exit(0);
        }
        waitpid(child, &st, 0);
        printf("end: child %s %d\n", WIFSIGNALED(st) ? "signal" : "status",
               WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        break;
    case END_PYTHON:
        raise(SIGINT); /* Ctrl-C: KeyboardInterrupt, then finalization */
        printf("end: python, SIGINT handled %d\n", (int)g_handled);
        for (int i = g_npy_exit - 1; i >= 0; i--)
            g_py_exit[i]();
        signal(SIGINT, SIG_DFL);
        end_by(SIGINT, 1);
        break;
    case END_PYTHON_EXIT: /* sys.exit(): finalization, then exit */
        printf("end: python exit\n");
        for (int i = g_npy_exit - 1; i >= 0; i--)
            g_py_exit[i]();
        break;
    }
    return 0;
}
