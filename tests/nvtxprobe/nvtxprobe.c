/*
** nvtxprobe.c: a small NVTX tool, to see the NVTX ranges graphshim makes.
**
** NVTX loads it through NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2,
** which fills NVTX's callback tables (the export table NVTX_ETID_CALLBACKS of
** nvtx3/nvtxDetail/nvtxTypes.h) for the domain API (module CORE2) and the
** default domain (module CORE).  It counts domain creation, range push and pop,
** start and end, and marks, and at exit writes to the file named by NVTXPROBE_OUT
** (nothing if it is unset) one line per distinct event:
**
**     nvtxprobe inits N           InitializeInjectionNvtx2 calls (one per NVTX client)
**     domain NAME                 a domain was created
**     EVENT DOMAIN MESSAGE N SUM  N events; SUM: their integer payloads added up
**     open N                      ranges pushed and never popped, all threads
**     unmatched N                 pops and ends without a range
**
** EVENT is push, pop, start, end or mark; DOMAIN is "-" for the default domain;
** a pop or end is counted under the message of the range it closes.  Spaces in
** names are written as '_'.  NVTXPROBE_DRIVER_CALL=1 makes every push call
** cuCtxSynchronize first, as a tool that calls the driver from its callbacks may.
**
** Built by tests/tests.mk (make test) and by samples/gpu-test.sh.
*/
#define _GNU_SOURCE
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOMAINS 64
#define MAX_KEYS 1024
#define MAX_DEPTH 64

struct domain {
    char name[64];
};

struct key {
    char event[8];
    int domain; /* -1: the default domain */
    char msg[64];
    unsigned long long n, payload;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct domain domains[MAX_DOMAINS];
static int ndomains;
static struct key keys[MAX_KEYS];
static int nkeys;
static long inits, open_ranges, unmatched, dropped;
static int driver_call;

/* The ranges a thread has open: the key index of each push. */
static __thread int stack[MAX_DEPTH];
static __thread int depth;

static void copy_name(char *dst, size_t len, const char *src)
{
    size_t i;
    for (i = 0; src && src[i] && i + 1 < len; i++)
        dst[i] = src[i] == ' ' || src[i] == '\n' || src[i] == '\t' ? '_' : src[i];
    dst[i] = '\0';
    if (!i)
        snprintf(dst, len, "-");
}

static int domain_index(nvtxDomainHandle_t d)
{
    return d ? (int)((struct domain *)d - domains) : -1;
}

/* Counts one event; returns its key's index, or -1 if the table is full.
** Called locked. */
static int count(const char *event, int domain, const char *msg, unsigned long long payload)
{
    char m[64];
    copy_name(m, sizeof m, msg);
    for (int i = 0; i < nkeys; i++) {
        if (keys[i].domain == domain && strcmp(keys[i].event, event) == 0 && strcmp(keys[i].msg, m) == 0) {
            keys[i].n++;
            keys[i].payload += payload;
            return i;
        }
    }
    if (nkeys == MAX_KEYS) {
        dropped++;
        return -1;
    }
    snprintf(keys[nkeys].event, sizeof keys[nkeys].event, "%s", event);
    keys[nkeys].domain = domain;
    snprintf(keys[nkeys].msg, sizeof keys[nkeys].msg, "%s", m);
    keys[nkeys].n = 1;
    keys[nkeys].payload = payload;
    return nkeys++;
}

static const char *message(const nvtxEventAttributes_t *a)
{
    if (!a)
        return "-";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        return (const char *)a->message.registered;
    return "?";
}

static unsigned long long payload(const nvtxEventAttributes_t *a)
{
    if (!a)
        return 0;
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: return a->payload.ullValue;
    case NVTX_PAYLOAD_TYPE_INT64: return (unsigned long long)a->payload.llValue;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: return a->payload.uiValue;
    case NVTX_PAYLOAD_TYPE_INT32: return (unsigned long long)a->payload.iValue;
    default: return 0;
    }
}

static void call_driver(void)
{
    static int (*sync)(void);
    if (!sync)
        sync = (int (*)(void))dlsym(RTLD_DEFAULT, "cuCtxSynchronize");
    if (sync)
        sync();
}

/* --- Callbacks ------------------------------------------------------------- */

static nvtxDomainHandle_t domain_create(const char *name)
{
    struct domain *d = NULL;
    char n[64];

    copy_name(n, sizeof n, name);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ndomains && !d; i++)
        if (strcmp(domains[i].name, n) == 0)
            d = &domains[i];
    if (!d && ndomains < MAX_DOMAINS) {
        d = &domains[ndomains++];
        snprintf(d->name, sizeof d->name, "%s", n);
    }
    pthread_mutex_unlock(&lock);
    return (nvtxDomainHandle_t)d;
}

static void domain_destroy(nvtxDomainHandle_t d)
{
    (void)d;
}

static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)strdup(s ? s : "");
}

static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    pthread_mutex_lock(&lock);
    count("mark", domain_index(d), message(a), payload(a));
    pthread_mutex_unlock(&lock);
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    int k;
    if (driver_call)
        call_driver();
    pthread_mutex_lock(&lock);
    k = count("push", domain_index(d), message(a), payload(a));
    open_ranges++;
    pthread_mutex_unlock(&lock);
    if (depth < MAX_DEPTH)
        stack[depth] = k;
    return depth++;
}

static int pop(nvtxDomainHandle_t d)
{
    (void)d;
    pthread_mutex_lock(&lock);
    if (depth == 0) {
        unmatched++;
    } else {
        int k = --depth < MAX_DEPTH ? stack[depth] : -1;
        count("pop", k >= 0 ? keys[k].domain : domain_index(d), k >= 0 ? keys[k].msg : "?", 0);
        open_ranges--;
    }
    pthread_mutex_unlock(&lock);
    return depth;
}

static nvtxRangeId_t start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    int k;
    pthread_mutex_lock(&lock);
    k = count("start", domain_index(d), message(a), payload(a));
    open_ranges++;
    pthread_mutex_unlock(&lock);
    return (nvtxRangeId_t)(k + 1);
}

static void end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    int k = (int)id - 1;
    pthread_mutex_lock(&lock);
    if (id == 0 || k >= nkeys) {
        unmatched++;
    } else {
        count("end", k >= 0 ? keys[k].domain : domain_index(d), keys[k].msg, 0);
        open_ranges--;
    }
    pthread_mutex_unlock(&lock);
}

/* The default domain's calls. */
static void mark_ex(const nvtxEventAttributes_t *a) { mark(NULL, a); }
static void mark_a(const char *m)
{
    pthread_mutex_lock(&lock);
    count("mark", -1, m, 0);
    pthread_mutex_unlock(&lock);
}
static int push_ex(const nvtxEventAttributes_t *a) { return push(NULL, a); }
static int push_a(const char *m)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = m;
    return push(NULL, &a);
}
static int pop0(void) { return pop(NULL); }
static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a) { return start(NULL, a); }
static void end0(nvtxRangeId_t id) { end(NULL, id); }

/* --- Output and initialization ------------------------------------------------ */

static void write_out(void)
{
    const char *path = getenv("NVTXPROBE_OUT");
    FILE *f;

    if (!path || !*path || !(f = fopen(path, "w")))
        return;
    pthread_mutex_lock(&lock);
    fprintf(f, "nvtxprobe inits %ld\n", inits);
    for (int i = 0; i < ndomains; i++)
        fprintf(f, "domain %s\n", domains[i].name);
    for (int i = 0; i < nkeys; i++)
        fprintf(f, "%s %s %s %llu %llu\n", keys[i].event, keys[i].domain >= 0 ? domains[keys[i].domain].name : "-",
                keys[i].msg, keys[i].n, keys[i].payload);
    fprintf(f, "open %ld\nunmatched %ld\n", open_ranges, unmatched);
    if (dropped)
        fprintf(f, "dropped %ld\n", dropped);
    pthread_mutex_unlock(&lock);
    fclose(f);
}

#define FN(f) ((NvtxFunctionPointer)(void *)(f))

/* The callbacks, by NVTX module and callback id. */
static const struct {
    NvtxCallbackModule module;
    unsigned id;
    NvtxFunctionPointer fn;
} callbacks[] = {
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, FN(domain_create)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA, FN(register_string)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainMarkEx, FN(mark)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, FN(push)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, FN(pop)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeStartEx, FN(start)},
    {NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeEnd, FN(end)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkEx, FN(mark_ex)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, FN(mark_a)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, FN(push_ex)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, FN(push_a)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, FN(pop0)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartEx, FN(start_ex)},
    {NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeEnd, FN(end0)},
};

/* NVTX's entry point for a tool: fills NVTX's callback tables.  Returns 1, or 0
** (NVTX then unloads the tool) without the domain API's table. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get ? (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS) : NULL;
    const char *dc = getenv("NVTXPROBE_DRIVER_CALL");

    if (!cb || !cb->GetModuleFunctionTable)
        return 0;
    driver_call = dc && dc[0] == '1';
    for (size_t i = 0; i < sizeof callbacks / sizeof callbacks[0]; i++) {
        NvtxFunctionTable t = NULL;
        unsigned size = 0;
        if (!cb->GetModuleFunctionTable(callbacks[i].module, &t, &size) || !t) {
            if (callbacks[i].module == NVTX_CB_MODULE_CORE2)
                return 0;
            continue;
        }
        if (callbacks[i].id < size && t[callbacks[i].id])
            *t[callbacks[i].id] = callbacks[i].fn;
    }
    pthread_mutex_lock(&lock);
    if (inits++ == 0)
        atexit(write_out);
    pthread_mutex_unlock(&lock);
    return 1;
}
