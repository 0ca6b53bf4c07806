/*
 * drng.h - NGCC/ICCS deterministic random number generator, pqbench
 * STAND-IN.
 *
 * Stand-in for the official NGCC/ICCS drng.c so that pqbench's demonstration
 * algorithms build on their own; NOT the official file.  To evaluate a real
 * submission, point pqbench at the official drng.c / auxfunc.c.
 * Demonstration code, not a hardened or reviewed implementation.
 *
 * The generator is the Hash_DRBG of NIST SP 800-90A Rev. 1 (section 10.1.1)
 * instantiated with SM3 (outlen 256 bits) and seedlen 440 bits (the value
 * SP 800-90A gives for 256-bit hashes).  No reseeding, no prediction
 * resistance, no additional input, no personalisation string, empty nonce.
 */
#ifndef PQB_ICCS_STANDIN_DRNG_H
#define PQB_ICCS_STANDIN_DRNG_H

typedef struct {
    unsigned char V[55];               /* 440-bit value V, big-endian       */
    unsigned char C[55];               /* 440-bit constant C, big-endian    */
    unsigned long long reseed_counter; /* 0 = not instantiated             */
} DRNG_ctx;

/* The global instance submissions draw their randomness from. */
extern DRNG_ctx drng_algorithm;

/*
 * Hash_DRBG instantiate with entropy_input = seed (seed_len_bytes bytes),
 * empty nonce and empty personalisation string:
 *   V = Hash_df(seed, 440), C = Hash_df(0x00 || V, 440), reseed_counter = 1.
 * Returns 0 on success, -1 on a parameter error.
 */
int init_random_number(DRNG_ctx *ctx, const unsigned char *seed, unsigned long long seed_len_bytes);

/*
 * Hash_DRBG generate without additional input: len_bits bits of
 * Hashgen(len_bits, V), then H = SM3(0x03 || V),
 * V = (V + H + C + reseed_counter) mod 2^440, reseed_counter += 1.
 * Writes ceil(len_bits/8) bytes; a partial last byte keeps its high bits and
 * has the others zeroed.  Returns 0 on success, -1 on a parameter error,
 * -2 when the state was never instantiated, -3 when the SP 800-90A reseed
 * interval (2^48 requests) is exhausted.  No per-request size limit is
 * enforced.
 */
int get_random_number(DRNG_ctx *ctx, unsigned char *out, unsigned long long len_bits);

#endif
