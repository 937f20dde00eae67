/*
** log.h: graphshim's messages on stderr.
**
** Every message is prefixed "graphshim: " and written with one write(2).  Warnings
** are capped (GS_MAX_WARNINGS) so a broken setup cannot flood the program's stderr.
*/
#ifndef GS_LOG_H
#define GS_LOG_H

#include "config.h"

#define GS_MAX_WARNINGS 32

void gs__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define gs__error(...) gs__log(GS_LOG_ERROR, __VA_ARGS__)
#define gs__warn(...) gs__log(GS_LOG_WARN, __VA_ARGS__)
#define gs__info(...) gs__log(GS_LOG_INFO, __VA_ARGS__)
#define gs__debug(...) gs__log(GS_LOG_DEBUG, __VA_ARGS__)

#endif
