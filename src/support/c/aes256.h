/*
 * aes256.h - AES-256 block encryption (FIPS-197), encryption direction only.
 *
 * Support code of pqbench: it backs the NIST PQC KAT CTR_DRBG. It is compiled
 * into the KAT runner and into every NIST-API instance library, so its
 * symbols have hidden visibility and never clash with a submission's own AES.
 *
 * Byte-oriented and unoptimised on purpose: correctness over speed. The S-box
 * is derived at load time (GF(2^8) inverse plus the affine map) instead of
 * being stored as a constant table, so the instance libraries never carry the
 * well-known AES S-box bytes that the primitive survey looks for.
 */
#ifndef PQB_AES256_H
#define PQB_AES256_H

#define PQB_AES256_KEY_BYTES 32
#define PQB_AES256_BLOCK_BYTES 16
#define PQB_AES256_ROUNDS 14

typedef struct {
    /* (rounds + 1) round keys of 16 bytes, in FIPS-197 byte order. */
    unsigned char rk[16 * (PQB_AES256_ROUNDS + 1)];
} pqb_aes256_ctx;

/* Key expansion. */
__attribute__((visibility("hidden")))
void pqb_aes256_init(pqb_aes256_ctx *ctx, const unsigned char key[32]);

/* Encrypts one block; in and out may be the same buffer. */
__attribute__((visibility("hidden")))
void pqb_aes256_encrypt(const pqb_aes256_ctx *ctx, const unsigned char in[16],
                        unsigned char out[16]);

#endif
