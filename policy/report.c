/*
** report.c: the report at exit (see report.h).
*/
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "guard.h"
#include "log.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void write_json(FILE *f)
{
    fprintf(f, "{\n  \"engine\": %s,\n  \"calls\": {", gs__passthrough ? "false" : "true");
    for (int c = 0; c < GS_NCLASSES; c++)
        fprintf(f, "%s\n    \"%s\": %ld", c ? "," : "", gs__class_name(c), atomic_load(&gs__calls_by_class[c]));
    fprintf(f, "\n  }\n}\n");
}

static void write_text(FILE *f)
{
    fprintf(f, "graphshim report: engine %s\n", gs__passthrough ? "off (pass-through)" : "on");
    fprintf(f, "  %-14s %12s\n", "calls by class", "count");
    for (int c = 0; c < GS_NCLASSES; c++)
        fprintf(f, "  %-14s %12ld\n", gs__class_name(c), atomic_load(&gs__calls_by_class[c]));
}

int gs__report_write(void)
{
    const char *path = gs__cfg.path[GS_KNOB_report];
    int rc = 0;

    if (gs__cfg.log >= GS_LOG_INFO)
        write_text(stderr);
    if (gs__cfg.report) {
        FILE *f = fopen(path, "w");
        if (!f) {
            gs__warn("cannot write GRAPHSHIM_REPORT=%s (%s)", path, strerror(errno));
            return -1;
        }
        if (ends_with(path, ".json"))
            write_json(f);
        else
            write_text(f);
        if (fclose(f) != 0)
            rc = -1;
    }
    return rc;
}
