/*
 * driver_time.c - the timing modes: calibrate and trial.
 */
#include "driver.h"

#include <poll.h>

pqb_counter C;

void warmups(long n)
{
    long i;
    for (i = 0; i < n; i++) {
        inputs_next();
        call_or_die();
    }
}

/* Calibrates the call's cost for the plan: at least CALIB_MIN_CALLS calls
 * and CALIB_MIN_SECONDS, at most CALIB_MAX_SECONDS, after `warm` warm-ups.
 * A call of CALIB_SLOW_SECONDS or more is its own warm-up (caches and
 * predictors are warm long before it ends) and tells the plan all it
 * needs: the first such call, warm-up or not, is the calibration's only
 * one. */
void mode_calibrate(long warm)
{
    unsigned long long cycles = 0, c0, c1;
    double seconds = 0.0, first = 0.0, start, t0, t1;
    long calls = 0, w = 0;

    start = pqb_now_seconds();
    for (;;) {
        inputs_next();
        t0 = pqb_now_seconds();
        c0 = pqb_counter_read(&C);
        call_or_die();
        c1 = pqb_counter_read(&C);
        t1 = pqb_now_seconds();
        if (w < warm && t1 - t0 < CALIB_SLOW_SECONDS) {
            w++;
            start = t1;
            continue;
        }
        w = warm;
        cycles += c1 - c0;
        seconds += t1 - t0;
        if (calls++ == 0)
            first = t1 - t0;
        if ((calls >= CALIB_MIN_CALLS && seconds >= CALIB_MIN_SECONDS) ||
            first >= CALIB_SLOW_SECONDS || t1 - start >= CALIB_MAX_SECONDS)
            break;
    }
    line("calib calls=%ld seconds=%.9e cycles=%llu first_seconds=%.9e", calls, seconds, cycles,
         first);
}

/* Waits for pqbench's byte on mark_fd (end of file too: pqbench gone), at
 * most 30 s: a mark pqbench missed costs the figure its set-up, never the
 * process its run. */
static void wait_mark(void)
{
    struct pollfd p;
    char c;
    int r;
    if (g_set.mark_fd < 0)
        return;
    p.fd = g_set.mark_fd;
    p.events = POLLIN;
    do
        r = poll(&p, 1, 30000);
    while (r < 0 && errno == EINTR);
    if (r > 0 && read(g_set.mark_fd, &c, 1) < 0)
        c = 0;
    close(g_set.mark_fd);
    g_set.mark_fd = -1;
}

/* The profiled trial's totals and one line per helper shape. */
static void prof_report(long iters, unsigned long long prof_ticks, double tick_hz)
{
    int n = P.count(), k;
    line("prof_op ops=%ld ticks=%llu tick_hz=%.6e", iters, prof_ticks, tick_hz);
    for (k = 0; k < n; k++) {
        const char *name = NULL, *klass = NULL;
        unsigned long long in_bits = 0, out_bits = 0, calls = 0, ticks = 0;
        char clean[128], clean_class[64];
        if (P.get(k, &name, &klass, &in_bits, &out_bits, &calls, &ticks) != 0)
            continue;
        line("prof fn=%s class=%s in_bits=%llu out_bits=%llu calls=%llu ticks=%llu",
             word(name, clean, sizeof clean), word(klass, clean_class, sizeof clean_class),
             in_bits, out_bits, calls, ticks);
    }
}

void mode_trial(long warm, long iters, int want_samples, int profile)
{
    unsigned long long *samples = NULL, *outs = inputs_outputs_alloc(iters);
    unsigned long long cycles = 0, start, c0, c1, p0 = 0, p1 = 0, prof_ticks = 0;
    double seconds = 0.0, t0, t1, cpu0, cpu1, tick_hz = 0.0;
    long i;

    if (want_samples) {
        samples = malloc((size_t)iters * sizeof *samples);
        if (!samples)
            fail("setup", "out_of_memory_for_samples");
    }
    if (profile)
        tick_hz = P.tick_hz(); /* measured once, outside the timed calls */

    warmups(warm);
    if (profile)
        P.reset();
    g_sign_retries = 0;
    g_verify_rejects = 0;

    /* The first timed call follows: pqbench reads the process's CPU time
     * from the kernel as this line arrives (the set-up and warm-ups), and
     * says so on mark_fd, so that no timed call runs before it has. */
    line("timed");
    wait_mark();

    /* The trial's cycles and seconds both span the whole loop, so they cover
     * the same interval and their ratio is the counter rate even for very
     * cheap operations; the per-call samples exclude the loop's own
     * overhead, so their sum is slightly below the trial's cycles. */
    cpu0 = pqb_thread_cpu_seconds();
    t0 = pqb_now_seconds();
    start = pqb_counter_read(&C);
    for (i = 0; i < iters; i++) {
        inputs_next(); /* outside the call's counter reads */
        c0 = pqb_counter_read(&C);
        if (profile) {
            P.enable(1);
            p0 = P.ticks();
        }
        call_or_die();
        if (profile) {
            p1 = P.ticks();
            P.enable(0);
            prof_ticks += p1 - p0;
        }
        c1 = pqb_counter_read(&C);
        if (samples)
            samples[i] = c1 - c0;
        if (outs)
            outs[i] = inputs_output_hash();
    }
    cycles = pqb_counter_read(&C) - start;
    t1 = pqb_now_seconds();
    seconds = t1 - t0;
    cpu1 = pqb_thread_cpu_seconds();

    line("trial calls=%ld seconds=%.9e cycles=%llu cpu_seconds=%.9e sign_retries=%llu "
         "verify_rejects=%llu setup_sign_retries=%llu",
         iters, seconds, cycles, cpu1 - cpu0, g_sign_retries, g_verify_rejects,
         g_setup_sign_retries);
    inputs_report(warm, iters, outs);
    free(outs);
    if (samples) {
        numbers_line("samples", samples, iters);
        free(samples);
    }
    if (profile)
        prof_report(iters, prof_ticks, tick_hz);
}
