/*
 * kat_hash.c - the hash KATs of pqb-kat, one file per run (--file NAME),
 * and the ICCS baseline's self-check (--file KAT_ICCS).
 *
 * Every file's message DRNG is the library's own, seeded with the file
 * name's first 8 characters repeated 8 times (64 bytes):
 *  KAT_2_12  every length 0..4096 bits: Msg_Len, Msg (last byte masked to
 *            its high bits), Dst_Len, Dst;
 *  KAT_2_23  three 2^23-bit messages, all zero, all one, and random (from
 *            a DRNG seeded with 64 bytes drawn from the file's DRNG):
 *            Msg_Len, Msg_Seed (empty for the first two), Msg_Exp (first
 *            8 bytes .... last 8 bytes), Dst_Len, Dst;
 *  KAT_2_33  the same at 2^33 bits (1 GiB of memory);
 *  KAT_Loop  one 2^13-bit message m, d = H(m), then 10^6 times: rotate m
 *            left by the digest's bytes, xor d into m's head, d = H(m):
 *            Msg_Len, Msg, Loop, Dst_Len, Dst (the last digest).
 * Every CryptHash call writes into a digest buffer between guard bytes:
 * touching one is OVERFLOW, naming the Msg_Len; a nonzero return is
 * CRYPTOFAIL.
 *
 * KAT_ICCS (baseline instances, which wrap an ICCS helper as CryptHash):
 * the component's sm3hash must give GB/T 32905's two published digests;
 * then 257 records of byte lengths 0..256 from the DRNG ("KAT_ICCS" x 8),
 * each checked, for pseudoXOF, against KDF-SM3 counter mode computed from
 * that checked sm3hash (sm3hash itself against the SM3 digest it gives;
 * pseudohash has no published definition and is only recorded).
 */

#include "kat_runner.h"

#define HASH_NONCE 64

typedef struct {
    size_t max_digest;
} hash_figures;

static hash_figures g_hash;

static size_t digest_bytes(const pqb_entry *e)
{
    return (e->digest_bits + 7) / 8;
}

/* One CryptHash call into `dst` (guarded, digest_bytes); 0 on success. */
static int hash_call(run_state *r, const unsigned char *m, unsigned long long bits, gbuf *dst)
{
    int rc;
    memset(gdata(dst), 0, dst->cap);
    rc = r->e->hash(m, bits, gdata(dst));
    if (gcheck(dst) != 0) {
        fail(r, ST_OVERFLOW,
             "CryptHash wrote past its %zu-byte digest (guard bytes %s it touched) at Msg_Len = "
             "%llu",
             dst->cap, gcheck(dst) < 0 ? "before" : "after", bits);
        return -1;
    }
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "CryptHash returned %d at Msg_Len = %llu", rc, bits);
        return -1;
    }
    note_max(&g_hash.max_digest, dst->cap);
    return 0;
}

static void *hash_drng(run_state *r, const char *file)
{
    unsigned char nonce[HASH_NONCE];
    size_t i, n = strlen(file) < 8 ? strlen(file) : 8;
    void *d;
    if (n == 0)
        n = 1;
    for (i = 0; i < HASH_NONCE; i++)
        nonce[i] = (unsigned char)file[i % n];
    d = r->e->drng_new(nonce, sizeof nonce);
    if (d == NULL)
        fail(r, ST_CRYPTOFAIL, "initialising the message DRNG of %s failed", file);
    return d;
}

static int hash_draw(run_state *r, void *d, unsigned char *out, size_t n)
{
    int rc = n == 0 ? 0 : r->e->drng_draw(d, out, n);
    if (rc != 0)
        fail(r, ST_CRYPTOFAIL, "the message DRNG returned %d", rc);
    return rc;
}

static void hash_dst(sink *f, const pqb_entry *e, const gbuf *dst)
{
    kat_num(f, "Dst_Len", (unsigned long long)e->digest_bits);
    kat_hex(f, "Dst", gdata(dst), dst->cap);
}

/* KAT_2_12: every length 0..4096 bits. */
static void hash_short(run_state *r, void *d)
{
    gbuf dst;
    unsigned char m[512];
    unsigned long long bits;
    if (galloc(&dst, "digest", digest_bytes(r->e)) != 0) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate the digest");
        return;
    }
    for (bits = 0; bits <= 4096 && r->status == ST_PASS; bits++) {
        size_t n = (size_t)((bits + 7) / 8);
        r->record = (unsigned long)bits;
        if (hash_draw(r, d, m, n) != 0)
            break;
        if (bits % 8)
            m[n - 1] &= (unsigned char)(0xFF00u >> (bits % 8));
        if (hash_call(r, m, bits, &dst) != 0)
            break;
        kat_num(&r->kat, "Msg_Len", bits);
        kat_hex(&r->kat, "Msg", m, n);
        hash_dst(&r->kat, r->e, &dst);
        sink_write(&r->kat, "\n", 1);
        r->records_written++;
    }
    gfree(&dst);
}

static void hex8(sink *f, const unsigned char *p)
{
    int i;
    for (i = 0; i < 8; i++)
        sink_printf(f, "%02X", p[i]);
}

/* KAT_2_23 / KAT_2_33: three messages of 2^log2 bits. */
static void hash_long(run_state *r, void *d, int log2)
{
    size_t n = (size_t)1 << (log2 - 3);
    unsigned char seed[HASH_NONCE];
    unsigned char *m = (unsigned char *)malloc(n);
    gbuf dst;
    int which;
    if (m == NULL || galloc(&dst, "digest", digest_bytes(r->e)) != 0) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate a %zu-byte message", n);
        free(m);
        return;
    }
    for (which = 0; which < 3 && r->status == ST_PASS; which++) {
        r->record = (unsigned long)which;
        if (which < 2) {
            memset(m, which == 0 ? 0x00 : 0xFF, n);
        } else {
            void *md;
            if (hash_draw(r, d, seed, sizeof seed) != 0)
                break;
            md = r->e->drng_new(seed, sizeof seed);
            if (md == NULL) {
                fail(r, ST_CRYPTOFAIL, "initialising the DRNG of the random message failed");
                break;
            }
            which = hash_draw(r, md, m, n) != 0 ? 3 : which;
            r->e->drng_free(md);
            if (which == 3)
                break;
        }
        if (hash_call(r, m, (unsigned long long)n * 8, &dst) != 0)
            break;
        kat_num(&r->kat, "Msg_Len", (unsigned long long)n * 8);
        if (which < 2)
            sink_printf(&r->kat, "Msg_Seed = \n");
        else
            kat_hex(&r->kat, "Msg_Seed", seed, sizeof seed);
        sink_printf(&r->kat, "Msg_Exp = ");
        hex8(&r->kat, m);
        sink_printf(&r->kat, " .... ");
        hex8(&r->kat, m + n - 8);
        sink_printf(&r->kat, "\n");
        hash_dst(&r->kat, r->e, &dst);
        sink_write(&r->kat, "\n", 1);
        r->records_written++;
    }
    gfree(&dst);
    free(m);
}

#define LOOP_MSG_BYTES 1024
#define LOOP_ITERATIONS 1000000UL

/* KAT_Loop: 10^6 chained hashes of a 2^13-bit message. */
static void hash_loop(run_state *r, void *d)
{
    unsigned char m[LOOP_MSG_BYTES], first[LOOP_MSG_BYTES], tmp[LOOP_MSG_BYTES];
    size_t db = digest_bytes(r->e), rot = db % LOOP_MSG_BYTES, i;
    size_t head = db < LOOP_MSG_BYTES ? db : LOOP_MSG_BYTES;
    unsigned long it;
    gbuf dst;
    if (galloc(&dst, "digest", db) != 0) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate the digest");
        return;
    }
    r->record = 0;
    if (hash_draw(r, d, m, sizeof m) != 0 || hash_call(r, m, 8 * sizeof m, &dst) != 0)
        goto out;
    memcpy(first, m, sizeof m);
    for (it = 0; it < LOOP_ITERATIONS; it++) {
        memcpy(tmp, m + rot, sizeof m - rot);
        memcpy(tmp + sizeof m - rot, m, rot);
        for (i = 0; i < head; i++)
            tmp[i] ^= gdata(&dst)[i];
        memcpy(m, tmp, sizeof m);
        if (hash_call(r, m, 8 * sizeof m, &dst) != 0)
            goto out;
    }
    kat_num(&r->kat, "Msg_Len", 8 * sizeof m);
    kat_hex(&r->kat, "Msg", first, sizeof first);
    kat_num(&r->kat, "Loop", LOOP_ITERATIONS);
    hash_dst(&r->kat, r->e, &dst);
    sink_write(&r->kat, "\n", 1);
    r->records_written++;
out:
    gfree(&dst);
}

/* ---- the ICCS baseline's self-check -------------------------------- */

static int iccs_hex_is(const unsigned char *p, const char *hex)
{
    size_t i;
    for (i = 0; hex[2 * i]; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1 || p[i] != (unsigned char)v)
            return 0;
    }
    return 1;
}

/* KDF-SM3 counter mode from the component's (checked) sm3hash. */
static int iccs_kdf_model(const pqb_entry *e, const unsigned char *m, size_t n, unsigned char *out,
                          size_t out_bytes)
{
    unsigned char buf[256 + 4], block[32];
    unsigned long ctr = 1;
    size_t done = 0;
    if (n > 256)
        return -1;
    memcpy(buf, m, n);
    while (done < out_bytes) {
        size_t take = out_bytes - done < 32 ? out_bytes - done : 32;
        buf[n] = (unsigned char)(ctr >> 24), buf[n + 1] = (unsigned char)(ctr >> 16);
        buf[n + 2] = (unsigned char)(ctr >> 8), buf[n + 3] = (unsigned char)ctr;
        if (e->iccs_sm3(buf, 8ULL * (n + 4), block) != 0)
            return -1;
        memcpy(out + done, block, take);
        done += take;
        ctr++;
    }
    return 0;
}

static void iccs_selfcheck(run_state *r, void *d, const char *helper)
{
    static const char *const gbt[2][2] = {
        {"616263", "66C7F0F462EEEDD9D1F2D46BDC10E4E24167C4875CF2F7A2297DA02B8F4BA8E0"},
        {"6162636461626364616263646162636461626364616263646162636461626364"
         "6162636461626364616263646162636461626364616263646162636461626364",
         "DEBE9FF92275B8A138604889C18E5A4D6FDB70E5387E5765293DCBA39C0C5732"}};
    unsigned char m[256], out[32], model[8192];
    size_t db = digest_bytes(r->e), n, i;
    gbuf dst;
    int pseudo_xof = strcmp(helper, "pseudoXOF") == 0, sm3 = strcmp(helper, "sm3hash") == 0;
    if (r->e->iccs_sm3 == NULL || db > sizeof model || galloc(&dst, "digest", db) != 0) {
        fail(r, ST_LOADFAIL, "not an ICCS baseline library (no sm3hash entry)");
        return;
    }
    for (i = 0; i < 2; i++) {
        size_t j;
        n = strlen(gbt[i][0]) / 2;
        for (j = 0; j < n; j++) {
            unsigned v = 0;
            if (sscanf(gbt[i][0] + 2 * j, "%2x", &v) != 1)
                v = 0;
            m[j] = (unsigned char)v;
        }
        r->record = (unsigned long)i;
        if (r->e->iccs_sm3(m, 8ULL * n, out) != 0 || !iccs_hex_is(out, gbt[i][1])) {
            fail(r, ST_MISMATCH,
                 "sm3hash does not give GB/T 32905 example %zu (SM3 of %zu bytes)", i + 1, n);
            goto out;
        }
        sink_printf(&r->kat, "Check = GB/T 32905 example %zu\n", i + 1);
        kat_num(&r->kat, "Msg_Len", 8ULL * n);
        kat_hex(&r->kat, "Msg", m, n);
        kat_num(&r->kat, "Dst_Len", 256);
        kat_hex(&r->kat, "Dst", out, 32);
        sink_write(&r->kat, "\n", 1);
    }
    for (n = 0; n <= 256 && r->status == ST_PASS; n++) {
        r->record = (unsigned long)n;
        if (hash_draw(r, d, m, n) != 0 || hash_call(r, m, 8ULL * n, &dst) != 0)
            break;
        if (pseudo_xof || sm3) {
            int bad = pseudo_xof ? iccs_kdf_model(r->e, m, n, model, db) != 0
                                 : r->e->iccs_sm3(m, 8ULL * n, model) != 0;
            if (sm3 && db < 32)
                bad = 1;
            if (bad || memcmp(model, gdata(&dst), db) != 0) {
                fail(r, ST_MISMATCH,
                     "%s differs from %s at Msg_Len = %zu", helper,
                     pseudo_xof ? "KDF-SM3 over the checked sm3hash" : "sm3hash", 8 * n);
                break;
            }
        }
        kat_num(&r->kat, "Msg_Len", 8ULL * n);
        kat_hex(&r->kat, "Msg", m, n);
        hash_dst(&r->kat, r->e, &dst);
        sink_write(&r->kat, "\n", 1);
        r->records_written++;
    }
out:
    gfree(&dst);
}

/* Runs one hash KAT file (or the baseline's self-check). */
void run_hash(run_state *r, const char *file, const char *helper)
{
    void *d;
    if (r->e->hash == NULL || r->e->digest_bits == 0) {
        fail(r, ST_LOADFAIL, "entry table lacks CryptHash or its digest width");
        return;
    }
    d = hash_drng(r, file);
    if (d == NULL)
        return;
    if (strcmp(file, "KAT_2_12") == 0)
        hash_short(r, d);
    else if (strcmp(file, "KAT_2_23") == 0)
        hash_long(r, d, 23);
    else if (strcmp(file, "KAT_2_33") == 0)
        hash_long(r, d, 33);
    else if (strcmp(file, "KAT_Loop") == 0)
        hash_loop(r, d);
    else if (strcmp(file, "KAT_ICCS") == 0)
        iccs_selfcheck(r, d, helper ? helper : "");
    else
        fail(r, ST_LOADFAIL, "unknown hash KAT file %s", file);
    r->e->drng_free(d);
}

void hash_print_figures(const run_state *r)
{
    out_size("digest_bits", r->e->digest_bits);
    out_size("api_digest_bytes", digest_bytes(r->e));
    out_size("max_digest_len", g_hash.max_digest);
}
