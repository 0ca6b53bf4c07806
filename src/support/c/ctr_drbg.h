/*
 * ctr_drbg.h - the AES-256 CTR_DRBG (no derivation function, no reseed
 * counter checks) used by the NIST PQC KAT generators.
 *
 * Compiled into the KAT runner and into every NIST-API instance library,
 * where it backs the adapter's randombytes. Symbols have hidden visibility.
 * It runs inside timed calls, so it is fast: AES-NI / ARMv8 AES chosen at
 * run time (aes256.h), ~0.2 k cycles per 64-byte draw; `pqb-drbg --bench`
 * measures it on the host.
 *
 *   init(entropy, perso):  Key = 0, V = 0, Update(entropy xor perso)
 *   Update(d):             3 x { V += 1 (128-bit big-endian); AES256_Key(V) },
 *                          xor d when given, Key = first 32 bytes, V = last 16
 *   generate(out, n):      per 16-byte block { V += 1; AES256_Key(V) }, the
 *                          last block truncated, then Update(none)
 */
#ifndef PQB_CTR_DRBG_H
#define PQB_CTR_DRBG_H

#include <stddef.h>

typedef struct {
    unsigned char key[32];
    unsigned char v[16];
} pqb_ctr_drbg;

/* entropy: 48 bytes; personalization: 48 bytes or NULL. */
__attribute__((visibility("hidden")))
void pqb_ctr_drbg_init(pqb_ctr_drbg *d, const unsigned char entropy[48],
                       const unsigned char *personalization);

__attribute__((visibility("hidden")))
void pqb_ctr_drbg_generate(pqb_ctr_drbg *d, unsigned char *out, size_t n);

#endif
