/*
** driver.c: the state of the bottom floor (see driver.h): the real driver's
** table and the state shared by every floor.  The interposer fills the table
** (interpose/init.c); nothing here calls above it.
*/
#define _GNU_SOURCE
#include "driver.h"

#include <sys/syscall.h>
#include <unistd.h>

void *gs__real[GS_NROWS];
atomic_int gs__ready;
atomic_ulong gs__own_calls;
atomic_uint gs__ctx_epoch = 1;
int gs__passthrough;
GS_TLS struct gs_tls gs__tls;

int gs__tid(void)
{
    if (!gs__tls.tid)
        gs__tls.tid = (int)syscall(SYS_gettid);
    return gs__tls.tid;
}
