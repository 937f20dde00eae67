/*
** log.h: graphshim's messages on stderr.
**
** Every message is prefixed "graphshim: " and written with one write(2).  Warnings
** are capped (GS_MAX_WARNINGS) so a broken setup cannot flood the program's stderr;
** the first one past the cap says so.  A message of level GS_LOG_ALWAYS is printed
** whatever GRAPHSHIM_LOG says and however many warnings came before: it is kept for
** what a user must never miss (a test-only switch that makes results wrong).
**
** Text that comes from outside (a knob's value, a path) goes into a message through
** gs__quote, so a newline or a terminal escape in it cannot forge or break a line,
** and a long one cannot push the end of the message out of the line.
*/
#ifndef GS_LOG_H
#define GS_LOG_H

#include <stddef.h>

enum gs_level { GS_LOG_ERROR, GS_LOG_WARN, GS_LOG_INFO, GS_LOG_DEBUG };

/* Messages above this level are not shown: GRAPHSHIM_LOG, set where the knobs
** are read (config.c); warnings and errors until then. */
extern int gs__log_level;

#define GS_MAX_WARNINGS 32
#define GS_LOG_ALWAYS (-1)

void gs__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define gs__error(...) gs__log(GS_LOG_ERROR, __VA_ARGS__)
#define gs__warn(...) gs__log(GS_LOG_WARN, __VA_ARGS__)
#define gs__info(...) gs__log(GS_LOG_INFO, __VA_ARGS__)
#define gs__debug(...) gs__log(GS_LOG_DEBUG, __VA_ARGS__)

/* GS_IGNORE(GS_REAL(abi)(args)): a driver call of graphshim's own whose result
** it drops on purpose (NCCL's CUCHECKIGNORE), where a failure changes nothing
** the program sees: a graph, event or buffer not destroyed or freed, which
** leaks.  A failure is logged at debug level, with the call and its place.  A
** comment beside it says why dropping is right there; every other GS_REAL
** result is checked (driver/driver.h makes GCC fail a build that drops one). */
#define GS_IGNORE(call) gs__ignored((int)(call), #call, __FILE__, __LINE__)
static inline void gs__ignored(int rc, const char *call, const char *file, int line)
{
    if (rc != 0)
        gs__debug("%s:%d: %s failed (%d); ignored", file, line, call, rc);
}

/* gs__quote's result: at most GS_QUOTE_MAX characters of escaped text, then "..."
** if s was longer; GS_QUOTE_LEN bytes hold it.  Two of them and a sentence fit in
** one message. */
#define GS_QUOTE_MAX 240
#define GS_QUOTE_LEN (GS_QUOTE_MAX + 8)

/* Writes s into buf (GS_QUOTE_LEN bytes) fit for one line of a message: a
** backslash, a double quote, \n, \t and \r escaped as in C, other control and
** non-ASCII bytes as \xHH; where the escaped text would pass GS_QUOTE_MAX
** characters, "..." ends it.  Returns buf.  No surrounding quotes: the caller
** adds them where it wants them. */
const char *gs__quote(const char *s, char *buf);

#endif
