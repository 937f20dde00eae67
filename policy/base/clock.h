/*
** clock.h: the monotonic clock the engine's timers read.
*/
#ifndef GS_CLOCK_H
#define GS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gs__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
