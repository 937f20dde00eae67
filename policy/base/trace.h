/*
** trace.h: GRAPHSHIM_TRACE, one line per intercepted driver call.
**
** Line format (docs/guide.md, "The trace"):
**   tid=<thread> <entry point> stream=<0x..|-> rc=<result>[ kernel=<name> grid=<x>,<y>,<z> block=<x>,<y>,<z>][ class=<class>]
** Each line is written with one write(2) on a file opened with O_APPEND, so lines of
** several threads (and of forked children) never interleave.  A line that cannot
** be written (a full disk) gives one warning, and tracing stops there.
*/
#ifndef GS_TRACE_H
#define GS_TRACE_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

/* Nonzero while tracing. */
extern int gs__trace_on;

/* Opens the file GRAPHSHIM_TRACE names for appending (outfile.h: %p, %r and %%
** expanded, a regular file or standard error only).  On failure: one warning,
** tracing stays off, the program runs on.  Returns 0 or -1. */
int gs__trace_open(void);

/* One launch or call line.  kernel may be NULL (then grid and block are
** ignored); cls may be NULL. */
void gs__trace_line(int tid, const char *entry, CUstream stream, CUresult rc, const char *kernel,
                    const unsigned grid[3], const unsigned block[3], const char *cls);

/* Writes the summary line ("N calls, M launches") at log level info. */
void gs__trace_summary(void);

#endif
