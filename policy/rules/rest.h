/*
** rest.h: learning rests where work does not repeat (rest.c).
*/
#ifndef GS_REST_H
#define GS_REST_H

#include "../stream/stream.h"

/* fp with an op's shape mixed in: its kind and function, launch dimensions and
** shared memory, or a copy's or memset's addresses and size, as
** gs__shape_mix_key() passes them (a handful of multiplies: what a resting
** stream pays an op). */
static inline uint64_t gs__shape_mix(uint64_t fp, int kind, CUfunction f, const unsigned grid[3],
                                     const unsigned block[3], unsigned shmem, uint64_t dst, uint64_t src,
                                     uint64_t size)
{
    uint64_t h = (uint64_t)(uintptr_t)f ^ (uint64_t)kind << 56;

    h = (h ^ ((uint64_t)grid[0] << 32 | grid[1])) * 0x9E3779B97F4A7C15ull;
    h = (h ^ ((uint64_t)grid[2] << 32 | block[0])) * 0xC2B2AE3D27D4EB4Full;
    h = (h ^ ((uint64_t)block[1] << 48 ^ (uint64_t)block[2] << 32 ^ shmem)) * 0x165667B19E3779F9ull;
    h = (h ^ dst ^ src * 31 ^ size * 131) * 0x9E3779B97F4A7C15ull;
    return (fp ^ h ^ h >> 29) * 0xD6E8FEB86659FD93ull + 1;
}

/* The same for the op of key k: a launch mixes as a resting launch mixes it from
** its arguments (entry/hold.c), so one shape is one fingerprint whichever way it
** came; a copy or memset without its arguments (gs__key_cmp), but a host copy
** with its host side and size, as the tree matches it. */
uint64_t gs__shape_mix_key(uint64_t fp, const struct gs_key *k);

/* Where the next segment of s starts: the tree's root, or NULL while learning
** rests (its ops then only mix their shapes into s->fp). */
struct gs_node *gs__segment_start(struct gs_stream *s);
/* A segment that ended while learning rested: where it came back, learning
** resumes. */
void gs__rested_segment(struct gs_stream *s);
/* A learned segment of s ended: first_time, it came for the first time (the
** run of new segments goes on, else it ends); replayed, it was replayed as a
** graph (else the run of dry segments goes on).  Called locked. */
void gs__rest_learned(struct gs_stream *s, int first_time, int replayed);
/* s learns anew, as a new stream: no rest, no run of new or dry segments, no
** function known to rest with (its handle may name another now).  Called
** locked. */
void gs__rest_forget(struct gs_stream *s);

#endif
