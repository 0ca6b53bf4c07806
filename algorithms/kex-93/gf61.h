/*
 * gf61.h - arithmetic modulo the Mersenne prime p = 2^61 - 1 for the
 * DEMONSTRATION key exchanges bundled with pqbench. A 61-bit group is far
 * too small for security: these schemes are NOT secure.
 *
 * Public values and secret exponents are "lanes": KEX_LANES independent
 * residues, each encoded as 8 bytes big-endian.
 */
#ifndef DEMO_GF61_H
#define DEMO_GF61_H

#include <stdint.h>
#include <string.h>

#include "drng.h"

#define GF61_P ((UINT64_C(1) << 61) - 1)
#define GF61_G UINT64_C(37)

static uint64_t gf61_reduce(uint64_t r)
{
    r = (r & GF61_P) + (r >> 61);
    r = (r & GF61_P) + (r >> 61);
    return r >= GF61_P ? r - GF61_P : r;
}

/* a * b mod p for a, b < p, with 32-bit halves (no 128-bit type in C99). */
static uint64_t gf61_mul(uint64_t a, uint64_t b)
{
    uint64_t ah = a >> 32, al = a & 0xFFFFFFFFu, bh = b >> 32, bl = b & 0xFFFFFFFFu;
    uint64_t lo = al * bl, mid = ah * bl + al * bh, hi = ah * bh;
    /* 2^64 = 8 and 2^61 = 1 (mod p): every term below is under 2^61. */
    uint64_t r = (hi << 3) + (mid >> 29) + ((mid & ((UINT64_C(1) << 29) - 1)) << 32) +
                 (lo >> 61) + (lo & GF61_P);
    return gf61_reduce(r);
}

static uint64_t gf61_pow(uint64_t base, uint64_t e)
{
    uint64_t r = 1;
    base = gf61_reduce(base);
    while (e) {
        if (e & 1)
            r = gf61_mul(r, base);
        base = gf61_mul(base, base);
        e >>= 1;
    }
    return r;
}

static void gf61_put(unsigned char *out, uint64_t v)
{
    int i;
    for (i = 7; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)v;
}

static uint64_t gf61_get(const unsigned char *in)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < 8; i++)
        v = (v << 8) | in[i];
    return gf61_reduce(v);
}

/* n secret exponents in [1, p-2] from the DRNG; 0 on success. */
static int gf61_secret(unsigned char *out, int n)
{
    unsigned char raw[8];
    int i;
    for (i = 0; i < n; i++) {
        if (get_random_number(&drng_algorithm, raw, 64) != 0)
            return -1;
        gf61_put(out + 8 * i, gf61_get(raw) % (GF61_P - 2) + 1);
    }
    return 0;
}

/* out[i] = base[i]^e[i] (base NULL: the generator), n lanes. */
static void gf61_pow_lanes(unsigned char *out, const unsigned char *base, const unsigned char *e,
                           int n)
{
    int i;
    for (i = 0; i < n; i++)
        gf61_put(out + 8 * i, gf61_pow(base ? gf61_get(base + 8 * i) : GF61_G, gf61_get(e + 8 * i)));
}

#endif
