/*
** test_clock.c: the fake driver's clock for graphshim's timers, for the test
** build only ($(BUILD)/test/libgraphshim.so, -DGS_TEST).
**
** What graphshim decides by time (the watchdog, the gain check, chunks after
** a slow host, a busy GPU) a test over the fake driver can only count where
** time is the test's to spend.  With
**
**     GRAPHSHIM_TEST_CLOCK=fake   (and the fake driver's FAKECUDA_CLOCK=virtual;
**                                  host, the default, is the host's clock)
**
** the engine reads the fake driver's clock, which moves only where the program
** or the fake spends time on purpose (tests/fakecuda/fakecuda.h), and the
** watchdog checks held work each time the program spends some, as its thread
** would have while the host was away.  A process descheduled on a busy machine
** then sees no time pass.  The library users run has none of this.
*/
#ifdef GS_TEST
#include <stdlib.h>
#include <string.h>

#include "interpose.h"
#include "../policy/base/clock.h"
#include "../policy/base/log.h"
#include "../policy/rules/watchdog.h"

void gs__test_clock_install(void)
{
    const char *v = getenv("GRAPHSHIM_TEST_CLOCK");
    uint64_t (*clock)(void);
    void (*on_advance)(void (*)(void));
    char q[GS_QUOTE_LEN];

    if (!v || !v[0] || strcmp(v, "host") == 0)
        return;
    if (strcmp(v, "fake") != 0) {
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_CLOCK=%s is neither fake nor host: the clock stays the host's",
                gs__quote(v, q));
        return;
    }
    clock = (uint64_t(*)(void))gs__real_dlsym(gs__libcuda, "fakecuda_clock_ns");
    on_advance = (void (*)(void (*)(void)))gs__real_dlsym(gs__libcuda, "fakecuda_on_advance");
    if (!clock || !on_advance) {
        gs__log(GS_LOG_ALWAYS, "GRAPHSHIM_TEST_CLOCK=fake: the driver has no fakecuda_clock_ns, so the clock stays "
                "the host's");
        return;
    }
    gs__test_clock = clock;
    on_advance(gs__watchdog_tick);
}
#endif
