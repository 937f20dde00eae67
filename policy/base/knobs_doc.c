/*
** knobs_doc.c: renders docs/knobs.md from the knob table, and with the argument
** names docs/names.md from the lists of call classes, bails and rules (make
** docs).  A test compares its output with the committed files, so code and docs
** cannot drift.
*/
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "names.h"

/* docs/names.md: one table per list (driver.h's GS_CLASSES, names.h's GS_BAILS
** and GS_RULES). */
static int names(void)
{
    printf("# graphshim's names of call classes, bails and rules\n\n");
    printf("Generated from `driver/driver.h` and `policy/base/names.h` by `make docs`; do not edit by hand.\n\n");
    printf("## Call classes\n\nWhat a driver call means to held work (the class of its `hooks.def` row; the trace's "
           "`class=`, the report's `calls`).\n\n| class | meaning |\n|---|---|\n");
#define GS_DOC_ROW(id, name, doc) printf("| `%s` | %s |\n", name, doc);
#define GS_DOC_CLASS(id, name, rule, doc) GS_DOC_ROW(id, name, doc)
    GS_CLASSES(GS_DOC_CLASS)
#undef GS_DOC_CLASS
    printf("\n## Bails\n\nWhy held ops went out eagerly (the report's `bails`); a boundary in the middle of a "
           "sequence is `boundary-<class>`.\n\n| bail | meaning |\n|---|---|\n");
    GS_BAILS(GS_DOC_ROW)
    printf("\n## Rules\n\nWhat the test build (`make test-lib`) can turn off with `GRAPHSHIM_TEST_DROP_RULE`, "
           "each to show what it prevents or saves (docs/testing.md, Guard rules and their tests).\n\n"
           "| rule | meaning |\n|---|---|\n");
    GS_RULES(GS_DOC_ROW)
#undef GS_DOC_ROW
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "names") == 0)
        return names();
    printf("# graphshim knobs\n\n");
    printf("Environment variables read when the first CUDA driver call is intercepted.\n");
    printf("A bad value is reported once on stderr, naming the variable, and the default is used;\n");
    printf("so is a variable set to the empty string.  An on/off knob (bool) takes 1, on, true or yes\n");
    printf("for on and 0, off, false or no for off, in any case.\n");
    printf("`GRAPHSHIM_LOG=debug` prints every effective setting.\n\n");
    printf("Generated from `policy/base/config.h` by `make docs`; do not edit by hand.\n\n");
    printf("| variable | type | default | range | meaning |\n|---|---|---|---|---|\n");
    for (int i = 0; i < GS_NKNOBS; i++) {
        const struct gs_knob *k = &gs__knobs[i];
        char dbuf[32], rbuf[64];
        const char *type = k->type == GS_KNOB_BOOL ? "bool" : k->type == GS_KNOB_INT ? "integer"
                           : k->type == GS_KNOB_LEVEL ? "level" : k->type == GS_KNOB_PATH ? "path" : "text";
        if (k->type == GS_KNOB_PATH)
            snprintf(rbuf, sizeof rbuf, "a writable file");
        else if (k->type == GS_KNOB_TEXT)
            snprintf(rbuf, sizeof rbuf, "%s", k == &gs__knobs[GS_KNOB_check] ? "checks" : "a rule name");
        else if (k->type == GS_KNOB_LEVEL)
            snprintf(rbuf, sizeof rbuf, "error, warn, info, debug");
        else if (k->type == GS_KNOB_BOOL)
            snprintf(rbuf, sizeof rbuf, "1 or 0; on/off, true/false, yes/no");
        else
            snprintf(rbuf, sizeof rbuf, "%ld to %ld", k->min, k->max);
        printf("| `%s` | %s | %s | %s | %s |\n", k->name, type, gs__knob_default_text(k, dbuf, sizeof dbuf), rbuf,
               k->doc);
    }
    return 0;
}
