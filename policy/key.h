/*
** key.h: op keys.
**
** An op is one stream-ordered operation the engine can hold: a kernel launch, an
** asynchronous copy or memset.  Its key is its complete content, packed into one
** byte string: what it is, where it goes, and for a launch the function, grid,
** block, shared memory, launch attributes and the parameter bytes (deep-copied:
** the caller's kernelParams point at its stack).  Two ops with equal keys do the
** same thing when issued at the same place in a stream.
*/
#ifndef GS_KEY_H
#define GS_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "../driver/driver.h"

enum gs_op_kind {
    GS_OP_LAUNCH,  /* cuLaunchKernel or cuLaunchKernelEx */
    GS_OP_H2D,     /* pinned host to device */
    GS_OP_H2D_PAGEABLE, /* pageable host to device: the source is staged at call time */
    GS_OP_D2H,     /* device to pinned host */
    GS_OP_D2D,     /* device to device */
    GS_OP_SET,     /* memset of 1, 2 or 4-byte elements */
};

/* The fixed part of a key; variable bytes follow it. */
struct gs_key {
    uint32_t kind;
    uint32_t nattrs;      /* launch attributes that follow (CUlaunchAttribute each) */
    uint32_t nparams;     /* launch parameter bytes that follow the attributes */
    uint32_t shmem;
    CUfunction f;
    unsigned grid[3], block[3];
    uint64_t dst, src;    /* copies and memsets; src is the value for a memset */
    uint64_t size;        /* bytes copied, or elements set */
    uint32_t elem;        /* memset element size */
    uint32_t pad;
};

/* The driver's limit on a kernel's parameter bytes (CUDA 12.1 on, Volta on), and
** on the number of parameters graphshim will hold (one byte each at most). */
#define GS_PARAM_BYTES_MAX 32764u
#define GS_PARAMS_MAX 32764

#define GS_KEY_MAX (sizeof(struct gs_key) + 8 * sizeof(CUlaunchAttribute) + GS_PARAM_BYTES_MAX)

/* Launch attributes an op may carry and still be held; any other makes the
** launch pass through. */
int gs__attr_supported(CUlaunchAttributeID id);

/* Builds the key of a launch into buf (GS_KEY_MAX bytes).  Returns its length, or
** -1 if the launch cannot be held (unknown parameter layout, unsupported `extra`
** or attribute): then it passes through. */
int gs__key_launch(void *buf, CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                   const CUlaunchConfig *cfg, void **params, void **extra);

/* Builds the key of a copy or memset.  Returns its length. */
int gs__key_copy(void *buf, int kind, uint64_t dst, uint64_t src, uint64_t size);
int gs__key_set(void *buf, uint64_t dst, uint32_t value, uint32_t elem, uint64_t n);

/* The parameter bytes and attributes that follow a key. */
static inline CUlaunchAttribute *gs__key_attrs(const struct gs_key *k)
{
    return (CUlaunchAttribute *)(k + 1);
}
static inline unsigned char *gs__key_params(const struct gs_key *k)
{
    return (unsigned char *)(gs__key_attrs(k) + k->nattrs);
}

/* Issues the op a key describes on stream s, through the real driver.  src_override,
** if not NULL, replaces a host source (the staged copy of a pageable source).
** Returns the driver's result. */
CUresult gs__key_issue(const struct gs_key *k, CUstream s, const void *src_override);

/* A 64-bit hash of n bytes (keys, for quick inequality; equal hashes are
** checked byte by byte). */
uint64_t gs__bytes_hash(const void *bytes, size_t n);

/* Forgets every cached parameter layout (module unload). */
void gs__layouts_reset(void);

#endif
