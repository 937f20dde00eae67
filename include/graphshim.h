/*
** graphshim.h: the optional public API of libgraphshim.so.
**
** A program never needs it: graphshim works on unmodified programs.  A program
** that wants to know whether it runs under graphshim, read its counters, or keep
** a region of its work out of graphs, looks the symbols up at run time and calls
** them if present:
**
**     int (*stats)(struct gs_stats *) = dlsym(RTLD_DEFAULT, "gs_stats");
**     if (stats) ...
*/
#ifndef GRAPHSHIM_H
#define GRAPHSHIM_H

/* major * 10000 + minor * 100 + patch: the file VERSION of graphshim's sources
** (the build checks that they agree). */
#define GRAPHSHIM_VERSION 100

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the loaded library, GRAPHSHIM_VERSION's format. */
int gs_version(void);

/* Counters since start, summed over streams (the report's totals). */
struct gs_stats {
    unsigned long long ops;          /* ops the engine saw (not while paused or capturing) */
    unsigned long long ops_held;     /* of them, held */
    unsigned long long ops_replayed; /* of them, run as part of a graph */
    unsigned long long replays;      /* graph launches at a boundary */
    unsigned long long graphs;       /* graphs captured */
    double hit_rate;                 /* ops_replayed / ops */
};

/* Fills *st.  Returns 0, or -1 if the engine is off (GRAPHSHIM=0, an old driver,
** or no CUDA call yet): then *st is all zero. */
int gs_stats(struct gs_stats *st);

/* gs_pause issues everything held, in order, and holds nothing until gs_resume;
** calls nest.  For regions a program knows must run eagerly. */
void gs_pause(void);
void gs_resume(void);

#ifdef __cplusplus
}
#endif

#endif
