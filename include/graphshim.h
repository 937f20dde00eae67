/*
** graphshim.h: the optional public API of libgraphshim.so.
**
** A program never needs it: graphshim works on unmodified programs.  A program
** that wants to know whether it runs under graphshim can look the symbols up with
** dlsym(RTLD_DEFAULT, "gs_version") and call them if present.
*/
#ifndef GRAPHSHIM_H
#define GRAPHSHIM_H

#define GRAPHSHIM_VERSION 100 /* 0.1.0 */

/* The version of the loaded library, GRAPHSHIM_VERSION's format. */
int gs_version(void);

#endif
