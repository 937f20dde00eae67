/*
** log.c: graphshim's messages on stderr (see log.h).
*/
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int gs__log_level = GS_LOG_WARN;

void gs__log(int level, const char *fmt, ...)
{
    static atomic_int nwarnings;
    char buf[1024];
    va_list ap;
    int n;

    if (level > gs__log_level)
        return;
    if (level >= GS_LOG_ERROR && level <= GS_LOG_WARN) {
        int seen = atomic_fetch_add(&nwarnings, 1);
        if (seen > GS_MAX_WARNINGS)
            return;
        if (seen == GS_MAX_WARNINGS) {
            static const char capped[] = "graphshim: more warnings follow; they are not shown\n";
            if (write(2, capped, sizeof capped - 1) < 0) {
                /* Nothing sensible to do: stderr is gone. */
            }
            return;
        }
    }
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

const char *gs__quote(const char *s, char *buf)
{
    static const char hex[] = "0123456789abcdef";
    char *o = buf;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[5];
        size_t n = 0;

        if (c == '\\' || c == '"') {
            e[n++] = '\\';
            e[n++] = (char)c;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            e[n++] = '\\';
            e[n++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20 || c >= 0x7f) {
            e[n++] = '\\';
            e[n++] = 'x';
            e[n++] = hex[c >> 4];
            e[n++] = hex[c & 15];
        } else {
            e[n++] = (char)c;
        }
        if (o - buf + (ptrdiff_t)n > GS_QUOTE_MAX) {
            memcpy(o, "...", 3);
            o += 3;
            break;
        }
        memcpy(o, e, n);
        o += n;
    }
    *o = '\0';
    return buf;
}
