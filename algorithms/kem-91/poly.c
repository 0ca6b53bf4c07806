/*
 * poly.c - polynomial arithmetic, sampling and packing for Pebble, a
 * DEMONSTRATION module-LWE KEM bundled with pqbench.  NOT a secure scheme:
 * the parameters were not analysed and nothing here was reviewed for side
 * channels.  Sampling uses only the ICCS helper pseudoXOF.
 */
#include <string.h>
#include "poly.h"
#include "auxfunc.h"

#define QMASK ((uint16_t)(PEBBLE_Q - 1))

int pebble_poly_uniform(pebble_poly *a, const uint8_t rho[PEBBLE_SYM_BYTES], uint8_t i, uint8_t j)
{
    uint8_t in[PEBBLE_SYM_BYTES + 2];
    uint8_t buf[PEBBLE_POLY_BYTES];

    memcpy(in, rho, PEBBLE_SYM_BYTES);
    in[PEBBLE_SYM_BYTES] = i;
    in[PEBBLE_SYM_BYTES + 1] = j;
    /* q is a power of two, so 12 uniform bits are a uniform coefficient */
    if (pseudoXOF(8ULL * sizeof buf, in, 8ULL * sizeof in, buf) != 0)
        return PEBBLE_ERR_HELPER;
    pebble_poly_unpack12(a, buf);
    return PEBBLE_OK;
}

int pebble_poly_noise(pebble_poly *a, const uint8_t seed[PEBBLE_SYM_BYTES], uint8_t nonce)
{
    uint8_t in[PEBBLE_SYM_BYTES + 1];
    uint8_t buf[PEBBLE_NOISE_BYTES];
    unsigned int k, b, lo, hi;

    memcpy(in, seed, PEBBLE_SYM_BYTES);
    in[PEBBLE_SYM_BYTES] = nonce;
    if (pseudoXOF(8ULL * sizeof buf, in, 8ULL * sizeof in, buf) != 0)
        return PEBBLE_ERR_HELPER;
    /* each nibble gives one coefficient: (b0 + b1) - (b2 + b3) */
    for (k = 0; k < PEBBLE_NOISE_BYTES; k++) {
        b = buf[k];
        lo = b & 0x0F;
        hi = b >> 4;
        a->c[2 * k] = (uint16_t)(((lo & 1) + ((lo >> 1) & 1)) - (((lo >> 2) & 1) + ((lo >> 3) & 1)));
        a->c[2 * k + 1] = (uint16_t)(((hi & 1) + ((hi >> 1) & 1)) - (((hi >> 2) & 1) + ((hi >> 3) & 1)));
    }
    memset(buf, 0, sizeof buf);
    memset(in, 0, sizeof in);
    return PEBBLE_OK;
}

void pebble_acc_zero(pebble_acc *acc)
{
    memset(acc, 0, sizeof *acc);
}

void pebble_acc_mul(pebble_acc *acc, const pebble_poly *a, const pebble_poly *b)
{
    unsigned int i, j;

    for (i = 0; i < PEBBLE_N; i++) {
        uint32_t ai = a->c[i];
        uint16_t *row = acc->c + i;
        for (j = 0; j < PEBBLE_N; j++)
            row[j] = (uint16_t)(row[j] + (uint16_t)(ai * b->c[j]));
    }
}

void pebble_acc_reduce(pebble_poly *r, const pebble_acc *acc)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N; i++)
        r->c[i] = (uint16_t)(acc->c[i] - acc->c[i + PEBBLE_N]);
}

void pebble_poly_add(pebble_poly *r, const pebble_poly *a)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N; i++)
        r->c[i] = (uint16_t)(r->c[i] + a->c[i]);
}

void pebble_poly_sub(pebble_poly *r, const pebble_poly *a)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N; i++)
        r->c[i] = (uint16_t)(r->c[i] - a->c[i]);
}

void pebble_poly_pack12(uint8_t *out, const pebble_poly *a)
{
    unsigned int i;
    uint16_t x0, x1;

    for (i = 0; i < PEBBLE_N / 2; i++) {
        x0 = a->c[2 * i] & QMASK;
        x1 = a->c[2 * i + 1] & QMASK;
        out[3 * i + 0] = (uint8_t)x0;
        out[3 * i + 1] = (uint8_t)((x0 >> 8) | (x1 << 4));
        out[3 * i + 2] = (uint8_t)(x1 >> 4);
    }
}

void pebble_poly_unpack12(pebble_poly *a, const uint8_t *in)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N / 2; i++) {
        a->c[2 * i] = (uint16_t)((in[3 * i] | ((uint16_t)in[3 * i + 1] << 8)) & QMASK);
        a->c[2 * i + 1] = (uint16_t)(((in[3 * i + 1] >> 4) | ((uint16_t)in[3 * i + 2] << 4)) & QMASK);
    }
}

/* round(x * 2^d / q) mod 2^d for q = 2^12 */
static uint16_t compress_coef(uint16_t x, unsigned int d)
{
    x &= QMASK;
    return (uint16_t)(((uint32_t)x + (1u << (PEBBLE_LOGQ - 1 - d))) >> (PEBBLE_LOGQ - d)) & (uint16_t)((1u << d) - 1);
}

void pebble_poly_compress_u(uint8_t *out, const pebble_poly *a)
{
    unsigned int i, k;
    uint16_t t[4];

    /* 4 coefficients of 10 bits -> 5 bytes */
    for (i = 0; i < PEBBLE_N / 4; i++) {
        for (k = 0; k < 4; k++)
            t[k] = compress_coef(a->c[4 * i + k], PEBBLE_DU);
        out[5 * i + 0] = (uint8_t)t[0];
        out[5 * i + 1] = (uint8_t)((t[0] >> 8) | (t[1] << 2));
        out[5 * i + 2] = (uint8_t)((t[1] >> 6) | (t[2] << 4));
        out[5 * i + 3] = (uint8_t)((t[2] >> 4) | (t[3] << 6));
        out[5 * i + 4] = (uint8_t)(t[3] >> 2);
    }
}

void pebble_poly_decompress_u(pebble_poly *a, const uint8_t *in)
{
    unsigned int i, k;
    uint16_t t[4];
    const uint8_t *p;

    for (i = 0; i < PEBBLE_N / 4; i++) {
        p = in + 5 * i;
        t[0] = (uint16_t)((p[0] | ((uint16_t)p[1] << 8)) & 0x3FF);
        t[1] = (uint16_t)(((p[1] >> 2) | ((uint16_t)p[2] << 6)) & 0x3FF);
        t[2] = (uint16_t)(((p[2] >> 4) | ((uint16_t)p[3] << 4)) & 0x3FF);
        t[3] = (uint16_t)(((p[3] >> 6) | ((uint16_t)p[4] << 2)) & 0x3FF);
        for (k = 0; k < 4; k++)
            a->c[4 * i + k] = (uint16_t)(t[k] << (PEBBLE_LOGQ - PEBBLE_DU));
    }
}

void pebble_poly_compress_v(uint8_t *out, const pebble_poly *a)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N / 2; i++)
        out[i] = (uint8_t)(compress_coef(a->c[2 * i], PEBBLE_DV) |
                           (compress_coef(a->c[2 * i + 1], PEBBLE_DV) << 4));
}

void pebble_poly_decompress_v(pebble_poly *a, const uint8_t *in)
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N / 2; i++) {
        a->c[2 * i] = (uint16_t)((in[i] & 0x0F) << (PEBBLE_LOGQ - PEBBLE_DV));
        a->c[2 * i + 1] = (uint16_t)((in[i] >> 4) << (PEBBLE_LOGQ - PEBBLE_DV));
    }
}

void pebble_poly_from_msg(pebble_poly *a, const uint8_t msg[PEBBLE_SYM_BYTES])
{
    unsigned int i;

    for (i = 0; i < PEBBLE_N; i++)
        a->c[i] = (uint16_t)(((msg[i / 8] >> (i % 8)) & 1u) * (PEBBLE_Q / 2));
}

void pebble_poly_to_msg(uint8_t msg[PEBBLE_SYM_BYTES], const pebble_poly *a)
{
    unsigned int i;
    uint16_t x;

    memset(msg, 0, PEBBLE_SYM_BYTES);
    for (i = 0; i < PEBBLE_N; i++) {
        x = a->c[i] & QMASK;
        /* 1 when x is closer to q/2 than to 0 */
        msg[i / 8] |= (uint8_t)((((uint32_t)x + PEBBLE_Q / 4) >> (PEBBLE_LOGQ - 1)) & 1u) << (i % 8);
    }
}
