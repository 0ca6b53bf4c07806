/*
 * prof_runtime.c - accounting behind the PQB_WRAP wrappers (prof_wrap.h).
 *
 * Linked into the profiling build of an instance library only; needs
 * nothing but prof_wrap.h and libc.
 *
 * Accounting rules:
 * - Only while enabled (pqb_prof_enable(1)); the driver enables it around
 *   each timed operation only.
 * - Per thread, only the outermost wrapped call is timed and recorded: a
 *   wrapped call made while another is running on the same thread is not
 *   counted at all (pseudohash calling a wrapped sm3hash counts once, as
 *   pseudohash). With several threads each thread's outermost calls count,
 *   so their ticks may add up to more than the operation's.
 * - Calls are kept per shape (function, in_bits, out_bits) in a fixed
 *   table of PQB_PROF_MAX_SHAPES shapes found through an open-addressing
 *   index; once it is full, calls of new shapes are added to an `other`
 *   shape of their class (in_bits = out_bits = 0; one per class, for up to
 *   PQB_PROF_MAX_CLASSES classes, the last one taking any further class),
 *   so class totals stay exact.
 * - Ticks: rdtsc on x86-64, cntvct_el0 on AArch64, CLOCK_MONOTONIC_RAW
 *   nanoseconds elsewhere; pqb_prof_tick_hz() measures the rate once,
 *   lazily, against CLOCK_MONOTONIC_RAW (cntfrq_el0 on AArch64, 1e9 for
 *   nanoseconds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "prof_wrap.h"

#include <string.h>
#include <time.h>

#define PQB_PROF_MAX_SHAPES 4096
#define PQB_PROF_SLOTS 8192 /* power of two, at least twice the shapes */
#define PQB_PROF_HZ_SECONDS 0.020
#define PQB_PROF_MAX_CLASSES 16

typedef struct shape {
    const pqb_prof_fn *fn;
    unsigned long long in_bits, out_bits, calls, ticks;
} shape;

static shape shapes[PQB_PROF_MAX_SHAPES];
static int n_shapes;
static unsigned short slots[PQB_PROF_SLOTS]; /* 0 = empty, else shape index + 1 */

/* The `other` shape of each class met once the table is full. */
static pqb_prof_fn other_fn[PQB_PROF_MAX_CLASSES];
static shape other[PQB_PROF_MAX_CLASSES];
static int n_other;

static int enabled;
static unsigned char table_lock;
static __thread int depth;

/* ---- ticks -------------------------------------------------------------- */

#if !defined(__aarch64__)
static unsigned long long clock_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}
#endif

static inline unsigned long long ticks_now(void)
{
#if defined(__x86_64__)
    unsigned int lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((unsigned long long)hi << 32) | lo;
#elif defined(__aarch64__)
    unsigned long long v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
#else
    return clock_ns();
#endif
}

unsigned long long pqb_prof_ticks(void)
{
    return ticks_now();
}

static double measure_hz(void)
{
#if defined(__x86_64__)
    unsigned long long a0, a1, b0, b1, c0, c1;
    unsigned long long span = (unsigned long long)(PQB_PROF_HZ_SECONDS * 1e9);
    double t0, t1;
    a0 = clock_ns();
    c0 = ticks_now();
    a1 = clock_ns();
    do {
        b0 = clock_ns();
    } while (b0 - a0 < span);
    c1 = ticks_now();
    b1 = clock_ns();
    t0 = ((double)a0 + (double)a1) / 2.0;
    t1 = ((double)b0 + (double)b1) / 2.0;
    return t1 > t0 ? (double)(c1 - c0) / ((t1 - t0) * 1e-9) : 0.0;
#elif defined(__aarch64__)
    unsigned long long f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    return (double)f;
#else
    return 1e9;
#endif
}

double pqb_prof_tick_hz(void)
{
    static double hz;
    if (hz <= 0.0)
        hz = measure_hz();
    return hz;
}

/* ---- the table ---------------------------------------------------------- */

static void lock(void)
{
    while (__atomic_test_and_set(&table_lock, __ATOMIC_ACQUIRE)) {
    }
}

static void unlock(void)
{
    __atomic_clear(&table_lock, __ATOMIC_RELEASE);
}

static unsigned long long mix(unsigned long long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The `other` shape of fn's class (called with the table locked). */
static shape *other_of(const pqb_prof_fn *fn)
{
    int k;
    for (k = 0; k < n_other; k++)
        if (strcmp(other_fn[k].klass, fn->klass) == 0)
            return &other[k];
    if (n_other == PQB_PROF_MAX_CLASSES)
        return &other[PQB_PROF_MAX_CLASSES - 1];
    k = n_other++;
    other_fn[k].name = "other";
    other_fn[k].klass = fn->klass;
    other_fn[k].in_arg = -1;
    other_fn[k].out_arg = -1;
    other[k].fn = &other_fn[k];
    other[k].in_bits = other[k].out_bits = other[k].calls = other[k].ticks = 0;
    return &other[k];
}

static void record(const pqb_prof_fn *fn, unsigned long long in_bits,
                   unsigned long long out_bits, unsigned long long ticks)
{
    unsigned long long h = mix((unsigned long long)(uintptr_t)fn ^ mix(in_bits ^ mix(out_bits)));
    unsigned int i = (unsigned int)(h & (PQB_PROF_SLOTS - 1));
    shape *s;

    lock();
    for (;;) {
        unsigned int k = slots[i];
        if (k == 0) {
            if (n_shapes < PQB_PROF_MAX_SHAPES) {
                s = &shapes[n_shapes++];
                s->fn = fn;
                s->in_bits = in_bits;
                s->out_bits = out_bits;
                s->calls = 0;
                s->ticks = 0;
                slots[i] = (unsigned short)n_shapes;
            } else {
                s = other_of(fn);
            }
            break;
        }
        s = &shapes[k - 1];
        if (s->fn == fn && s->in_bits == in_bits && s->out_bits == out_bits)
            break;
        i = (i + 1) & (PQB_PROF_SLOTS - 1);
    }
    s->calls++;
    s->ticks += ticks;
    unlock();
}

/* ---- wrapper entry and exit -------------------------------------------- */

int pqb_prof__enter(unsigned long long *t0)
{
    if (depth++ != 0 || !__atomic_load_n(&enabled, __ATOMIC_RELAXED))
        return 0;
    *t0 = ticks_now();
    return 1;
}

static unsigned long long arg_bits(const uintptr_t *args, int index)
{
    if (index < 0 || index > 5)
        return 0;
    return (unsigned long long)(args[index] & 0xffffffffu);
}

void pqb_prof__leave(const pqb_prof_fn *fn, int rec, unsigned long long t0,
                     const uintptr_t *args)
{
    unsigned long long t1;
    if (!rec) {
        depth--;
        return;
    }
    t1 = ticks_now();
    depth--;
    record(fn, arg_bits(args, fn->in_arg), arg_bits(args, fn->out_arg), t1 - t0);
}

/* ---- exported ----------------------------------------------------------- */

void pqb_prof_enable(int on)
{
    __atomic_store_n(&enabled, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

void pqb_prof_reset(void)
{
    lock();
    memset(slots, 0, sizeof slots);
    n_shapes = 0;
    n_other = 0;
    unlock();
}

int pqb_prof_count(void)
{
    int n;
    lock();
    n = n_shapes + n_other;
    unlock();
    return n;
}

int pqb_prof_get(int i, const char **name, const char **klass, unsigned long long *in_bits,
                 unsigned long long *out_bits, unsigned long long *calls,
                 unsigned long long *ticks)
{
    const shape *s = NULL;
    lock();
    if (i >= 0 && i < n_shapes)
        s = &shapes[i];
    else if (i >= n_shapes && i < n_shapes + n_other)
        s = &other[i - n_shapes];
    if (s) {
        *name = s->fn->name;
        *klass = s->fn->klass;
        *in_bits = s->in_bits;
        *out_bits = s->out_bits;
        *calls = s->calls;
        *ticks = s->ticks;
    }
    unlock();
    return s ? 0 : -1;
}
