/*
** outfile.h: the files graphshim writes, the report and the trace, written safely.
**
** A path knob's value is expanded (%p, %r, %%: gs__path_expand) and then names
** either standard error ("-" or "stderr") or a regular file.  graphshim never
** writes through a symbolic link, into a FIFO or into a device: such a path gets
** one warning, and the program runs on with its output untouched.  Nor does it
** write over a file of the user's: a regular file that is not empty and holds
** neither a graphshim report nor a trace is kept, with a warning, unless
** GRAPHSHIM_FORCE is set.  Nothing here
** can block: a FIFO is never opened for writing in a way that waits for a reader.
** Files are created with mode 0644 (less what the umask takes).
*/
#ifndef GS_OUTFILE_H
#define GS_OUTFILE_H

#include <stddef.h>

/* Writes len bytes of data as the whole file named by path knob `knob`
** (GS_KNOB_report): into a temporary file beside it, renamed over the name once
** all is written, so the name holds either the old file or the whole new one.
** If the name holds a file another process of this run wrote (run.h), it is
** kept: this one goes to the name with ".PID" put before its extension, and a
** warning names it.  The file the trace goes to is never replaced: a
** warning says so.  A name of standard error gets data as it is.  Returns
** 0, or -1 after one warning. */
int gs__out_replace(int knob, const char *data, size_t len);

/* Whether the file of path knob `knob`, as it is written, holds JSON: its
** expanded name ends in ".json". */
int gs__out_is_json(int knob);

/* Opens the file named by path knob `knob` (GS_KNOB_trace) for appending (a
** trace; any other file of graphshim's, or the user's under GRAPHSHIM_FORCE, is
** cut to nothing first), and
** returns its descriptor (2 for standard error: never close it), or -1 after one
** warning. */
int gs__out_append(int knob);

/* Says that a write to fd, which gs__out_append returned, failed: the file is
** removed where gs__out_append made it and it is still empty (a full disk
** leaves no empty trace).  Call it once, at the first failure. */
void gs__out_append_failed(int fd);

/* Writes len bytes to fd, all of them: 0, or -1 with errno set. */
int gs__out_write_all(int fd, const char *data, size_t len);

#endif
