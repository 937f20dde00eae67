/*
** report.h: the report at exit (GRAPHSHIM_REPORT, and the table on stderr at
** GRAPHSHIM_LOG=info).  docs/report.md describes the format.
*/
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stddef.h>

/* Writes the report to GRAPHSHIM_REPORT (JSON when the path ends in .json) and,
** at log level info, the table to stderr.  Returns 0, or -1 if the file could
** not be written (one warning). */
int gs__report_write(void);

/* The JSON report, as GRAPHSHIM_REPORT=*.json has it, in a new NUL-terminated
** buffer the caller frees; NULL where there is no memory for it. */
char *gs__report_json(void);

#endif
