/* fake_log.c - the call log (env FAKECUDA_LOG=path).
 * One line per exported call, written with a single write():
 *   <abi_name> key=value ... -> <rc>
 * Handles render as sequential ids (s3, e1, f2:scale, k1:scale, g1, n4, x1, m1,
 * l1, c1; `legacy`, `per-thread`, `0` for NULL), device pointers as d+<offset>
 * from the device arena, pinned allocations as p+<offset>, registered host
 * memory as `p`, other host memory as `h`. */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_log_fd = -1;

void fake_log_init(void)
{
    const char *p = getenv("FAKECUDA_LOG");
    if (p && *p) g_log_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static void lb_reserve(struct lb *l, size_t more)
{
    if (l->n + more + 1 <= l->cap) return;
    while (l->n + more + 1 > l->cap) l->cap = l->cap ? l->cap * 2 : 256;
    l->buf = realloc(l->buf, l->cap);
}

void lb_raw(struct lb *l, const char *fmt, ...)
{
    if (!l->on || !fmt) return;
    va_list ap;
    char probe[1];
    va_start(ap, fmt);
    int k = vsnprintf(probe, sizeof probe, fmt, ap);
    va_end(ap);
    lb_reserve(l, (size_t)k);
    va_start(ap, fmt);
    vsnprintf(l->buf + l->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    l->n += (size_t)k;
}

void lb_begin(struct lb *l, const char *abi)
{
    fake_once();
    l->buf = NULL;
    l->n = l->cap = 0;
    l->on = g_log_fd >= 0;
    lb_raw(l, "%s", abi);
}

void lb_end(struct lb *l, CUresult rc)
{
    if (!l->on) return;
    lb_raw(l, " -> %d\n", (int)rc);
    ssize_t w = write(g_log_fd, l->buf, l->n);
    (void)w;
    free(l->buf);
    l->buf = NULL;
}

static const char kind_letter[K_COUNT] = {
    [K_CTX] = 'c', [K_STREAM] = 's', [K_EVENT] = 'e', [K_MODULE] = 'm', [K_LIBRARY] = 'l',
    [K_FUNC] = 'f', [K_KERNEL] = 'k', [K_GRAPH] = 'g', [K_NODE] = 'n', [K_EXEC] = 'x'};

void lb_handle(struct lb *l, const char *key, const void *h, int kind)
{
    if (!l->on) return;
    if (!h) { lb_raw(l, " %s=0", key); return; }
    LOCK();
    const struct hdr *o = reg_get(h, kind);
    if (!o && kind == K_FUNC && (o = reg_get(h, K_KERNEL))) kind = K_KERNEL;
    if (!o) lb_raw(l, " %s=%c?", key, kind_letter[kind]);
    else if (kind == K_FUNC) lb_raw(l, " %s=f%u:%s", key, o->id, ((const struct func *)o)->kd->name);
    else if (kind == K_KERNEL) lb_raw(l, " %s=k%u:%s", key, o->id, ((const struct kernel *)o)->kd->name);
    else lb_raw(l, " %s=%c%u", key, kind_letter[kind], o->id);
    UNLOCK();
}

void lb_stream(struct lb *l, const char *key, CUstream s)
{
    if (!l->on) return;
    if (s == CU_STREAM_LEGACY) lb_raw(l, " %s=legacy", key);
    else if (s == CU_STREAM_PER_THREAD) lb_raw(l, " %s=per-thread", key);
    else lb_handle(l, key, s, K_STREAM);
}

static void ptr_str(char *out, size_t n, uintptr_t p)
{
    if (!p) snprintf(out, n, "0");
    else if (in_arena(&g_dev, p)) snprintf(out, n, "d+%lu", (unsigned long)(p - (uintptr_t)g_dev.base));
    else if (in_arena(&g_host, p)) snprintf(out, n, "p+%lu", (unsigned long)(p - (uintptr_t)g_host.base));
    else if (pinned_find(p, NULL, NULL, NULL)) snprintf(out, n, "p");
    else snprintf(out, n, "h");
}

void lb_dptr(struct lb *l, const char *key, CUdeviceptr p)
{
    if (!l->on) return;
    char b[64];
    ptr_str(b, sizeof b, (uintptr_t)p);
    lb_raw(l, " %s=%s", key, b);
}

void lb_hptr(struct lb *l, const char *key, const void *p) { lb_dptr(l, key, (CUdeviceptr)(uintptr_t)p); }

static void lb_hex(struct lb *l, const unsigned char *p, size_t n)
{
    lb_reserve(l, 2 * n);
    for (size_t i = 0; i < n; i++) {
        static const char hx[] = "0123456789abcdef";
        l->buf[l->n++] = hx[p[i] >> 4];
        l->buf[l->n++] = hx[p[i] & 15];
    }
    l->buf[l->n] = 0;
}

void lb_bytes(struct lb *l, const char *key, const void *p, size_t n)
{
    if (!l->on) return;
    lb_raw(l, " %s=", key);
    lb_hex(l, p, n);
}

/* A parameter of 8 bytes whose value is an arena address renders as d+/p+. */
static void lb_param(struct lb *l, const unsigned char *p, size_t size)
{
    if (size == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        if (in_arena(&g_dev, v) || in_arena(&g_host, v)) {
            char b[64];
            ptr_str(b, sizeof b, v);
            lb_raw(l, "%s", b);
            return;
        }
    }
    lb_hex(l, p, size);
}

void lb_launch(struct lb *l, CUfunction f, const unsigned grid[3], const unsigned block[3],
               unsigned shmem, CUstream s, void **kp, void **extra)
{
    if (!l->on) return;
    lb_handle(l, "f", f, K_FUNC);
    lb_raw(l, " grid=%u,%u,%u block=%u,%u,%u shmem=%u", grid[0], grid[1], grid[2],
           block[0], block[1], block[2], shmem);
    if (s != (CUstream)-1) lb_stream(l, "stream", s);
    LOCK();
    struct kdef *kd = launchable_kdef(f, NULL);
    UNLOCK();
    lb_raw(l, " params=");
    if (!kd) { lb_raw(l, "?"); return; }
    const unsigned char *buf = NULL;
    if (extra && !kp) {
        size_t *bs = NULL;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) bs = extra[i + 1];
            else break;
        }
        if (!buf || !bs || *bs < kd->total) buf = NULL;
    }
    for (size_t i = 0; i < kd->n; i++) {
        if (i) lb_raw(l, ",");
        const unsigned char *p = kp ? kp[i] : buf ? buf + kd->offs[i] : NULL;
        if (!p) lb_raw(l, "null");
        else lb_param(l, p, kd->sizes[i]);
    }
}
