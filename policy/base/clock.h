/*
** clock.h: the monotonic clock the engine's timers read.
*/
#ifndef GS_CLOCK_H
#define GS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The test build's GRAPHSHIM_TEST_CLOCK=fake reads the fake driver's clock
** (set by interpose/test_clock.c): with its FAKECUDA_CLOCK=virtual, time moves only where a test
** spends it, and a busy machine that deschedules the process changes nothing
** a test counts. */
#ifdef GS_TEST
extern uint64_t (*gs__test_clock)(void);
#endif

static inline uint64_t gs__now_ns(void)
{
    struct timespec t;
#ifdef GS_TEST
    if (gs__test_clock)
        return gs__test_clock();
#endif
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
