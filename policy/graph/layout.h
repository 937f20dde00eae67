/*
** layout.h: a kernel function's parameter layout: where each of its parameters
** lies in the packed buffer a key holds (layout.c).
*/
#ifndef GS_LAYOUT_H
#define GS_LAYOUT_H

#include <stdint.h>

#include "../../driver/driver.h"

/* The driver's limit on a kernel's parameter bytes (CUDA 12.1 on, Volta on), and
** on the number of parameters graphshim will hold (one byte each at most). */
#define GS_PARAM_BYTES_MAX 32764u
#define GS_PARAMS_MAX 32764

/* A function's parameter layout, from the driver (layout.c): n parameters, their
** offsets, then their sizes; n = -1 when unknown (its launches pass through).
** Immutable once made, and never freed: keys point at theirs. */
struct gs_layout {
    CUfunction f;
    int n;
    uint32_t size;         /* bytes of the packed parameter buffer */
    const uint32_t *off;   /* n offsets, then n sizes */
    int by_kernel;         /* the kind of handle the driver took f as: a CUkernel (1) or a CUfunction */
};

/* f's layout, from the cache or the driver; one with n = -1 where unknown. */
const struct gs_layout *gs__layout_of(CUfunction f);
/* Does f have a parameter layout (its launches with kernelParams have keys)? */
int gs__layout_known(CUfunction f);
/* Forgets every cached parameter layout (module unload). */
void gs__layouts_reset(void);
/* f's name ("" where the driver gives none), asked first as the kind of handle
** its layout was had by (a refused ask of the other kind costs a first call's
** time): for the report's bail sites. */
const char *gs__kernel_name(CUfunction f);
/* The same without asking f's layout where it is not known yet (a CUfunction
** first then): for the trace, whose calls are only its name queries. */
const char *gs__kernel_name_seen(CUfunction f);

#endif
