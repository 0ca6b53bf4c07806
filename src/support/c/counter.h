/*
 * counter.h - the cycle/tick source of the timing driver.
 *
 * One counter is chosen per driver process, in this order unless the
 * environment variable PQB_COUNTER forces one (tsc | cntvct | clock | perf;
 * an unusable forced choice is an error, never a silent fallback):
 *
 *   perf-user-cycles  perf_event_open(PERF_COUNT_HW_CPU_CYCLES), user mode
 *                     only (exclude_kernel, exclude_hv), counting the calling
 *                     thread, read with read(). Unavailable on most virtual
 *                     machines, or when perf_event_paranoid forbids it.
 *   tsc               x86-64 rdtsc, chosen automatically only when CPUID
 *                     0x80000007 EDX bit 8 (invariant TSC) is set.
 *   cntvct            AArch64 virtual counter cntvct_el0, rate cntfrq_el0.
 *   clock             CLOCK_MONOTONIC_RAW in nanoseconds (everything else).
 *
 * hz is the counter's rate in ticks per second of CLOCK_MONOTONIC_RAW:
 * for tsc and perf-user-cycles, probed over 0.5 ms when opening and
 * measured over about 20 ms by pqb_counter_measure_rate (for the latter it
 * is the clock rate observed while the thread spins in user mode); taken
 * from cntfrq_el0 for cntvct, exactly 1e9 for clock.
 *
 * Needs only libc (C99 + POSIX/GNU); Linux for perf_event_open.
 */
#ifndef PQB_COUNTER_H
#define PQB_COUNTER_H

#include <stddef.h>

#define PQB_COUNTER_PERF 1
#define PQB_COUNTER_TSC 2
#define PQB_COUNTER_CNTVCT 3
#define PQB_COUNTER_CLOCK 4

typedef struct pqb_counter {
    int kind;          /* PQB_COUNTER_* */
    const char *name;  /* "perf-user-cycles", "tsc", "cntvct" or "clock" */
    int perf_fd;       /* perf event file descriptor, -1 unless kind is PERF */
    int tsc_invariant; /* x86-64: 1 or 0 from CPUID, whatever the counter; -1 elsewhere */
    double hz;         /* ticks per second */
} pqb_counter;

/* Chooses and opens the counter (honouring PQB_COUNTER) and probes that it
 * counts (a rough rate). Returns 0, or -1 with a message without spaces in
 * err. */
int pqb_counter_open(pqb_counter *c, char *err, size_t errlen);

/* Measures the rate of an open counter over about 20 ms, for figures that
 * are converted to seconds. */
void pqb_counter_measure_rate(pqb_counter *c);

/* Current tick count; differences of two reads are ticks elapsed. */
unsigned long long pqb_counter_read(const pqb_counter *c);

void pqb_counter_close(pqb_counter *c);

/* 1 when the CPU announces an invariant TSC, 0 when not, -1 off x86-64. */
int pqb_tsc_invariant(void);

/* CLOCK_MONOTONIC_RAW in seconds. */
double pqb_now_seconds(void);

/* CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID). */
double pqb_thread_cpu_seconds(void);

#endif
