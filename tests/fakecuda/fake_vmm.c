/*
** fake_vmm.c: virtual memory management (cuMemAddressReserve, cuMemCreate,
** cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease, cuMemAddressFree), as
** the driver API documents it (README.md, "Virtual memory management").
**
** A reservation is a block of the device arena that holds addresses and takes
** no memory (struct block.vmm).  A handle is memory taken from the device
** (cuMemCreate) with contents of its own; a mapping puts them at an address of
** a reservation, and they go back to the handle when it is unmapped, so that
** a handle mapped again elsewhere has what was written through the old
** address.  A range of a reservation is valid memory (copies, memsets, graph
** nodes) where it lies inside one mapping whose access was granted.
*/
#include <stdlib.h>
#include <string.h>

#include "fake_internal.h"
#include "fake_impl.h"

#define VMM_GRANULARITY (2u << 20)   /* what an H100 reports, minimum and recommended */

struct vhandle {
    size_t size;
    unsigned char *bytes;   /* the contents while unmapped */
    uintptr_t mapped_at;    /* 0: not mapped */
    int released;
    struct vhandle *next;
};

struct vmap {
    uintptr_t addr;
    size_t size;
    struct vhandle *h;
    int access;
    uint64_t serial;
};

static struct vhandle *g_handles;
static struct vmap *g_maps;
static size_t g_nmaps, g_capmaps;

static struct vhandle *handle_find(CUmemGenericAllocationHandle h)
{
    for (struct vhandle *v = g_handles; v; v = v->next)
        if ((uintptr_t)v == (uintptr_t)h)
            return v;
    return NULL;
}

static struct vmap *map_at(uintptr_t p)
{
    for (size_t i = 0; i < g_nmaps; i++)
        if (p >= g_maps[i].addr && p < g_maps[i].addr + g_maps[i].size)
            return &g_maps[i];
    return NULL;
}

/* A handle neither mapped nor held any more gives its memory back. */
static void handle_maybe_free(struct vhandle *v)
{
    if (!v->released || v->mapped_at)
        return;
    for (struct vhandle **p = &g_handles; *p; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            break;
        }
    g_dev.used -= v->size;
    free(v->bytes);
    free(v);
}

bool vmm_range_ok(uintptr_t p, size_t n)
{
    struct vmap *m = map_at(p);
    return m && m->access && p + n <= m->addr + m->size;
}

uint64_t vmm_serial(uintptr_t p)
{
    struct vmap *m = map_at(p);
    return m ? m->serial : 0;
}

bool vmm_mapping(uintptr_t p, uintptr_t *start, size_t *size)
{
    struct vmap *m = map_at(p);
    if (!m || !m->access) return false;
    *start = m->addr;
    *size = m->size;
    return true;
}

static bool prop_ok(const CUmemAllocationProp *prop)
{
    return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
           prop->location.id == 0;
}

CUresult x_MemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags f)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!g || !prop_ok(prop) || (f != CU_MEM_ALLOC_GRANULARITY_MINIMUM && f != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    *g = VMM_GRANULARITY;
    return CUDA_SUCCESS;
}

/* Addresses only: a block of the arena that takes none of its memory.  The
** fake places it where it finds room (addr, a hint, is not followed). */
CUresult x_MemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    (void)addr;
    if (!ptr || !size || size % VMM_GRANULARITY || flags || (align && (align & (align - 1))))
        return CUDA_ERROR_INVALID_VALUE;
    return vmm_reserve(ptr, size, align > VMM_GRANULARITY ? align : VMM_GRANULARITY);
}

CUresult x_MemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct block *b = in_arena(&g_dev, ptr) ? arena_find(&g_dev, ptr) : NULL;
    rc = CUDA_ERROR_INVALID_VALUE;
    /* the whole reservation, and (the fake's rule, not measured) nothing mapped in it */
    if (b && b->vmm && b->addr == ptr && b->req == size) {
        int mapped = 0;
        for (size_t i = 0; i < g_nmaps; i++)
            mapped |= g_maps[i].addr >= b->addr && g_maps[i].addr < b->addr + b->size;
        if (!mapped) rc = vmm_unreserve(ptr);
    }
    UNLOCK();
    return rc;
}

/* Memory of the device's, taken now: past what is left, out of memory. */
CUresult x_MemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!h || !size || size % VMM_GRANULARITY || flags || !prop_ok(prop)) return CUDA_ERROR_INVALID_VALUE;
    if (exec_mem_take(size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    struct vhandle *v = calloc(1, sizeof *v);
    unsigned char *bytes = v ? calloc(1, size) : NULL;
    if (!bytes) {
        free(v);
        exec_mem_give(size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    v->size = size;
    v->bytes = bytes;
    LOCK();
    v->next = g_handles;
    g_handles = v;
    UNLOCK();
    *h = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

/* The handle goes once it is unmapped everywhere. */
CUresult x_MemRelease(CUmemGenericAllocationHandle h)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    LOCK();
    struct vhandle *v = handle_find(h);
    if (!v || v->released) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        v->released = 1;
        handle_maybe_free(v);
    }
    UNLOCK();
    return rc;
}

/* The whole handle at ptr (offset 0, as documented), inside a reservation, over
** no other mapping, without access until cuMemSetAccess.  A handle mapped at
** two addresses at once is not modelled: the fake refuses the second. */
CUresult x_MemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h, unsigned long long flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct vhandle *v = handle_find(h);
    struct block *b = in_arena(&g_dev, ptr) ? arena_find(&g_dev, ptr) : NULL;
    rc = CUDA_ERROR_INVALID_VALUE;
    if (!v || v->released || offset || flags || size != v->size || !b || !b->vmm || ptr % VMM_GRANULARITY ||
        ptr + size > b->addr + b->size)
        goto out;
    for (size_t i = 0; i < g_nmaps; i++)
        if (ptr < g_maps[i].addr + g_maps[i].size && g_maps[i].addr < ptr + size)
            goto out;
    if (v->mapped_at) {
        rc = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    if (g_nmaps == g_capmaps) {
        size_t cap = g_capmaps ? 2 * g_capmaps : 16;
        struct vmap *m = realloc(g_maps, cap * sizeof *m);
        if (!m) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        g_maps = m;
        g_capmaps = cap;
    }
    g_maps[g_nmaps++] = (struct vmap){ptr, size, v, 0, vmm_next_serial()};
    v->mapped_at = ptr;
    memcpy((void *)ptr, v->bytes, size);
    rc = CUDA_SUCCESS;
out:
    UNLOCK();
    return rc;
}

/* Access to whole mappings: read and write, or none, for device 0. */
CUresult x_MemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!desc || !count) return CUDA_ERROR_INVALID_VALUE;
    int access = 0;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[i].location.id != 0 ||
            (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE &&
             desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ))
            return CUDA_ERROR_INVALID_VALUE;
        access = desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    LOCK();
    rc = CUDA_ERROR_INVALID_VALUE;
    /* every byte of [ptr, ptr + size) mapped, by whole mappings */
    for (uintptr_t p = ptr; size && p < ptr + size;) {
        struct vmap *m = map_at(p);
        if (!m || m->addr != p || p + m->size > ptr + size) goto out;
        p += m->size;
    }
    for (uintptr_t p = ptr; size && p < ptr + size;) {
        struct vmap *m = map_at(p);
        m->access = access;
        p += m->size;
    }
    rc = size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
out:
    UNLOCK();
    return rc;
}

/* A whole mapping: its contents go back to the handle, the range is a
** reservation again (freed memory's bytes), and a released handle goes. */
CUresult x_MemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct vmap *m = map_at(ptr);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (m && m->addr == ptr && m->size == size) {
        struct vhandle *v = m->h;
        memcpy(v->bytes, (void *)ptr, size);
        memset((void *)ptr, POISON_BYTE, size);
        v->mapped_at = 0;
        *m = g_maps[--g_nmaps];
        handle_maybe_free(v);
        rc = CUDA_SUCCESS;
    }
    UNLOCK();
    return rc;
}
