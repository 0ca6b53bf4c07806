/*
 * params.h - parameters of Wintertide, a DEMONSTRATION Winternitz-style
 * one-time signature for pqbench.  NOT a secure scheme: a key pair may sign
 * only once, and nothing here was reviewed; it exists to exercise the NGCC
 * API, the ICCS helpers and pqbench's measurements.
 *
 * Parameter sets are chosen only by preprocessor defines:
 *   WINTER-128   -DWINTER_N=16 -DWINTER_W=16 -DWINTER_REJECT=0
 *   WINTER-128R  -DWINTER_N=16 -DWINTER_W=16 -DWINTER_REJECT=1
 *   WINTER-192   -DWINTER_N=24 -DWINTER_W=16 -DWINTER_REJECT=0
 */
#ifndef WINTERTIDE_PARAMS_H
#define WINTERTIDE_PARAMS_H

#ifndef WINTER_N
#define WINTER_N 16
#endif
#ifndef WINTER_W
#define WINTER_W 16
#endif
#ifndef WINTER_REJECT
#define WINTER_REJECT 0
#endif

#if WINTER_N != 16 && WINTER_N != 24 && WINTER_N != 32
#error "WINTER_N must be 16, 24 or 32 (hash output bytes)"
#endif
#if WINTER_W != 16
#error "WINTER_W must be 16 (only the Winternitz parameter 16 is implemented)"
#endif
#if WINTER_REJECT != 0 && WINTER_REJECT != 1
#error "WINTER_REJECT must be 0 or 1"
#endif

#define WINTER_LOG_W 4
/* message chains: one per base-16 digit of the N-byte digest */
#define WINTER_LEN1 (2 * WINTER_N)
/* checksum chains: the checksum is at most LEN1 * 15 <= 960 < 16^3 */
#define WINTER_LEN2 3
#define WINTER_LEN (WINTER_LEN1 + WINTER_LEN2)

/*
 * Rejection (WINTER_REJECT=1): a digest whose checksum exceeds the bound is
 * refused by the signer (and by the verifier).  A large checksum means small
 * digits, i.e. a signature that leaves the verifier most of each chain to
 * walk; refusing them caps verification work.  The bounds are chosen so that
 * about 8.1 % of uniformly random digests are refused.
 */
#if WINTER_N == 16
#define WINTER_CSUM_BOUND 276
#elif WINTER_N == 24
#define WINTER_CSUM_BOUND 404
#else
#define WINTER_CSUM_BOUND 531
#endif

/* sizes in bytes */
#define WINTER_SALT_BYTES WINTER_N
#define WINTER_PK_BYTES (2 * WINTER_N)                 /* pub_seed || root        */
#define WINTER_SK_BYTES (3 * WINTER_N)                 /* sk_seed || pub_seed || root */
#define WINTER_SIG_BYTES (WINTER_SALT_BYTES + WINTER_LEN * WINTER_N)

/* return codes */
#define WINTER_OK 0
#define WINTER_ERR_PARAM (-1)
#define WINTER_ERR_HELPER (-2)
#define WINTER_ERR_ALLOC (-3)
#define WINTER_ERR_REJECTED (-4)

#endif
