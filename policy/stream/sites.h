/*
** sites.h: where the program's calls cut its graphs (GRAPHSHIM_BAIL_SITES).
**
** At a bail, a sample: the bailing thread's return addresses (the call that
** cut the held work is on its stack) and the names of the last two kernels
** held.  Only a counter is checked per bail; one in GS_SITE_EVERY is sampled
** after the first GS_SITE_FIRST of its reason.  Addresses are named (dladdr,
** which takes the loader's lock) only at exit, when the report is written,
** never under a stream's lock.
*/
#ifndef GS_SITES_H
#define GS_SITES_H

#include <stdatomic.h>
#include <stdint.h>

#include "../base/config.h"
#include "../base/names.h"

#define GS_SITE_FIRST 16 /* bails of a reason sampled each */
#define GS_SITE_EVERY 64 /* after them, one in this many */

struct gs_stream;

/* Bails of each reason so far, the sampling's only cost per bail. */
extern atomic_uint gs__site_seen[GS_NBAIL];

/* Samples a bail of reason on stream s (locked), standing for weight bails. */
void gs__site_sample(struct gs_stream *s, int reason, unsigned weight);

/* Called where s bails for reason, s locked.  The watchdog's bails are not
** sampled: they run on graphshim's own thread, which no call of the program
** is on. */
static inline void gs__site_bail(struct gs_stream *s, int reason)
{
    unsigned n;

    if (!gs__cfg.bail_sites || reason == GS_BAIL_WATCHDOG)
        return;
    n = atomic_fetch_add_explicit(&gs__site_seen[reason], 1, memory_order_relaxed) + 1;
    if (n <= GS_SITE_FIRST || n % GS_SITE_EVERY == 0)
        gs__site_sample(s, reason, n <= GS_SITE_FIRST ? 1 : GS_SITE_EVERY);
}

/* One call site of one bail reason, for the report. */
struct gs_site {
    int reason;
    char site[160];       /* the function (demangled where libstdc++ is loaded), or object+0xOFFSET */
    char object[64];      /* the file it is in, without its folder */
    char kernel[2][128];  /* the last kernel held before the cut, and the one before it ("": none) */
    uint64_t count;       /* bails it stands for: its samples, each weighted by its sampling */
    uint64_t samples;
};

/* The sites of all bails sampled, named now: a new array in *out (the caller
** frees it), by reason, then most bails first.  Returns how many, 0 where none
** (or no memory). */
int gs__sites_collect(struct gs_site **out);

#endif
