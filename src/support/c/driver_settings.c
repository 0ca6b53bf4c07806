/*
 * driver_settings.c - the driver's settings, read from its input descriptor
 * once the instance library is loaded: it fills g_set (driver.h) and
 * driver_inputs.c's seed and pool settings.
 *
 * Why: a library's constructors run inside dlopen, in the driver's own
 * process, and can read whatever the driver holds by then: its command
 * line (/proc/self/cmdline), its environment and its memory. A library
 * that could tell a timing trial from its calibration, or from the memory
 * or replay process, could behave differently in each (burn CPU only while
 * calibrated, to widen the trial's CPU bound; misbehave only when timed).
 * So every driver process of an instance gets the same argv and the same
 * environment, with only what loading needs:
 *
 *   pqb-driver --results-fd 3 --inputs-fd 5 --lib ./lib.so
 *
 * and everything that tells one process from another arrives on the input
 * descriptor, which the driver reads only after loading:
 *
 *   pqb-driver-settings 1
 *   op=<operation>                 required (see driver.c)
 *   mode=<mode>                    required: calibrate, trial, memory,
 *                                  count, ct, replay, trip, leak, pool
 *                                  or keys
 *   warmup=<W>                     default: calibrate 3, trial 2, count 1,
 *                                  replay 2, leak 10
 *   iters=<I>                      trial, count, ct, replay with calls=all,
 *                                  leak (default 20)
 *   mark_fd=<N>                    trial: after the `timed` line, wait for
 *                                  one byte (or end of file) on N, which
 *                                  pqbench writes once it has read the
 *                                  process's CPU time
 *   samples=0|1                    trial: one sample per call
 *   profile=0|1                    trial: the profiling runtime's counters
 *   checks=0|1                     trial: hash each call's output and
 *                                  re-seed the library's randomness before
 *                                  each call (default 1; 0 only to measure
 *                                  what the output checks cost)
 *   repeat=0|1                     replay: make each named call of a
 *                                  re-seeded operation a second time and
 *                                  say whether it repeated (default 1)
 *   seed=, pool_max=, pool_seconds=, pool=, calls=
 *                                  distinct inputs (driver_inputs.c)
 *   pool_bytes=<N>                 verify: N bytes of a shared pool follow
 *                                  the `end` line (driver_pool.c)
 *   keys=0|1                       1: the set-up reads its key pair from
 *                                  keys.pk and keys.sk (driver_keys.c)
 *   end
 *
 * One `key=value` a line, each key at most once, then the line `end` and
 * the end of the descriptor. Anything else (no header, an unknown or
 * repeated key, an empty value, a number out of range, bytes after `end`
 * other than the `pool_bytes` announced, a block beyond SETTINGS_MAX
 * bytes) is one `error stage=settings` line
 * naming the fault, exit 3: never a guess.
 */

#include "driver.h"

#define SETTINGS_MAX 4096
/* The block and a shared pool (driver_pool.c): what the pipe holds. */
#define INPUT_MAX (1 << 20)
#define SETTINGS_HEADER "pqb-driver-settings 1"

/* Strict decimal: digits only (no sign, space or suffix), within range. */
long setting_long(const char *key, const char *v, long min, long max)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (*v < '0' || *v > '9' || errno != 0 || *end != '\0' || x < min || x > max)
        fail("settings", "%s_wants_an_integer_in_%ld..%ld_got_%.40s", key, min, max, v);
    return x;
}

static int setting_flag(const char *key, const char *v)
{
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
        fail("settings", "%s_wants_0_or_1_got_%.40s", key, v);
    return v[0] == '1';
}

static void setting_word(const char *key, const char *v, char *out, size_t cap)
{
    if (strlen(v) >= cap)
        fail("settings", "%s_longer_than_%zu_bytes", key, cap - 1);
    memcpy(out, v, strlen(v) + 1);
}

/* One `key=value` line. Each key's bit in *seen: given at most once. */
static void settings_line(char *l, int lineno, unsigned *seen)
{
    static const char *const keys[] = {"op",      "mode",          "warmup", "iters",
                                       "samples", "profile",       "seed",   "pool_max",
                                       "pool",    "pool_seconds",  "calls",  "checks",
                                       "mark_fd", "pool_bytes",    "keys",   "repeat"};
    const size_t nkeys = sizeof keys / sizeof keys[0];
    char *eq = strchr(l, '=');
    const char *v;
    size_t k;
    if (!eq || eq == l || eq[1] == '\0')
        fail("settings", "line_%d_is_not_key=value", lineno);
    *eq = '\0';
    v = eq + 1;
    for (k = 0; k < nkeys; k++)
        if (strcmp(l, keys[k]) == 0)
            break;
    if (k == nkeys)
        fail("settings", "line_%d_unknown_key_%.40s", lineno, l);
    if (*seen & (1u << k))
        fail("settings", "line_%d_repeats_key_%s", lineno, l);
    *seen |= 1u << k;
    if (k == 0)
        setting_word(l, v, g_set.op, sizeof g_set.op);
    else if (k == 1)
        setting_word(l, v, g_set.mode, sizeof g_set.mode);
    else if (k == 2)
        g_set.warm = setting_long(l, v, 0, 1000000);
    else if (k == 3)
        g_set.iters = setting_long(l, v, 1, 100000000);
    else if (k == 4)
        g_set.samples = setting_flag(l, v);
    else if (k == 5)
        g_set.profile = setting_flag(l, v);
    else if (k == 11)
        g_set.checks = setting_flag(l, v);
    else if (k == 12)
        g_set.mark_fd = (int)setting_long(l, v, 3, 1 << 20);
    else if (k == 14)
        keys_setting(v);
    else if (k == 15)
        g_set.repeat = setting_flag(l, v);
    else
        inputs_setting(l, v);
}

/* Reads the whole descriptor (the block, a shared pool's bytes, then end
 * of file), up to cap bytes. */
static size_t settings_slurp(unsigned char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = read(g_in_fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            fail("settings", "input_descriptor_unreadable_errno_%d", errno);
        if (r == 0)
            return n;
        n += (size_t)r;
        if (n == cap)
            return n;
    }
}

/* The length of the block up to and including its `end` line, within
 * SETTINGS_MAX bytes. */
static size_t settings_block_length(const unsigned char *buf, size_t n)
{
    size_t i, lim = n < SETTINGS_MAX ? n : SETTINGS_MAX;
    for (i = 0; i + 5 <= lim; i++)
        if (buf[i] == '\n' && memcmp(buf + i + 1, "end\n", 4) == 0)
            return i + 5;
    if (n > SETTINGS_MAX)
        fail("settings", "block_beyond_%d_bytes", SETTINGS_MAX);
    if (n == 0)
        fail("settings", "no_settings_on_the_input_descriptor");
    fail("settings", "block_without_its_end_line");
}

/* Reads and checks the settings block (called once the library is
 * loaded), and hands what follows it to the shared pool. */
void settings_read(void)
{
    static char text[SETTINGS_MAX + 1];
    unsigned char *buf = malloc(INPUT_MAX + 1);
    char *l, *nl;
    unsigned seen = 0;
    int lineno = 1;
    size_t n, len;
    if (!buf)
        fail("settings", "out_of_memory");
    n = settings_slurp(buf, INPUT_MAX + 1);
    if (n > INPUT_MAX)
        fail("settings", "input_beyond_%d_bytes", INPUT_MAX);
    len = settings_block_length(buf, n);
    memcpy(text, buf, len);
    text[len] = '\0';
    if (strlen(text) != len)
        fail("settings", "block_holds_a_nul_byte");
    for (l = text; *l; l = nl + 1, lineno++) {
        nl = strchr(l, '\n');
        *nl = '\0';
        if (lineno == 1 && strcmp(l, SETTINGS_HEADER) != 0)
            fail("settings", "first_line_is_not_%s", "pqb-driver-settings_1");
        else if (lineno > 1 && strcmp(l, "end") != 0)
            settings_line(l, lineno, &seen);
    }
    pool_payload(buf + len, n - len);
}
