/*
** whose.h: whose file is it, graphshim's or the user's: by a mark only
** graphshim's files carry, the layout of their first lines, never by a first
** word a user's file may share (outfile.c replaces or appends to graphshim's
** files alone).
*/
#ifndef GS_WHOSE_H
#define GS_WHOSE_H

/* Does head (a file's first bytes, NUL-terminated) begin as only graphshim
** writes a file?  A JSON report: "engine" true or false, "rank" where the
** report has one, then "totals" with its first counter on the same line,
** which no JSON writer that indents puts there (a user's JSON whose first key
** is "engine" is not one); a text report: its first line "graphshim report:
** engine on" or "... off (pass-through)"; a trace: its first line "tid=N
** ENTRY stream=" (not any line that starts "tid=").  Returns 1 for a report,
** 2 for a trace, 0 for anything else. */
int gs__whose_head(const char *head);

#endif
