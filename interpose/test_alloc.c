/*
** test_alloc.c: failures of graphshim's own memory allocations, for the test
** build only ($(BUILD)/test/libgraphshim.so, -DGS_TEST).
**
** Every malloc, calloc, realloc and aligned_alloc that graphshim's own code
** calls is linked to the wrappers below (the test build links with
** -Wl,--wrap=malloc and the others: only the references in graphshim's
** objects go to them; the program's allocations, and libc's inside its own
** functions, never do).  The test build reads
**
**     GRAPHSHIM_TEST_FAIL_ALLOC=CALLS
**
** at the first allocation, where CALLS is N (the Nth allocation), N+ (the Nth
** and every later one) or N-M, counted over all threads from 1.  A failing
** allocation returns NULL, as malloc does without memory, and says so on
** standard error ("graphshim: injected allocation failure N"), the mark the
** fuzzer counts.  Where graphshim cannot have its memory it must pass work
** through, and the program's results must not change: the fuzzer's injected
** runs (fuzzrun) check exactly that.  The library users run has none of
** this: the file compiles to nothing without GS_TEST.
*/
#ifdef GS_TEST
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

/* 0: not read yet; 1: read.  first..last: the allocations that fail (none
** where first is 0). */
static atomic_int state;
static unsigned long first, last;
static atomic_ulong calls;

/* Reads GRAPHSHIM_TEST_FAIL_ALLOC once; getenv and strtoul allocate nothing.
** Two threads may both read it: they write the same values. */
static void read_knob(void)
{
    const char *v = getenv("GRAPHSHIM_TEST_FAIL_ALLOC");
    char *end;
    unsigned long a = 0, b = 0;

    if (v && *v) {
        a = strtoul(v, &end, 10);
        if (end == v || a == 0)
            a = 0;
        else if (*end == '+' && !end[1])
            b = (unsigned long)-1;
        else if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        else
            b = a;
        if (*end && *end != '+')
            a = 0; /* not N, N+ or N-M: nothing fails */
    }
    first = a;
    last = b;
    atomic_store_explicit(&state, 1, memory_order_release);
}

/* The coverage build's gcov runtime is linked into the library too, and its
** allocations come here as well: none fails once it writes its counters
** (gs__test_alloc_stop, before __gcov_dump: cov_dump.c and init.c's exit). */
static atomic_int stopped;
void gs__test_alloc_stop(void) { atomic_store(&stopped, 1); }

/* Does this allocation fail?  Says so, without allocating, where it does. */
static int fails(void)
{
    if (atomic_load_explicit(&stopped, memory_order_relaxed))
        return 0;
    if (!atomic_load_explicit(&state, memory_order_acquire))
        read_knob();
    if (!first)
        return 0;
    unsigned long n = atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1;
    if (n < first || n > last)
        return 0;
    char msg[64];
    int len = snprintf(msg, sizeof msg, "graphshim: injected allocation failure %lu\n", n);
    if (len > 0 && write(2, msg, (size_t)len) < 0) {
        /* standard error closed: the failure stands unsaid */
    }
    return 1;
}

void *__wrap_malloc(size_t n) { return fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fails() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fails() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return fails() ? NULL : __real_aligned_alloc(align, n); }
#endif
