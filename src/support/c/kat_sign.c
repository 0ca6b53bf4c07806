/*
 * kat_sign.c - one signature record of pqb-kat: key pair, signature, and
 * the checks (the honest signature verifies, a flipped message does not).
 */
#include "kat_runner.h"


/* Signs with up to MAX_SIGN_ATTEMPTS attempts; returns 0 on success. */
static int sign_with_retries(run_state *r, gbuf *sig, size_t *sig_len, const gbuf *msg,
                             const gbuf *sk, size_t sk_len)
{
    int attempt, rc = -1;
    for (attempt = 1; attempt <= MAX_SIGN_ATTEMPTS; attempt++) {
        double t0 = kat_cpu();
        *sig_len = sig->cap;
        rc = r->e->sign(gdata(sig), sig_len, gdata(msg), msg->cap, gdata(sk), sk_len);
        r->cost[COST_SIGN] += kat_cpu() - t0;
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
int do_keygen(run_state *r, gbuf *pk, size_t *pk_len, gbuf *sk, size_t *sk_len)
{
    int rc;
    double t0 = kat_cpu();
    *pk_len = pk->cap;
    *sk_len = sk->cap;
    rc = r->e->keygen(gdata(pk), pk_len, gdata(sk), sk_len);
    r->cost[COST_KEYGEN] += kat_cpu() - t0;
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
    double t0 = kat_cpu();
    int rc = r->e->verify(gdata(sig), sig_len, gdata(msg), msg->cap, gdata(pk), pk_len);
    r->cost[COST_VERIFY] += kat_cpu() - t0;
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
void sign_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len,
                        const unsigned char *m, size_t mlen)
{
    const pqb_entry *e = r->e;
    sink *f = &r->kat;
    gbuf pk, sk, msg, flipped, sig;
    size_t pk_len, sk_len, sig_len, sig_cap;

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

    if (seed_record(r, seed, seed_len) != 0)
        goto out;
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

