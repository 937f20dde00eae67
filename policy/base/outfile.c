/*
** outfile.c: the report and the trace, written safely (see outfile.h).
**
** First the checks both share: what a path names (a regular file, or a thing
** graphshim refuses), with one warning per refusal.  Then the report: the run's
** start, against which an existing report is judged, and the write through a
** temporary file.  Last the trace, opened for appending without ever waiting.
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
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

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

/* --- The report --------------------------------------------------------------- */

/* Process pid's start, in clock ticks since boot, and its parent.  Returns 0, or
** -1 if /proc does not say. */
static int proc_start(pid_t pid, unsigned long long *start, pid_t *ppid)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* The command name may hold blanks and parentheses: the fields follow the
    ** last ')'. */
    if (!(p = strrchr(buf, ')')))
        return -1;
    return sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", ppid,
                  start) == 2 ? 0 : -1;
}

/* Does process pid have the variable assignment want ("NAME=value") in the
** environment it was started with? */
static int proc_has_env(pid_t pid, const char *want)
{
    char path[64], *buf = NULL;
    size_t len = 0, cap = 0, wlen = strlen(want) + 1;
    int fd, found = 0;

    snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    for (;;) {
        ssize_t n;
        if (len + 4096 > cap) {
            char *b = cap < (8u << 20) ? realloc(buf, cap = cap ? 2 * cap : 65536) : NULL;
            if (!b)
                break;
            buf = b;
        }
        n = read(fd, buf + len, cap - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    for (size_t i = 0; i < len; i += strnlen(buf + i, len - i) + 1)
        if (len - i >= wlen && memcmp(buf + i, want, wlen) == 0) /* the NUL too */
            found = 1;
    free(buf);
    return found;
}

/* When this process started, as near as it can tell: graphshim's constructor
** calls gs__out_note_start.  Zero if it did not. */
static struct timespec self_start;

void gs__out_note_start(void)
{
    clock_gettime(CLOCK_REALTIME, &self_start);
}

static int not_before(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

/* Process start in clock ticks since boot, on the clock of file times, rounded
** down to the tick. */
static struct timespec ticks_to_real(unsigned long long ticks)
{
    struct timespec real, boot, t;
    long hz = sysconf(_SC_CLK_TCK);
    double at;

    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    at = (double)real.tv_sec + real.tv_nsec * 1e-9 - ((double)boot.tv_sec + boot.tv_nsec * 1e-9) +
         (double)ticks / (double)(hz > 0 ? hz : 100);
    t.tv_sec = (time_t)at;
    t.tv_nsec = (long)((at - (double)t.tv_sec) * 1e9);
    return t;
}

/* A file's time comes from the kernel's coarse clock, up to one of its ticks
** behind the time it was written.  A start known only to a clock tick (an
** ancestor's, or /proc's) is moved back by that much, so that a file another
** process of the run wrote moments after the start counts as this run's. */
static struct timespec coarse_slack(struct timespec t)
{
    struct timespec res;

    if (clock_getres(CLOCK_REALTIME_COARSE, &res) != 0 || res.tv_sec > 0)
        res = (struct timespec){0, 10 * 1000 * 1000};
    t.tv_nsec -= res.tv_nsec;
    if (t.tv_nsec < 0) {
        t.tv_nsec += 1000000000L;
        t.tv_sec--;
    }
    return t;
}

/* When this run began, on the clock of file times: the start of the oldest
** process in the chain from this one up through its ancestors that have the
** report knob's value in their environment.  This process's own start is the
** moment graphshim was loaded, after any report an earlier process wrote before
** this one was started; an ancestor's is its start rounded down to a clock tick,
** less the file clock's slack: when in doubt a file counts as this run's, and is
** kept. */
static struct timespec run_start(void)
{
    char want[GS_KNOB_TEXT_MAX + 32];
    unsigned long long start = 0;
    struct timespec t = self_start;
    pid_t pid = getpid(), ppid;
    int have = proc_start(pid, &start, &ppid) == 0, ticked = 0;

    if (!t.tv_sec) {
        /* Without a start of its own, /proc's; without that either, any file
        ** counts as this run's, and none is replaced. */
        if (!have)
            return t;
        t = ticks_to_real(start);
        ticked = 1;
    }
    snprintf(want, sizeof want, "%s=%s", gs__knobs[GS_KNOB_report].name, gs__cfg.path[GS_KNOB_report]);
    for (int depth = 0; have && depth < 64 && ppid > 1 && proc_has_env(ppid, want); depth++) {
        struct timespec a;
        pid = ppid;
        if (proc_start(pid, &start, &ppid) != 0)
            break;
        a = ticks_to_real(start);
        if (not_before(t, a)) {
            t = a;
            ticked = 1;
        }
    }
    return ticked ? coarse_slack(t) : t;
}


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
** name): the name itself, or its ".PID" form if another process of the run
** wrote the file there.  Returns 0, or -1 after a warning if it names no regular
** file. */
static int report_target(int knob, char *path)
{
    char alt[PATH_MAX], q[GS_QUOTE_LEN], q2[GS_QUOTE_LEN];
    struct stat st;

    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode)) {
        refuse(knob, path, st.st_mode);
        return -1;
    }
    if (!not_before(st.st_mtim, run_start()))
        return 0; /* an earlier run's: replaced */
    if (with_pid(path, alt) != 0) {
        gs__warn("%s=%s holds the report of another process of this run, and the name with the process id "
                 "is too long, so %s",
                 gs__knobs[knob].name, gs__quote(path, q), lost(knob));
        return -1;
    }
    gs__warn("%s=%s holds the report of another process of this run, so this one is written to %s "
             "(%%p in the name gives each process its own)",
             gs__knobs[knob].name, gs__quote(path, q), gs__quote(alt, q2));
    if (lstat(alt, &st) == 0 && !S_ISREG(st.st_mode)) {
        refuse(knob, alt, st.st_mode);
        return -1;
    }
    memcpy(path, alt, strlen(alt) + 1);
    return 0;
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
** Another graphshim holds the lock only for a rename; whatever holds it longer
** is waited for about 2 s, and then the report goes on unlocked.  Returns the
** descriptor holding the lock, to close, or -1. */
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
    char path[PATH_MAX], tmp[PATH_MAX + 32], q[GS_QUOTE_LEN];
    int fd, err, dir;

    if (gs__path_is_stderr(gs__cfg.path[knob]))
        return gs__out_write_all(2, data, len);
    if (expand(knob, path) != 0)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by a process of this pid that died */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        gs__warn("cannot write %s=%s (%s), so %s", gs__knobs[knob].name, gs__quote(path, q), strerror(errno),
                 lost(knob));
        return -1;
    }
    if (gs__out_write_all(fd, data, len) != 0) {
        err = errno;
        close(fd);
    } else {
        err = close(fd) == 0 ? 0 : errno;
    }
    /* The name is chosen and taken under the lock, after the slow write. */
    dir = err ? -1 : lock_dir(path);
    if (!err && report_target(knob, path) != 0) {
        unlink(tmp);
        if (dir >= 0)
            close(dir);
        return -1;
    }
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (dir >= 0)
        close(dir);
    if (err) {
        unlink(tmp);
        gs__warn("cannot write %s=%s (%s), so %s", gs__knobs[knob].name, gs__quote(path, q), strerror(err),
                 lost(knob));
        return -1;
    }
    return 0;
}

/* --- The trace ---------------------------------------------------------------- */

int gs__out_append(int knob)
{
    char path[PATH_MAX], q[GS_QUOTE_LEN];
    struct stat st;
    int fd;

    if (gs__path_is_stderr(gs__cfg.path[knob]))
        return 2;
    if (expand(knob, path) != 0)
        return -1;
    /* O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) where a plain
    ** open would wait for one; with a reader it opens, and fstat refuses it. */
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
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
    return fd;
}
