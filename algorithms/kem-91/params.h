/*
 * params.h - parameters of Pebble, a DEMONSTRATION module-LWE KEM for
 * pqbench.  NOT a secure scheme (parameters not analysed, no side-channel
 * review); it exists to exercise the NGCC KEM API and pqbench's measurements.
 *
 * Parameter sets are chosen only by preprocessor defines:
 *   PEBBLE-2   -DPEBBLE_K=2
 *   PEBBLE-3   -DPEBBLE_K=3
 */
#ifndef PEBBLE_PARAMS_H
#define PEBBLE_PARAMS_H

#ifndef PEBBLE_K
#define PEBBLE_K 2
#endif
#if PEBBLE_K != 2 && PEBBLE_K != 3
#error "PEBBLE_K must be 2 or 3"
#endif

#define PEBBLE_N 256          /* ring Z_q[x]/(x^256 + 1) */
#define PEBBLE_LOGQ 12
#define PEBBLE_Q (1 << PEBBLE_LOGQ)   /* q = 4096, a power of two */
#define PEBBLE_ETA 2          /* centered binomial noise, values in [-2, 2] */
#define PEBBLE_DU 10          /* bits per coefficient of u in a ciphertext */
#define PEBBLE_DV 4           /* bits per coefficient of v in a ciphertext */

#define PEBBLE_SYM_BYTES 32
#define PEBBLE_POLY_BYTES (PEBBLE_N * PEBBLE_LOGQ / 8)        /* 384 */
#define PEBBLE_POLY_U_BYTES (PEBBLE_N * PEBBLE_DU / 8)        /* 320 */
#define PEBBLE_POLY_V_BYTES (PEBBLE_N * PEBBLE_DV / 8)        /* 128 */
#define PEBBLE_NOISE_BYTES (PEBBLE_N * PEBBLE_ETA * 2 / 8)    /* 128 */

/* pk = t (k polys, 12 bits) || rho */
#define PEBBLE_PK_BYTES (PEBBLE_K * PEBBLE_POLY_BYTES + PEBBLE_SYM_BYTES)
/* sk = s (k polys, 12 bits) || pk || H(pk) || z */
#define PEBBLE_SK_BYTES (PEBBLE_K * PEBBLE_POLY_BYTES + PEBBLE_PK_BYTES + 2 * PEBBLE_SYM_BYTES)
/* ct = u (k polys, DU bits) || v (DV bits) */
#define PEBBLE_CT_BYTES (PEBBLE_K * PEBBLE_POLY_U_BYTES + PEBBLE_POLY_V_BYTES)
#define PEBBLE_SS_BYTES 32

#define PEBBLE_OK 0
#define PEBBLE_ERR_PARAM (-1)
#define PEBBLE_ERR_HELPER (-2)

#endif
