/*
 * kat_runner.c - pqb-kat, writes the KAT file of one instance library and
 * checks every record on the way.
 *
 *   pqb-kat [--results-fd N] --lib PATH --format ngcc|nist --records N
 *           [--start HEX] (--out FILE | --out-fd M)
 *   pqb-kat --drbg-selftest
 *
 * --start takes 48 bytes in hex (96 digits) that replace the fixed start of
 * the generated file, so two implementations of one parameter set can be
 * compared on seeds their KAT file does not hold: for nist, the master
 * DRBG's entropy input (0x00..0x2f otherwise); for ngcc (signatures, KEMs
 * and key exchanges), the first 48 bytes of the 64-byte nonce of the seed
 * DRNG and of the message DRNG ("seedseed..." and "msgmsg..." otherwise;
 * their last 16 bytes stay, so the two streams stay apart). The hash files
 * have no such start (each file's nonce is its name): --start is refused
 * with --format hash.
 *
 * Built by pqbench from this file, the kat_*.c it declares in kat_runner.h,
 * aes256.c and ctr_drbg.c, linked with -ldl.
 * The library is loaded with dlopen and driven through its pqb_entry table.
 *
 * The results channel (descriptor N with --results-fd N, else stdout)
 * carries `key = value` lines for the KAT log, ending with
 * `kat_bytes = B`, `kat_fnv1a64 = H` (the KAT file's length and FNV-1a 64
 * hash), `status = PASS|CRYPTOFAIL|OVERFLOW|LOADFAIL` and, unless PASS, a
 * one-line `detail`, then `end bytes=B fnv1a64=H` covering every byte of
 * the channel before it. The KAT file goes to FILE or to descriptor M.
 * pqbench passes pipes of its own for both, made close-on-exec at once:
 * the library's prints to stdout never become a verdict, and a process the
 * library forks (which shares the descriptors) cannot change what pqbench
 * accepts without breaking the lengths and hashes. PASS means every record was generated with all checks passing;
 * comparing the file with the reference KATs is pqbench's job. The exit code
 * is 0 whenever a status line was printed, 2 for usage errors and 1 when the
 * KAT file cannot be written. Crashes and hangs are noticed by pqbench.
 *
 * Checks on every record:
 *  - every buffer the runner hands to the library sits between 64 guard bytes
 *    of 0xA5, verified after every call, and a returned length above the API
 *    figure is an overflow (the NIST adapter guards its own crypto_sign_open
 *    scratch buffer and reports violations with PQB_VERIFY_SCRATCH_OVERFLOW);
 *  - verify accepts the honest signature and rejects it on the message with
 *    bit 0 of byte 0 flipped; dec returns the encapsulated shared secret;
 *  - keygen/enc/dec succeed and signing succeeds within 64 attempts
 *    (failed attempts are retried with the randomness stream continuing).
 * A record's lines are written first, then its checks decide; generation
 * stops after the first failing record.
 */
#include "kat_runner.h"
#include "pqb_seal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>

/* ---- main ------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: pqb-kat [--results-fd N] --lib PATH --format ngcc|nist --records N\n"
          "               [--start HEX] (--out FILE | --out-fd M)\n"
          "       pqb-kat [--results-fd N] --lib PATH --format hash --file KAT_2_12|KAT_2_23|\n"
          "               KAT_2_33|KAT_Loop|KAT_ICCS [--helper NAME] --records N\n"
          "               (--out FILE | --out-fd M)\n"
          "       pqb-kat --drbg-selftest\n",
          stderr);
    exit(2);
}

static int drbg_selftest(void)
{
    pqb_ctr_drbg d;
    unsigned char buf[48];
    int k;
    master_init(&d);
    for (k = 0; k < 3; k++) {
        size_t i;
        pqb_ctr_drbg_generate(&d, buf, sizeof buf);
        for (i = 0; i < sizeof buf; i++)
            printf("%02X", buf[i]);
        printf("\n");
    }
    fflush(stdout);
    return 0;
}

/* The load failures: everything up to a usable entry table. */
static const pqb_entry *load(const char *lib, int nist, int hash, char *why, size_t why_len)
{
    void *h;
    const pqb_entry *(*table)(void);
    const pqb_entry *e;
    void *sym;
    const char *err;

    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        err = dlerror();
        snprintf(why, why_len, "%s", err ? err : "dlopen failed");
        return NULL;
    }
    dlerror();
    sym = dlsym(h, "pqb_entry_table");
    err = dlerror();
    if (err != NULL || sym == NULL) {
        snprintf(why, why_len, "%s", err ? err : "pqb_entry_table is NULL");
        return NULL;
    }
    /* POSIX guarantees that a dlsym result converts to a function pointer. */
    memcpy(&table, &sym, sizeof table);
    e = table();
    if (e == NULL) {
        snprintf(why, why_len, "%s: pqb_entry_table() returned NULL", lib);
        return NULL;
    }
    if (e->abi_version != PQB_ABI_VERSION) {
        snprintf(why, why_len, "%s: entry table abi_version %d, expected %d", lib,
                 e->abi_version, PQB_ABI_VERSION);
        return NULL;
    }
    if (!pqb_kind_name(e->kind)) {
        snprintf(why, why_len, "%s: entry table kind %d is not sign, kem, kex or hash", lib,
                 e->kind);
        return NULL;
    }
    if ((hash != 0) != (e->kind == PQB_KIND_HASH)) {
        snprintf(why, why_len, "%s: the hash format and the library's kind disagree", lib);
        return NULL;
    }
    if (!pqb_kind_complete(e)) {
        snprintf(why, why_len, "%s: entry table lacks a function its kind needs", lib);
        return NULL;
    }
    if (!nist && (e->drng_new == NULL || e->drng_draw == NULL || e->drng_free == NULL)) {
        snprintf(why, why_len, "%s: the ngcc KAT format needs the library's DRNG functions", lib);
        return NULL;
    }
    if (nist && e->kind == PQB_KIND_SIGN && !e->sig_attached) {
        snprintf(why, why_len, "%s: the nist KAT format needs a signed-message (NIST API) sign",
                 lib);
        return NULL;
    }
    return e;
}

/* Descriptor `arg` as a write stream, close-on-exec at once (nothing the
 * library execs may inherit it); exits with a usage error otherwise. */
static FILE *channel(const char *opt, const char *arg)
{
    char *end;
    long fd;
    FILE *f = NULL;
    errno = 0;
    fd = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || fd < 3 || fd > 1048576 ||
        fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0 || (f = fdopen((int)fd, "w")) == NULL) {
        fprintf(stderr, "pqb-kat: %s wants an open descriptor above 2, not '%s'\n", opt, arg);
        usage();
    }
    return f;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Exactly NIST_SEED_BYTES bytes of hex into out; 0 on success. */
static int parse_start(const char *hex, unsigned char *out)
{
    size_t i;
    if (strlen(hex) != 2 * NIST_SEED_BYTES)
        return -1;
    for (i = 0; i < NIST_SEED_BYTES; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* The command line's values (NULL: not given). */
typedef struct {
    const char *lib, *format, *records, *out, *results_fd, *out_fd, *file, *helper, *start;
} options;

static void parse_argv(int argc, char **argv, options *o)
{
    static const struct {
        const char *flag;
        size_t at;
    } slots[] = {
        {"--lib", offsetof(options, lib)},
        {"--format", offsetof(options, format)},
        {"--records", offsetof(options, records)},
        {"--out", offsetof(options, out)},
        {"--results-fd", offsetof(options, results_fd)},
        {"--out-fd", offsetof(options, out_fd)},
        {"--file", offsetof(options, file)},
        {"--helper", offsetof(options, helper)},
        {"--start", offsetof(options, start)},
    };
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char **slot = NULL;
        size_t k;
        for (k = 0; k < sizeof slots / sizeof slots[0]; k++)
            if (strcmp(argv[i], slots[k].flag) == 0)
                slot = (const char **)((char *)o + slots[k].at);
        if (slot == NULL || *slot != NULL || i + 1 >= argc) {
            fprintf(stderr, "pqb-kat: unexpected or repeated argument '%s'\n", argv[i]);
            usage();
        }
        *slot = argv[++i];
        if (slot == &o->results_fd)
            sink_init(&g_res, channel("--results-fd", o->results_fd));
    }
    if (o->lib == NULL || o->format == NULL || o->records == NULL ||
        (o->out == NULL) == (o->out_fd == NULL))
        usage();
}

/* The format (*nist, *is_hash) and --start (g_start); usage errors exit. */
static void settle_format(const options *o, int *nist, int *is_hash)
{
    static unsigned char start[NIST_SEED_BYTES];
    *is_hash = 0;
    if (strcmp(o->format, "nist") == 0)
        *nist = 1;
    else if (strcmp(o->format, "ngcc") == 0)
        *nist = 0;
    else if (strcmp(o->format, "hash") == 0 && o->file != NULL)
        *nist = 0, *is_hash = 1;
    else {
        fprintf(stderr, "pqb-kat: unknown format '%s' (ngcc, nist, or hash with --file)\n",
                o->format);
        usage();
    }
    if (o->start == NULL)
        return;
    if (*is_hash) {
        fputs("pqb-kat: --start has no meaning for the hash format (its files start from "
              "their names)\n",
              stderr);
        usage();
    }
    if (parse_start(o->start, start) != 0) {
        fprintf(stderr, "pqb-kat: --start wants %d bytes as %d hex digits, not '%s'\n",
                NIST_SEED_BYTES, 2 * NIST_SEED_BYTES, o->start);
        usage();
    }
    g_start = start;
}

static unsigned long parse_records(const char *arg)
{
    char *end;
    unsigned long records;
    errno = 0;
    records = strtoul(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || records > MAX_RECORDS) {
        fprintf(stderr, "pqb-kat: --records wants a number from 0 to %lu, not '%s'\n",
                MAX_RECORDS, arg);
        usage();
    }
    return records;
}

/* The KAT file's stream; *shown names it in messages. NULL: cannot write. */
static FILE *open_kat(const options *o, const char **shown)
{
    FILE *kat;
    *shown = o->out;
    if (o->out_fd != NULL) {
        *shown = "the KAT channel";
        return channel("--out-fd", o->out_fd);
    }
    kat = fopen(o->out, "w");
    if (kat == NULL)
        fprintf(stderr, "pqb-kat: cannot write %s: %s\n", o->out, strerror(errno));
    return kat;
}

/* Forbids executable memory from here on and says whether it could. */
static void seal_exec(int seal_err)
{
    char seal[48];
    if (seal_err == 0)
        seal_err = pqb_seal_exec_mappings();
    if (seal_err == 0)
        snprintf(seal, sizeof seal, "on");
    else
        snprintf(seal, sizeof seal, "off:errno%d", seal_err);
    out_line("seal", seal);
}

/* CPU seconds of each operation's calls over all records (kept out of the
 * KAT log, which stays the same from run to run). */
static void costs(const run_state *r, int sign)
{
    static const char *const names[] = {"keygen", "sign", "verify", "enc", "dec"};
    char key[32], value[32];
    int k;
    for (k = 0; k < 5; k++) {
        if ((k == COST_SIGN || k == COST_VERIFY) != sign && k != COST_KEYGEN)
            continue;
        snprintf(key, sizeof key, "cost_%s_seconds", names[k]);
        snprintf(value, sizeof value, "%.6e", r->cost[k]);
        out_line(key, value);
    }
}

/* The API's figures and the longest (and shortest) outputs of a signature
 * or KEM. */
static void sign_kem_figures(const pqb_entry *e, const run_state *r)
{
    int sign = e->kind == PQB_KIND_SIGN;
    out_size("api_pk_bytes", e->pk_bytes);
    out_size("api_sk_bytes", e->sk_bytes);
    if (sign) {
        out_size("api_sig_bytes", e->sig_bytes);
    } else {
        out_size("api_ct_bytes", e->ct_bytes);
        out_size("api_ss_bytes", e->ss_bytes);
    }
    out_size("max_pk_len", r->max_pk);
    out_size("max_sk_len", r->max_sk);
    if (sign) {
        out_size("max_sig_len", r->max_sig);
        if (r->min_sig != (size_t)-1)
            out_size("min_sig_len", r->min_sig);
        out_size("sign_retries", r->sign_retries);
    } else {
        out_size("max_ct_len", r->max_ct);
        if (r->min_ct != (size_t)-1)
            out_size("min_ct_len", r->min_ct);
        out_size("max_ss_len", r->max_ss);
    }
    costs(r, sign);
}

/* The log's figures after the run, then its status and end line. */
static void report(const options *o, int nist, int is_hash, const run_state *r)
{
    const pqb_entry *e = r->e;
    char name[1024], hash[32];
    one_line(name, sizeof name, e->algname);
    out_line("algname", name);
    out_line("format", nist ? "nist" : is_hash ? "hash" : "ngcc");
    if (is_hash)
        out_line("file", o->file);
    out_size("records", r->records_written);
    if (e->kind == PQB_KIND_KEX)
        kex_print_figures(r);
    else if (e->kind == PQB_KIND_HASH)
        hash_print_figures(r);
    else
        sign_kem_figures(e, r);
    out_size("kat_bytes", (size_t)r->kat.bytes);
    snprintf(hash, sizeof hash, "%016llx", r->kat.fnv);
    out_line("kat_fnv1a64", hash);
    out_status(r->status, r->detail);
    out_end();
}

int main(int argc, char **argv)
{
    options o;
    unsigned long records;
    int nist, is_hash, seal_err;
    char why[1024];
    const char *shown;
    run_state r;
    const pqb_entry *e;
    FILE *kat;

    if (argc == 2 && strcmp(argv[1], "--drbg-selftest") == 0)
        return drbg_selftest();
    sink_init(&g_res, stdout);
    parse_argv(argc, argv, &o);
    settle_format(&o, &nist, &is_hash);
    records = parse_records(o.records);
    kat = open_kat(&o, &shown);
    if (kat == NULL)
        return 1;

    /* Before loading, so its constructors are bound too: no file can be
     * opened to write (see pqb_seal.h). */
    seal_err = pqb_seal_writes();
    e = load(o.lib, nist, is_hash, why, sizeof why);
    if (e == NULL) {
        out_status(ST_LOADFAIL, why);
        out_end();
        return 0;
    }
    seal_exec(seal_err);

    memset(&r, 0, sizeof r);
    r.e = e;
    r.status = ST_PASS;
    r.min_sig = (size_t)-1;
    r.min_ct = (size_t)-1;
    sink_init(&r.kat, kat);
    if (nist && e->drng_new != NULL)
        run_nist_submission_rng(&r, records);
    else if (nist)
        run_nist(&r, records);
    else if (is_hash)
        run_hash(&r, o.file, o.helper);
    else
        run_ngcc(&r, records);
    /* Flushed, not closed: the sandbox refuses to close a result channel
     * (the process's exit does). */
    if (ferror(r.kat.fp) || fflush(r.kat.fp) != 0) {
        fprintf(stderr, "pqb-kat: error writing %s\n", shown);
        return 1;
    }
    report(&o, nist, is_hash, &r);
    return 0;
}
