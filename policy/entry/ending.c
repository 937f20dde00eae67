/*
** ending.c: the report, and the gate, whatever ends the program (engine.h).
**
** An exit handler writes the report at exit.  Two ends run none:
**
**   - SIGINT, SIGTERM or SIGHUP with its default action (Ctrl-C, a Slurm or
**     Kubernetes job stopped).  graphshim catches those three where the
**     program left them at the default when graphshim started (one it ignores
**     stays ignored; one it handles is handled by its own handler, called
**     first, which decides as it would have; where that handler puts the
**     default back and sends the signal again, to end by it, the report is
**     written first).  The handler calls nothing
**     unsafe in a signal handler: it writes the signal's number to a pipe and
**     returns, so the interrupted thread goes on and lets go of any lock it
**     holds.  A thread of graphshim's, waiting on the pipe with every signal
**     blocked, issues the held work, writes the report, judges the gate
**     (gate.h), then puts the default action back and sends the signal again:
**     the process ends as it would have, with the same status.  A second such
**     signal while it writes ends the process at once (Ctrl-C twice), but
**     within half a second of the first, when it is the same one sent twice
**     (timeout signals its child and its group).  A
**     forked child, which has no such thread, takes the default at once.
**   - Python's exit after Ctrl-C: CPython handles SIGINT itself, raises
**     KeyboardInterrupt, finalizes, and then kills itself with SIGINT at its
**     default, so no exit handler of C runs.  Where the process is a Python
**     (the interposer finds Py_AtExit), graphshim asks Py_AtExit for a call at
**     the end of finalization, in the main thread: the same work as the exit
**     handler.
**
** The work is done once (gs__engine_exit), whichever comes first.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "../base/config.h"
#include "../report/gate.h"

static const int end_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NEND ((int)(sizeof end_signals / sizeof end_signals[0]))

static struct sigaction program_action[NEND]; /* the program's, when graphshim started */
static struct sigaction ours[NEND];           /* graphshim's, as installed */
static int ending_pipe[2] = {-1, -1};
static pid_t owner;                /* the process whose thread reads the pipe */
static atomic_int ending;          /* a signal's end has begun */
static atomic_llong ending_since;  /* when, in ns of CLOCK_MONOTONIC */

/* A repeat of the signal within this long is the same one sent twice (timeout
** signals its child and its group; graphshim run passes on what it gets), not a
** second Ctrl-C. */
#define REPEAT_NS 500000000LL

static int index_of(int sig)
{
    for (int i = 0; i < NEND; i++)
        if (end_signals[i] == sig)
            return i;
    return -1;
}

/* The signal at its default action, now: the process ends. */
static void die_of(int sig)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    kill(getpid(), sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* After the program's handler i ran: where it put the default action back
** (to end by the signal it sends again, a common way to clean up and die),
** graphshim's handler takes the signal's place again, with the default as the
** program's action, so the signal that follows ends the process after its
** report.  Async-signal-safe. */
static void after_program(int i, int sig)
{
    struct sigaction cur;

    if (sigaction(sig, NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
        return;
    program_action[i].sa_flags = 0;
    program_action[i].sa_handler = SIG_DFL;
    sigaction(sig, &ours[i], NULL);
}

/* The handler: async-signal-safe calls only. */
static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    int i = index_of(sig), saved = errno;
    const struct sigaction *p = i >= 0 ? &program_action[i] : NULL;
    unsigned char b = (unsigned char)sig;
    struct timespec now;
    long long now_ns;

    if (p && (p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
        p->sa_sigaction(sig, si, ctx);
        after_program(i, sig);
        errno = saved;
        return;
    }
    if (p && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        after_program(i, sig);
        errno = saved;
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    now_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (getpid() != owner) {
        die_of(sig);
    } else if (atomic_exchange(&ending, 1)) {
        if (now_ns - atomic_load(&ending_since) >= REPEAT_NS)
            die_of(sig); /* a second one while the report is written: at once */
    } else {
        atomic_store(&ending_since, now_ns);
        if (write(ending_pipe[1], &b, 1) != 1)
            die_of(sig);
    }
    errno = saved;
}

/* The end of the process by a signal: the exit handlers' work, then the signal. */
static void *ending_thread(void *arg)
{
    unsigned char b;
    sigset_t all;

    (void)arg;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (read(ending_pipe[0], &b, 1) != 1)
        if (errno != EINTR)
            return NULL;
    gs__engine_exit();
    gs__gate_judge();
    die_of(b);
    return NULL;
}

static void python_at_exit(void)
{
    gs__engine_exit();
    gs__gate_judge();
}

void gs__ending_init(int (*py_at_exit)(void (*)(void)))
{
    struct sigaction sa;
    pthread_attr_t attr;
    pthread_t t;

    if (!gs__cfg.report && !gs__cfg.check && gs__cfg.log < GS_LOG_INFO)
        return; /* nothing to write */
    if (py_at_exit)
        py_at_exit(python_at_exit);
    if (pipe2(ending_pipe, O_CLOEXEC) != 0)
        return;
    owner = getpid();
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, ending_thread, NULL) == 0) {
        for (int i = 0; i < NEND; i++) {
            if (sigaction(end_signals[i], NULL, &program_action[i]) != 0 ||
                program_action[i].sa_handler == SIG_IGN)
                continue;
            sa.sa_flags = SA_SIGINFO | (program_action[i].sa_flags & (SA_RESTART | SA_NODEFER | SA_ONSTACK));
            sa.sa_mask = program_action[i].sa_mask;
            ours[i] = sa;
            sigaction(end_signals[i], &sa, NULL);
        }
    }
    pthread_attr_destroy(&attr);
}
