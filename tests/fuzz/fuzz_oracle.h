/*
** fuzz_oracle.h: what fuzzrun checks beyond a program's output: a report's
** accounts against what the fake driver ran (fuzz_oracle.c), and the loop
** programs' virtual time against eager (fuzz_loop.c, fuzzrun.c).
*/
#ifndef FUZZ_ORACLE_H
#define FUZZ_ORACLE_H

#include <stddef.h>

/* The value of "name value" in the text the fake driver writes at exit
** (FAKECUDA_STATS); -1 where text has no such line. */
long long stat_of(const char *stats, const char *name);

/* Do the JSON report and the fake driver's counts agree?  base: the driver's
** counts without graphshim, shim: with it (the same program, the same
** schedule).  Returns 0, or 1 with why (len bytes) saying what disagrees:
** - every op the program made ran once, eagerly or as a node of a graph of
**   graphshim's: the eager ops with graphshim and the ops in graphshim's graph
**   launches add up to the eager ops without it;
** - ops_replayed is the ops in graphshim's graph launches, ops_replayed less
**   launches_saved the graph launches, graphs_captured the executables made;
** - the streams' counters add up to the totals; a stream's loop bodies' graphs
**   to its body_graphs, their ops to no more than its ops_replayed; its
**   sequences' graph launches to no more than its replays and chunks;
**   ops_replayed <= ops_held <= ops, and the graph launches no more than the
**   replays, chunks and body graphs together. */
int oracle_accounts(const char *report, const char *base, const char *shim, char *why, size_t len);

#endif
