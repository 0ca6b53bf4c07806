/*
 * adapter_ngcc.c - turns an NGCC API_PKC submission into a pqb_entry table.
 *
 * Compiled by pqbench into every NGCC-API instance library, together with
 * the submission's sources, with:
 *   -include <header>          for each API header the algorithm TOML names;
 *                              they declare the sig_* or kem_* functions,
 *                              DRNG_ctx, drng_algorithm, init_random_number
 *                              and get_random_number (not redeclared here)
 *   -DPQB_KIND_IS_SIGN | -DPQB_KIND_IS_KEM | -DPQB_KIND_IS_KEX | -DPQB_KIND_IS_HASH
 *                              (hash: -DPQB_HASH_BITS=<digest width>)
 *   -DPQB_LABEL="\"<instance label>\""
 *   -I <this directory>        for pqb_entry.h
 *
 * Only pqb_entry_table() is exported; everything else is static.
 *
 * Lengths: NGCC length pointers are in/out. The adapter never reads the
 * caller's *len; it passes the API figure (the get_*_len_bytes() value, the
 * size every caller must allocate) as the capacity and hands back the
 * length the submission returned.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "pqb_entry.h"

#if defined(PQB_KIND_IS_SIGN) + defined(PQB_KIND_IS_KEM) + defined(PQB_KIND_IS_KEX) +             \
        defined(PQB_KIND_IS_HASH) !=                                                               \
    1
#error "define exactly one of PQB_KIND_IS_SIGN, _KEM, _KEX and _HASH"
#endif
#ifndef PQB_LABEL
#error "PQB_LABEL (the instance label, a string literal) must be defined"
#endif

static size_t pqb_ull_to_size(unsigned long long v)
{
#if ULLONG_MAX > SIZE_MAX
    if (v > (unsigned long long)SIZE_MAX)
        return SIZE_MAX;
#endif
    return (size_t)v;
}

static int pqb_ngcc_seed(const unsigned char *seed, size_t seed_len)
{
    return init_random_number(&drng_algorithm, seed, (unsigned long long)seed_len);
}

static void *pqb_ngcc_drng_new(const unsigned char *seed, size_t seed_len)
{
    DRNG_ctx *ctx = (DRNG_ctx *)calloc(1, sizeof(DRNG_ctx));
    if (ctx == NULL)
        return NULL;
    if (init_random_number(ctx, seed, (unsigned long long)seed_len) != 0) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

static int pqb_ngcc_drng_draw(void *ctx, unsigned char *out, size_t out_len)
{
    return get_random_number((DRNG_ctx *)ctx, out, 8ULL * (unsigned long long)out_len);
}

static void pqb_ngcc_drng_free(void *ctx)
{
    free(ctx);
}

#if defined(PQB_KIND_IS_KEX) || defined(PQB_KIND_IS_HASH)
/* Key exchange and hash: adapter_ngcc_kinds.c, one translation unit with
 * this file (it uses the helpers above and the API the headers declare). */
#include "adapter_ngcc_kinds.c"
#elif defined(PQB_KIND_IS_SIGN)

static int pqb_ngcc_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    unsigned long long pl = sig_get_pk_len_bytes();
    unsigned long long sl = sig_get_sk_len_bytes();
    int rc = sig_keygen(pk, &pl, sk, &sl);
    *pk_len = pqb_ull_to_size(pl);
    *sk_len = pqb_ull_to_size(sl);
    return rc;
}

static int pqb_ngcc_sign(unsigned char *out, size_t *out_len, const unsigned char *m, size_t mlen,
                         const unsigned char *sk, size_t sk_len)
{
    unsigned long long snl = sig_get_sn_len_bytes();
    int rc = sig_sign(sk, (unsigned long long)sk_len, m, (unsigned long long)mlen, out, &snl);
    *out_len = pqb_ull_to_size(snl);
    return rc;
}

static int pqb_ngcc_verify(const unsigned char *out, size_t out_len, const unsigned char *m,
                           size_t mlen, const unsigned char *pk, size_t pk_len)
{
    return sig_verify(pk, (unsigned long long)pk_len, out, (unsigned long long)out_len, m,
                      (unsigned long long)mlen);
}

#else /* PQB_KIND_IS_KEM */

static int pqb_ngcc_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    unsigned long long pl = kem_get_pk_len_bytes();
    unsigned long long sl = kem_get_sk_len_bytes();
    int rc = kem_keygen(pk, &pl, sk, &sl);
    *pk_len = pqb_ull_to_size(pl);
    *sk_len = pqb_ull_to_size(sl);
    return rc;
}

static int pqb_ngcc_enc(unsigned char *ct, size_t *ct_len, unsigned char *ss, size_t *ss_len,
                        const unsigned char *pk, size_t pk_len)
{
    unsigned long long cl = kem_get_ct_len_bytes();
    unsigned long long sl = kem_get_ss_len_bytes();
    int rc = kem_enc(pk, (unsigned long long)pk_len, ss, &sl, ct, &cl);
    *ct_len = pqb_ull_to_size(cl);
    *ss_len = pqb_ull_to_size(sl);
    return rc;
}

static int pqb_ngcc_dec(unsigned char *ss, size_t *ss_len, const unsigned char *ct, size_t ct_len,
                        const unsigned char *sk, size_t sk_len)
{
    unsigned long long sl = kem_get_ss_len_bytes();
    int rc = kem_dec(sk, (unsigned long long)sk_len, ct, (unsigned long long)ct_len, ss, &sl);
    *ss_len = pqb_ull_to_size(sl);
    return rc;
}

#endif

static pqb_entry pqb_ngcc_table;
static int pqb_ngcc_table_ready;

__attribute__((visibility("default")))
const pqb_entry *pqb_entry_table(void)
{
    if (!pqb_ngcc_table_ready) {
        pqb_entry *e = &pqb_ngcc_table;
        e->abi_version = PQB_ABI_VERSION;
        e->api = PQB_API_NGCC;
        e->algname = PQB_LABEL;
        e->seed = pqb_ngcc_seed;
        e->drng_new = pqb_ngcc_drng_new;
        e->drng_draw = pqb_ngcc_drng_draw;
        e->drng_free = pqb_ngcc_drng_free;
#if defined(PQB_KIND_IS_KEX) || defined(PQB_KIND_IS_HASH)
        pqb_ngcc_kind_table(e);
#elif defined(PQB_KIND_IS_SIGN)
        e->keygen = pqb_ngcc_keygen;
        e->kind = PQB_KIND_SIGN;
        e->pk_bytes = pqb_ull_to_size(sig_get_pk_len_bytes());
        e->sk_bytes = pqb_ull_to_size(sig_get_sk_len_bytes());
        e->sig_bytes = pqb_ull_to_size(sig_get_sn_len_bytes());
        e->sig_attached = 0;
        e->sign = pqb_ngcc_sign;
        e->verify = pqb_ngcc_verify;
#else
        e->keygen = pqb_ngcc_keygen;
        e->kind = PQB_KIND_KEM;
        e->pk_bytes = pqb_ull_to_size(kem_get_pk_len_bytes());
        e->sk_bytes = pqb_ull_to_size(kem_get_sk_len_bytes());
        e->ct_bytes = pqb_ull_to_size(kem_get_ct_len_bytes());
        e->ss_bytes = pqb_ull_to_size(kem_get_ss_len_bytes());
        e->enc = pqb_ngcc_enc;
        e->dec = pqb_ngcc_dec;
#endif
        pqb_ngcc_table_ready = 1;
    }
    return &pqb_ngcc_table;
}
