/*
** version.c: the public API (include/graphshim.h).
*/
#include "graphshim.h"

__attribute__((visibility("default"))) int gs_version(void)
{
    return GRAPHSHIM_VERSION;
}
