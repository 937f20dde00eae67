/*
** report.h: what graphshim-report's files share: the parsed JSON (report.c's
** reader), the few accessors the picture needs, and the picture itself
** (report_svg.c).
*/
#ifndef GS_SCRIPTS_REPORT_H
#define GS_SCRIPTS_REPORT_H

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
    int type;
    int boolean;
    double num;             /* every number */
    unsigned long long u;   /* a non-negative integer, exactly; is_uint set */
    int is_uint;
    char *str;
    struct jv *kids;        /* array elements or object values */
    char **keys;            /* object keys */
    int n, cap;
};

/* The value of key in object o, or NULL (o NULL or no object: NULL). */
const struct jv *get(const struct jv *o, const char *key);
/* A count: a non-negative integer (LLONG_MAX at most), or -1 when absent or of
** another type. */
long long count_of(const struct jv *o, const char *key);
/* The number at key of object o, or NAN where there is none. */
double num_of(const struct jv *o, const char *key);
/* s fit to print on a terminal (control characters and bytes that are not
** UTF-8 as \xNN), in one of 8 buffers used in turn, cut past 1000 bytes. */
const char *esc(const char *s);

/* Draws the reports (n parsed roots, each a graphshim report, named by file)
** as one SVG picture into path ("-": standard output).  Returns 0, or -1
** after a message on stderr where the file cannot be written. */
int gs_svg_write(const char *path, const struct jv *const *reports, const char *const *files, int n);

#endif
