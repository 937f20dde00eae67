/*
** body_find.c: the detector of loop bodies (body.h): the keys of the segment's
** last ops in a ring, and the period they repeat with.
*/
#include "body_find.h"

#include <stdlib.h>
#include <string.h>

#include "../base/config.h"
#include "../base/names.h"

/* The detector's hash of a key's n compared bytes: of all of them, or of the
** first and last GS_BODY_HASH_BYTES of a longer key (a launch with a parameter
** struct of up to 32 KiB: hashing it all took microseconds an op, more than the
** launch it holds back).  Equal hashes are only a hint: same() compares all n. */
static uint64_t detect_hash(const void *key, uint32_t n)
{
    if (n <= 2 * GS_BODY_HASH_BYTES)
        return gs__bytes_hash(key, n);
    return gs__bytes_hash(key, GS_BODY_HASH_BYTES) * 31 ^
           gs__bytes_hash((const unsigned char *)key + n - GS_BODY_HASH_BYTES, GS_BODY_HASH_BYTES) ^ n;
}

/* Are the ops in ring slots a and c the same op? */
static int same(const struct gs_body *b, unsigned a, unsigned c)
{
    a &= GS_BODY_RING - 1;
    c &= GS_BODY_RING - 1;
    return b->hash[a] == b->hash[c] && b->len[a] == b->len[c] &&
           memcmp(b->slot[a], b->slot[c], gs__body_cmp_len(b->len[a])) == 0;
}

/* Forgets what the detector saw: the next op starts a new search. */
void gs__body_detect_reset(struct gs_body *b)
{
    b->n = 0;
    b->period = 0;
    b->run = 0;
    b->epoch++; /* the last-seen table's entries are stale */
}

/* Remembers the op's key (len bytes) and follows the period the ops show.
** Returns 1 when the last `period` ops are a body that has run GRAPHSHIM_WARMUP + 1
** times in a row. */
int gs__body_detect(struct gs_body *b, const void *key, uint32_t len)
{
    unsigned i = b->n, x = i & (GS_BODY_RING - 1);

    if (len > GS_BODY_KEY_MAX) {
        gs__body_detect_reset(b);
        return 0;
    }
    if (b->cap[x] < len) {
        unsigned char *p = realloc(b->slot[x], len);
        if (!p) {
            gs__body_detect_reset(b);
            return 0;
        }
        b->slot[x] = p;
        b->cap[x] = len;
    }
    memcpy(b->slot[x], key, len);
    b->len[x] = len;
    b->hash[x] = detect_hash(key, gs__body_cmp_len(len));
    b->n++;
    if (b->period && !same(b, i, i - b->period))
        b->period = 0;
    if (b->period) {
        b->run++;
    } else {
        /* The op's last occurrence in the segment, if recent, gives the period. */
        struct gs_body_seen *e = &b->seen[b->hash[x] & (GS_BODY_SEEN - 1)];
        if (e->hash == b->hash[x] && e->epoch == b->epoch && i - e->at <= GS_BODY_MAX_PERIOD && same(b, i, e->at)) {
            b->period = i - e->at;
            b->run = 1;
        }
    }
    b->seen[b->hash[x] & (GS_BODY_SEEN - 1)] = (struct gs_body_seen){b->hash[x], i, b->epoch};
    return b->period && b->run >= b->period * (uint32_t)gs__cfg.warmup;
}

