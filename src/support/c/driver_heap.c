/*
 * driver_heap.c - pqb-driver's heap accounting: the allocator entry points,
 * forwarded to glibc's own and counted while the memory mode's call runs.
 * Its definitions of malloc and the rest are the driver's only exported
 * symbols (-rdynamic), so the instance library's calls bind to them.
 */
#include "driver.h"

/*
 * The driver defines the allocator entry points itself and forwards them to
 * glibc's own implementation (__libc_*), so every block still comes from and
 * returns to glibc's heap and dlopen, stdio and the library can mix the
 * calls freely. Accounting is only a flag: while it is on, the usable size
 * of every block allocated is added to a live-byte balance and the usable
 * size of every block freed is subtracted (blocks older than the start
 * included, so the balance may go negative); heap_peak_bytes is the highest
 * balance reached, i.e. the peak of live heap bytes above the level at the
 * moment accounting started. heap_allocs counts allocating calls (malloc,
 * calloc, realloc to a nonzero size, the memalign family). Sizes are
 * malloc_usable_size, so they include glibc's rounding.
 * ---------------------------------------------------------------------- */
#if PQB_HEAP_ACCOUNTING

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static int heap_on;
static long long heap_live;
long long heap_peak;
unsigned long long heap_allocs;

static void heap_raise(long long delta)
{
    long long now = __atomic_add_fetch(&heap_live, delta, __ATOMIC_RELAXED);
    long long peak = __atomic_load_n(&heap_peak, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&heap_peak, &peak, now, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
}

static void heap_took(void *p)
{
    if (p && __atomic_load_n(&heap_on, __ATOMIC_RELAXED)) {
        __atomic_add_fetch(&heap_allocs, 1, __ATOMIC_RELAXED);
        heap_raise((long long)malloc_usable_size(p));
    }
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    heap_took(p);
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    heap_took(p);
    return p;
}

void free(void *p)
{
    if (p && __atomic_load_n(&heap_on, __ATOMIC_RELAXED))
        __atomic_sub_fetch(&heap_live, (long long)malloc_usable_size(p), __ATOMIC_RELAXED);
    __libc_free(p);
}

void *realloc(void *p, size_t size)
{
    void *q;
    long long before;
    if (!__atomic_load_n(&heap_on, __ATOMIC_RELAXED))
        return __libc_realloc(p, size);
    before = p ? (long long)malloc_usable_size(p) : 0;
    q = __libc_realloc(p, size);
    if (q) {
        __atomic_add_fetch(&heap_allocs, 1, __ATOMIC_RELAXED);
        heap_raise((long long)malloc_usable_size(q) - before);
    } else if (p && size == 0) {
        /* realloc(p, 0) freed p */
        __atomic_sub_fetch(&heap_live, before, __ATOMIC_RELAXED);
    }
    return q;
}

void *memalign(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    heap_took(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    heap_took(p);
    return p;
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    void *p;
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    p = __libc_memalign(alignment, size);
    if (!p)
        return ENOMEM;
    heap_took(p);
    *out = p;
    return 0;
}

void *valloc(size_t size)
{
    void *p = __libc_valloc(size);
    heap_took(p);
    return p;
}

void *pvalloc(size_t size)
{
    void *p = __libc_pvalloc(size);
    heap_took(p);
    return p;
}

void heap_begin(void)
{
    __atomic_store_n(&heap_live, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_peak, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_allocs, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_on, 1, __ATOMIC_SEQ_CST);
}

void heap_end(void)
{
    __atomic_store_n(&heap_on, 0, __ATOMIC_SEQ_CST);
}
#else
/* No glibc: no __libc_* to forward to, so no accounting (reported as -1). */
long long heap_peak = -1;
unsigned long long heap_allocs = 0;
void heap_begin(void) {}
void heap_end(void) {}
#endif
