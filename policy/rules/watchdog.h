/*
** watchdog.h: the thread that issues work held too long (watchdog.c).
*/
#ifndef GS_WATCHDOG_H
#define GS_WATCHDOG_H

/* Starts the thread: 0, or -1 where it could not be started. */
int gs__watchdog_start(void);
/* Nonzero once it was started (a forked child has no such thread). */
int gs__watchdog_running(void);

#endif
