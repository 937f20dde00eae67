/*
** libcuda.c: the real dlsym and the driver's library: its handle and the address
** range of its loaded segments.
**
** Below everything else in interpose/: it uses nothing of graphshim but the ready
** flag (driver.h), so the dlsym hook, initialization and the slots can all ask
** it.  Opening libcuda is initialization's call (init.c).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "interpose.h"

void *(*gs__real_dlsym)(void *, const char *);
void *gs__libcuda;

static uintptr_t libcuda_lo, libcuda_hi;

/* Finds the real dlsym.  glibc 2.34 moved it into libc with a new version. */
void gs__resolve_dlsym(void)
{
    if (gs__real_dlsym)
        return;
    gs__real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!gs__real_dlsym)
        gs__real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

void *gs__dlsym_real(void *handle, const char *name)
{
    gs__resolve_dlsym();
    return gs__real_dlsym ? gs__real_dlsym(handle, name) : NULL;
}

/* Records the address range of libcuda's loaded segments. */
static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct link_map *lm = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;

    (void)size;
    if (info->dlpi_addr != lm->l_addr || strcmp(info->dlpi_name, lm->l_name) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (info->dlpi_addr + ph->p_vaddr < lo)
            lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
            hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    libcuda_lo = lo;
    libcuda_hi = hi;
    return 1;
}

/* Opens libcuda.so.1 (the one loaded, else a fresh load) into gs__libcuda and
** records where it lies.  NULL if it cannot be loaded: dlerror() says why. */
void *gs__libcuda_open(void)
{
    struct link_map *lm = NULL;

    gs__libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!gs__libcuda)
        gs__libcuda = dlopen("libcuda.so.1", RTLD_LAZY);
    if (gs__libcuda && dlinfo(gs__libcuda, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        dl_iterate_phdr(find_range, lm);
    return gs__libcuda;
}

int gs__in_libcuda(const void *p)
{
    return (uintptr_t)p >= libcuda_lo && (uintptr_t)p < libcuda_hi;
}

static int is_libcuda(struct dl_phdr_info *info, size_t size, void *arg)
{
    const char *slash = strrchr(info->dlpi_name, '/');

    (void)size, (void)arg;
    return strncmp(slash ? slash + 1 : info->dlpi_name, "libcuda.so", 10) == 0;
}

/* Without a dlopen: this runs inside dlsym, which a tool's own dlopen may be
** calling (see dlsym.c). */
int gs__libcuda_loaded(void)
{
    if (atomic_load_explicit(&gs__ready, memory_order_acquire))
        return gs__libcuda != NULL;
    return dl_iterate_phdr(is_libcuda, NULL);
}
