/*
 * driver_memory.c - the memory mode: one call on a painted stack with heap
 * accounting on.
 */
#include "driver.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <ucontext.h>


#define STACK_BYTES ((size_t)16 << 20)
/* The stack's paint byte: drawn per process once the library is loaded
 * (memory mode), so no constant tells a library what to repaint with. */
static unsigned char g_paint = 0x5C;

/* ---- memory: one call on a painted stack, heap accounting on ---------- */

static ucontext_t main_uc, op_uc;
static int op_rc;
static unsigned char *guard_lo, *guard_hi;

static void op_on_stack(void)
{
    op_rc = call_op();
}

/* Formats v in `base` into out (at least `width` digits); returns the
 * length. Async-signal-safe, for the SIGSEGV handler. */
static size_t fmt_u64(char *out, unsigned long long v, unsigned base, size_t width)
{
    char tmp[24];
    size_t n = 0, i;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && n < sizeof tmp);
    while (n < width && n < sizeof tmp)
        tmp[n++] = '0';
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* A fault in the guard page below the painted stack is a stack overflow:
 * say so instead of dying silently (with the channel's end line, built
 * without stdio). Other faults get the default action. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    static const char msg[] = "error stage=op msg=stack_overflow_beyond_16_MiB\n";
    unsigned char *a = (unsigned char *)si->si_addr;
    (void)uc;
    if (a >= guard_lo && a < guard_hi) {
        char end[96];
        size_t n = 0;
        ssize_t w;
        out_hash(msg, sizeof msg - 1);
        memcpy(end, "end bytes=", 10);
        n = 10;
        n += fmt_u64(end + n, g_out_bytes, 10, 1);
        memcpy(end + n, " fnv1a64=", 9);
        n += 9;
        n += fmt_u64(end + n, g_out_fnv, 16, 16);
        end[n++] = '\n';
        w = write(g_out_fd, msg, sizeof msg - 1);
        w = write(g_out_fd, end, n);
        (void)w;
        _exit(EXIT_FAIL);
    }
    signal(sig, SIG_DFL);
}

/* Runs one call on the stack [lo, lo + STACK_BYTES) with heap accounting
 * on. Kept apart (and never inlined) because getcontext/swapcontext return
 * twice: no local of the caller lives across them. */
static unsigned char *run_stack_lo;
static long run_faults = -1;

/* Minor page faults of this process so far, by the kernel's count (which
 * the library can add to, never take from). */
static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : -1;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void run_on_stack(unsigned char *lo)
{
    run_stack_lo = lo;
    if (getcontext(&op_uc) != 0)
        fail("setup", "getcontext_failed");
    op_uc.uc_stack.ss_sp = run_stack_lo;
    op_uc.uc_stack.ss_size = STACK_BYTES;
    op_uc.uc_link = &main_uc;
    makecontext(&op_uc, op_on_stack, 0);

    /* Free heap pages go back to the kernel first, so memory the call
     * takes from glibc's heap, through malloc or around it, is faulted in
     * afresh and the kernel counts it. */
#if PQB_HEAP_ACCOUNTING
    malloc_trim(0);
#endif
    run_faults = minor_faults();
    heap_begin();
    if (swapcontext(&main_uc, &op_uc) != 0) {
        heap_end();
        fail("setup", "swapcontext_failed");
    }
    heap_end();
    if (run_faults >= 0) {
        long after = minor_faults();
        run_faults = after >= run_faults ? after - run_faults : -1;
    }
}

static long long status_kib(const char *key)
{
    char buf[4096];
    size_t klen = strlen(key);
    long long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, key, klen) == 0 && buf[klen] == ':') {
            v = strtoll(buf + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

static long long resident_kib(void)
{
    long long size = 0, resident = -1;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * page / 1024;
}

/*
 * Maps guard page + STACK_BYTES, every stack byte holding g_paint.
 *
 * Painting with memset would make all 16 MiB resident and put them in
 * VmHWM, hiding the operation's own peak. So the pattern is written into a
 * memfd with pwrite (page cache, not this process's RSS) and the memfd is
 * mapped privately: only the pages the operation touches become resident,
 * as with an ordinary stack. (A read fault may map up to the kernel's
 * fault-around window of neighbouring pages, 64 KiB by default.) Without
 * memfd_create the region is painted in place and peak RSS then includes it.
 */
static unsigned char *paint_stack(size_t page)
{
    size_t total = page + STACK_BYTES;
    unsigned char *base = MAP_FAILED;
#if defined(MFD_CLOEXEC)
    int fd = memfd_create("pqb-stack", MFD_CLOEXEC);
    if (fd >= 0) {
        static unsigned char chunk[4096]; /* one page of RSS, not 64 KiB */
        size_t off = page;
        int ok = ftruncate(fd, (off_t)total) == 0;
        memset(chunk, g_paint, sizeof chunk);
        while (ok && off < total) {
            size_t n = total - off < sizeof chunk ? total - off : sizeof chunk;
            ssize_t w = pwrite(fd, chunk, n, (off_t)off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                ok = 0;
            else
                off += (size_t)w;
        }
        if (ok)
            base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        close(fd);
    }
#endif
    if (base == MAP_FAILED) {
        base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            fail("setup", "cannot_map_stack_errno_%d", errno);
        memset(base + page, g_paint, STACK_BYTES);
    }
    if (mprotect(base, page, PROT_NONE) != 0)
        fail("setup", "cannot_protect_guard_page_errno_%d", errno);
    return base;
}

/* Start of the lowest 8-byte word of [lo, hi) (lo page-aligned) that
 * differs from the pattern, or hi. Whole words, not bytes: a byte written
 * at the bottom of the stack equals the paint byte by chance once in 254
 * processes, which moved a byte-exact figure by one between runs of the
 * same code; a whole written word equals the pattern by chance once in
 * 2^64. */
static unsigned char *lowest_differing(unsigned char *lo, unsigned char *hi)
{
    uint64_t pat;
    memset(&pat, g_paint, sizeof pat);
    while (lo + sizeof pat <= hi) {
        uint64_t w;
        memcpy(&w, lo, sizeof w);
        if (w != pat)
            return lo;
        lo += sizeof pat;
    }
    return hi;
}

/*
 * Lowest touched byte of the painted stack [lo, hi), reading only the pages
 * this process has mapped: /proc/self/pagemap's present and swapped bits.
 * *mapped receives the lowest page the kernel mapped (hi: none), or NULL
 * without pagemap: what the operation reached by the page table, which no
 * repainting undoes.
 * A page the operation never reached is not mapped (the stack is a private
 * mapping of the painted memfd), holds the pattern by construction, and
 * reading it would fault it in: the scan would then add up to 16 MiB to the
 * process's peak RSS after the driver has read VmHWM, and the kernel's
 * high-water mark (wait4's ru_maxrss), which bounds the reported peak from
 * outside, would say nothing. Without pagemap every page is read.
 */
static unsigned char *lowest_touched(unsigned char *lo, unsigned char *hi, size_t page,
                                     unsigned char **mapped)
{
    static uint64_t entries[STACK_BYTES / 4096 + 1];
    size_t pages = (size_t)(hi - lo) / page;
    size_t i, got = 0;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    unsigned char *found = hi;
    *mapped = NULL;
    if (fd < 0 || pages > sizeof entries / sizeof entries[0]) {
        if (fd >= 0)
            close(fd);
        return lowest_differing(lo, hi);
    }
    while (got < pages * sizeof(uint64_t)) {
        off_t at = (off_t)(((uintptr_t)lo / page) * sizeof(uint64_t) + got);
        ssize_t n = pread(fd, (char *)entries + got, pages * sizeof(uint64_t) - got, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got < pages * sizeof(uint64_t))
        return lowest_differing(lo, hi);
    *mapped = hi;
    for (i = 0; i < pages; i++) {
        unsigned char *p = lo + i * page, *low;
        if (!(entries[i] >> 62))
            continue; /* neither present (bit 63) nor swapped (bit 62) */
        if (*mapped == hi)
            *mapped = p;
        low = lowest_differing(p, p + page);
        if (low < p + page) {
            found = low;
            break;
        }
    }
    return found;
}

/* A paint byte of this process's own, neither 0 nor 0xff (which honest
 * code writes most), from the kernel's random source. */
static void pick_paint(void)
{
    unsigned char b = 0;
    while (b == 0 || b == 0xff)
        if (getrandom(&b, 1, 0) != 1)
            return; /* the fixed byte stays */
    g_paint = b;
}

void mode_memory(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    long long baseline, peak;
    unsigned char *base, *lo, *top;
    struct sigaction sa, old_sa;
    static unsigned char alt[1 << 16];
    stack_t ss;

    baseline = resident_kib();
    pick_paint();
    base = paint_stack(page);
    guard_lo = base;
    guard_hi = base + page;
    lo = base + page;
    top = lo + STACK_BYTES;

    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    ss.ss_flags = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSEGV, &sa, &old_sa) != 0)
        fail("setup", "cannot_install_stack_overflow_handler");

    if (g_op == OP_EXT)
        ext_before_call(); /* a KEX step: the protocol up to it */
    run_on_stack(lo);
    sigaction(SIGSEGV, &old_sa, NULL);
    if (g_op == OP_EXT && op_rc == 0)
        ext_after_call();
    if (op_rc != 0)
        fail("op", "%s", g_err);

    /* Read the high-water mark before scanning: the scan faults in the
     * untouched part of the stack. */
    peak = status_kib("VmHWM");
    {
        unsigned char *mapped, *low = lowest_touched(lo, top, page, &mapped);
        line("memory baseline_rss_kib=%lld peak_rss_kib=%lld stack_bytes=%zu heap_peak_bytes=%lld "
             "heap_allocs=%llu stack_pages_bytes=%lld faults=%ld page_bytes=%zu",
             baseline, peak, (size_t)(top - low), (long long)heap_peak,
             (unsigned long long)heap_allocs, mapped ? (long long)(top - mapped) : -1LL,
             run_faults, page);
    }
    munmap(base, page + STACK_BYTES);
}
