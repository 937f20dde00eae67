/*
** outfile.c: the report and the trace, written safely (see outfile.h).
**
** First the checks both share: what a path names (a regular file, or a thing
** graphshim refuses), with one warning per refusal, and whose a file is (a
** graphshim report or trace, or the user's, never replaced unasked).  Then the report: its name
** (an existing report of another process of this run, run.h, is kept) and the
** write through a temporary file.  Last the trace, opened for appending without
** ever waiting.
*/
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "run.h"
#include "whose.h"

/* What is lost when a path knob's file cannot be written, for the warnings. */
static const char *lost(int knob)
{
    return knob == GS_KNOB_trace ? "tracing is off" : "the report is not written";
}

static const char *kind_name(mode_t m)
{
    return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory"
           : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
           : "not a regular file";
}

/* Warns that path, the expansion of knob's value, is a kind of file graphshim
** does not write (mode m). */
static void refuse(int knob, const char *path, mode_t m)
{
    char q[GS_QUOTE_LEN];

    gs__warn("%s=%s is %s, not a regular file, so %s (graphshim writes regular files only; "
             "- or stderr names standard error)",
             gs__knobs[knob].name, gs__quote(path, q), kind_name(m), lost(knob));
}

/* Expands knob's value into out (PATH_MAX bytes).  Returns 0, or -1 after a
** warning if it does not fit. */
static int expand(int knob, char *out)
{
    char q[GS_QUOTE_LEN];

    if (gs__path_expand(gs__cfg.path[knob], out, PATH_MAX) == 0)
        return 0;
    gs__warn("%s=%s is longer than %d bytes once %%p and %%r are replaced, so %s", gs__knobs[knob].name,
             gs__quote(gs__cfg.path[knob], q), PATH_MAX - 1, lost(knob));
    return -1;
}

/* Makes the folder that holds path (PATH_MAX bytes at most) where it does not
** exist but its own folder does, as mkdir does (mode 0777 less the umask); a
** folder further up is never made, so a mistyped path makes nothing.  Returns
** 0, or -1 after a warning where it could not be made. */
static int make_folder(int knob, const char *path)
{
    char dir[PATH_MAX], q[GS_QUOTE_LEN], q2[GS_QUOTE_LEN];
    char *slash;

    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0777) == 0 || errno == EEXIST || errno == ENOENT)
        return 0; /* where a folder further up is missing, the open says so */
    gs__warn("cannot make the folder %s for %s=%s (%s), so %s", gs__quote(dir, q), gs__knobs[knob].name,
             gs__quote(path, q2), strerror(errno), lost(knob));
    return -1;
}

int gs__out_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* --- Whose file ------------------------------------------------------------------ */

/* The trace this process writes, once gs__out_append opened it: a report of
** the same name would write over it. */
static dev_t trace_dev;
static ino_t trace_ino;
static int trace_known;

/* Is the regular file at path graphshim's to replace: empty, or beginning as a
** report (JSON or text, policy/report/report.c) or a trace (trace.c) does
** (whose.h)?  Any other file is the user's, and is replaced only under
** GRAPHSHIM_FORCE.  Sets *trace where it holds a trace or nothing (appended to,
** never cut). */
static int graphshim_file(const char *path, int *trace)
{
    char head[256];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), kind;

    *trace = 0;
    if (fd < 0)
        return 0;
    n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n == 0) /* as a trace: another process of the run may be about to write it */
        return *trace = 1, 1;
    head[n > 0 ? n : 0] = '\0';
    kind = gs__whose_head(head);
    *trace = kind == 2;
    return kind != 0;
}

/* Warns that path, knob's file, is the user's and is kept. */
static void keep_users(int knob, const char *path)
{
    char q[GS_QUOTE_LEN];

    gs__warn("%s=%s holds a file that is neither a graphshim report nor a trace, so it is kept and %s "
             "(graphshim run --force, or GRAPHSHIM_FORCE=1, replaces it)",
             gs__knobs[knob].name, gs__quote(path, q), lost(knob));
}

/* --- The report --------------------------------------------------------------- */

/* Writes into out (PATH_MAX bytes) path with ".PID" before the extension of its
** last component (or at its end).  Returns 0, or -1 if that does not fit. */
static int with_pid(const char *path, char *out)
{
    const char *base = strrchr(path, '/'), *dot;
    int n;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = path + strlen(path);
    n = snprintf(out, PATH_MAX, "%.*s.%ld%s", (int)(dot - path), path, (long)getpid(), dot);
    return n < PATH_MAX ? 0 : -1;
}

/* The name the report goes to, in path (PATH_MAX bytes, holding the expanded
** name), chosen under the directory's lock: the name itself, or its ".PID" form
** if another process of the run wrote the file there (path then holds it, and
** was the name).  Says nothing: a warning could wait on a full pipe while the
** lock is held.  Returns what it found (for a refusal, path is the thing
** refused, of mode *mode; for the name, *mode is the mode of the report it
** replaces, left as it was where there is none). */
enum target { TARGET_NAME, TARGET_PID, TARGET_TOO_LONG, TARGET_REFUSED, TARGET_USERS, TARGET_TRACE };
static enum target report_target(char *path, char *was, const struct gs_run *r, mode_t *mode)
{
    char alt[PATH_MAX];
    struct stat st;
    int trace;

    memcpy(was, path, strlen(path) + 1);
    if (lstat(path, &st) != 0)
        return TARGET_NAME;
    *mode = st.st_mode;
    if (!S_ISREG(st.st_mode))
        return TARGET_REFUSED;
    if (trace_known && st.st_dev == trace_dev && st.st_ino == trace_ino)
        return TARGET_TRACE;
    if (!graphshim_file(path, &trace) && !gs__cfg.force)
        return TARGET_USERS;
    if (!gs__run_wrote(r, path, &st) || gs__cfg.force)
        return TARGET_NAME; /* an earlier run's, or the user's by request: replaced */
    if (with_pid(path, alt) != 0)
        return TARGET_TOO_LONG;
    memcpy(path, alt, strlen(alt) + 1);
    if (lstat(alt, &st) == 0 && !S_ISREG(st.st_mode)) {
        *mode = st.st_mode;
        return TARGET_REFUSED;
    }
    return TARGET_PID;
}

/* The warning for what report_target found, once the lock is let go. */
static void target_said(int knob, enum target t, const char *path, const char *was, mode_t mode)
{
    char q[GS_QUOTE_LEN], q2[GS_QUOTE_LEN];

    if (t == TARGET_REFUSED)
        refuse(knob, path, mode);
    else if (t == TARGET_USERS)
        keep_users(knob, path);
    else if (t == TARGET_TRACE)
        gs__warn("%s=%s is the file GRAPHSHIM_TRACE writes this process's trace to, so %s (give each its own "
                 "name)", gs__knobs[knob].name, gs__quote(path, q), lost(knob));
    else if (t == TARGET_TOO_LONG)
        gs__warn("%s=%s holds the report of another process of this run, and the name with the process id "
                 "is too long, so %s",
                 gs__knobs[knob].name, gs__quote(was, q), lost(knob));
    else if (t == TARGET_PID)
        gs__warn("%s=%s holds the report of another process of this run, so this one is written to %s "
                 "(%%p in the name gives each process its own)",
                 gs__knobs[knob].name, gs__quote(was, q), gs__quote(path, q2));
}

int gs__out_is_json(int knob)
{
    char path[PATH_MAX];
    size_t n;

    if (gs__path_expand(gs__cfg.path[knob], path, sizeof path) != 0)
        return 0;
    n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".json") == 0;
}

/* Locks the directory that holds path (flock), so that two processes of one
** run that finish together cannot both find the report's name free and write
** over each other: the second waits for the first's rename, then finds its file.
** Another graphshim holds it only to look at the name and rename (the run is
** known before); whatever holds it longer is waited for about 2 s, and then the
** report goes on unlocked.  Returns the descriptor holding the lock, to close,
** or -1. */
static int lock_dir(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int fd;

    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (int i = 0; i < 200; i++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK && errno != EINTR)
            break;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    close(fd);
    return -1;
}

int gs__out_replace(int knob, const char *data, size_t len)
{
    char path[PATH_MAX], was[PATH_MAX], tmp[PATH_MAX + 32], q[GS_QUOTE_LEN];
    enum target t = TARGET_NAME;
    mode_t mode = 0;
    struct gs_run r;
    int fd, err, dir;

    if (gs__path_is_stderr(gs__cfg.path[knob]))
        return gs__out_write_all(2, data, len);
    if (expand(knob, path) != 0 || make_folder(knob, path) != 0)
        return -1;
    r = gs__run_of();
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by a process of this pid that died */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        gs__warn("cannot write %s=%s (%s), so %s", gs__knobs[knob].name, gs__quote(path, q), strerror(errno),
                 lost(knob));
        return -1;
    }
    if (r.id[0]) { /* where the file system keeps it */
        char stamp[GS_RUN_STAMP_LEN];
        gs__run_stamp(&r, stamp, sizeof stamp);
        fsetxattr(fd, GS_RUN_XATTR, stamp, strlen(stamp), 0);
    }
    if (gs__out_write_all(fd, data, len) != 0) {
        err = errno;
        close(fd);
    } else {
        err = close(fd) == 0 ? 0 : errno;
    }
    /* The name is chosen and taken under the lock, after the slow write. */
    dir = err ? -1 : lock_dir(path);
    if (!err)
        t = report_target(path, was, &r, &mode);
    /* A report that replaces an earlier one keeps its permissions. */
    if (!err && t == TARGET_NAME && mode)
        chmod(tmp, mode & 0777);
    if (!err && (t == TARGET_NAME || t == TARGET_PID) && rename(tmp, path) != 0)
        err = errno;
    if (dir >= 0)
        close(dir);
    target_said(knob, t, path, was, mode);
    if (t != TARGET_NAME && t != TARGET_PID) {
        unlink(tmp);
        return -1;
    }
    if (err) {
        unlink(tmp);
        gs__warn("cannot write %s=%s (%s), so %s", gs__knobs[knob].name, gs__quote(path, q), strerror(err),
                 lost(knob));
        return -1;
    }
    return 0;
}

/* --- The trace ---------------------------------------------------------------- */

/* The file gs__out_append opened, where it made it: its name and identity, so
** that gs__out_append_failed can take it away.  Empty name: it was there. */
static char made_path[PATH_MAX];
static dev_t made_dev;
static ino_t made_ino;

int gs__out_append(int knob)
{
    char path[PATH_MAX], q[GS_QUOTE_LEN];
    struct stat st;
    int fd, made, trace = 0, flags;

    if (gs__path_is_stderr(gs__cfg.path[knob]))
        return 2;
    if (expand(knob, path) != 0)
        return -1;
    made = lstat(path, &st) != 0 && errno == ENOENT;
    if (!made && S_ISREG(st.st_mode) && !graphshim_file(path, &trace) && !gs__cfg.force) {
        keep_users(knob, path);
        return -1;
    }
    /* A file that is not a trace is replaced (a report, or the user's under
    ** GRAPHSHIM_FORCE); a trace is appended to: the processes of a run share it. */
    flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (made || trace ? 0 : O_TRUNC);
    /* O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) where a plain
    ** open would wait for one; with a reader it opens, and fstat refuses it. */
    fd = open(path, flags, 0644);
    if (fd < 0) {
        int err = errno;
        if ((err == ELOOP || err == ENXIO || err == EISDIR) && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            refuse(knob, path, st.st_mode);
        } else {
            gs__warn("cannot open %s=%s (%s); %s", gs__knobs[knob].name, gs__quote(path, q), strerror(err),
                     lost(knob));
        }
        return -1;
    }
    if (fstat(fd, &st) != 0)
        st.st_mode = 0;
    if (!S_ISREG(st.st_mode)) {
        refuse(knob, path, st.st_mode);
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    trace_dev = st.st_dev;
    trace_ino = st.st_ino;
    trace_known = 1;
    made_path[0] = '\0';
    if (made) {
        memcpy(made_path, path, strlen(path) + 1);
        made_dev = st.st_dev;
        made_ino = st.st_ino;
    }
    return fd;
}

void gs__out_append_failed(int fd)
{
    struct stat st, now;

    if (made_path[0] && fstat(fd, &st) == 0 && st.st_size == 0 && st.st_dev == made_dev && st.st_ino == made_ino &&
        lstat(made_path, &now) == 0 && now.st_dev == made_dev && now.st_ino == made_ino)
        unlink(made_path);
    made_path[0] = '\0';
}
