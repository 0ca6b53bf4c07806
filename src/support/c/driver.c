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
 * mode (calibrate|trial|memory|count|ct|replay|trip|leak), warm-ups, call counts,
 * samples, profiling and the distinct inputs (driver_inputs.c) are a
 * settings block on descriptor M, which the driver reads only once the
 * library is loaded, so no constructor can tell the processes apart by
 * them (driver_settings.c).
 *
 * Built by pqbench as
 *   gcc -std=c99 -D_GNU_SOURCE -O2 -o pqb-driver driver.c counter.c -ldl -rdynamic
 * (-rdynamic exports the allocator defined below, so the instance library's
 * malloc and free calls bind to it).
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
 *   count / ct  (count, ct: under Valgrind) see driver_vg.h
 *   lengths   maximum lengths returned by the library over all calls
 *   done      last line on success
 * A failure prints `error stage=<load|settings|setup|op|profile> msg=<word>`
 * and exits 3; a usage error (argv) exits 2; success exits 0. A crash or a hang inside
 * the library is left to the caller (signal exit status, timeout).
 *
 * Setup (never timed): seed the library once with bytes 0x00..0x2f, keygen;
 * for verify one honest signature, for dec one honest encapsulation whose
 * secret dec must return. With a seed in the settings, sign, verify, dec
 * and hash_<n> walk a pool of distinct inputs derived from it
 * (driver_inputs.c). Warm-ups: calibrate 3, trial 2 (warmup=W);
 * memory runs exactly one call and no warm-up.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "counter.h"
#include "pqb_entry.h"
#include "driver_ext.h"
#include "pqb_seal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_FAIL 3

#define SEED_BYTES 48
#define MSG_BYTES 64
#define SIGN_ATTEMPTS 64
#define BUF_SLACK 64 /* spare bytes behind every output buffer */

#define CALIB_MIN_CALLS 2
#define CALIB_MIN_SECONDS 0.05
#define CALIB_MAX_SECONDS 10.0

#define STACK_BYTES ((size_t)16 << 20)
/* The stack's paint byte: drawn per process once the library is loaded
 * (memory mode), so no constant tells a library what to repaint with. */
static unsigned char g_paint = 0x5C;

/* ------------------------------------------------------------------------
 * Heap accounting.
 *
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
#if defined(__GLIBC__)
#define PQB_HEAP_ACCOUNTING 1

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static int heap_on;
static long long heap_live;
static long long heap_peak;
static unsigned long long heap_allocs;

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

static void heap_begin(void)
{
    __atomic_store_n(&heap_live, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_peak, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_allocs, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_on, 1, __ATOMIC_SEQ_CST);
}

static void heap_end(void)
{
    __atomic_store_n(&heap_on, 0, __ATOMIC_SEQ_CST);
}
#else
/* No glibc: no __libc_* to forward to, so no accounting (reported as -1). */
#define PQB_HEAP_ACCOUNTING 0
static long long heap_peak = -1;
static unsigned long long heap_allocs = 0;
static void heap_begin(void) {}
static void heap_end(void) {}
#endif

/* ------------------------------------------------------------------------
 * Output.
 * ---------------------------------------------------------------------- */
#if defined(__GNUC__)
#define PQB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PQB_PRINTF(a, b)
#endif

/* The results channel, the bytes written to it and their FNV-1a 64 hash. */
static FILE *g_out;
static int g_out_fd = STDOUT_FILENO;
static unsigned long long g_out_bytes;
static unsigned long long g_out_fnv = 0xcbf29ce484222325ULL;

static void out_hash(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        g_out_fnv ^= (unsigned char)p[i];
        g_out_fnv *= 0x100000001b3ULL;
    }
    g_out_bytes += n;
}

static void out_write(const char *p, size_t n)
{
    out_hash(p, n);
    fwrite(p, 1, n, g_out);
}

/* The line `<tag> v0 v1 ...`: one number per call (samples, counts,
 * output hashes), too long for `line`'s buffer. */
static void numbers_line(const char *tag, const unsigned long long *v, long n)
{
    char num[32];
    long i;
    out_write(tag, strlen(tag));
    for (i = 0; i < n; i++) {
        int k = snprintf(num, sizeof num, " %llu", v[i]);
        out_write(num, (size_t)k);
    }
    out_write("\n", 1);
    fflush(g_out);
}

static void line(const char *fmt, ...) PQB_PRINTF(1, 2);
static void line(const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        out_write(small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big)
            return;
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        out_write(big, (size_t)n);
        free(big);
    }
    out_write("\n", 1);
    fflush(g_out);
}

/* The channel's last line (not itself counted). */
static void end_line(void)
{
    fprintf(g_out, "end bytes=%llu fnv1a64=%016llx\n", g_out_bytes, g_out_fnv);
    fflush(g_out);
}

/* Copies s into out as one word: anything but printable non-space ASCII
 * becomes '_'. */
static const char *word(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    if (!s || !*s)
        s = "unknown";
    for (; s[i] && i + 1 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[i] = (ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\'') ? (char)ch : '_';
    }
    out[i] = '\0';
    return out;
}

static void fail(const char *stage, const char *fmt, ...) PQB_PRINTF(2, 3);
static void fail(const char *stage, const char *fmt, ...)
{
    char raw[512], clean[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    line("error stage=%s msg=%s", stage, word(raw, clean, sizeof clean));
    end_line();
    exit(EXIT_FAIL);
}

static void usage(const char *why)
{
    fprintf(stderr,
            "pqb-driver: %s\n"
            "usage: pqb-driver [--results-fd N] --inputs-fd N --lib PATH\n"
            "       (the operation, mode, counts and inputs: a settings block on the\n"
            "       input descriptor, read once the library is loaded; driver_settings.c)\n",
            why);
    exit(EXIT_USAGE);
}

/* ------------------------------------------------------------------------
 * The operation.
 * ---------------------------------------------------------------------- */
/* OP_EXT: a key-exchange or hash operation (driver_ext.h). */
enum { OP_KEYGEN, OP_SIGN, OP_VERIFY, OP_ENC, OP_DEC, OP_EXT };
static const char *const op_names[] = {"keygen", "sign", "verify", "enc", "dec"};

static const pqb_entry *E;
static int g_op;

static unsigned char *g_pk, *g_sk, *g_sig, *g_ct, *g_ss, *g_ss2, *g_msg;
static size_t g_pk_len, g_sk_len, g_sig_len, g_ct_len, g_ss_len;
static size_t g_sig_cap;

/* Maximum lengths returned over all calls. */
static size_t max_pk, max_sk, max_sig, max_ct, max_ss;

/* Counted during every call; reset before the timed calls. */
static unsigned long long g_sign_retries, g_verify_rejects;

/* Failed signing attempts of the setup (verify's honest signature), kept
 * apart: they are not inside any timed call, but a page reports them. */
static unsigned long long g_setup_sign_retries;

/* Set when a call fails; reported by the caller. */
static char g_err[256];

static void note_max(size_t *m, size_t v)
{
    if (v > *m)
        *m = v;
}

static int call_failed(const char *fmt, ...) PQB_PRINTF(1, 2);
static int call_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    return -1;
}

static int do_keygen(void)
{
    int rc;
    g_pk_len = E->pk_bytes;
    g_sk_len = E->sk_bytes;
    rc = E->keygen(g_pk, &g_pk_len, g_sk, &g_sk_len);
    if (rc != 0)
        return call_failed("keygen_returned_%d", rc);
    if (g_pk_len > E->pk_bytes || g_sk_len > E->sk_bytes)
        return call_failed("keygen_length_exceeds_buffer_pk_%zu_sk_%zu", g_pk_len, g_sk_len);
    note_max(&max_pk, g_pk_len);
    note_max(&max_sk, g_sk_len);
    return 0;
}

/* One sign, retried inside the call while the library reports failure. */
static int do_sign(void)
{
    int attempt, rc = 0;
    for (attempt = 0; attempt < SIGN_ATTEMPTS; attempt++) {
        g_sig_len = g_sig_cap;
        rc = E->sign(g_sig, &g_sig_len, g_msg, MSG_BYTES, g_sk, g_sk_len);
        if (rc == 0)
            break;
        if (attempt + 1 < SIGN_ATTEMPTS)
            g_sign_retries++;
    }
    if (rc != 0)
        return call_failed("sign_failed_%d_times_last_rc_%d", SIGN_ATTEMPTS, rc);
    if (g_sig_len > g_sig_cap)
        return call_failed("sign_length_%zu_exceeds_buffer_%zu", g_sig_len, g_sig_cap);
    if (E->sig_attached)
        note_max(&max_sig, g_sig_len >= MSG_BYTES ? g_sig_len - MSG_BYTES : 0);
    else
        note_max(&max_sig, g_sig_len);
    return 0;
}

static int g_verify_rc;

static int do_verify(void)
{
    g_verify_rc = E->verify(g_sig, g_sig_len, g_msg, MSG_BYTES, g_pk, g_pk_len);
    if (g_verify_rc != 0)
        g_verify_rejects++;
    return 0;
}

static int do_enc(void)
{
    int rc;
    g_ct_len = E->ct_bytes;
    g_ss_len = E->ss_bytes;
    rc = E->enc(g_ct, &g_ct_len, g_ss, &g_ss_len, g_pk, g_pk_len);
    if (rc != 0)
        return call_failed("enc_returned_%d", rc);
    if (g_ct_len > E->ct_bytes || g_ss_len > E->ss_bytes)
        return call_failed("enc_length_exceeds_buffer_ct_%zu_ss_%zu", g_ct_len, g_ss_len);
    note_max(&max_ct, g_ct_len);
    note_max(&max_ss, g_ss_len);
    return 0;
}

/* Decapsulates g_ct into g_ss2; *len receives the secret's length. */
static int do_dec_into(size_t *len)
{
    int rc;
    *len = E->ss_bytes;
    rc = E->dec(g_ss2, len, g_ct, g_ct_len, g_sk, g_sk_len);
    if (rc != 0)
        return call_failed("dec_returned_%d", rc);
    if (*len > E->ss_bytes)
        return call_failed("dec_length_%zu_exceeds_buffer_%zu", *len, E->ss_bytes);
    note_max(&max_ss, *len);
    return 0;
}

static size_t g_dec_len;

static int do_dec(void)
{
    return do_dec_into(&g_dec_len);
}

/* One timed call of the chosen operation: 0, or -1 with g_err set. */
static int call_op(void)
{
    switch (g_op) {
    case OP_KEYGEN:
        return do_keygen();
    case OP_SIGN:
        return do_sign();
    case OP_VERIFY:
        return do_verify();
    case OP_ENC:
        return do_enc();
    case OP_EXT:
        return ext_call();
    default:
        return do_dec();
    }
}

static void call_or_die(void)
{
    if (call_op() != 0)
        fail("op", "%s", g_err);
}

static unsigned char *buffer(size_t n)
{
    unsigned char *p = malloc(n + BUF_SLACK);
    if (!p)
        fail("setup", "out_of_memory");
    memset(p, 0, n + BUF_SLACK);
    return p;
}

/* The settings (driver_settings.c, included at the end), read from the
 * input descriptor g_in_fd once the library is loaded. */
static struct {
    char op[32];
    char mode[16];
    long warm;   /* -1: the mode's default */
    long iters;
    int samples, profile, checks, mark_fd;
} g_set = {"", "", -1, 20, 0, 0, 1, -1};
static int g_in_fd = -1;
static void settings_read(void);
static long setting_long(const char *key, const char *v, long min, long max);

/* Distinct inputs per call (driver_inputs.c, included at the end). */
static int g_inputs;
static void inputs_setting(const char *key, const char *v);
static void inputs_library_seed(unsigned char *seed);
static int inputs_pooled(void);
static void inputs_setup(void);
static void inputs_next(void);
static unsigned long long inputs_output_hash(void);
static unsigned long long hash_bytes(unsigned long long h, const unsigned char *p, size_t n);
static unsigned long long *inputs_outputs_alloc(long iters);
static void inputs_report(long warm, long iters, unsigned long long *outs);
static void mode_replay(long warm);
static void mode_trip(void);
static void mode_leak(long warm, long iters);

static void setup(void)
{
    unsigned char seed[SEED_BYTES];
    size_t i;
    int rc;

    if (g_op == OP_EXT) {
        ext_setup();
        inputs_setup();
        return;
    }
    for (i = 0; i < SEED_BYTES; i++)
        seed[i] = (unsigned char)i;
    if (g_inputs)
        inputs_library_seed(seed);
    g_msg = buffer(MSG_BYTES);
    for (i = 0; i < MSG_BYTES; i++)
        g_msg[i] = (unsigned char)((131 * i + 64) % 256);
    g_pk = buffer(E->pk_bytes);
    g_sk = buffer(E->sk_bytes);
    if (E->kind == PQB_KIND_SIGN) {
        g_sig_cap = E->sig_bytes + (E->sig_attached ? MSG_BYTES : 0);
        g_sig = buffer(g_sig_cap);
    } else {
        g_ct = buffer(E->ct_bytes);
        g_ss = buffer(E->ss_bytes);
        g_ss2 = buffer(E->ss_bytes);
    }

    rc = E->seed(seed, SEED_BYTES);
    if (rc != 0)
        fail("setup", "seed_returned_%d", rc);
    if (do_keygen() != 0)
        fail("setup", "%s", g_err);
    if (inputs_pooled()) {
        /* The pool's first entry makes the honest signature or round trip. */
        inputs_setup();
        return;
    }
    if (g_op == OP_VERIFY && do_sign() != 0)
        fail("setup", "%s", g_err);
    if (g_op == OP_DEC) {
        size_t len;
        if (do_enc() != 0)
            fail("setup", "%s", g_err);
        if (do_dec_into(&len) != 0)
            fail("setup", "%s", g_err);
        if (len != g_ss_len || memcmp(g_ss, g_ss2, len) != 0)
            fail("setup", "dec_secret_differs_from_enc_secret");
    }
}

static void print_lengths(void)
{
    if (g_op == OP_EXT)
        ext_print_lengths();
    else if (E->kind == PQB_KIND_SIGN)
        line("lengths pk=%zu sk=%zu sig=%zu", max_pk, max_sk, max_sig);
    else
        line("lengths pk=%zu sk=%zu ct=%zu ss=%zu", max_pk, max_sk, max_ct, max_ss);
}

/* ------------------------------------------------------------------------
 * Loading.
 * ---------------------------------------------------------------------- */
static void *sym(void *lib, const char *name)
{
    dlerror();
    return dlsym(lib, name);
}

typedef const pqb_entry *(*entry_fn)(void);

static void *load(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *p;
    entry_fn get;

    if (!lib) {
        const char *e = dlerror();
        fail("load", "dlopen_failed:%s", e ? e : "unknown");
    }
    p = sym(lib, "pqb_entry_table");
    if (!p)
        fail("load", "no_pqb_entry_table");
    /* dlsym returns an object pointer; copy it into a function pointer
     * (POSIX guarantees the representation). */
    memcpy(&get, &p, sizeof get);
    E = get();
    if (!E)
        fail("load", "pqb_entry_table_returned_null");
    if (E->abi_version != PQB_ABI_VERSION)
        fail("load", "abi_version_%d_driver_expects_%d", E->abi_version, PQB_ABI_VERSION);
    if (E->kind < PQB_KIND_SIGN || E->kind > PQB_KIND_HASH)
        fail("load", "unknown_kind_%d", E->kind);
    return lib;
}

/* Whether the loaded library's kind has the settings' operation (a load
 * failure, as before the operation came in the settings). */
static void check_op_fits(void)
{
    int ok;
    if (g_op == OP_EXT || E->kind == PQB_KIND_KEX || E->kind == PQB_KIND_HASH) {
        if (g_op != OP_EXT || !ext_fits_kind())
            fail("load", "op_does_not_fit_kind_%s_or_the_entry_table_lacks_a_function",
                 ext_kind_name(E->kind));
        return;
    }
    if (E->kind == PQB_KIND_SIGN)
        ok = g_op == OP_KEYGEN || g_op == OP_SIGN || g_op == OP_VERIFY;
    else
        ok = g_op == OP_KEYGEN || g_op == OP_ENC || g_op == OP_DEC;
    if (!ok)
        fail("load", "op_%s_does_not_fit_kind_%s", op_names[g_op],
             E->kind == PQB_KIND_SIGN ? "sign" : "kem");
    if (!E->seed || !E->keygen ||
        (E->kind == PQB_KIND_SIGN && (!E->sign || !E->verify)) ||
        (E->kind == PQB_KIND_KEM && (!E->enc || !E->dec)))
        fail("load", "entry_table_lacks_a_function");
}

/* ------------------------------------------------------------------------
 * Profiling hooks (a library relinked with prof_runtime.c).
 * ---------------------------------------------------------------------- */
typedef void (*prof_enable_fn)(int);
typedef void (*prof_reset_fn)(void);
typedef unsigned long long (*prof_ticks_fn)(void);
typedef double (*prof_tick_hz_fn)(void);
typedef int (*prof_count_fn)(void);
typedef int (*prof_get_fn)(int, const char **, const char **, unsigned long long *,
                           unsigned long long *, unsigned long long *, unsigned long long *);

static struct {
    prof_enable_fn enable;
    prof_reset_fn reset;
    prof_ticks_fn ticks;
    prof_tick_hz_fn tick_hz;
    prof_count_fn count;
    prof_get_fn get;
} P;

static int prof_sym(void *lib, const char *name, void *fn, size_t fn_size)
{
    void *p = sym(lib, name);
    if (!p)
        return 0;
    memcpy(fn, &p, fn_size);
    return 1;
}

static void prof_load(void *lib)
{
    int ok = prof_sym(lib, "pqb_prof_enable", &P.enable, sizeof P.enable) &&
             prof_sym(lib, "pqb_prof_reset", &P.reset, sizeof P.reset) &&
             prof_sym(lib, "pqb_prof_ticks", &P.ticks, sizeof P.ticks) &&
             prof_sym(lib, "pqb_prof_tick_hz", &P.tick_hz, sizeof P.tick_hz) &&
             prof_sym(lib, "pqb_prof_count", &P.count, sizeof P.count) &&
             prof_sym(lib, "pqb_prof_get", &P.get, sizeof P.get);
    if (!ok)
        fail("profile", "library-not-instrumented");
}

/* ------------------------------------------------------------------------
 * Modes.
 * ---------------------------------------------------------------------- */
static pqb_counter C;

static void warmups(long n)
{
    long i;
    for (i = 0; i < n; i++) {
        inputs_next();
        call_or_die();
    }
}

static void mode_calibrate(long warm)
{
    unsigned long long cycles = 0, c0, c1;
    double seconds = 0.0, first = 0.0, start, t0, t1;
    long calls = 0;

    warmups(warm);
    start = pqb_now_seconds();
    for (;;) {
        inputs_next();
        t0 = pqb_now_seconds();
        c0 = pqb_counter_read(&C);
        call_or_die();
        c1 = pqb_counter_read(&C);
        t1 = pqb_now_seconds();
        cycles += c1 - c0;
        seconds += t1 - t0;
        if (calls++ == 0)
            first = t1 - t0;
        if ((calls >= CALIB_MIN_CALLS && seconds >= CALIB_MIN_SECONDS) ||
            t1 - start >= CALIB_MAX_SECONDS)
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

static void mode_trial(long warm, long iters, int want_samples, int profile)
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
    if (profile) {
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
}

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

static void mode_memory(void)
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

/* The exact-count and constant-time modes (their own file). */
#include "driver_vg.h"

/* ------------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------- */
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
    static const char *const modes[] = {"calibrate", "trial", "memory", "count",
                                       "ct",        "replay", "trip",   "leak"};
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
        fail("settings", "mode_must_be_calibrate_trial_memory_count_ct_replay_trip_or_leak");
    if (g_op == OP_EXT && ext_is_step() && (mode_is("calibrate") || g_set.profile))
        fail("settings", "a_KEX_step_is_planned_from_the_exchange_and_never_profiled");
    if (mode_is("replay") && !g_inputs)
        fail("settings", "replay_needs_a_seed");
    if ((g_set.profile || g_set.samples || !g_set.checks) && !mode_is("trial"))
        fail("settings", "samples_profile_and_checks_go_with_mode_trial");
}

int main(int argc, char **argv)
{
    const char *lib_path = parse_argv(argc, argv);
    long warm;
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
         ext_kind_name(E->kind), word(E->algname, algname, sizeof algname),
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
    warm = g_set.warm;
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
    else
        mode_memory();

    print_lengths();
    line("done");
    end_line();
    pqb_counter_close(&C);
    return 0;
}

/* Key exchange and hash operations (driver_ext.h). */
#include "driver_hash.c"
#include "driver_kex.c"
#include "driver_inputs.c"
#include "driver_settings.c"
#include "driver_trip.c"
#include "driver_leak.c"
