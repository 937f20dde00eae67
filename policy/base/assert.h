/*
** assert.h: the test build's invariants.
**
** As SQLite's assert() and mimalloc's mi_assert_internal, GS_ASSERT states what
** must be true at a place in the engine; the test build (make test-lib,
** -DGS_TEST), which the integration, fault and fuzz suites preload, checks it
** and aborts with the place and the condition where it is false, so every
** scenario and every fuzzed program checks them for nothing.  The library
** users run compiles each to nothing (the condition is type-checked, never
** evaluated): a condition must have no side effect.  So does the coverage
** build (-DGS_COVERAGE, make coverage), which counts the branches of the
** library users run.
**
** GS_ASSERT_LOCKED(s), in lock.h: the calling thread holds s's lock, where a
** function says "called locked".
*/
#ifndef GS_ASSERT_H
#define GS_ASSERT_H

#include "../../driver/driver.h" /* GS_LIKELY */

#if defined(GS_TEST) && !defined(GS_COVERAGE)
__attribute__((noreturn, cold)) void gs__assert_fail(const char *cond, const char *file, int line);
#define GS_ASSERT(c) (GS_LIKELY(c) ? (void)0 : gs__assert_fail(#c, __FILE__, __LINE__))
#else
#define GS_ASSERT(c) ((void)sizeof(!(c))) /* compiled, never evaluated */
#endif

#endif
