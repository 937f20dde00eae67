/*
** config.h: the GRAPHSHIM_* knobs, as one table.
**
** GS_KNOBS lists every environment variable graphshim reads: its field, name,
** type, default, range and a one-line doc.  config.c parses them all the same
** way; knobs_doc.c renders docs/knobs.md from the same table.
**
** One grammar for every value: an integer is an optional sign and decimal digits,
** an on/off value 1, on, true or yes for on and 0, off, false or no for off, in
** any case, a level one of its names in any case, a path anything up to
** GS_KNOB_PATH_MAX - 1 bytes, a text up to GS_KNOB_TEXT_MAX - 1; no value may start or end with a blank.  An
** empty value is no value: it is warned, and the default is used.
*/
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include <stddef.h>

enum gs_knob_type { GS_KNOB_BOOL, GS_KNOB_INT, GS_KNOB_LEVEL, GS_KNOB_PATH, GS_KNOB_TEXT };

#include "log.h" /* enum gs_level */

/* X(field, env name, type, default, min, max, doc) */
#define GS_KNOBS(X)                                                                   \
    X(enable, "GRAPHSHIM", GS_KNOB_BOOL, 1, 0, 1,                                     \
      "1 runs the engine; 0 turns it off and every call passes straight through")    \
    X(warmup, "GRAPHSHIM_WARMUP", GS_KNOB_INT, 2, 1, 1000000,                         \
      "identical occurrences of a sequence before it is stable and may be graphed")  \
    X(min_ops, "GRAPHSHIM_MIN_OPS", GS_KNOB_INT, 2, 1, 1000000,                       \
      "sequences shorter than this many ops are never graphed, but on trial "     \
      "(GRAPHSHIM_SHORT_TRIAL)")                                                     \
    X(max_graphs, "GRAPHSHIM_MAX_GRAPHS", GS_KNOB_INT, 256, 1, 1000000,               \
      "graph executables kept at most; the least recently used goes first")          \
    X(max_defer_us, "GRAPHSHIM_MAX_DEFER_US", GS_KNOB_INT, 2000, 1, 100000000,        \
      "held work older than this (microseconds) is issued by a watchdog")            \
    X(chunk_us, "GRAPHSHIM_CHUNK_US", GS_KNOB_INT, 0, 0, 100000000,                   \
      "held ops that waited this long (microseconds) at the same place twice are "  \
      "launched early as a graph of their own, so the GPU works while the host goes " \
      "on; 0 (the default) turns this off")                                         \
    X(chunk_ops, "GRAPHSHIM_CHUNK_OPS", GS_KNOB_INT, 8, 0, 1000000,                   \
      "held ops go out early as graphs of their own, so the GPU works while the "   \
      "host goes on: the first chunk after this many held ops, each later chunk as " \
      "long as all before it together; 0 holds everything until the boundary "     \
      "(see docs/PERFORMANCE.md)")                                                   \
    X(chunk_max, "GRAPHSHIM_CHUNK_MAX", GS_KNOB_INT, 16, 0, 1000000,                   \
      "where the host took more than 1 us per op to issue this many ops (at least "  \
      "GRAPHSHIM_CHUNK_OPS) after an early chunk, twice in a row at that place, a chunk ends " \
      "there instead of growing as "                                                 \
      "long as all before it: a GPU about as fast as such a host gets work before " \
      "it runs dry; half as many (not under 4 or GRAPHSHIM_CHUNK_OPS) where the GPU " \
      "was still running the chunks at two synchronizes in a row; 0: chunks always grow") \
    X(body_ops, "GRAPHSHIM_BODY_OPS", GS_KNOB_INT, 32, 0, 1000000,                     \
      "loop bodies: a run of 1 to 32 ops that repeats back to back inside one "     \
      "segment is held once it ran GRAPHSHIM_WARMUP + 1 times in a row, and goes "  \
      "out as graphs of 2^j bodies, about this many ops each; 0 turns bodies off")  \
    X(steps, "GRAPHSHIM_STEPS", GS_KNOB_BOOL, 1, 0, 1,                                 \
      "1: where a sequence is one step repeated back to back (a loop that "         \
      "synchronizes every 10 or 100 steps), of any length, segments end at each "    \
      "step from then on, and each step is learned, held and replayed as a "          \
      "sequence; 0: segments end only where the program's calls end them")         \
    X(xstream, "GRAPHSHIM_XSTREAM", GS_KNOB_BOOL, 0, 0, 1,                             \
      "1: work a stream forks to other streams by events and joins back (an event "  \
      "record, other streams' waits on it, their ops, their records, the stream's "  \
      "waits on those) is held, learned and replayed as one sequence of the stream, " \
      "one graph; 0 (the default): each event record or wait ends the segment")      \
    X(rest_after, "GRAPHSHIM_REST_AFTER", GS_KNOB_INT, 64, 0, 1000000,                 \
      "segments in a row that came for the first time (or subtrees dropped for "   \
      "room with no replay) after which learning rests for as many segments, "      \
      "twice as many each time nothing repeats in between (and the run that "     \
      "starts it again is a quarter as long), until a segment comes "             \
      "back as one did during the rest; 0: learning never rests")                    \
    X(patch, "GRAPHSHIM_PATCH", GS_KNOB_BOOL, 1, 0, 1,                                 \
      "1: an op matches a learned sequence whatever its arguments (a launch's grid " \
      "and parameter bytes, a device copy's or memset's addresses, size and value, " \
      "a pinned host copy's device side), and goes out with its own (nodes are set in " \
      "place); 0: only byte-identical ops match")                                                   \
    X(gain_check, "GRAPHSHIM_GAIN_CHECK", GS_KNOB_BOOL, 1, 0, 1,                        \
      "1 times each sequence that ends in a synchronize, eagerly and as a graph, and " \
      "runs it eagerly for good where three in four of 8 replays took more than 10% " \
      "longer than eager, and then three in four of 8 replays in a trial, each "    \
      "judged against an eager run just before it")                                  \
    X(short_trial, "GRAPHSHIM_SHORT_TRIAL", GS_KNOB_BOOL, 1, 0, 1,                      \
      "1: with the gain check on, a sequence shorter than GRAPHSHIM_MIN_OPS that a " \
      "synchronize ends (a launch and a synchronize: a residual read back every "  \
      "iteration) is graphed on trial and kept only where its replays take no "    \
      "longer than its eager runs (three in four of 8 replays, and of 8 trial "    \
      "pairs); 0: such sequences are never graphed")                                \
    X(nvtx, "GRAPHSHIM_NVTX", GS_KNOB_BOOL, 1, 0, 1,                                  \
      "1 marks replays, early chunks, captures and bails as NVTX ranges in the "    \
      "domain graphshim, for a tool that listens (Nsight Systems, or any "          \
      "NVTX_INJECTION64_PATH); 0 makes no NVTX call")                                \
    X(bail_sites, "GRAPHSHIM_BAIL_SITES", GS_KNOB_BOOL, 1, 0, 1,                      \
      "1: the report names where the program's calls cut its graphs: for each bail " \
      "reason, the call sites (the first frame outside libcuda, libcudart and "     \
      "graphshim) and the kernels held just before, from a sample of the bails "   \
      "(every one of the first 16 of a reason, then one in 64); 0: none sampled")   \
    X(log, "GRAPHSHIM_LOG", GS_KNOB_LEVEL, GS_LOG_WARN, GS_LOG_ERROR, GS_LOG_DEBUG,   \
      "messages on stderr: error, warn, info (adds the report table) or debug "     \
      "(adds the effective settings and lookups)")                                   \
    X(report, "GRAPHSHIM_REPORT", GS_KNOB_PATH, 0, 0, 0,                              \
      "write the report at exit to this path; JSON when it ends in .json; %p in "   \
      "it becomes the process id, %r the rank of a distributed job (RANK, "          \
      "OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK; x if none), %% a %: a "      \
      "report per process of a job.  The folder that holds it is made where the " \
      "folder above it exists.  Only a regular file is written, whole or not "      \
      "at all (never through a symbolic link, a FIFO or a device); - or stderr "     \
      "writes it to standard error.  A file that is not graphshim's is never "       \
      "replaced (GRAPHSHIM_FORCE).  A report another process of the same run "      \
      "wrote is kept: this one goes to the name with .PID added, and a warning "     \
      "says so; a report that replaces an earlier run's keeps its permissions")      \
    X(trace, "GRAPHSHIM_TRACE", GS_KNOB_PATH, 0, 0, 0,                                \
      "append one line per intercepted driver call to this path; %p, %r and %% as " \
      "in GRAPHSHIM_REPORT; a regular file only, as for GRAPHSHIM_REPORT; - or "      \
      "stderr writes to standard error")                                              \
    X(force, "GRAPHSHIM_FORCE", GS_KNOB_BOOL, 0, 0, 1,                                \
      "1: GRAPHSHIM_REPORT and GRAPHSHIM_TRACE replace a file that is not "         \
      "graphshim's; 0: such a file (one that holds neither a graphshim report nor " \
      "a trace, and is not empty) is kept, nothing is written to it, and a warning " \
      "says so")                                                                      \
    X(check, "GRAPHSHIM_CHECK", GS_KNOB_TEXT, 0, 0, 0,                               \
      "checks of the report's counters, as `graphshim report --check` takes them "  \
      "(hit_rate>=0.8,streams.launches_saved>=100: docs/report.md; at most 32, "    \
      "up to 4095 bytes); at exit one line on stderr for each that fails, and "    \
      "nothing else changes; graphshim run judges the whole run")   \
    X(check_exit, "GRAPHSHIM_CHECK_EXIT", GS_KNOB_BOOL, 0, 0, 1,                      \
      "1: where a GRAPHSHIM_CHECK check failed, or no process of the run measured " \
      "anything, and the program exits with status 0, it exits with status 1 "      \
      "instead, and with status 2 where GRAPHSHIM_CHECK cannot be read (exit "       \
      "handlers registered before the program's first CUDA call then do not run); " \
      "0 never changes the status; under a set GRAPHSHIM_CHECK, a value that "      \
      "cannot be read fails closed, as a check that cannot be read")

/* Knob indices: GS_KNOB_<field>. */
enum {
#define GS_KNOB_INDEX(field, name, type, def, min, max, doc) GS_KNOB_##field,
    GS_KNOBS(GS_KNOB_INDEX)
#undef GS_KNOB_INDEX
    GS_NKNOBS
};

/* The longest value a path knob and a text knob take, with its NUL.  A longer
** one is refused with a warning, never cut.  A text knob (GRAPHSHIM_CHECK) takes
** GS_CHECKS_MAX checks of 128 bytes each, blanks included. */
#define GS_KNOB_PATH_MAX 1024
#define GS_KNOB_TEXT_MAX 4096

/* The effective settings.  A path or text knob's long is 1 when it is set, and
** its text is in path[GS_KNOB_<field>]. */
struct gs_config {
#define GS_KNOB_FIELD(field, name, type, def, min, max, doc) long field;
    GS_KNOBS(GS_KNOB_FIELD)
#undef GS_KNOB_FIELD
    char path[GS_NKNOBS][GS_KNOB_TEXT_MAX];
};

extern struct gs_config gs__cfg;

/* Descriptor of one knob, for parsing and for the docs. */
struct gs_knob {
    const char *name;
    int type;
    long def, min, max;
    const char *doc;
};
extern const struct gs_knob gs__knobs[];

/* Reads every knob from the environment into gs__cfg.  A bad value is reported
** once on stderr, naming the variable and the default used; so is a GRAPHSHIM_*
** variable that is no knob, with the closest knob's name.  Returns the number
** of bad values. */
int gs__config_load(void);

/* Parses s as the value of knob k, by the one grammar above.  Returns 0 and the
** value in *out (1 for a path or text), or -1 if s is not a valid value; then
** *why, if why is not NULL, says what is wrong in words. */
int gs__knob_parse(const struct gs_knob *k, const char *s, long *out, const char **why);

/* The process's rank in a distributed job, from the variables its launcher
** sets: RANK (torchrun), OMPI_COMM_WORLD_RANK (Open MPI), SLURM_PROCID (Slurm),
** PMI_RANK (MPICH, Intel MPI), the first one set to a number of at most 9
** digits; "x" if none is. */
const char *gs__job_rank(void);

/* Writes path knob value in into out (len bytes) with each %p replaced by the
** process id, each %r by the job's rank (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID
** or PMI_RANK, the first set to a number; x if none) and each %% by %; any other
** % stays as it is.  Returns 0, or -1 if the result does not fit. */
int gs__path_expand(const char *in, char *out, size_t len);

/* Nonzero for the values of a path knob that name standard error ("-" and
** "stderr"): the only place other than a regular file graphshim writes to. */
int gs__path_is_stderr(const char *s);

/* Text of a default value, for the docs ("1", "warn", "unset"). */
const char *gs__knob_default_text(const struct gs_knob *k, char *buf, int len);

#endif
