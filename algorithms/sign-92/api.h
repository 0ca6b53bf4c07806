/*
 * api.h - NIST PQC signature API of Larch, a DEMONSTRATION hash-based
 * one-time signature bundled with pqbench.  NOT a secure scheme: a key pair
 * may sign only once and nothing here was reviewed.
 *
 * Like real libraries, every symbol and macro carries a namespace that
 * depends on the parameter set, selected by -DLARCH_LEVEL=1 or 3:
 *   LARCH-1  -DLARCH_LEVEL=1  prefix PQB_LARCH1_
 *   LARCH-3  -DLARCH_LEVEL=3  prefix PQB_LARCH3_
 * Both sets' macros and prototypes are declared unconditionally; a build
 * defines only the functions of its own level.
 */
#ifndef PQB_LARCH_API_H
#define PQB_LARCH_API_H

#include <stddef.h>
#include <stdint.h>

#define PQB_LARCH1_CRYPTO_ALGNAME "LARCH-1"
#define PQB_LARCH1_CRYPTO_PUBLICKEYBYTES 32
#define PQB_LARCH1_CRYPTO_SECRETKEYBYTES 48
#define PQB_LARCH1_CRYPTO_BYTES 1104

#define PQB_LARCH3_CRYPTO_ALGNAME "LARCH-3"
#define PQB_LARCH3_CRYPTO_PUBLICKEYBYTES 48
#define PQB_LARCH3_CRYPTO_SECRETKEYBYTES 72
#define PQB_LARCH3_CRYPTO_BYTES 2448

int PQB_LARCH1_crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int PQB_LARCH1_crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk);
int PQB_LARCH1_crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk);

int PQB_LARCH3_crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int PQB_LARCH3_crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk);
int PQB_LARCH3_crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk);

#endif
