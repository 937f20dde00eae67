/*
** log.c: graphshim's messages on stderr (see log.h).
*/
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

void gs__log(int level, const char *fmt, ...)
{
    static atomic_int nwarnings;
    char buf[1024];
    va_list ap;
    int n;

    if (level > gs__cfg.log)
        return;
    if (level <= GS_LOG_WARN && atomic_fetch_add(&nwarnings, 1) >= GS_MAX_WARNINGS)
        return;
    n = snprintf(buf, sizeof buf, "graphshim: ");
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0) {
        /* Nothing sensible to do: stderr is gone. */
    }
}
