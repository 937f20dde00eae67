/*
** release.h: graphshim's own memory given back when an allocation of the
** program's fails for want of memory (release.c).
*/
#ifndef GS_RELEASE_H
#define GS_RELEASE_H

#include <stdatomic.h>
#include <stdint.h>

/* Frees what graphshim holds of the device's and of pinned host memory:
** every stream's graph executables (its sequences' and loop bodies'), and the
** staging buffers of pageable copies that the GPU has read.  Work a stream
** holds goes out first, in order; then the streams that launched the graphs
** are waited for (2 s at most: never a hang), so that executables still running
** (which the driver frees when they end) have given their memory back.  Sequences stay in the tree; those that had a
** graph are graphed again once they came GRAPHSHIM_WARMUP times more.  Call with no graphshim lock held, never while
** the program captures a stream.  Returns the graphs and staging buffers freed
** (0: nothing was held, no call to make again). */
unsigned gs__release_memory(void);

/* For the report: allocations of the program made again after a release
** (oom_retries), those that succeeded then (oom_retries_ok), and the bytes
** the releases gave back (device memory as cuMemGetInfo saw it come back,
** and staging buffers). */
extern atomic_ulong gs__oom_retries, gs__oom_retries_ok, gs__oom_freed_bytes;

#endif
