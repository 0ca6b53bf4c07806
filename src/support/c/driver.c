/*
 * driver.c - pqb-driver, the timing and memory driver of pqbench.
 *
 * One process measures one operation of one instance library:
 *
 *   pqb-driver [--results-fd N] --inputs-fd M --lib PATH
 *
 * The command line is the same for every process of an instance, whatever
 * it measures: the operation (keygen|sign|verify|enc|dec, hash_<bytes>,
 * exchange|init_a|init_b|pass<k>|derive_a|derive_b: driver_ext.h), the
 * mode (calibrate|trial|memory|count|ct|replay|trip|leak|pool|keys), warm-ups,
 * call counts,
 * samples, profiling and the distinct inputs (driver_inputs.c) are a
 * settings block on descriptor M, which the driver reads only once the
 * library is loaded, so no constructor can tell the processes apart by
 * them (driver_settings.c).
 *
 * Built by pqbench as
 *   gcc -std=c99 -D_GNU_SOURCE -O2 -o pqb-driver driver*.c counter.c -ldl -rdynamic
 * (-rdynamic exports the allocator of driver_heap.c, so the instance
 * library's malloc and free calls bind to it; everything else the files
 * share is hidden, driver.h). This file is the dispatch: the command line,
 * loading, the settings' check and one call per mode; each mode, each
 * kind of operation and each shared part is a file of its own.
 *
 * Every record is one line on the results channel, `tag key=value ...`,
 * flushed at once. The channel is descriptor N with --results-fd N (pqbench
 * passes a pipe of its own there: stdout belongs to the library, whose
 * prints must never become figures), else stdout. The descriptor is made
 * close-on-exec before anything else, so programs the library might exec
 * do not inherit it. The last line is
 *   end bytes=B fnv1a64=H
 * the number of bytes written before it and their FNV-1a 64 hash, so that
 * pqbench accepts exactly what the driver wrote (a process the library
 * forked shares the descriptor and could add to it). The records:
 *   meta      first, once the library is loaded
 *   calib     (calibrate) calls, seconds, cycles, first_seconds
 *   trial     (trial) calls, seconds, cycles, cpu_seconds, sign_retries,
 *             verify_rejects, setup_sign_retries (failed signing attempts
 *             of the untimed setup: the honest signature verify needs);
 *             `samples c1 c2 ...` with samples=1
 *   timed     (trial) just before the first timed call: pqbench reads
 *             the process's CPU time from the kernel as it arrives
 *   prof_op / prof  (trial, profile=1) totals and one line per shape
 *   memory    (memory) baseline_rss_kib, peak_rss_kib, stack_bytes,
 *             heap_peak_bytes, heap_allocs, stack_pages_bytes, faults (minor
 *             page faults during the call), page_bytes
 *   leak      (leak) fixed, random, keys; then `samples`: see driver_leak.c
 *   trip      (trip) see driver_trip.c
 *   pool / entry  (pool) verify's pool, for the other processes: see
 *             driver_pool.c
 *   keys      (keys) a key pair for the other processes: driver_keys.c
 *   count / ct  (count, ct: under Valgrind) see driver_vg.c
 *   lengths   maximum lengths returned by the library over all calls
 *   done      last line on success
 * A failure prints `error stage=<load|settings|setup|op|profile> msg=<word>`
 * and exits 3; a usage error (argv) exits 2; success exits 0. A crash or a hang inside
 * the library is left to the caller (signal exit status, timeout).
 *
 * Setup (never timed): seed the library once with bytes 0x00..0x2f, keygen
 * (or, with keys=1, read the pair another process made: driver_keys.c; none
 * when keygen itself is calibrated, timed or replayed);
 * for verify one honest signature, for dec one honest encapsulation whose
 * secret dec must return. With a seed in the settings, sign, verify, dec
 * and hash_<n> walk a pool of distinct inputs derived from it
 * (driver_inputs.c). Warm-ups: calibrate 3, trial 2 (warmup=W);
 * memory runs exactly one call and no warm-up.
 */
#include "driver.h"
#include "pqb_seal.h"
#include "valgrind_hooks.h"

#include <fcntl.h>
#include <sched.h>

static long parse_count(const char *opt, const char *s, long min, long max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        char why[160];
        snprintf(why, sizeof why, "%s wants an integer in %ld..%ld, got '%s'", opt, min, max, s);
        usage(why);
    }
    return v;
}

/* What every process of an instance is given in argv: nothing but what
 * loading needs (see driver_settings.c for why). */
static const char *parse_argv(int argc, char **argv)
{
    const char *lib_path = NULL;
    int i;
    g_out = stdout;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            usage("help");
        else if (!has_value)
            usage("an option is missing its value or is unknown");
        else if (strcmp(a, "--results-fd") == 0) {
            int fd = (int)parse_count(a, argv[++i], 3, 1 << 20);
            FILE *f;
            /* At once: nothing exec'ed from here on may inherit it. */
            if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || (f = fdopen(fd, "w")) == NULL)
                usage("--results-fd names no open descriptor");
            g_out = f;
            g_out_fd = fd;
        } else if (strcmp(a, "--inputs-fd") == 0) {
            g_in_fd = (int)parse_count(a, argv[++i], 0, 1 << 20);
            if (fcntl(g_in_fd, F_SETFD, FD_CLOEXEC) != 0)
                usage("--inputs-fd names no open descriptor");
        } else if (strcmp(a, "--lib") == 0)
            lib_path = argv[++i];
        else
            usage("unknown option (the operation, mode and counts are settings on --inputs-fd)");
    }
    if (!lib_path || g_in_fd < 0)
        usage("--lib and --inputs-fd are required");
    return lib_path;
}

static int mode_is(const char *m)
{
    return strcmp(g_set.mode, m) == 0;
}

/* The settings' operation and mode, checked against each other (after
 * settings_read; a contradiction is a settings error, exit 3). */
static void settings_check(void)
{
    static const char *const modes[] = {"calibrate", "trial", "memory", "count", "ct",
                                       "replay",    "trip",  "leak",   "pool",  "keys"};
    size_t m;
    if (!g_set.op[0] || !g_set.mode[0])
        fail("settings", "op_and_mode_are_required");
    for (g_op = 0; g_op < 5; g_op++)
        if (strcmp(g_set.op, op_names[g_op]) == 0)
            break;
    if (g_op == 5 && ext_parse_op(g_set.op))
        g_op = OP_EXT;
    else if (g_op == 5)
        fail("settings", "op_must_be_keygen_sign_verify_enc_dec_hash_<bytes>_exchange_or_a_KEX_step");
    for (m = 0; m < sizeof modes / sizeof modes[0]; m++)
        if (mode_is(modes[m]))
            break;
    if (m == sizeof modes / sizeof modes[0])
        fail("settings", "mode_must_be_calibrate_trial_memory_count_ct_replay_trip_leak_pool_or_keys");
    if (g_op == OP_EXT && ext_is_step() && (mode_is("calibrate") || g_set.profile))
        fail("settings", "a_KEX_step_is_planned_from_the_exchange_and_never_profiled");
    if ((mode_is("replay") || mode_is("pool") || mode_is("keys")) && !g_inputs)
        fail("settings", "replay_pool_and_keys_need_a_seed");
    if ((g_set.profile || g_set.samples || !g_set.checks) && !mode_is("trial"))
        fail("settings", "samples_profile_and_checks_go_with_mode_trial");
    if (!g_set.repeat && !mode_is("replay"))
        fail("settings", "repeat_goes_with_mode_replay");
}

/* The settings' mode, after the set-up, with its default warm-ups. */
static void run_mode(void *lib)
{
    long warm = g_set.warm;
    if (mode_is("calibrate"))
        mode_calibrate(warm < 0 ? 3 : warm);
    else if (mode_is("trial") && g_op == OP_EXT && ext_is_step())
        ext_mode_trial_steps(warm < 0 ? 2 : warm, g_set.iters, g_set.samples);
    else if (mode_is("trial"))
        mode_trial(warm < 0 ? 2 : warm, g_set.iters, g_set.samples, g_set.profile);
    else if (mode_is("count"))
        mode_count(warm < 0 ? 1 : warm, g_set.iters);
    else if (mode_is("ct"))
        mode_ct(lib, g_set.iters);
    else if (mode_is("replay"))
        mode_replay(warm < 0 ? 2 : warm);
    else if (mode_is("leak"))
        mode_leak(warm < 0 ? 10 : warm, g_set.iters);
    else if (mode_is("pool"))
        mode_pool();
    else if (mode_is("keys"))
        mode_keys();
    else
        mode_memory();
}

int main(int argc, char **argv)
{
    const char *lib_path = parse_argv(argc, argv);
    char err[128], algname[256], seal[32];
    int seal_err, under_valgrind;
    const char *inv;
    void *lib;

    if (pqb_counter_open(&C, err, sizeof err) != 0)
        fail("load", "counter:%s", err);
    /* Before loading, so its constructors are bound too: no file can be
     * opened to write (see pqb_seal.h). Under Valgrind, whose own output
     * the filter would refuse, neither filter is installed; the mode is not
     * known yet (nothing before loading may tell one process from another),
     * so Valgrind is asked whether it runs us. */
    under_valgrind = PQB_VG_RUNNING();
    seal_err = under_valgrind ? 0 : pqb_seal_writes();
    lib = load(lib_path);
    /* Only now: nothing the library ran while loading could see them. */
    settings_read();
    settings_check();
    check_op_fits();
    /* From here on the library cannot create executable memory (see
     * pqb_seal.h); under Valgrind, whose translator needs it, it can. */
    if (under_valgrind)
        snprintf(seal, sizeof seal, "valgrind");
    else if (seal_err == 0 && (seal_err = pqb_seal_exec_mappings()) == 0)
        snprintf(seal, sizeof seal, "on");
    else
        snprintf(seal, sizeof seal, "off:errno%d", seal_err);

    /* Only the modes whose cycles become seconds need the rate's 20 ms;
     * the others print the probe's rough rate, which nothing reads. */
    if (mode_is("calibrate") || mode_is("trial"))
        pqb_counter_measure_rate(&C);
    inv = C.tsc_invariant < 0 ? "na" : C.tsc_invariant ? "1" : "0";
    line("meta abi=%d api=%s kind=%s algname=%s counter=%s counter_hz=%.6e tsc_invariant=%s "
         "pid=%ld cpu=%d seal=%s",
         E->abi_version, E->api == PQB_API_NIST ? "nist" : "ngcc",
         pqb_kind_name(E->kind), word(E->algname, algname, sizeof algname),
         C.name, C.hz, inv, (long)getpid(), sched_getcpu(), seal);

    if (g_set.profile)
        prof_load(lib);
    if (mode_is("trip")) {
        /* No key generation here: the keys come from another process. */
        mode_trip();
        line("done");
        end_line();
        pqb_counter_close(&C);
        return 0;
    }
    setup();
    g_setup_sign_retries = g_sign_retries;
    g_sign_retries = 0;
    run_mode(lib);

    print_lengths();
    line("done");
    end_line();
    pqb_counter_close(&C);
    return 0;
}
