/*
** test_xs.c: a group's fork rules (policy/stream/xs.c) on a stream state of
** its own: which records open a group, and what a refusal closes.
*/
#include <criterion/criterion.h>

#include "../../policy/base/lock.h"
#include "../../policy/stream/xs.h"

static struct gs_stream s;

/* PyTorch's events are made for each fork and destroyed after it, and the
** driver gives a destroyed event's handle again (H100: 7 handles for 12 such
** events).  A stream that learned to fork with such events, whose group was
** refused (an event it recorded was destroyed, its slot freed, so the
** refusal met no handle), opens no group again at a record of a new event
** that has the learned event's handle: the handle of an event made for the
** record says nothing. */
Test(xs, a_refused_stream_opens_no_group_at_a_handle_given_again)
{
    CUevent h = (CUevent)(uintptr_t)0x1000;

    gs__lock(&s.lock);
    gs__xs_fork_learn(&s, h, 1); /* its first record of h, waited for by another stream */
    cr_assert(gs__xs_is_fork(&s, h, 1), "a new event's record forks once learned");
    gs__xs_open(&s, 1, 1);
    gs__xs_refuse(&s); /* the group ended outside the narrow case */
    cr_assert(!gs__xs_is_fork(&s, h, 1), "a refused stream opened a group at a new event with a learned handle");
    gs__xs_segment_end(&s);
    gs__unlock(&s.lock);
}
