/*
** cov_dump.c: the coverage build's counters, written before a signal ends the
** process (make coverage; -DGS_COVERAGE, set with --coverage alone).
**
** gcov writes its counters at exit.  A process that a signal ends at its
** default action runs no exit: what graphshim did on its way there (the end by
** a signal, policy/entry/ending.c) would count as never run.  graphshim sends
** itself that signal with kill(); in the coverage build its kill() is this one,
** which writes the counters first.  Other builds compile this file to nothing.
*/
#ifdef GS_COVERAGE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

void __gcov_dump(void); /* libgcov */
void gs__test_alloc_stop(void); /* test_alloc.c: gcov's allocations never fail */

__attribute__((visibility("hidden"))) int kill(pid_t pid, int sig)
{
#ifdef GS_TEST
    gs__test_alloc_stop();
#endif
    __gcov_dump();
    return (int)syscall(SYS_kill, pid, sig);
}
#endif
