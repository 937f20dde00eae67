/*
** trace.c: GRAPHSHIM_TRACE (see trace.h); the file is opened by outfile.c.
*/
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "outfile.h"

int gs__trace_on;
static int trace_fd = -1;
static atomic_long nlines, nlaunches;
static atomic_int write_failed;

int gs__trace_open(void)
{
    trace_fd = gs__out_append(GS_KNOB_trace);
    if (trace_fd < 0)
        return -1;
    gs__trace_on = 1;
    return 0;
}

void gs__trace_line(int tid, const char *entry, CUstream stream, CUresult rc, const char *kernel,
                    const unsigned grid[3], const unsigned block[3], const char *cls)
{
    char buf[1024];
    int n;

    if (trace_fd < 0 || atomic_load_explicit(&write_failed, memory_order_relaxed))
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
    if (gs__out_write_all(trace_fd, buf, (size_t)n) != 0 && !atomic_exchange(&write_failed, 1)) {
        /* The program must not notice a full disk; the user hears of it once. */
        char q[GS_QUOTE_LEN];
        int err = errno;
        gs__out_append_failed(trace_fd);
        errno = err;
        gs__warn("cannot write GRAPHSHIM_TRACE=%s (%s); tracing stops here", gs__quote(gs__cfg.path[GS_KNOB_trace], q),
                 strerror(errno));
    }
}

void gs__trace_summary(void)
{
    char q[GS_QUOTE_LEN];

    if (trace_fd < 0)
        return;
    gs__info("trace: %ld driver calls, %ld kernel launches, written to %s", atomic_load(&nlines),
             atomic_load(&nlaunches), gs__quote(gs__cfg.path[GS_KNOB_trace], q));
}
