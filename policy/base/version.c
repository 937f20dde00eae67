/*
** version.c: the public API's version (include/graphshim.h), as a number for
** programs and as text for people.
**
** GS_VERSION_TEXT is GRAPHSHIM_VERSION written out; the launcher's --version
** reads it from the library file itself (the ident string below), so it needs no
** CUDA and loads nothing.  tests/cli checks that the two, and the launcher's own
** version, agree.
*/
#include "graphshim.h"

#define GS_VERSION_TEXT "0.1.0"

/* Kept in the file whether or not anything refers to it. */
__attribute__((used)) static const char ident[] = "@(#)graphshim library " GS_VERSION_TEXT;

__attribute__((visibility("default"))) int gs_version(void)
{
    return GRAPHSHIM_VERSION;
}
