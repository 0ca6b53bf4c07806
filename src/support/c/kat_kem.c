/*
 * kat_kem.c - one KEM record of pqb-kat: key pair, encapsulation, and the
 * check that decapsulation returns the same secret.
 */
#include "kat_runner.h"

/* The check, after the record's lines were written: dec returns the
 * secret enc gave. */
static void check_dec(run_state *r, const gbuf *ct, size_t ct_len, const gbuf *sk, size_t sk_len,
                      const gbuf *ss, size_t ss_len, gbuf *ss2)
{
    size_t ss2_len = ss2->cap;
    double t0 = kat_cpu();
    int rc = r->e->dec(gdata(ss2), &ss2_len, gdata(ct), ct_len, gdata(sk), sk_len);
    r->cost[COST_DEC] += kat_cpu() - t0;
    check_guards(r, "dec");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "dec returned %d in record %lu", rc, r->record);
        return;
    }
    note_max(&r->max_ss, ss2_len);
    ss2_len = check_len(r, "dec", "ss", ss2_len, ss2->cap);
    if (ss2_len != ss_len)
        fail(r, ST_CRYPTOFAIL,
             "dec returned a shared secret of %zu bytes, enc one of %zu bytes in record %lu",
             ss2_len, ss_len, r->record);
    else if (ss_len != 0 && memcmp(gdata(ss), gdata(ss2), ss_len) != 0)
        fail(r, ST_CRYPTOFAIL, "dec returned a different shared secret than enc in record %lu",
             r->record);
}

/* KEM record. */
void kem_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len)
{
    const pqb_entry *e = r->e;
    sink *f = &r->kat;
    gbuf pk, sk, ct, ss, ss2;
    size_t pk_len, sk_len, ct_len, ss_len;
    double t0;
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

    if (seed_record(r, seed, seed_len) != 0)
        goto out;
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
    t0 = kat_cpu();
    rc = e->enc(gdata(&ct), &ct_len, gdata(&ss), &ss_len, gdata(&pk), pk_len);
    r->cost[COST_ENC] += kat_cpu() - t0;
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
    check_dec(r, &ct, ct_len, &sk, sk_len, &ss, ss_len, &ss2);
out:
    free_live(r);
}

