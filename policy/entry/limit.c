/*
** limit.c: the dynamic shared memory limits the program lowered (limit.h).
**
** A short list of (handle, limit) under a mutex; only programs that lowered a
** limit and launch above the lowest one read it.  Where the list cannot grow,
** every launch above the lowest limit is refused holding: never a wrong hold.
*/
#include "limit.h"

#include <pthread.h>
#include <stdlib.h>

#include "../base/names.h"

_Atomic unsigned gs__smem_floor = UINT_MAX;

static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;
static struct limit {
    const void *handle;
    unsigned value;
} *limits;
static size_t nlimits, cap;
static int overflowed; /* a lowered limit went unnoted: every launch above the floor is refused */

/* Where handle's limit is noted, or a new entry (NULL: no memory).  Locked. */
static struct limit *entry(const void *handle, int add)
{
    for (size_t i = 0; i < nlimits; i++)
        if (limits[i].handle == handle)
            return &limits[i];
    if (!add)
        return NULL;
    if (nlimits == cap) {
        size_t n = cap ? 2 * cap : 8;
        struct limit *l = realloc(limits, n * sizeof *l);
        if (!l)
            return NULL;
        limits = l, cap = n;
    }
    limits[nlimits].handle = handle;
    return &limits[nlimits++];
}

void gs__smem_limit_set(const void *handle, int value, int lowered)
{
    unsigned v = value < 0 ? 0u : (unsigned)value, floor = UINT_MAX;
    struct limit *l;

    if (GS_DROPPED(GS_RULE_SMEM_LOWERED))
        return;
    pthread_mutex_lock(&limits_lock);
    if ((l = entry(handle, lowered)) != NULL)
        l->value = v;
    else if (lowered)
        overflowed = 1;
    for (size_t i = 0; i < nlimits; i++)
        floor = limits[i].value < floor ? limits[i].value : floor;
    if (overflowed && v < floor)
        floor = v;
    if (!overflowed || floor < atomic_load(&gs__smem_floor))
        atomic_store(&gs__smem_floor, floor);
    pthread_mutex_unlock(&limits_lock);
}

int gs__smem_refused_slow(const struct gs_launch *a)
{
    const struct limit *l;
    int refused;

    pthread_mutex_lock(&limits_lock);
    l = entry(a->f, 0);
    refused = l ? a->shmem > l->value : overflowed;
    pthread_mutex_unlock(&limits_lock);
    return refused;
}
