/*
** nvtx.h: graphshim's NVTX ranges, for profilers and other tools.
**
** In the NVTX domain "graphshim" the engine marks, on the thread that does them:
**   replay   a graph launch at a boundary (push/pop range; payload: its ops)
**   chunk    an early graph launch before the boundary (payload: its ops)
**   capture  the capture and instantiation of a graph (payload: its ops)
**   body     a graph of loop bodies (body.h; payload: its ops)
**   update   a graph given other parameters in place (payload: its ops)
**   <reason> held ops issued eagerly, named by the bail reason of the report
**            ("mismatch", "boundary-sync", ...; payload: the ops issued); a
**            no-gain verdict, which issues nothing, is a mark
** Held launches make no NVTX call.  Without a tool (no NVTX_INJECTION64_PATH) or
** with GRAPHSHIM_NVTX=0 the domain is NULL and each entry point is one load and
** a branch.  The code is nvtx.c.
*/
#ifndef GS_NVTX_H
#define GS_NVTX_H

#include <stdint.h>

#include "../../driver/driver.h"

/* What a range marks: one of these, or GS_NVTX_BAIL + a bail reason (enum gs_bail). */
enum gs_nvtx_what { GS_NVTX_REPLAY, GS_NVTX_CHUNK, GS_NVTX_CAPTURE, GS_NVTX_BODY, GS_NVTX_UPDATE, GS_NVTX_BAIL };

/* The "graphshim" domain; NULL when no tool listens.  Set once, before the
** engine's first op (gs__nvtx_init), never changed after. */
extern void *gs__nvtx_domain;

/* Loads NVTX's tool, if one is named, and creates the domain, unless
** GRAPHSHIM_NVTX=0.  Called once at engine start, under no lock of graphshim's
** and with gs__tls.depth > 0, so a tool that calls the driver while it loads
** reaches the real driver. */
void gs__nvtx_init(void);

void gs__nvtx_push_slow(int what, uint64_t ops);
void gs__nvtx_pop_slow(void);
void gs__nvtx_mark_slow(int what);

/* Begins a range on the calling thread; ops is its payload.  Every begin is
** ended by gs__nvtx_end on the same thread, before the call that began it
** returns.  While a tool runs for these, the driver calls it makes go straight
** to the driver (the engine may hold a stream's lock here). */
static inline void gs__nvtx_begin(int what, uint64_t ops)
{
    if (GS_UNLIKELY(gs__nvtx_domain != NULL))
        gs__nvtx_push_slow(what, ops);
}

static inline void gs__nvtx_end(void)
{
    if (GS_UNLIKELY(gs__nvtx_domain != NULL))
        gs__nvtx_pop_slow();
}

/* An instant event, for what has no duration (a no-gain verdict). */
static inline void gs__nvtx_mark(int what)
{
    if (GS_UNLIKELY(gs__nvtx_domain != NULL))
        gs__nvtx_mark_slow(what);
}

#endif
