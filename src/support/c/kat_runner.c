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
 * Built by pqbench from this file, aes256.c and ctr_drbg.c, linked with -ldl.
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
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_drbg.h"
#include "pqb_entry.h"
#include "pqb_seal.h"

#define GUARD_BYTES 64
#define GUARD_FILL 0xA5
#define MAX_SIGN_ATTEMPTS 64
#define MAX_RECORDS 100000UL
#define NIST_SEED_BYTES 48
#define NGCC_SEED_BYTES 64

enum { ST_PASS = 0, ST_CRYPTOFAIL, ST_OVERFLOW, ST_LOADFAIL, ST_MISMATCH };

static const char *status_name(int st)
{
    switch (st) {
    case ST_PASS:
        return "PASS";
    case ST_CRYPTOFAIL:
        return "CRYPTOFAIL";
    case ST_OVERFLOW:
        return "OVERFLOW";
    case ST_MISMATCH:
        return "MISMATCH";
    default:
        return "LOADFAIL";
    }
}

/* ---- output sinks: a stream with its byte count and FNV-1a 64 hash ---- */

typedef struct {
    FILE *fp;
    unsigned long long bytes;
    unsigned long long fnv;
} sink;

static void sink_init(sink *k, FILE *fp)
{
    k->fp = fp;
    k->bytes = 0;
    k->fnv = 0xcbf29ce484222325ULL;
}

static void sink_write(sink *k, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        k->fnv ^= b[i];
        k->fnv *= 0x100000001b3ULL;
    }
    k->bytes += n;
    fwrite(p, 1, n, k->fp);
}

static void sink_printf(sink *k, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    sink_write(k, buf, (size_t)n);
}

/* ---- the results channel ---------------------------------------------- */

static sink g_res;

static void out_line(const char *key, const char *value)
{
    sink_printf(&g_res, "%s = %s\n", key, value);
    fflush(g_res.fp);
}

/* The channel's last line (not itself counted). */
static void out_end(void)
{
    fprintf(g_res.fp, "end bytes=%llu fnv1a64=%016llx\n", g_res.bytes, g_res.fnv);
    fflush(g_res.fp);
}

static void out_size(const char *key, size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    out_line(key, buf);
}

/* Copies s into dst (size n) replacing control characters, so that it fits
 * on one line. */
static void one_line(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    if (s == NULL)
        s = "(null)";
    for (; s[i] != '\0' && i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    dst[i] = '\0';
}

static void out_status(int st, const char *detail)
{
    out_line("status", status_name(st));
    if (st != ST_PASS) {
        char buf[1024];
        one_line(buf, sizeof buf, detail);
        out_line("detail", buf);
    }
}

/* ---- guarded buffers -------------------------------------------------- */

typedef struct {
    const char *name;
    unsigned char *base; /* GUARD_BYTES, cap data bytes, GUARD_BYTES */
    size_t cap;
} gbuf;

static unsigned char *gdata(const gbuf *b)
{
    return b->base + GUARD_BYTES;
}

static int galloc(gbuf *b, const char *name, size_t cap)
{
    b->name = name;
    b->cap = cap;
    b->base = NULL;
    if (cap > (size_t)-1 - 2 * GUARD_BYTES)
        return -1;
    b->base = (unsigned char *)malloc(cap + 2 * GUARD_BYTES);
    if (b->base == NULL)
        return -1;
    memset(b->base, GUARD_FILL, GUARD_BYTES);
    memset(b->base + GUARD_BYTES, 0, cap);
    memset(b->base + GUARD_BYTES + cap, GUARD_FILL, GUARD_BYTES);
    return 0;
}

static void gfree(gbuf *b)
{
    free(b->base);
    b->base = NULL;
}

/* 0 when intact, else -1 (guard before the data) or 1 (after). */
static int gcheck(const gbuf *b)
{
    size_t i;
    if (b->base == NULL)
        return 0;
    for (i = 0; i < GUARD_BYTES; i++)
        if (b->base[i] != GUARD_FILL)
            return -1;
    for (i = 0; i < GUARD_BYTES; i++)
        if (b->base[GUARD_BYTES + b->cap + i] != GUARD_FILL)
            return 1;
    return 0;
}

/* ---- run state -------------------------------------------------------- */

#define MAX_LIVE 32 /* a KEX: keys, states, secrets and 16 messages */

typedef struct {
    const pqb_entry *e;
    sink kat;
    int status;
    char detail[768];
    unsigned long record; /* current record */
    gbuf *live[MAX_LIVE]; /* buffers checked after every call */
    int nlive;
    size_t max_pk, max_sk, max_sig, max_ct, max_ss;
    /* Shortest signature and ciphertext (variable-length outputs). */
    size_t min_sig, min_ct;
    unsigned long sign_retries;
    unsigned long records_written;
} run_state;

/* Records the first failure only. */
static void fail(run_state *r, int st, const char *fmt, ...)
{
    va_list ap;
    if (r->status != ST_PASS)
        return;
    r->status = st;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

static int alloc_live(run_state *r, gbuf *b, const char *name, size_t cap)
{
    if (galloc(b, name, cap) != 0) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate %zu bytes for %s in record %lu", cap, name,
             r->record);
        return -1;
    }
    if (r->nlive < MAX_LIVE)
        r->live[r->nlive++] = b;
    return 0;
}

static void free_live(run_state *r)
{
    int i;
    for (i = 0; i < r->nlive; i++)
        gfree(r->live[i]);
    r->nlive = 0;
}

/* Verifies the guards of every live buffer after `call`; 0 when intact. */
static int check_guards(run_state *r, const char *call)
{
    int i, bad = 0;
    for (i = 0; i < r->nlive; i++) {
        int where = gcheck(r->live[i]);
        if (where != 0) {
            fail(r, ST_OVERFLOW,
                 "%s wrote into the guard bytes %s the %s buffer (%zu bytes) in record %lu", call,
                 where < 0 ? "before" : "after", r->live[i]->name, r->live[i]->cap, r->record);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* A returned length above the capacity is an overflow; returns the length
 * clamped to the capacity (what may be read back safely). */
static size_t check_len(run_state *r, const char *call, const char *what, size_t len, size_t cap)
{
    if (len > cap) {
        fail(r, ST_OVERFLOW, "%s returned %s length %zu above the API figure %zu in record %lu",
             call, what, len, cap, r->record);
        return cap;
    }
    return len;
}

static void note_max(size_t *m, size_t v)
{
    if (v > *m)
        *m = v;
}

static void note_min(size_t *m, size_t v)
{
    if (v < *m)
        *m = v;
}

/* ---- KAT file --------------------------------------------------------- */

static void kat_hex(sink *f, const char *name, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789ABCDEF";
    char buf[512];
    size_t i, k = 0;
    sink_printf(f, "%s = ", name);
    if (n == 0)
        sink_write(f, "00", 2);
    for (i = 0; i < n; i++) {
        buf[k++] = digits[p[i] >> 4];
        buf[k++] = digits[p[i] & 15];
        if (k == sizeof buf) {
            sink_write(f, buf, k);
            k = 0;
        }
    }
    sink_write(f, buf, k);
    sink_write(f, "\n", 1);
}

static void kat_num(sink *f, const char *name, unsigned long long v)
{
    sink_printf(f, "%s = %llu\n", name, v);
}

/* ---- one record ------------------------------------------------------- */

/* Signs with up to MAX_SIGN_ATTEMPTS attempts; returns 0 on success. */
static int sign_with_retries(run_state *r, gbuf *sig, size_t *sig_len, const gbuf *msg,
                             const gbuf *sk, size_t sk_len)
{
    int attempt, rc = -1;
    for (attempt = 1; attempt <= MAX_SIGN_ATTEMPTS; attempt++) {
        *sig_len = sig->cap;
        rc = r->e->sign(gdata(sig), sig_len, gdata(msg), msg->cap, gdata(sk), sk_len);
        check_guards(r, "sign");
        if (rc == 0)
            return 0;
        if (attempt < MAX_SIGN_ATTEMPTS)
            r->sign_retries++;
    }
    fail(r, ST_CRYPTOFAIL, "sign failed %d times (last return %d) in record %lu", MAX_SIGN_ATTEMPTS,
         rc, r->record);
    return -1;
}

/* Keygen into fresh pk/sk buffers. */
static int do_keygen(run_state *r, gbuf *pk, size_t *pk_len, gbuf *sk, size_t *sk_len)
{
    int rc;
    *pk_len = pk->cap;
    *sk_len = sk->cap;
    rc = r->e->keygen(gdata(pk), pk_len, gdata(sk), sk_len);
    check_guards(r, "keygen");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "keygen returned %d in record %lu", rc, r->record);
        return -1;
    }
    note_max(&r->max_pk, *pk_len);
    note_max(&r->max_sk, *sk_len);
    *pk_len = check_len(r, "keygen", "pk", *pk_len, pk->cap);
    *sk_len = check_len(r, "keygen", "sk", *sk_len, sk->cap);
    return 0;
}

/* The signature checks, after the record's lines were written. */
static void check_signature(run_state *r, const gbuf *sig, size_t sig_len, const gbuf *msg,
                            gbuf *flipped, const gbuf *pk, size_t pk_len)
{
    int rc = r->e->verify(gdata(sig), sig_len, gdata(msg), msg->cap, gdata(pk), pk_len);
    check_guards(r, "verify");
    if (rc == PQB_VERIFY_SCRATCH_OVERFLOW && r->e->api == PQB_API_NIST)
        fail(r, ST_OVERFLOW,
             "crypto_sign_open (verify) overflowed its scratch message buffer in record %lu",
             r->record);
    else if (rc != 0)
        fail(r, ST_CRYPTOFAIL, "verify rejected the honest signature (returned %d) in record %lu",
             rc, r->record);

    memcpy(gdata(flipped), gdata(msg), msg->cap);
    if (flipped->cap > 0)
        gdata(flipped)[0] ^= 1;
    rc = r->e->verify(gdata(sig), sig_len, gdata(flipped), flipped->cap, gdata(pk), pk_len);
    check_guards(r, "verify");
    if (rc == PQB_VERIFY_SCRATCH_OVERFLOW && r->e->api == PQB_API_NIST)
        fail(r, ST_OVERFLOW,
             "crypto_sign_open (verify) overflowed its scratch message buffer in record %lu",
             r->record);
    else if (rc == 0)
        fail(r, ST_CRYPTOFAIL,
             "verify accepted the signature on the message with bit 0 of byte 0 flipped in record %lu",
             r->record);
}

/* Signature record. nist: NIST .rsp fields; else NGCC fields. The seed and
 * the message are given; entry->seed() has not been called yet. */
static void sign_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len,
                        const unsigned char *m, size_t mlen)
{
    const pqb_entry *e = r->e;
    sink *f = &r->kat;
    gbuf pk, sk, msg, flipped, sig;
    size_t pk_len, sk_len, sig_len, sig_cap;
    int rc;

    if (nist) {
        kat_num(f, "count", r->record);
        kat_hex(f, "seed", seed, seed_len);
        kat_num(f, "mlen", mlen);
        kat_hex(f, "msg", m, mlen);
    } else {
        kat_num(f, "Count", r->record);
        kat_num(f, "Seed_Len", seed_len);
        kat_hex(f, "Seed", seed, seed_len);
    }

    sig_cap = e->sig_bytes;
    if (e->sig_attached)
        sig_cap = sig_cap > (size_t)-1 - mlen ? (size_t)-1 : sig_cap + mlen;
    if (alloc_live(r, &pk, "pk", e->pk_bytes) || alloc_live(r, &sk, "sk", e->sk_bytes) ||
        alloc_live(r, &msg, "msg", mlen) || alloc_live(r, &flipped, "flipped msg", mlen) ||
        alloc_live(r, &sig, e->sig_attached ? "sm" : "signature", sig_cap))
        goto out;
    memcpy(gdata(&msg), m, mlen);

    rc = e->seed(seed, seed_len);
    check_guards(r, "seed");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "seeding the DRNG with %zu bytes returned %d in record %lu",
             seed_len, rc, r->record);
        goto out;
    }
    if (do_keygen(r, &pk, &pk_len, &sk, &sk_len) != 0)
        goto out;
    if (!nist) {
        kat_num(f, "PK_Len", pk_len);
        kat_hex(f, "PK", gdata(&pk), pk_len);
        kat_num(f, "SK_Len", sk_len);
        kat_hex(f, "SK", gdata(&sk), sk_len);
        kat_num(f, "M_Len", mlen);
        kat_hex(f, "M", m, mlen);
    } else {
        kat_hex(f, "pk", gdata(&pk), pk_len);
        kat_hex(f, "sk", gdata(&sk), sk_len);
    }

    if (sign_with_retries(r, &sig, &sig_len, &msg, &sk, sk_len) != 0)
        goto out;
    if (e->sig_attached) {
        note_max(&r->max_sig, sig_len >= mlen ? sig_len - mlen : 0);
        note_min(&r->min_sig, sig_len >= mlen ? sig_len - mlen : 0);
    } else {
        note_max(&r->max_sig, sig_len);
        note_min(&r->min_sig, sig_len);
    }
    kat_num(f, nist ? "smlen" : "Sn_Len", sig_len);
    sig_len = check_len(r, "sign", e->sig_attached ? "sm" : "signature", sig_len, sig.cap);
    kat_hex(f, nist ? "sm" : "Sn", gdata(&sig), sig_len);
    sink_write(f, "\n", 1);
    r->records_written++;

    check_signature(r, &sig, sig_len, &msg, &flipped, &pk, pk_len);
out:
    free_live(r);
}

/* KEM record. */
static void kem_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len)
{
    const pqb_entry *e = r->e;
    sink *f = &r->kat;
    gbuf pk, sk, ct, ss, ss2;
    size_t pk_len, sk_len, ct_len, ss_len, ss2_len;
    int rc;

    if (nist) {
        kat_num(f, "count", r->record);
        kat_hex(f, "seed", seed, seed_len);
    } else {
        kat_num(f, "Count", r->record);
        kat_num(f, "Seed_Len", seed_len);
        kat_hex(f, "Seed", seed, seed_len);
    }

    if (alloc_live(r, &pk, "pk", e->pk_bytes) || alloc_live(r, &sk, "sk", e->sk_bytes) ||
        alloc_live(r, &ct, "ct", e->ct_bytes) || alloc_live(r, &ss, "ss", e->ss_bytes) ||
        alloc_live(r, &ss2, "decapsulated ss", e->ss_bytes))
        goto out;

    rc = e->seed(seed, seed_len);
    check_guards(r, "seed");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "seeding the DRNG with %zu bytes returned %d in record %lu",
             seed_len, rc, r->record);
        goto out;
    }
    if (do_keygen(r, &pk, &pk_len, &sk, &sk_len) != 0)
        goto out;
    if (nist) {
        kat_hex(f, "pk", gdata(&pk), pk_len);
        kat_hex(f, "sk", gdata(&sk), sk_len);
    } else {
        kat_num(f, "PK_Len", pk_len);
        kat_hex(f, "PK", gdata(&pk), pk_len);
        kat_num(f, "SK_Len", sk_len);
        kat_hex(f, "SK", gdata(&sk), sk_len);
    }

    ct_len = ct.cap;
    ss_len = ss.cap;
    rc = e->enc(gdata(&ct), &ct_len, gdata(&ss), &ss_len, gdata(&pk), pk_len);
    check_guards(r, "enc");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "enc returned %d in record %lu", rc, r->record);
        goto out;
    }
    note_max(&r->max_ct, ct_len);
    note_min(&r->min_ct, ct_len);
    note_max(&r->max_ss, ss_len);
    if (nist) {
        ct_len = check_len(r, "enc", "ct", ct_len, ct.cap);
        ss_len = check_len(r, "enc", "ss", ss_len, ss.cap);
        kat_hex(f, "ct", gdata(&ct), ct_len);
        kat_hex(f, "ss", gdata(&ss), ss_len);
    } else {
        kat_num(f, "CT_Len", ct_len);
        ct_len = check_len(r, "enc", "ct", ct_len, ct.cap);
        kat_hex(f, "CT", gdata(&ct), ct_len);
        kat_num(f, "SS_Len", ss_len);
        ss_len = check_len(r, "enc", "ss", ss_len, ss.cap);
        kat_hex(f, "SS", gdata(&ss), ss_len);
    }
    sink_write(f, "\n", 1);
    r->records_written++;

    /* The checks. */
    ss2_len = ss2.cap;
    rc = e->dec(gdata(&ss2), &ss2_len, gdata(&ct), ct_len, gdata(&sk), sk_len);
    check_guards(r, "dec");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "dec returned %d in record %lu", rc, r->record);
        goto out;
    }
    note_max(&r->max_ss, ss2_len);
    ss2_len = check_len(r, "dec", "ss", ss2_len, ss2.cap);
    if (ss2_len != ss_len)
        fail(r, ST_CRYPTOFAIL,
             "dec returned a shared secret of %zu bytes, enc one of %zu bytes in record %lu",
             ss2_len, ss_len, r->record);
    else if (ss_len != 0 && memcmp(gdata(&ss), gdata(&ss2), ss_len) != 0)
        fail(r, ST_CRYPTOFAIL, "dec returned a different shared secret than enc in record %lu",
             r->record);
out:
    free_live(r);
}

/* ---- key exchange and hash (same translation unit) ---------------------- */

#include "kat_kex.c"
#include "kat_hash.c"

/* ---- the two formats -------------------------------------------------- */

/* The 48-byte start given with --start, or NULL for the fixed one. */
static const unsigned char *g_start;

/* The NIST entropy input: the --start value, else 0x00..0x2f. */
static void start_entropy(unsigned char entropy[NIST_SEED_BYTES])
{
    unsigned i;
    for (i = 0; i < NIST_SEED_BYTES; i++)
        entropy[i] = g_start != NULL ? g_start[i] : (unsigned char)i;
}

static void master_init(pqb_ctr_drbg *d)
{
    unsigned char entropy[NIST_SEED_BYTES];
    start_entropy(entropy);
    pqb_ctr_drbg_init(d, entropy, NULL);
}

/* Most bytes the master stream of the submission's own RNG may take in
 * memory (seeds and messages of every record, drawn before the first). */
#define MAX_MASTER_BYTES (512UL * 1024 * 1024)

/*
 * NIST PQCgenKAT with the submission's own KAT RNG (the library's drng_*
 * functions): the classic generator seeds that RNG with entropy 0x00..0x2f,
 * draws every count's seed (and, for signatures, right after it the
 * message) into its .req file, and only then runs the counts, re-seeding
 * the same RNG with each seed. One global state serves both, so the whole
 * master stream is drawn first here too.
 */
static void run_nist_submission_rng(run_state *r, unsigned long records)
{
    const pqb_entry *e = r->e;
    int sign = e->kind == PQB_KIND_SIGN;
    unsigned char entropy[NIST_SEED_BYTES];
    unsigned char *stream = NULL;
    size_t total = 0, at = 0, i;
    void *master;
    char name[1024];

    /* Seeds, plus messages of 33 x (count + 1) bytes for signatures. */
    for (i = 0; i < records; i++) {
        total += NIST_SEED_BYTES + (sign ? 33 * (i + 1) : 0);
        if (total > MAX_MASTER_BYTES) {
            fail(r, ST_CRYPTOFAIL,
                 "the master stream of %lu records exceeds %lu bytes: check fewer records",
                 records, MAX_MASTER_BYTES);
            return;
        }
    }
    one_line(name, sizeof name, e->algname);
    sink_printf(&r->kat, "# %s\n\n", name);
    if (records == 0)
        return;
    stream = (unsigned char *)malloc(total);
    if (stream == NULL) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte master stream", total);
        return;
    }
    start_entropy(entropy);
    master = e->drng_new(entropy, sizeof entropy);
    if (master == NULL) {
        fail(r, ST_CRYPTOFAIL, "seeding the submission's KAT RNG failed");
        free(stream);
        return;
    }
    for (i = 0; i < records; i++) {
        size_t mlen = sign ? 33 * (i + 1) : 0;
        if (e->drng_draw(master, stream + at, NIST_SEED_BYTES) != 0 ||
            (mlen > 0 && e->drng_draw(master, stream + at + NIST_SEED_BYTES, mlen) != 0)) {
            fail(r, ST_CRYPTOFAIL, "drawing the master stream of record %lu failed",
                 (unsigned long)i);
            break;
        }
        at += NIST_SEED_BYTES + mlen;
    }
    e->drng_free(master);
    at = 0;
    for (r->record = 0; r->status == ST_PASS && r->record < records; r->record++) {
        size_t mlen = sign ? 33 * (size_t)(r->record + 1) : 0;
        if (sign)
            sign_record(r, 1, stream + at, NIST_SEED_BYTES, stream + at + NIST_SEED_BYTES, mlen);
        else
            kem_record(r, 1, stream + at, NIST_SEED_BYTES);
        at += NIST_SEED_BYTES + mlen;
    }
    free(stream);
}

/*
 * NIST PQCgenKAT: the reference first draws every count's seed (and, for
 * signatures, right after it the message) from the master DRBG, then runs
 * the counts. The master DRBG here is the runner's own, untouched by the
 * library, so drawing each count's seed and message just before running it
 * consumes the same stream in the same order and gives the same bytes,
 * without holding every message (33 x N^2 / 2 bytes) in memory.
 */
static void run_nist(run_state *r, unsigned long records)
{
    pqb_ctr_drbg master;
    unsigned char seed[NIST_SEED_BYTES];
    unsigned char *msg = NULL;
    char name[1024];

    one_line(name, sizeof name, r->e->algname);
    sink_printf(&r->kat, "# %s\n\n", name);
    master_init(&master);
    for (r->record = 0; r->record < records; r->record++) {
        pqb_ctr_drbg_generate(&master, seed, sizeof seed);
        if (r->e->kind == PQB_KIND_SIGN) {
            size_t mlen = 33 * (size_t)(r->record + 1);
            unsigned char *m2 = (unsigned char *)realloc(msg, mlen);
            if (m2 == NULL) {
                fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte message of record %lu", mlen,
                     r->record);
                break;
            }
            msg = m2;
            pqb_ctr_drbg_generate(&master, msg, mlen);
            sign_record(r, 1, seed, sizeof seed, msg, mlen);
        } else {
            kem_record(r, 1, seed, sizeof seed);
        }
        if (r->status != ST_PASS)
            break;
    }
    free(msg);
}

/* NGCC KAT_SIG.c / KAT_KEM.c. */
static void run_ngcc(run_state *r, unsigned long records)
{
    const pqb_entry *e = r->e;
    unsigned char nonce[NGCC_SEED_BYTES];
    unsigned char seed[NGCC_SEED_BYTES];
    unsigned char *msg = NULL;
    void *seed_drng = NULL, *msg_drng = NULL;
    int rc;
    unsigned i;

    for (i = 0; i < 16; i++)
        memcpy(nonce + 4 * i, "seed", 4);
    if (g_start != NULL)
        memcpy(nonce, g_start, NIST_SEED_BYTES);
    seed_drng = e->drng_new(nonce, sizeof nonce);
    if (seed_drng == NULL) {
        fail(r, ST_CRYPTOFAIL, "initialising the seed DRNG failed");
        return;
    }
    if (e->kind == PQB_KIND_SIGN) {
        for (i = 0; i < 21; i++)
            memcpy(nonce + 3 * i, "msg", 3);
        nonce[63] = 'm';
        if (g_start != NULL)
            memcpy(nonce, g_start, NIST_SEED_BYTES);
        msg_drng = e->drng_new(nonce, sizeof nonce);
        if (msg_drng == NULL) {
            fail(r, ST_CRYPTOFAIL, "initialising the message DRNG failed");
            e->drng_free(seed_drng);
            return;
        }
    }

    if (e->kind == PQB_KIND_KEX && kex_check_table(r) != 0)
        records = 0;
    for (r->record = 0; r->record < records; r->record++) {
        rc = e->drng_draw(seed_drng, seed, sizeof seed);
        if (rc != 0) {
            fail(r, ST_CRYPTOFAIL, "drawing the seed of record %lu returned %d", r->record, rc);
            break;
        }
        if (e->kind == PQB_KIND_SIGN) {
            size_t mlen = 56 + 8 * (size_t)r->record;
            unsigned char *m2 = (unsigned char *)realloc(msg, mlen);
            if (m2 == NULL) {
                fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte message of record %lu", mlen,
                     r->record);
                break;
            }
            msg = m2;
            rc = e->drng_draw(msg_drng, msg, mlen);
            if (rc != 0) {
                fail(r, ST_CRYPTOFAIL, "drawing the message of record %lu returned %d",
                     r->record, rc);
                break;
            }
            sign_record(r, 0, seed, sizeof seed, msg, mlen);
        } else if (e->kind == PQB_KIND_KEX) {
            kex_record(r, seed, sizeof seed);
        } else {
            kem_record(r, 0, seed, sizeof seed);
        }
        if (r->status != ST_PASS)
            break;
    }
    free(msg);
    e->drng_free(seed_drng);
    if (msg_drng != NULL)
        e->drng_free(msg_drng);
}

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
    if (e->kind != PQB_KIND_SIGN && e->kind != PQB_KIND_KEM && e->kind != PQB_KIND_KEX &&
        e->kind != PQB_KIND_HASH) {
        snprintf(why, why_len, "%s: entry table kind %d is not sign, kem, kex or hash", lib,
                 e->kind);
        return NULL;
    }
    if ((hash != 0) != (e->kind == PQB_KIND_HASH)) {
        snprintf(why, why_len, "%s: the hash format and the library's kind disagree", lib);
        return NULL;
    }
    if (e->seed == NULL ||
        ((e->kind == PQB_KIND_SIGN || e->kind == PQB_KIND_KEM) && e->keygen == NULL) ||
        (e->kind == PQB_KIND_SIGN && (e->sign == NULL || e->verify == NULL)) ||
        (e->kind == PQB_KIND_KEM && (e->enc == NULL || e->dec == NULL))) {
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
    FILE *f;
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

int main(int argc, char **argv)
{
    const char *lib = NULL, *format = NULL, *records_arg = NULL, *out = NULL;
    const char *results_fd = NULL, *out_fd = NULL, *file = NULL, *helper = NULL;
    const char *start_arg = NULL;
    static unsigned char start[NIST_SEED_BYTES];
    unsigned long records;
    char *end;
    int nist, is_hash = 0, i, seal_err;
    char why[1024];
    char name[1024];
    char hash[32];
    run_state r;
    const pqb_entry *e;
    FILE *kat;

    if (argc == 2 && strcmp(argv[1], "--drbg-selftest") == 0)
        return drbg_selftest();
    sink_init(&g_res, stdout);
    for (i = 1; i < argc; i++) {
        const char **slot = NULL;
        if (strcmp(argv[i], "--lib") == 0)
            slot = &lib;
        else if (strcmp(argv[i], "--format") == 0)
            slot = &format;
        else if (strcmp(argv[i], "--records") == 0)
            slot = &records_arg;
        else if (strcmp(argv[i], "--out") == 0)
            slot = &out;
        else if (strcmp(argv[i], "--results-fd") == 0)
            slot = &results_fd;
        else if (strcmp(argv[i], "--out-fd") == 0)
            slot = &out_fd;
        else if (strcmp(argv[i], "--file") == 0)
            slot = &file;
        else if (strcmp(argv[i], "--helper") == 0)
            slot = &helper;
        else if (strcmp(argv[i], "--start") == 0)
            slot = &start_arg;
        if (slot == NULL || *slot != NULL || i + 1 >= argc) {
            fprintf(stderr, "pqb-kat: unexpected or repeated argument '%s'\n", argv[i]);
            usage();
        }
        *slot = argv[++i];
        if (slot == &results_fd)
            sink_init(&g_res, channel("--results-fd", results_fd));
    }
    if (lib == NULL || format == NULL || records_arg == NULL || (out == NULL) == (out_fd == NULL))
        usage();
    if (strcmp(format, "nist") == 0)
        nist = 1;
    else if (strcmp(format, "ngcc") == 0)
        nist = 0;
    else if (strcmp(format, "hash") == 0 && file != NULL)
        nist = 0, is_hash = 1;
    else {
        fprintf(stderr, "pqb-kat: unknown format '%s' (ngcc, nist, or hash with --file)\n",
                format);
        usage();
    }
    if (start_arg != NULL) {
        if (is_hash) {
            fputs("pqb-kat: --start has no meaning for the hash format (its files start from "
                  "their names)\n",
                  stderr);
            usage();
        }
        if (parse_start(start_arg, start) != 0) {
            fprintf(stderr, "pqb-kat: --start wants %d bytes as %d hex digits, not '%s'\n",
                    NIST_SEED_BYTES, 2 * NIST_SEED_BYTES, start_arg);
            usage();
        }
        g_start = start;
    }
    errno = 0;
    records = strtoul(records_arg, &end, 10);
    if (errno != 0 || end == records_arg || *end != '\0' || records_arg[0] == '-' ||
        records > MAX_RECORDS) {
        fprintf(stderr, "pqb-kat: --records wants a number from 0 to %lu, not '%s'\n",
                MAX_RECORDS, records_arg);
        usage();
    }
    if (out_fd != NULL) {
        kat = channel("--out-fd", out_fd);
        out = "the KAT channel";
    } else {
        kat = fopen(out, "w");
        if (kat == NULL) {
            fprintf(stderr, "pqb-kat: cannot write %s: %s\n", out, strerror(errno));
            return 1;
        }
    }

    /* Before loading, so its constructors are bound too: no file can be
     * opened to write (see pqb_seal.h). */
    seal_err = pqb_seal_writes();
    e = load(lib, nist, is_hash, why, sizeof why);
    if (e == NULL) {
        out_status(ST_LOADFAIL, why);
        out_end();
        return 0;
    }
    /* From here on the library cannot create executable memory. */
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
        run_hash(&r, file, helper);
    else
        run_ngcc(&r, records);
    /* Flushed, not closed: the sandbox refuses to close a result channel
     * (the process's exit does). */
    if (ferror(r.kat.fp) || fflush(r.kat.fp) != 0) {
        fprintf(stderr, "pqb-kat: error writing %s\n", out);
        return 1;
    }

    one_line(name, sizeof name, e->algname);
    out_line("algname", name);
    out_line("format", nist ? "nist" : is_hash ? "hash" : "ngcc");
    if (is_hash)
        out_line("file", file);
    out_size("records", r.records_written);
    if (e->kind == PQB_KIND_KEX)
        kex_print_figures(&r);
    else if (e->kind == PQB_KIND_HASH)
        hash_print_figures(&r);
    else {
    out_size("api_pk_bytes", e->pk_bytes);
    out_size("api_sk_bytes", e->sk_bytes);
    if (e->kind == PQB_KIND_SIGN) {
        out_size("api_sig_bytes", e->sig_bytes);
    } else {
        out_size("api_ct_bytes", e->ct_bytes);
        out_size("api_ss_bytes", e->ss_bytes);
    }
    out_size("max_pk_len", r.max_pk);
    out_size("max_sk_len", r.max_sk);
    if (e->kind == PQB_KIND_SIGN) {
        out_size("max_sig_len", r.max_sig);
        if (r.min_sig != (size_t)-1)
            out_size("min_sig_len", r.min_sig);
        out_size("sign_retries", r.sign_retries);
    } else {
        out_size("max_ct_len", r.max_ct);
        if (r.min_ct != (size_t)-1)
            out_size("min_ct_len", r.min_ct);
        out_size("max_ss_len", r.max_ss);
    }
    }
    out_size("kat_bytes", (size_t)r.kat.bytes);
    snprintf(hash, sizeof hash, "%016llx", r.kat.fnv);
    out_line("kat_fnv1a64", hash);
    out_status(r.status, r.detail);
    out_end();
    return 0;
}
