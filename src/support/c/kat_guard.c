/*
 * kat_guard.c - pqb-kat's guarded buffers and a record's failure
 * bookkeeping: every buffer handed to the library sits between guard
 * bytes, checked after every call; the first failure is the verdict.
 */
#include "kat_runner.h"

#include <stdarg.h>

/* ---- guarded buffers -------------------------------------------------- */


unsigned char *gdata(const gbuf *b)
{
    return b->base + GUARD_BYTES;
}

int galloc(gbuf *b, const char *name, size_t cap)
{
    b->name = name;
    b->cap = cap;
    b->base = NULL;
    if (cap > (size_t)-1 - 2 * GUARD_BYTES)
        return -1;
    b->base = (unsigned char *)malloc(cap + 2 * GUARD_BYTES);
    if (b->base == NULL)
        return -1;
    memset(b->base, GUARD_FILL, GUARD_BYTES);
    memset(b->base + GUARD_BYTES, 0, cap);
    memset(b->base + GUARD_BYTES + cap, GUARD_FILL, GUARD_BYTES);
    return 0;
}

void gfree(gbuf *b)
{
    free(b->base);
    b->base = NULL;
}

/* 0 when intact, else -1 (guard before the data) or 1 (after). */
int gcheck(const gbuf *b)
{
    size_t i;
    if (b->base == NULL)
        return 0;
    for (i = 0; i < GUARD_BYTES; i++)
        if (b->base[i] != GUARD_FILL)
            return -1;
    for (i = 0; i < GUARD_BYTES; i++)
        if (b->base[GUARD_BYTES + b->cap + i] != GUARD_FILL)
            return 1;
    return 0;
}

/* ---- run state -------------------------------------------------------- */



/* Records the first failure only. */
void fail(run_state *r, int st, const char *fmt, ...)
{
    va_list ap;
    if (r->status != ST_PASS)
        return;
    r->status = st;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

int alloc_live(run_state *r, gbuf *b, const char *name, size_t cap)
{
    if (galloc(b, name, cap) != 0) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate %zu bytes for %s in record %lu", cap, name,
             r->record);
        return -1;
    }
    if (r->nlive < MAX_LIVE)
        r->live[r->nlive++] = b;
    return 0;
}

void free_live(run_state *r)
{
    int i;
    for (i = 0; i < r->nlive; i++)
        gfree(r->live[i]);
    r->nlive = 0;
}

/* Verifies the guards of every live buffer after `call`; 0 when intact. */
int check_guards(run_state *r, const char *call)
{
    int i, bad = 0;
    for (i = 0; i < r->nlive; i++) {
        int where = gcheck(r->live[i]);
        if (where != 0) {
            fail(r, ST_OVERFLOW,
                 "%s wrote into the guard bytes %s the %s buffer (%zu bytes) in record %lu", call,
                 where < 0 ? "before" : "after", r->live[i]->name, r->live[i]->cap, r->record);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* A returned length above the capacity is an overflow; returns the length
 * clamped to the capacity (what may be read back safely). */
size_t check_len(run_state *r, const char *call, const char *what, size_t len, size_t cap)
{
    if (len > cap) {
        fail(r, ST_OVERFLOW, "%s returned %s length %zu above the API figure %zu in record %lu",
             call, what, len, cap, r->record);
        return cap;
    }
    return len;
}

void note_max(size_t *m, size_t v)
{
    if (v > *m)
        *m = v;
}

void note_min(size_t *m, size_t v)
{
    if (v < *m)
        *m = v;
}

/* Seeds the library's DRNG for the current record; -1 (the record failed)
 * when the library refuses the seed. */
int seed_record(run_state *r, const unsigned char *seed, size_t seed_len)
{
    int rc = r->e->seed(seed, seed_len);
    check_guards(r, "seed");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "seeding the DRNG with %zu bytes returned %d in record %lu",
             seed_len, rc, r->record);
        return -1;
    }
    return 0;
}

double kat_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
