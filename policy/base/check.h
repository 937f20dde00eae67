/*
** check.h: checks of a report's counters, for a CI gate.  The same checks, by
** the same code, in `graphshim report --check` (scripts/report.c) and in the
** library at exit (GRAPHSHIM_CHECK); docs/report.md describes them.
**
** A value is one check or several separated by commas:
**
**     [streams.]FIELD OP NUMBER        OP: >= <= > < == !=
**
** FIELD names a counter of the JSON report's "totals" (a job's: summed over
** the reports given, hit_rate recomputed from the sums), or, after
** "streams.", one of a stream's, checked on every stream that saw an op.
** Blanks are allowed around the three parts, not inside them; NUMBER is
** decimal: an optional sign, digits with an optional fraction, an optional
** exponent (no nan, inf or hexadecimal).
*/
#ifndef GS_CHECK_H
#define GS_CHECK_H

#include <stddef.h>
#include <stdio.h>

#define GS_CHECKS_MAX 32

struct gs_check {
    const char *field;  /* one of check.c's field names */
    int per_stream;     /* "streams.": every stream's own counter */
    int op;             /* index into check.c's operators */
    double value;
    char text[96];      /* the check as given, blanks removed, for messages */
};

struct gs_checks {
    int n;
    struct gs_check c[GS_CHECKS_MAX];
};

/* Adds the checks of text to cs.  Returns 0, or -1 with err (errlen bytes) set
** to what is wrong, naming the check: a bad expression, an unknown field (the
** fields known are listed), or more than GS_CHECKS_MAX checks. */
int gs__checks_parse(struct gs_checks *cs, const char *text, char *err, size_t errlen);

/* The "ops" of the JSON report text's totals (0 where there is none). */
double gs__checks_ops(const char *text);

/* Evaluates cs over the JSON reports texts[0 .. n-1] (names[i] names each in
** messages).  Writes one line to out for each check that fails, prefix first
** (once per failing stream for a stream's check; once where no stream saw an
** op: a stream's check fails then).  Where the reports count no op at all,
** nothing was measured: one line says so, and it counts as a failed check.
** Returns the lines written, or -1 with a line on out where a text is not a
** graphshim report. */
int gs__checks_run(const struct gs_checks *cs, const char *const *texts, const char *const *names, int n,
                   FILE *out, const char *prefix);


#endif
