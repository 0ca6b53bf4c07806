/*
 * params.h - internal parameters of Larch, a DEMONSTRATION hash-based
 * one-time signature bundled with pqbench.  NOT a secure scheme.
 *
 * LARCH_LEVEL selects the parameter set and the symbol namespace:
 *   1: n = 16 bytes, prefix PQB_LARCH1_
 *   3: n = 24 bytes, prefix PQB_LARCH3_
 * Winternitz parameter w = 4 (base-4 digits) for both.
 */
#ifndef PQB_LARCH_PARAMS_H
#define PQB_LARCH_PARAMS_H

#include "api.h"

#ifndef LARCH_LEVEL
#error "define LARCH_LEVEL=1 (LARCH-1) or LARCH_LEVEL=3 (LARCH-3)"
#endif

#if LARCH_LEVEL == 1
#define PQB_LARCH_NS(name) PQB_LARCH1_##name
#define LARCH_N 16
#define LARCH_LEN2 4          /* checksum <= 64 * 3 = 192 < 4^4 */
#define LARCH_PK_BYTES PQB_LARCH1_CRYPTO_PUBLICKEYBYTES
#define LARCH_SK_BYTES PQB_LARCH1_CRYPTO_SECRETKEYBYTES
#define LARCH_SIG_BYTES PQB_LARCH1_CRYPTO_BYTES
#elif LARCH_LEVEL == 3
#define PQB_LARCH_NS(name) PQB_LARCH3_##name
#define LARCH_N 24
#define LARCH_LEN2 5          /* checksum <= 96 * 3 = 288 < 4^5 */
#define LARCH_PK_BYTES PQB_LARCH3_CRYPTO_PUBLICKEYBYTES
#define LARCH_SK_BYTES PQB_LARCH3_CRYPTO_SECRETKEYBYTES
#define LARCH_SIG_BYTES PQB_LARCH3_CRYPTO_BYTES
#else
#error "LARCH_LEVEL must be 1 or 3"
#endif

#define LARCH_W 4
#define LARCH_LEN1 (4 * LARCH_N)        /* base-4 digits of an n-byte digest */
#define LARCH_LEN (LARCH_LEN1 + LARCH_LEN2)

#if LARCH_PK_BYTES != 2 * LARCH_N || LARCH_SK_BYTES != 3 * LARCH_N || \
    LARCH_SIG_BYTES != LARCH_N + LARCH_LEN * LARCH_N
#error "api.h sizes disagree with the Larch parameters"
#endif

#endif
