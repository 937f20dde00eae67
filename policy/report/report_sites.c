/*
** report_sites.c: the report's call sites of bails (stream/sites.h), as JSON
** ("bail_sites") and as lines under the text form's bails.
*/
#include <stdio.h>
#include <stdlib.h>

#include "../base/names.h"
#include "../stream/sites.h"
#include "report_int.h"

#define SHOWN_JSON 5 /* sites per reason */
#define SHOWN_TEXT 3

/* s as a JSON string: a name from a symbol table may hold anything. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_site(FILE *f, const struct gs_site *x)
{
    fprintf(f, "{\"site\": ");
    json_str(f, x->site);
    fprintf(f, ", \"object\": ");
    json_str(f, x->object);
    fprintf(f, ", \"count\": %llu, \"sampled\": %llu, \"kernels\": [", (unsigned long long)x->count,
            (unsigned long long)x->samples);
    for (int k = 0; k < 2 && x->kernel[k][0]; k++) {
        fprintf(f, "%s", k ? ", " : "");
        json_str(f, x->kernel[k]);
    }
    fprintf(f, "]}");
}

void gs__report_sites_json(FILE *f)
{
    struct gs_site *sites;
    int n = gs__sites_collect(&sites), shown = 0;
    char buf[64];

    fprintf(f, "  \"bail_sites\": {");
    for (int i = 0; i < n; i++) {
        int first = i == 0 || sites[i - 1].reason != sites[i].reason;
        if (first) {
            fprintf(f, "%s\n    \"%s\": [", i ? "]," : "", gs__bail_name(sites[i].reason, buf, sizeof buf));
            shown = 0;
        }
        if (shown++ < SHOWN_JSON) {
            fprintf(f, "%s", shown > 1 ? ", " : "");
            json_site(f, &sites[i]);
        }
    }
    fprintf(f, "%s},\n", n ? "]\n  " : "");
    free(sites);
}

void gs__report_sites_text(FILE *f, const struct gs_site *sites, int n, int reason)
{
    int shown = 0;

    for (int i = 0; i < n && shown < SHOWN_TEXT; i++) {
        if (sites[i].reason != reason)
            continue;
        shown++;
        fprintf(f, "      at %s (%s): %s%llu", sites[i].site, sites[i].object,
                sites[i].count > sites[i].samples ? "~" : "", (unsigned long long)sites[i].count);
        if (sites[i].kernel[0][0])
            fprintf(f, ", after %s%s%s", sites[i].kernel[0], sites[i].kernel[1][0] ? ", " : "", sites[i].kernel[1]);
        fprintf(f, "\n");
    }
}
