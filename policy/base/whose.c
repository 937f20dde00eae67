/*
** whose.c: whose file is it, graphshim's or the user's (see whose.h).
*/
#include "whose.h"

#include <string.h>

/* Skips the text lit at *p, and then, where set is given, a run of at least one
** character of set (the rest of a value).  Returns 0 where it matched. */
static int take(const char **p, const char *lit, const char *set)
{
    size_t n = strlen(lit), k;

    if (strncmp(*p, lit, n) != 0)
        return -1;
    *p += n;
    if (!set)
        return 0;
    if (!(k = strspn(*p, set)))
        return -1;
    *p += k;
    return 0;
}

int gs__whose_head(const char *head)
{
    const char *p = head;

    if (take(&p, "{\n  \"engine\": ", "aeflrstu") == 0 && take(&p, ",\n  ", NULL) == 0 &&
        (take(&p, "\"rank\": ", "-0123456789lnu") != 0 || take(&p, ",\n  ", NULL) == 0) &&
        take(&p, "\"totals\": {\"ops\": ", "0123456789") == 0)
        return 1;
    p = head;
    if (take(&p, "graphshim report: engine on\n", NULL) == 0)
        return 1;
    p = head;
    if (take(&p, "graphshim report: engine off (pass-through)\n", NULL) == 0)
        return 1;
    p = head;
    if (take(&p, "tid=", "0123456789") == 0 && take(&p, " cu", NULL) == 0 &&
        take(&p, "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == 0 &&
        take(&p, " stream=", NULL) == 0)
        return 2;
    return 0;
}
