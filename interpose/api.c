/*
** api.c: the public API's entry points that need graphshim loaded first
** (include/graphshim.h); gs_version and gs_stats only read state (policy/).
*/
#include "interpose.h"
#include "../policy/entry/engine.h"

GS_EXPORT void gs_pause(void)
{
    gs__ensure_init();
    gs__engine_pause();
}

GS_EXPORT void gs_resume(void)
{
    gs__engine_resume();
}
