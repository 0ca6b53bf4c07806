/*
 * tarn.c - Tarn, a DEMONSTRATION three-pass key exchange on the NGCC KEX
 * API with an anonymous initiator, bundled with pqbench. NOT A SECURE
 * SCHEME (a 61-bit group).
 *
 * Only B has a long-term key b, B = g^b (KEX_LANES residues modulo
 * 2^61 - 1); A has none (public-key length 0).
 *   init A      nA <- DRNG (16 bytes); state nA
 *   pass 1 (A)  x <- DRNG, X = g^x; state nA || x || X; m1 = nA || X
 *   pass 2 (B)  y <- DRNG, Y = g^y; K = pseudohash(256, X^b || X^y || m1 || Y);
 *               state K; m2 = Y || tB, tB = pseudohash(256, "B" || K)
 *   pass 3 (A)  K = pseudohash(256, B^x || Y^x || m1 || Y); checks tB;
 *               state K; m3 = tA = pseudohash(256, "A" || K) (the last pass)
 *   derive      ss = pseudohash(256, "S" || K); B first checks tA.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auxfunc.h"
#include "gf61.h"

#ifndef KEX_LANES
#define KEX_LANES 16
#endif
#define LANE_BYTES (8 * KEX_LANES)
#define NONCE 16
#define TAG 32
#define M1_BYTES (NONCE + LANE_BYTES)
#define M2_BYTES (LANE_BYTES + TAG)
#define STA_BYTES (NONCE + 2 * LANE_BYTES + TAG)

unsigned long long kex_get_passes_num(void) { return 3; }
unsigned long long kex_get_pk_len_bytes(void) { return LANE_BYTES; }
unsigned long long kex_get_sk_len_bytes(void) { return LANE_BYTES; }
unsigned long long kex_get_sta_len_bytes(void) { return STA_BYTES; }
unsigned long long kex_get_stb_len_bytes(void) { return TAG; }
unsigned long long kex_get_ss_len_bytes(void) { return 32; }
unsigned long long kex_get_total_msg_len_bytes(void) { return M1_BYTES + M2_BYTES + TAG; }

/* pseudohash(256, label || k), label one byte. */
static int labelled(unsigned char label, const unsigned char *k, unsigned char *out)
{
    unsigned char buf[1 + TAG];
    buf[0] = label;
    memcpy(buf + 1, k, TAG);
    return pseudohash(256, buf, 8ULL * sizeof buf, out);
}

/* K = pseudohash(256, p1^e1 || p2^e2 || m1 || Y). */
static int session_key(const unsigned char *p1, const unsigned char *e1, const unsigned char *p2,
                       const unsigned char *e2, const unsigned char *m1, const unsigned char *y_pub,
                       unsigned char *k)
{
    unsigned char buf[2 * LANE_BYTES + M1_BYTES + LANE_BYTES];
    gf61_pow_lanes(buf, p1, e1, KEX_LANES);
    gf61_pow_lanes(buf + LANE_BYTES, p2, e2, KEX_LANES);
    memcpy(buf + 2 * LANE_BYTES, m1, M1_BYTES);
    memcpy(buf + 2 * LANE_BYTES + M1_BYTES, y_pub, LANE_BYTES);
    return pseudohash(256, buf, 8ULL * sizeof buf, k);
}

int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska,
               unsigned long long *ska_len, unsigned char *sta, unsigned long long *sta_len)
{
    (void)pka, (void)ska;
    if (get_random_number(&drng_algorithm, sta, 8 * NONCE) != 0)
        return -1;
    *pka_len = 0, *ska_len = 0, *sta_len = NONCE;
    return 0;
}

int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb,
               unsigned long long *skb_len, unsigned char *stb, unsigned long long *stb_len)
{
    (void)stb;
    if (gf61_secret(skb, KEX_LANES) != 0)
        return -1;
    gf61_pow_lanes(pkb, NULL, skb, KEX_LANES);
    *pkb_len = LANE_BYTES, *skb_len = LANE_BYTES, *stb_len = 0;
    return 0;
}

int kex_generate_pass1_msg_a(const unsigned char *ska, unsigned long long ska_len,
                             const unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1,
                             unsigned long long *m1_len)
{
    unsigned char *x = sta + NONCE, *xp = sta + NONCE + LANE_BYTES;
    (void)ska, (void)ska_len, (void)pkb;
    if (pkb_len != LANE_BYTES || *sta_len != NONCE || gf61_secret(x, KEX_LANES) != 0)
        return -1;
    gf61_pow_lanes(xp, NULL, x, KEX_LANES);
    memcpy(m1, sta, NONCE);
    memcpy(m1 + NONCE, xp, LANE_BYTES);
    *sta_len = NONCE + 2 * LANE_BYTES, *m1_len = M1_BYTES;
    return 0;
}

int kex_generate_pass2_msg_b(const unsigned char *skb, unsigned long long skb_len,
                             const unsigned char *pka, unsigned long long pka_len,
                             const unsigned char *m1, unsigned long long m1_len,
                             unsigned char *stb, unsigned long long *stb_len, unsigned char *m2,
                             unsigned long long *m2_len)
{
    unsigned char y[LANE_BYTES];
    const unsigned char *xp = m1 + NONCE;
    (void)pka;
    if (skb_len != LANE_BYTES || pka_len != 0 || m1_len != M1_BYTES ||
        gf61_secret(y, KEX_LANES) != 0)
        return -1;
    gf61_pow_lanes(m2, NULL, y, KEX_LANES); /* Y */
    if (session_key(xp, skb, xp, y, m1, m2, stb) != 0 ||
        labelled('B', stb, m2 + LANE_BYTES) != 0)
        return -1;
    memset(y, 0, sizeof y);
    *stb_len = TAG, *m2_len = M2_BYTES;
    return 0;
}

int kex_generate_pass3_msg_a(const unsigned char *ska, unsigned long long ska_len,
                             const unsigned char *pkb, unsigned long long pkb_len,
                             const unsigned char *m2, unsigned long long m2_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m3,
                             unsigned long long *m3_len)
{
    unsigned char m1[M1_BYTES], tag[TAG], *k = sta + NONCE + 2 * LANE_BYTES;
    const unsigned char *x = sta + NONCE, *xp = sta + NONCE + LANE_BYTES;
    (void)ska, (void)ska_len;
    if (pkb_len != LANE_BYTES || m2_len != M2_BYTES || *sta_len != NONCE + 2 * LANE_BYTES)
        return -1;
    memcpy(m1, sta, NONCE);
    memcpy(m1 + NONCE, xp, LANE_BYTES);
    /* B^x || Y^x */
    if (session_key(pkb, x, m2, x, m1, m2, k) != 0 || labelled('B', k, tag) != 0)
        return -1;
    if (memcmp(tag, m2 + LANE_BYTES, TAG) != 0)
        return -2; /* B's confirmation does not match */
    if (labelled('A', k, m3) != 0)
        return -1;
    *sta_len = STA_BYTES, *m3_len = TAG;
    return 1;
}

int kex_derive_ss_a(const unsigned char *ska, unsigned long long ska_len,
                    const unsigned char *pkb, unsigned long long pkb_len, const unsigned char *mb,
                    unsigned long long mb_len, const unsigned char *sta,
                    unsigned long long sta_len, unsigned char *ssa, unsigned long long *ssa_len)
{
    (void)ska, (void)ska_len, (void)pkb, (void)pkb_len, (void)mb, (void)mb_len;
    if (sta_len != STA_BYTES || labelled('S', sta + NONCE + 2 * LANE_BYTES, ssa) != 0)
        return -1;
    *ssa_len = 32;
    return 0;
}

int kex_derive_ss_b(const unsigned char *skb, unsigned long long skb_len,
                    const unsigned char *pka, unsigned long long pka_len, const unsigned char *ma,
                    unsigned long long ma_len, const unsigned char *stb,
                    unsigned long long stb_len, unsigned char *ssb, unsigned long long *ssb_len)
{
    unsigned char tag[TAG];
    (void)skb, (void)skb_len, (void)pka, (void)pka_len;
    if (stb_len != TAG || ma_len != TAG || labelled('A', stb, tag) != 0)
        return -1;
    if (memcmp(tag, ma, TAG) != 0)
        return -2; /* A's confirmation does not match */
    if (labelled('S', stb, ssb) != 0)
        return -1;
    *ssb_len = 32;
    return 0;
}
