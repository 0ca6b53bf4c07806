/*
 * brook.c - Brook, a DEMONSTRATION two-pass key exchange on the NGCC KEX
 * API, bundled with pqbench. NOT A SECURE SCHEME (a 61-bit group).
 *
 * Both parties have long-term keys a, A = g^a and b, B = g^b, each
 * KEX_LANES residues modulo 2^61 - 1 (lane by lane).
 *   pass 1 (A)  x <- DRNG, X = g^x; state x || X; m1 = X
 *   pass 2 (B)  y <- DRNG, Y = g^y; state y || Y; m2 = Y (the last pass)
 *   derive      ss = pseudohash(256, B^x || Y^a || Y^x || X || Y)   (A)
 *                  = pseudohash(256, X^b || A^y || X^y || X || Y)   (B)
 * per lane, so both sides derive the same secret: B^x = X^b = g^bx,
 * Y^a = A^y = g^ay, Y^x = X^y = g^xy.
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

unsigned long long kex_get_passes_num(void) { return 2; }
unsigned long long kex_get_pk_len_bytes(void) { return LANE_BYTES; }
unsigned long long kex_get_sk_len_bytes(void) { return LANE_BYTES; }
unsigned long long kex_get_sta_len_bytes(void) { return 2 * LANE_BYTES; }
unsigned long long kex_get_stb_len_bytes(void) { return 2 * LANE_BYTES; }
unsigned long long kex_get_ss_len_bytes(void) { return 32; }
unsigned long long kex_get_total_msg_len_bytes(void) { return 2 * LANE_BYTES; }

static int keypair(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk,
                   unsigned long long *sk_len, unsigned long long *st_len)
{
    if (gf61_secret(sk, KEX_LANES) != 0)
        return -1;
    gf61_pow_lanes(pk, NULL, sk, KEX_LANES);
    *pk_len = LANE_BYTES, *sk_len = LANE_BYTES, *st_len = 0;
    return 0;
}

int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska,
               unsigned long long *ska_len, unsigned char *sta, unsigned long long *sta_len)
{
    (void)sta;
    return keypair(pka, pka_len, ska, ska_len, sta_len);
}

int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb,
               unsigned long long *skb_len, unsigned char *stb, unsigned long long *stb_len)
{
    (void)stb;
    return keypair(pkb, pkb_len, skb, skb_len, stb_len);
}

/* An ephemeral key: state = e || g^e, message = g^e. */
static int ephemeral(unsigned char *st, unsigned long long *st_len, unsigned char *m,
                     unsigned long long *m_len)
{
    if (gf61_secret(st, KEX_LANES) != 0)
        return -1;
    gf61_pow_lanes(st + LANE_BYTES, NULL, st, KEX_LANES);
    memcpy(m, st + LANE_BYTES, LANE_BYTES);
    *st_len = 2 * LANE_BYTES, *m_len = LANE_BYTES;
    return 0;
}

int kex_generate_pass1_msg_a(const unsigned char *ska, unsigned long long ska_len,
                             const unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1,
                             unsigned long long *m1_len)
{
    (void)ska, (void)ska_len, (void)pkb;
    if (pkb_len != LANE_BYTES)
        return -1;
    return ephemeral(sta, sta_len, m1, m1_len);
}

int kex_generate_pass2_msg_b(const unsigned char *skb, unsigned long long skb_len,
                             const unsigned char *pka, unsigned long long pka_len,
                             const unsigned char *m1, unsigned long long m1_len,
                             unsigned char *stb, unsigned long long *stb_len, unsigned char *m2,
                             unsigned long long *m2_len)
{
    (void)skb, (void)skb_len, (void)pka, (void)m1;
    if (pka_len != LANE_BYTES || m1_len != LANE_BYTES)
        return -1;
    return ephemeral(stb, stb_len, m2, m2_len) == 0 ? 1 : -1;
}

/* pseudohash(256, p1^e1 || p2^e2 || p3^e3 || X || Y). */
static int derive(const unsigned char *p1, const unsigned char *e1, const unsigned char *p2,
                  const unsigned char *e2, const unsigned char *p3, const unsigned char *e3,
                  const unsigned char *x_pub, const unsigned char *y_pub, unsigned char *ss,
                  unsigned long long *ss_len)
{
    unsigned char buf[5 * LANE_BYTES];
    gf61_pow_lanes(buf, p1, e1, KEX_LANES);
    gf61_pow_lanes(buf + LANE_BYTES, p2, e2, KEX_LANES);
    gf61_pow_lanes(buf + 2 * LANE_BYTES, p3, e3, KEX_LANES);
    memcpy(buf + 3 * LANE_BYTES, x_pub, LANE_BYTES);
    memcpy(buf + 4 * LANE_BYTES, y_pub, LANE_BYTES);
    if (pseudohash(256, buf, 8ULL * sizeof buf, ss) != 0)
        return -1;
    *ss_len = 32;
    return 0;
}

int kex_derive_ss_a(const unsigned char *ska, unsigned long long ska_len,
                    const unsigned char *pkb, unsigned long long pkb_len, const unsigned char *mb,
                    unsigned long long mb_len, const unsigned char *sta,
                    unsigned long long sta_len, unsigned char *ssa, unsigned long long *ssa_len)
{
    const unsigned char *x = sta, *xp = sta + LANE_BYTES;
    if (ska_len != LANE_BYTES || pkb_len != LANE_BYTES || mb_len != LANE_BYTES ||
        sta_len != 2 * LANE_BYTES)
        return -1;
    /* B^x || Y^a || Y^x */
    return derive(pkb, x, mb, ska, mb, x, xp, mb, ssa, ssa_len);
}

int kex_derive_ss_b(const unsigned char *skb, unsigned long long skb_len,
                    const unsigned char *pka, unsigned long long pka_len, const unsigned char *ma,
                    unsigned long long ma_len, const unsigned char *stb,
                    unsigned long long stb_len, unsigned char *ssb, unsigned long long *ssb_len)
{
    const unsigned char *y = stb, *yp = stb + LANE_BYTES;
    if (skb_len != LANE_BYTES || pka_len != LANE_BYTES || ma_len != LANE_BYTES ||
        stb_len != 2 * LANE_BYTES)
        return -1;
    /* X^b || A^y || X^y */
    return derive(ma, skb, pka, y, ma, y, ma, yp, ssb, ssb_len);
}
