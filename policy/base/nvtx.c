/*
** nvtx.c: the NVTX ranges of nvtx.h, through the header-only NVTX v3 API of the
** CUDA toolkit (nvtx3/nvToolsExt.h; no library is linked).
**
** NVTX loads a tool on its first call: it reads NVTX_INJECTION64_PATH, dlopens
** that library, finds its InitializeInjectionNvtx2 with dlsym and calls it.  That
** dlsym is libc's own (bound by version below), not graphshim's exported one:
** this floor does not call up into interpose/.
** gs__nvtx_init makes that first call at engine start, where graphshim holds no
** lock, so the tool never loads while a stream's lock is held.  Each later call
** raises gs__tls.depth around the tool's callback: a callback that calls the
** driver is not guarded (no boundary, no lock), as for graphshim's own calls.
*/
#include "nvtx.h"

#include <dlfcn.h>

/* NVTX's loader calls dlsym(handle, name): make it libc's.  GLIBC_2.2.5 is the
** x86-64 base version, present in every glibc (2.34 and later keep it beside
** GLIBC_2.34). */
__asm__(".symver gs__libc_dlsym, dlsym@GLIBC_2.2.5");
void *gs__libc_dlsym(void *handle, const char *name);
#define dlsym(handle, name) gs__libc_dlsym(handle, name)

#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "names.h"

void *gs__nvtx_domain;

#define GS_NVTX_N (GS_NVTX_BAIL + GS_NBAIL)

/* Messages and colours (ARGB) of the ranges, by what they mark. */
static char names[GS_NVTX_N][40];
static uint32_t colors[GS_NVTX_N];

void gs__nvtx_init(void)
{
    static const char *const own[GS_NVTX_BAIL] = {"replay", "chunk", "capture", "body", "update"};
    static const uint32_t own_colors[GS_NVTX_BAIL] = {0xff2e9e44, 0xff8fd19e, 0xff3b6fd1, 0xff5fb86e, 0xff6f8fd1};
    nvtxDomainHandle_t d;

    if (!gs__cfg.nvtx)
        return;
    for (int w = 0; w < GS_NVTX_N; w++) {
        char buf[40];
        const char *n = w < GS_NVTX_BAIL ? own[w] : gs__bail_name(w - GS_NVTX_BAIL, buf, sizeof buf);
        snprintf(names[w], sizeof names[w], "%s", n);
        colors[w] = w < GS_NVTX_BAIL ? own_colors[w] : 0xffd13b3b;
    }
    d = nvtxDomainCreateA("graphshim"); /* NULL when no tool is attached */
    gs__nvtx_domain = (void *)d;
}

static nvtxEventAttributes_t attributes(int what, uint64_t ops)
{
    nvtxEventAttributes_t a;

    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = colors[what];
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = ops;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = names[what];
    return a;
}

void gs__nvtx_push_slow(int what, uint64_t ops)
{
    nvtxEventAttributes_t a = attributes(what, ops);

    gs__tls.depth++;
    nvtxDomainRangePushEx((nvtxDomainHandle_t)gs__nvtx_domain, &a);
    gs__tls.depth--;
}

void gs__nvtx_pop_slow(void)
{
    gs__tls.depth++;
    nvtxDomainRangePop((nvtxDomainHandle_t)gs__nvtx_domain);
    gs__tls.depth--;
}

void gs__nvtx_mark_slow(int what)
{
    nvtxEventAttributes_t a = attributes(what, 0);

    gs__tls.depth++;
    nvtxDomainMarkEx((nvtxDomainHandle_t)gs__nvtx_domain, &a);
    gs__tls.depth--;
}
