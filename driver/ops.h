/*
** ops.h: an op as the program called it, a kernel launch, a copy or a memset,
** before graphshim builds its key (policy/graph/key.h), and the op issued
** through the real driver's entry point it came through: the doors
** (interpose/launch.c, copy.c) fill one in and hand it to the engine
** (gs__engine_launch, gs__engine_copy), which issues it where it holds nothing.
*/
#ifndef GS_OPS_H
#define GS_OPS_H

#include <stdint.h>

#include "driver.h"

/* A launch as the program made it. */
struct gs_launch {
    CUfunction f;
    unsigned grid[3], block[3]; /* as a key holds them */
    unsigned shmem;
    int plain;                  /* no attributes, no `extra`: gs__key_launch_is compares it */
    const CUlaunchConfig *cfg;  /* cuLaunchKernelEx's, or NULL */
    void **params, **extra;
};

/* Launch a through the real driver's entry point of row id: in
** cuLaunchKernelEx's form (ex, with a->cfg, which names the stream) or in
** cuLaunchKernel's, on stream. */
static inline CUresult gs__launch_real(int id, int ex, const struct gs_launch *a, CUstream stream)
{
    if (ex)
        return ((__typeof__(&cuLaunchKernelEx))gs__real[id])(a->cfg, a->f, a->params, a->extra);
    return ((__typeof__(&cuLaunchKernel))gs__real[id])(a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0],
                                                        a->block[1], a->block[2], a->shmem, stream, a->params,
                                                        a->extra);
}

/* The entry points of asynchronous copies and memsets, by their arguments. */
enum gs_copy_form {
    GS_COPY_HTOD,  /* cuMemcpyHtoDAsync: dst on the device, src a host pointer */
    GS_COPY_DTOH,  /* cuMemcpyDtoHAsync: dst a host pointer */
    GS_COPY_DTOD,  /* cuMemcpyDtoDAsync */
    GS_COPY_ANY,   /* cuMemcpyAsync: the driver infers the direction */
    GS_SET_D8,     /* cuMemsetD8Async, D16, D32: n elements of value */
    GS_SET_D16,
    GS_SET_D32,
};

/* A copy or memset as the program made it, on the stream it passed. */
struct gs_copy {
    int form;                   /* enum gs_copy_form */
    uint64_t dst, src;          /* host pointers as integers where the form says so */
    size_t n;                   /* bytes, or a memset's elements */
    unsigned value;             /* a memset's */
    CUstream stream;
};

/* The size of a memset's element in bytes (form GS_SET_*). */
static inline uint32_t gs__set_elem(int form)
{
    return form == GS_SET_D8 ? 1 : form == GS_SET_D16 ? 2 : 4;
}

/* Issues op through the real driver's entry point of row id. */
static inline CUresult gs__copy_real(int id, const struct gs_copy *op)
{
    switch (op->form) {
    case GS_COPY_HTOD:
        return ((__typeof__(&cuMemcpyHtoDAsync_v2))gs__real[id])(op->dst, (const void *)(uintptr_t)op->src, op->n,
                                                                 op->stream);
    case GS_COPY_DTOH:
        return ((__typeof__(&cuMemcpyDtoHAsync_v2))gs__real[id])((void *)(uintptr_t)op->dst, op->src, op->n,
                                                                 op->stream);
    case GS_COPY_DTOD:
        return ((__typeof__(&cuMemcpyDtoDAsync_v2))gs__real[id])(op->dst, op->src, op->n, op->stream);
    case GS_COPY_ANY:
        return ((__typeof__(&cuMemcpyAsync))gs__real[id])(op->dst, op->src, op->n, op->stream);
    case GS_SET_D8:
        return ((__typeof__(&cuMemsetD8Async))gs__real[id])(op->dst, (unsigned char)op->value, op->n, op->stream);
    case GS_SET_D16:
        return ((__typeof__(&cuMemsetD16Async))gs__real[id])(op->dst, (unsigned short)op->value, op->n, op->stream);
    default:
        return ((__typeof__(&cuMemsetD32Async))gs__real[id])(op->dst, op->value, op->n, op->stream);
    }
}

#endif
