/*
 * randombytes.h - randomness source of Larch, a DEMONSTRATION signature
 * bundled with pqbench (NOT a secure scheme).
 *
 * Larch does not define this function: the harness that links it provides
 * it (pqbench's NIST adapter maps it onto its KAT / timing DRBG).
 * Returns 0 on success.
 */
#ifndef PQB_LARCH_RANDOMBYTES_H
#define PQB_LARCH_RANDOMBYTES_H

#include <stddef.h>
#include <stdint.h>

int larch_randombytes(uint8_t *out, size_t n);

#endif
