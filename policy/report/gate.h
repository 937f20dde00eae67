/*
** gate.h: GRAPHSHIM_CHECK, the checks of the report at exit, and
** GRAPHSHIM_CHECK_EXIT, which makes them a gate for CI (docs/report.md).
*/
#ifndef GS_GATE_H
#define GS_GATE_H

/* Reads GRAPHSHIM_CHECK (a bad value: one warning, nothing checked, and with
** GRAPHSHIM_CHECK_EXIT=1 the run fails with status 2) and registers the exit
** handler that checks the report.  Call it at the engine's start, before the
** report's own exit handler is registered. */
void gs__gate_init(void);

/* Judges this process now, once (a later exit handler only applies the
** verdict to the exit status): prints the checks that fail and leaves the
** marks the run's judge reads.  For an end that runs no exit handler: a
** signal that kills the process, Python's exit after Ctrl-C. */
void gs__gate_judge(void);

#endif
