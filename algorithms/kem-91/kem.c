/*
 * kem.c - Pebble, a DEMONSTRATION module-LWE KEM on the NGCC KEM API,
 * bundled with pqbench.
 *
 * NOT A SECURE SCHEME: the parameters were not analysed, arithmetic is
 * schoolbook, and nothing was reviewed for side channels.  It exists so that
 * pqbench has a small KEM that uses the ICCS helpers (pseudoXOF, pseudohash,
 * sm3hash, get_random_number).
 *
 * Ring R_q = Z_q[x]/(x^256 + 1), q = 4096, module rank k = PEBBLE_K,
 * noise centered binomial with eta = 2, ciphertext compressed to 10 / 4 bits.
 * Decryption noise has standard deviation of roughly 55 (k = 3) against a
 * margin of 1024 - 128 = 896, so decryption failures are astronomically rare.
 *
 * Passively secure encryption (cpa_*):
 *   keygen  rho || sigma = pseudohash(512, d),  A_ij = pseudoXOF(rho || i || j)
 *           s, e <- CBD(pseudoXOF(sigma || nonce));  t = A s + e
 *   enc     r, e1, e2 <- CBD(pseudoXOF(coins || nonce))
 *           u = A^T r + e1,  v = t^T r + e2 + (q/2) * m
 *   dec     m = round(2 (v - s^T u) / q) mod 2
 * Fujisaki-Okamoto transform with implicit rejection:
 *   keygen  d, z <- DRNG;  sk = s || pk || H(pk) || z,  H = sm3hash(256, .)
 *   enc     m <- DRNG;  K || coins = pseudohash(512, m || H(pk));  ss = K
 *   dec     m' = cpa_dec(ct);  K' || coins' = pseudohash(512, m' || H(pk))
 *           ss = K' if cpa_enc(pk, m', coins') == ct,
 *           else pseudoXOF(256, z || ct)
 */
#include <stdint.h>
#include <string.h>

#include "api.h"
#include "params.h"
#include "poly.h"
#include "auxfunc.h"
#include "drng.h"

typedef struct {
    pebble_poly p[PEBBLE_K];
} pebble_polyvec;

unsigned long long kem_get_pk_len_bytes(void) { return PEBBLE_PK_BYTES; }
unsigned long long kem_get_sk_len_bytes(void) { return PEBBLE_SK_BYTES; }
unsigned long long kem_get_ss_len_bytes(void) { return PEBBLE_SS_BYTES; }
unsigned long long kem_get_ct_len_bytes(void) { return PEBBLE_CT_BYTES; }

static void wipe(void *p, size_t n)
{
    volatile unsigned char *q = (volatile unsigned char *)p;
    while (n--)
        *q++ = 0;
}

/* r = A v (transposed = 0) or A^T v (transposed = 1), A expanded from rho */
static int matrix_mul(pebble_polyvec *r, const uint8_t rho[PEBBLE_SYM_BYTES],
                      const pebble_polyvec *v, int transposed)
{
    pebble_acc acc;
    pebble_poly a;
    unsigned int i, j;

    for (i = 0; i < PEBBLE_K; i++) {
        pebble_acc_zero(&acc);
        for (j = 0; j < PEBBLE_K; j++) {
            int rc = transposed ? pebble_poly_uniform(&a, rho, (uint8_t)j, (uint8_t)i)
                                : pebble_poly_uniform(&a, rho, (uint8_t)i, (uint8_t)j);
            if (rc != PEBBLE_OK)
                return rc;
            pebble_acc_mul(&acc, &a, &v->p[j]);
        }
        pebble_acc_reduce(&r->p[i], &acc);
    }
    return PEBBLE_OK;
}

/* r = a^T b (inner product of two vectors) */
static void inner_product(pebble_poly *r, const pebble_polyvec *a, const pebble_polyvec *b)
{
    pebble_acc acc;
    unsigned int j;

    pebble_acc_zero(&acc);
    for (j = 0; j < PEBBLE_K; j++)
        pebble_acc_mul(&acc, &a->p[j], &b->p[j]);
    pebble_acc_reduce(r, &acc);
}

/* pk and s (packed) from the 32-byte key seed d */
static int cpa_keygen(uint8_t pk[PEBBLE_PK_BYTES], uint8_t s_packed[PEBBLE_K * PEBBLE_POLY_BYTES],
                      const uint8_t d[PEBBLE_SYM_BYTES])
{
    uint8_t seeds[2 * PEBBLE_SYM_BYTES];       /* rho || sigma */
    pebble_polyvec s, e, t;
    unsigned int i;
    int rc = PEBBLE_OK;

    if (pseudohash(8ULL * sizeof seeds, d, 8ULL * PEBBLE_SYM_BYTES, seeds) != 0)
        return PEBBLE_ERR_HELPER;
    for (i = 0; rc == PEBBLE_OK && i < PEBBLE_K; i++)
        rc = pebble_poly_noise(&s.p[i], seeds + PEBBLE_SYM_BYTES, (uint8_t)i);
    for (i = 0; rc == PEBBLE_OK && i < PEBBLE_K; i++)
        rc = pebble_poly_noise(&e.p[i], seeds + PEBBLE_SYM_BYTES, (uint8_t)(PEBBLE_K + i));
    if (rc == PEBBLE_OK)
        rc = matrix_mul(&t, seeds, &s, 0);
    if (rc == PEBBLE_OK) {
        for (i = 0; i < PEBBLE_K; i++) {
            pebble_poly_add(&t.p[i], &e.p[i]);
            pebble_poly_pack12(pk + i * PEBBLE_POLY_BYTES, &t.p[i]);
            pebble_poly_pack12(s_packed + i * PEBBLE_POLY_BYTES, &s.p[i]);
        }
        memcpy(pk + PEBBLE_K * PEBBLE_POLY_BYTES, seeds, PEBBLE_SYM_BYTES);
    }
    wipe(seeds, sizeof seeds);
    wipe(&s, sizeof s);
    wipe(&e, sizeof e);
    return rc;
}

static int cpa_enc(uint8_t ct[PEBBLE_CT_BYTES], const uint8_t pk[PEBBLE_PK_BYTES],
                   const uint8_t msg[PEBBLE_SYM_BYTES], const uint8_t coins[PEBBLE_SYM_BYTES])
{
    const uint8_t *rho = pk + PEBBLE_K * PEBBLE_POLY_BYTES;
    pebble_polyvec r, e1, t, u;
    pebble_poly e2, v, mpoly;
    unsigned int i;
    int rc = PEBBLE_OK;

    for (i = 0; rc == PEBBLE_OK && i < PEBBLE_K; i++)
        rc = pebble_poly_noise(&r.p[i], coins, (uint8_t)i);
    for (i = 0; rc == PEBBLE_OK && i < PEBBLE_K; i++)
        rc = pebble_poly_noise(&e1.p[i], coins, (uint8_t)(PEBBLE_K + i));
    if (rc == PEBBLE_OK)
        rc = pebble_poly_noise(&e2, coins, (uint8_t)(2 * PEBBLE_K));
    if (rc == PEBBLE_OK)
        rc = matrix_mul(&u, rho, &r, 1);
    if (rc == PEBBLE_OK) {
        for (i = 0; i < PEBBLE_K; i++) {
            pebble_poly_unpack12(&t.p[i], pk + i * PEBBLE_POLY_BYTES);
            pebble_poly_add(&u.p[i], &e1.p[i]);
            pebble_poly_compress_u(ct + i * PEBBLE_POLY_U_BYTES, &u.p[i]);
        }
        inner_product(&v, &t, &r);
        pebble_poly_add(&v, &e2);
        pebble_poly_from_msg(&mpoly, msg);
        pebble_poly_add(&v, &mpoly);
        pebble_poly_compress_v(ct + PEBBLE_K * PEBBLE_POLY_U_BYTES, &v);
    }
    wipe(&r, sizeof r);
    wipe(&e1, sizeof e1);
    wipe(&e2, sizeof e2);
    wipe(&mpoly, sizeof mpoly);
    return rc;
}

static void cpa_dec(uint8_t msg[PEBBLE_SYM_BYTES], const uint8_t s_packed[PEBBLE_K * PEBBLE_POLY_BYTES],
                    const uint8_t ct[PEBBLE_CT_BYTES])
{
    pebble_polyvec s, u;
    pebble_poly v, w;
    unsigned int i;

    for (i = 0; i < PEBBLE_K; i++) {
        pebble_poly_unpack12(&s.p[i], s_packed + i * PEBBLE_POLY_BYTES);
        pebble_poly_decompress_u(&u.p[i], ct + i * PEBBLE_POLY_U_BYTES);
    }
    pebble_poly_decompress_v(&v, ct + PEBBLE_K * PEBBLE_POLY_U_BYTES);
    /* s is stored reduced into [0, q); the products are only needed mod q */
    inner_product(&w, &s, &u);
    pebble_poly_sub(&v, &w);
    pebble_poly_to_msg(msg, &v);
    wipe(&s, sizeof s);
    wipe(&w, sizeof w);
}

/* K || coins = pseudohash(512, m || H(pk)) */
static int derive_key_coins(uint8_t kc[2 * PEBBLE_SYM_BYTES], const uint8_t m[PEBBLE_SYM_BYTES],
                            const uint8_t hpk[PEBBLE_SYM_BYTES])
{
    uint8_t in[2 * PEBBLE_SYM_BYTES];
    int rc;

    memcpy(in, m, PEBBLE_SYM_BYTES);
    memcpy(in + PEBBLE_SYM_BYTES, hpk, PEBBLE_SYM_BYTES);
    rc = pseudohash(8ULL * 2 * PEBBLE_SYM_BYTES, in, 8ULL * sizeof in, kc);
    wipe(in, sizeof in);
    return rc == 0 ? PEBBLE_OK : PEBBLE_ERR_HELPER;
}

int kem_keygen(unsigned char *pk, unsigned long long *pk_len,
               unsigned char *sk, unsigned long long *sk_len)
{
    uint8_t d[PEBBLE_SYM_BYTES], z[PEBBLE_SYM_BYTES];
    uint8_t *sk_pk, *sk_hpk, *sk_z;
    int rc;

    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL)
        return PEBBLE_ERR_PARAM;
    sk_pk = sk + PEBBLE_K * PEBBLE_POLY_BYTES;
    sk_hpk = sk_pk + PEBBLE_PK_BYTES;
    sk_z = sk_hpk + PEBBLE_SYM_BYTES;

    if (get_random_number(&drng_algorithm, d, 8ULL * sizeof d) != 0 ||
        get_random_number(&drng_algorithm, z, 8ULL * sizeof z) != 0)
        return PEBBLE_ERR_HELPER;
    rc = cpa_keygen(pk, sk, d);
    if (rc == PEBBLE_OK) {
        memcpy(sk_pk, pk, PEBBLE_PK_BYTES);
        if (sm3hash(8ULL * PEBBLE_SYM_BYTES, pk, 8ULL * PEBBLE_PK_BYTES, sk_hpk) != 0)
            rc = PEBBLE_ERR_HELPER;
    }
    if (rc == PEBBLE_OK) {
        memcpy(sk_z, z, PEBBLE_SYM_BYTES);
        *pk_len = PEBBLE_PK_BYTES;
        *sk_len = PEBBLE_SK_BYTES;
    }
    wipe(d, sizeof d);
    wipe(z, sizeof z);
    return rc;
}

int kem_enc(const unsigned char *pk, unsigned long long pk_len,
            unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len)
{
    uint8_t m[PEBBLE_SYM_BYTES], hpk[PEBBLE_SYM_BYTES], kc[2 * PEBBLE_SYM_BYTES];
    int rc;

    if (pk == NULL || pk_len != PEBBLE_PK_BYTES || ss == NULL || ss_len == NULL ||
        ct == NULL || ct_len == NULL)
        return PEBBLE_ERR_PARAM;
    if (get_random_number(&drng_algorithm, m, 8ULL * sizeof m) != 0)
        return PEBBLE_ERR_HELPER;
    if (sm3hash(8ULL * PEBBLE_SYM_BYTES, pk, 8ULL * PEBBLE_PK_BYTES, hpk) != 0)
        return PEBBLE_ERR_HELPER;
    rc = derive_key_coins(kc, m, hpk);
    if (rc == PEBBLE_OK)
        rc = cpa_enc(ct, pk, m, kc + PEBBLE_SYM_BYTES);
    if (rc == PEBBLE_OK) {
        memcpy(ss, kc, PEBBLE_SS_BYTES);
        *ss_len = PEBBLE_SS_BYTES;
        *ct_len = PEBBLE_CT_BYTES;
    }
    wipe(m, sizeof m);
    wipe(kc, sizeof kc);
    return rc;
}

int kem_dec(const unsigned char *sk, unsigned long long sk_len,
            const unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len)
{
    const uint8_t *sk_pk, *sk_hpk, *sk_z;
    uint8_t m[PEBBLE_SYM_BYTES], kc[2 * PEBBLE_SYM_BYTES], kbar[PEBBLE_SS_BYTES];
    uint8_t ct2[PEBBLE_CT_BYTES];
    uint8_t zc[PEBBLE_SYM_BYTES + PEBBLE_CT_BYTES];
    uint8_t diff = 0, mask;
    unsigned int i;
    int rc;

    if (sk == NULL || sk_len != PEBBLE_SK_BYTES || ct == NULL || ct_len != PEBBLE_CT_BYTES ||
        ss == NULL || ss_len == NULL)
        return PEBBLE_ERR_PARAM;
    sk_pk = sk + PEBBLE_K * PEBBLE_POLY_BYTES;
    sk_hpk = sk_pk + PEBBLE_PK_BYTES;
    sk_z = sk_hpk + PEBBLE_SYM_BYTES;

    cpa_dec(m, sk, ct);
    rc = derive_key_coins(kc, m, sk_hpk);
    if (rc == PEBBLE_OK)
        rc = cpa_enc(ct2, sk_pk, m, kc + PEBBLE_SYM_BYTES);
    if (rc == PEBBLE_OK) {
        /* implicit-rejection key */
        memcpy(zc, sk_z, PEBBLE_SYM_BYTES);
        memcpy(zc + PEBBLE_SYM_BYTES, ct, PEBBLE_CT_BYTES);
        if (pseudoXOF(8ULL * PEBBLE_SS_BYTES, zc, 8ULL * sizeof zc, kbar) != 0)
            rc = PEBBLE_ERR_HELPER;
    }
    if (rc == PEBBLE_OK) {
        for (i = 0; i < PEBBLE_CT_BYTES; i++)
            diff |= (uint8_t)(ct[i] ^ ct2[i]);
        /* mask = 0xFF when the re-encryption matched, 0x00 otherwise */
        mask = (uint8_t)(((uint32_t)diff - 1u) >> 8);
        for (i = 0; i < PEBBLE_SS_BYTES; i++)
            ss[i] = (uint8_t)((kc[i] & mask) | (kbar[i] & (uint8_t)~mask));
        *ss_len = PEBBLE_SS_BYTES;
    }
    wipe(m, sizeof m);
    wipe(kc, sizeof kc);
    wipe(kbar, sizeof kbar);
    wipe(zc, sizeof zc);
    return rc;
}
