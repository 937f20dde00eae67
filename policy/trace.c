/*
** trace.c: GRAPHSHIM_TRACE (see trace.h).
*/
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int gs__trace_on;
static int trace_fd = -1;
static atomic_long nlines, nlaunches;

int gs__trace_open(const char *path)
{
    trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (trace_fd < 0) {
        gs__warn("cannot open GRAPHSHIM_TRACE=%s (%s); tracing is off", path, strerror(errno));
        return -1;
    }
    gs__trace_on = 1;
    return 0;
}

void gs__trace_line(int tid, const char *entry, CUstream stream, CUresult rc, const char *kernel,
                    const unsigned grid[3], const unsigned block[3], const char *cls)
{
    char buf[1024];
    int n;

    if (trace_fd < 0)
        return;
    n = snprintf(buf, sizeof buf, "tid=%d %s stream=", tid, entry);
    if (stream == (CUstream)(uintptr_t)-1)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "-");
    else
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%p", (void *)stream);
    n += snprintf(buf + n, sizeof buf - (size_t)n, " rc=%d", (int)rc);
    if (kernel) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, " kernel=%.700s grid=%u,%u,%u block=%u,%u,%u", kernel,
                      grid[0], grid[1], grid[2], block[0], block[1], block[2]);
        atomic_fetch_add(&nlaunches, 1);
    }
    if (cls && n < (int)sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " class=%s", cls);
    if (n > (int)sizeof buf - 1)
        n = (int)sizeof buf - 1;
    buf[n++] = '\n';
    atomic_fetch_add(&nlines, 1);
    if (write(trace_fd, buf, (size_t)n) < 0) {
        /* The trace is best effort; the program must not notice a full disk. */
    }
}

void gs__trace_summary(void)
{
    if (trace_fd < 0)
        return;
    gs__info("trace: %ld driver calls, %ld kernel launches, written to %s", atomic_load(&nlines),
             atomic_load(&nlaunches), gs__cfg.path[GS_KNOB_trace]);
}
