/*
 * counter.c - cycle/tick source of the timing driver (see counter.h).
 */
#include "counter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/syscall.h>
#define PQB_HAVE_PERF 1
#else
#define PQB_HAVE_PERF 0
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* How long the rate of tsc and perf-user-cycles is measured
 * (pqb_counter_measure_rate), and how long opening probes that they count
 * at all: every driver process opens the same counter, but only the
 * processes whose figures are converted to seconds need the rate. */
#define PQB_CALIBRATE_SECONDS 0.020
#define PQB_PROBE_SECONDS 0.0005

double pqb_now_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pqb_thread_cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned long long clock_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

int pqb_tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned int a = 0, b = 0, c = 0, d = 0;
    /* __get_cpuid checks the highest extended leaf first. */
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1u ? 1 : 0;
#else
    return -1;
#endif
}

#if defined(__x86_64__)
/* lfence before: earlier instructions have completed; lfence after: later
 * ones do not start before the read. */
static inline unsigned long long read_tsc(void)
{
    unsigned int lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((unsigned long long)hi << 32) | lo;
}
#endif

#if defined(__aarch64__)
static inline unsigned long long read_cntvct(void)
{
    unsigned long long v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
    return v;
}

static unsigned long long read_cntfrq(void)
{
    unsigned long long v;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
}
#endif

static unsigned long long read_perf(int fd)
{
    unsigned long long v = 0;
    ssize_t n;
    do {
        n = read(fd, &v, sizeof v);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof v ? v : 0;
}

unsigned long long pqb_counter_read(const pqb_counter *c)
{
    switch (c->kind) {
    case PQB_COUNTER_PERF:
        return read_perf(c->perf_fd);
#if defined(__x86_64__)
    case PQB_COUNTER_TSC:
        return read_tsc();
#endif
#if defined(__aarch64__)
    case PQB_COUNTER_CNTVCT:
        return read_cntvct();
#endif
    default:
        return clock_ns();
    }
}

/* Rate of the counter against CLOCK_MONOTONIC_RAW over about `seconds`,
 * spinning in user mode or, with `asleep`, sleeping. Each end is bracketed
 * by two clock reads and the counter is taken to have been read at their
 * midpoint. An invariant TSC ticks on while the process sleeps, so it is
 * measured asleep at no CPU cost: a spin's CPU time would be whatever part
 * of the 20 ms the process held the CPU, which on a loaded host varies by
 * milliseconds from process to process, and the kernel witness's fit of CPU
 * time over call counts takes it for the calls' (docs/src/measurement.md,
 * "The CPU witness"). User-mode cycles stop while it sleeps: they spin. */
static double measure_hz(const pqb_counter *c, double seconds, int asleep)
{
    unsigned long long a0, a1, b0, b1, c0, c1;
    unsigned long long span = (unsigned long long)(seconds * 1e9);

    (void)pqb_counter_read(c); /* first-use costs (page faults, caches) */
    a0 = clock_ns();
    c0 = pqb_counter_read(c);
    a1 = clock_ns();
    if (asleep) {
        struct timespec rest;
        rest.tv_sec = (time_t)seconds;
        rest.tv_nsec = (long)((seconds - (double)rest.tv_sec) * 1e9);
        while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
            ;
    }
    do {
        b0 = clock_ns();
    } while (b0 - a0 < span);
    c1 = pqb_counter_read(c);
    b1 = clock_ns();
    {
        double t0 = ((double)a0 + (double)a1) / 2.0;
        double t1 = ((double)b0 + (double)b1) / 2.0;
        if (t1 <= t0)
            return 0.0;
        return (double)(c1 - c0) / ((t1 - t0) * 1e-9);
    }
}

static int open_perf(pqb_counter *c, char *err, size_t errlen)
{
#if PQB_HAVE_PERF
    struct perf_event_attr attr;
    long fd;

    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 0;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    /* pid 0, cpu -1: the calling thread on whatever CPU it runs. */
    fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "perf_event_open_failed_errno_%d", errno);
        return -1;
    }
    c->kind = PQB_COUNTER_PERF;
    c->name = "perf-user-cycles";
    c->perf_fd = (int)fd;
    c->hz = measure_hz(c, PQB_PROBE_SECONDS, 0);
    /* Some hypervisors accept the event but never count: such a counter
     * is as good as none. */
    if (!(c->hz > 1e6)) {
        snprintf(err, errlen, "perf_cycles_do_not_count");
        close(c->perf_fd);
        c->perf_fd = -1;
        return -1;
    }
    return 0;
#else
    (void)c;
    snprintf(err, errlen, "perf_event_open_unsupported");
    return -1;
#endif
}

static int open_tsc(pqb_counter *c, int forced, char *err, size_t errlen)
{
#if defined(__x86_64__)
    if (!forced && c->tsc_invariant != 1) {
        snprintf(err, errlen, "tsc_not_invariant");
        return -1;
    }
    c->kind = PQB_COUNTER_TSC;
    c->name = "tsc";
    c->hz = measure_hz(c, PQB_PROBE_SECONDS, 0);
    if (!(c->hz > 1e6)) {
        snprintf(err, errlen, "tsc_does_not_count");
        return -1;
    }
    return 0;
#else
    (void)c;
    (void)forced;
    snprintf(err, errlen, "tsc_needs_x86_64");
    return -1;
#endif
}

static int open_cntvct(pqb_counter *c, char *err, size_t errlen)
{
#if defined(__aarch64__)
    unsigned long long f = read_cntfrq();
    c->kind = PQB_COUNTER_CNTVCT;
    c->name = "cntvct";
    /* cntfrq_el0 is the architected rate; measure only if firmware left
     * it unset. */
    c->hz = f ? (double)f : measure_hz(c, PQB_CALIBRATE_SECONDS, 0);
    if (!(c->hz > 0.0)) {
        snprintf(err, errlen, "cntvct_does_not_count");
        return -1;
    }
    return 0;
#else
    (void)c;
    snprintf(err, errlen, "cntvct_needs_aarch64");
    return -1;
#endif
}

static void open_clock(pqb_counter *c)
{
    c->kind = PQB_COUNTER_CLOCK;
    c->name = "clock";
    c->hz = 1e9;
}

int pqb_counter_open(pqb_counter *c, char *err, size_t errlen)
{
    const char *force = getenv("PQB_COUNTER");
    char ignored[128];

    c->kind = 0;
    c->name = "none";
    c->perf_fd = -1;
    c->hz = 0.0;
    c->tsc_invariant = pqb_tsc_invariant();
    if (errlen)
        err[0] = '\0';

    if (force && *force && strcmp(force, "auto") != 0) {
        if (strcmp(force, "perf") == 0 || strcmp(force, "perf-user-cycles") == 0)
            return open_perf(c, err, errlen);
        if (strcmp(force, "tsc") == 0)
            return open_tsc(c, 1, err, errlen);
        if (strcmp(force, "cntvct") == 0)
            return open_cntvct(c, err, errlen);
        if (strcmp(force, "clock") == 0) {
            open_clock(c);
            return 0;
        }
        snprintf(err, errlen, "PQB_COUNTER_must_be_perf_tsc_cntvct_clock_or_auto");
        return -1;
    }

    if (open_perf(c, ignored, sizeof ignored) == 0)
        return 0;
#if defined(__x86_64__)
    if (open_tsc(c, 0, ignored, sizeof ignored) == 0)
        return 0;
#endif
#if defined(__aarch64__)
    if (open_cntvct(c, ignored, sizeof ignored) == 0)
        return 0;
#endif
    open_clock(c);
    return 0;
}

void pqb_counter_measure_rate(pqb_counter *c)
{
    if (c->kind == PQB_COUNTER_PERF || c->kind == PQB_COUNTER_TSC) {
        int asleep = c->kind == PQB_COUNTER_TSC && c->tsc_invariant == 1;
        double hz = measure_hz(c, PQB_CALIBRATE_SECONDS, asleep);
        if (hz > 1e6)
            c->hz = hz;
    }
}

void pqb_counter_close(pqb_counter *c)
{
    if (c->perf_fd >= 0)
        close(c->perf_fd);
    c->perf_fd = -1;
}
