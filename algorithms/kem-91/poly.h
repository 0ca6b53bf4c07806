/*
 * poly.h - polynomial arithmetic for Pebble, a DEMONSTRATION module-LWE KEM
 * bundled with pqbench.  NOT a secure scheme (see README.md).
 *
 * Polynomials live in Z_q[x]/(x^256 + 1) with q = 2^12.  Because q divides
 * 2^16, coefficients are kept as uint16_t and all arithmetic simply wraps
 * modulo 2^16; only the low 12 bits are meaningful and they are normalised
 * (masked) before packing or rounding.
 */
#ifndef PEBBLE_POLY_H
#define PEBBLE_POLY_H

#include <stdint.h>
#include "params.h"

typedef struct {
    uint16_t c[PEBBLE_N];
} pebble_poly;

/* double-length accumulator for products before reduction by x^256 + 1 */
typedef struct {
    uint16_t c[2 * PEBBLE_N];
} pebble_acc;

/* Uniform polynomial for matrix entry (i, j) from the public seed rho. */
int pebble_poly_uniform(pebble_poly *a, const uint8_t rho[PEBBLE_SYM_BYTES], uint8_t i, uint8_t j);
/* Centered binomial (eta = 2) noise from a 32-byte seed and a nonce. */
int pebble_poly_noise(pebble_poly *a, const uint8_t seed[PEBBLE_SYM_BYTES], uint8_t nonce);

void pebble_acc_zero(pebble_acc *acc);
/* acc += a * b (plain product, degree < 511) */
void pebble_acc_mul(pebble_acc *acc, const pebble_poly *a, const pebble_poly *b);
/* r = acc mod (x^256 + 1) */
void pebble_acc_reduce(pebble_poly *r, const pebble_acc *acc);

void pebble_poly_add(pebble_poly *r, const pebble_poly *a);   /* r += a */
void pebble_poly_sub(pebble_poly *r, const pebble_poly *a);   /* r -= a */

void pebble_poly_pack12(uint8_t *out, const pebble_poly *a);
void pebble_poly_unpack12(pebble_poly *a, const uint8_t *in);
void pebble_poly_compress_u(uint8_t *out, const pebble_poly *a);    /* PEBBLE_DU bits */
void pebble_poly_decompress_u(pebble_poly *a, const uint8_t *in);
void pebble_poly_compress_v(uint8_t *out, const pebble_poly *a);    /* PEBBLE_DV bits */
void pebble_poly_decompress_v(pebble_poly *a, const uint8_t *in);
void pebble_poly_from_msg(pebble_poly *a, const uint8_t msg[PEBBLE_SYM_BYTES]);
void pebble_poly_to_msg(uint8_t msg[PEBBLE_SYM_BYTES], const pebble_poly *a);

#endif
