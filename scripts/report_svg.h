/*
** report_svg.h: what the picture's two files share (report_svg.c draws a
** report and its streams, report_strip.c a learned step's strip): the layout,
** the colors, and the helpers that write SVG.
*/
#ifndef GS_SCRIPTS_REPORT_SVG_H
#define GS_SCRIPTS_REPORT_SVG_H

#include <stdio.h>

#include "report.h"

#define WIDTH 1200
#define X0 16
#define STRIP_W (WIDTH - 2 * X0)
#define BOX_MAX 120   /* ops drawn a box each; a longer strip is drawn to scale */
#define BOX_W_MAX 36  /* px: a short step's boxes stay boxes */
#define STRIP_H 22
#define KIND_H 6
#define LINE 18
#define MAX_STREAMS 24
#define MAX_BAILS 8

#define C_GRAPH "#2e7d32"
#define C_CHUNK "#1e88e5"
#define C_EAGER "#9e9e9e"
#define C_BAIL "#c62828"
#define C_KERNEL "#37474f"
#define C_COPY "#f9a825"
#define C_SET "#8d6e63"

/* Text at (x, y) with style (attributes), printf-style: escaped for a
** terminal (esc), then for XML. */
void svg_text(FILE *f, int x, int y, const char *style, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void svg_rect(FILE *f, double x, int y, double w, int h, const char *fill);
/* The string at key of o, or none. */
const char *str_of(const struct jv *o, const char *key, const char *none);
/* The count at key of o, 0 where it has none. */
long long count0(const struct jv *o, const char *key);

/* Sequence q (an element of a stream's "sequences"), and loop body q (of its
** "bodies"): a line of words and a strip at *y, moved past them. */
void draw_sequence(FILE *f, int *y, const struct jv *q);
void draw_body(FILE *f, int *y, const struct jv *q);

#endif
