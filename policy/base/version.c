/*
** version.c: the public API's version (include/graphshim.h), as a number for
** programs and as text for people.
**
** The version has one source, the file VERSION at the repository's root: the
** Makefile passes it down as GS_VERSION_TEXT ("0.1.0") and GS_VERSION_NUMBER
** (GRAPHSHIM_VERSION's format), and this file does not compile where the public
** header says otherwise.  The launcher's --version reads the text from the
** library file itself (the ident string below), so it needs no CUDA and loads
** nothing.
*/
#include "graphshim.h"

#if !defined(GS_VERSION_TEXT) || !defined(GS_VERSION_NUMBER)
#error "GS_VERSION_TEXT and GS_VERSION_NUMBER come from the file VERSION (the Makefile passes them)"
#endif
_Static_assert(GRAPHSHIM_VERSION == GS_VERSION_NUMBER,
               "GRAPHSHIM_VERSION in include/graphshim.h is not the version of the file VERSION");

/* Kept in the file whether or not anything refers to it. */
__attribute__((used)) static const char ident[] = "@(#)graphshim library " GS_VERSION_TEXT;

__attribute__((visibility("default"))) int gs_version(void)
{
    return GRAPHSHIM_VERSION;
}
