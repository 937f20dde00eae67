/*
** watchdog.h: the thread that issues work held too long (watchdog.c).
*/
#ifndef GS_WATCHDOG_H
#define GS_WATCHDOG_H

/* Starts the thread: 0, or -1 where it could not be started. */
int gs__watchdog_start(void);
/* Nonzero once it was started (a forked child has no such thread). */
int gs__watchdog_running(void);

#ifdef GS_TEST
/* The test build's clock moved (interpose/test_clock.c): work held too long
** goes out now, as the thread would have sent it while the host was away. */
void gs__watchdog_tick(void);
#endif

#endif
