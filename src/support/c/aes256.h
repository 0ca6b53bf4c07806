/*
 * aes256.h - AES-256 encryption (FIPS-197) in counter mode, for the CTR_DRBG.
 *
 * Support code of pqbench: it backs the NIST PQC KAT CTR_DRBG. It is compiled
 * into the KAT runner and into every NIST-API instance library, so its
 * symbols have hidden visibility and never clash with a submission's own AES.
 *
 * Speed matters: the DRBG runs inside every timed call that draws randomness,
 * so its cost is pqbench's, not the submission's. One implementation is
 * chosen per process, at load time, from what the CPU offers:
 *
 *   aesni      x86-64 AES-NI (CPUID.1:ECX bit 25)
 *   armv8-aes  AArch64 AESE/AESMC (getauxval(AT_HWCAP) & HWCAP_AES)
 *   table      portable 32-bit T-table AES (not constant-time: the DRBG
 *              only seeds benchmarks and KATs, it protects no secret)
 *
 * The environment variable PQB_DRBG_IMPL forces one (aesni | armv8-aes |
 * table | auto); a forced choice the CPU cannot run is an error, never a
 * silent fallback (pqb_aes256_select reports it; inside an instance library,
 * where nothing can be reported, the process aborts with a message).
 *
 * Every implementation is compiled into every build: the instruction-set
 * paths use per-function target attributes, so no -maes or -march flag is
 * needed and the campaigns' uniform flags apply unchanged.
 *
 * No AES constant table is stored in the objects: the S-box and T-tables are
 * derived at load time (GF(2^8) inverse plus the affine map), so instance
 * libraries never carry the well-known bytes the primitive survey looks for.
 */
#ifndef PQB_AES256_H
#define PQB_AES256_H

#include <stddef.h>

#define PQB_AES256_KEY_BYTES 32
#define PQB_AES256_BLOCK_BYTES 16
#define PQB_AES256_ROUNDS 14

typedef struct {
    /* (rounds + 1) round keys of 16 bytes in FIPS-197 byte order, the same
     * layout for every implementation; aligned for the vector loads. */
    unsigned char rk[16 * (PQB_AES256_ROUNDS + 1)] __attribute__((aligned(16)));
} pqb_aes256_ctx;

/* Key expansion. */
__attribute__((visibility("hidden")))
void pqb_aes256_init(pqb_aes256_ctx *ctx, const unsigned char key[32]);

/* Counter mode as the CTR_DRBG runs it: encrypts V+1, ..., V+n (V a
 * 128-bit big-endian integer, advanced by n) into out, for
 * 1 <= n <= PQB_AES256_CTR_MAX. out must have room for PQB_AES256_CTR_MAX
 * blocks: the instruction-set paths always compute 8, interleaved (the
 * spare blocks cost no time, they fill the AES units' pipeline). */
#define PQB_AES256_CTR_MAX 8
__attribute__((visibility("hidden")))
void pqb_aes256_ctr(const pqb_aes256_ctx *ctx, unsigned char v[16], unsigned char *out,
                    size_t n);

/* The implementation in use ("aesni", "armv8-aes" or "table"). */
__attribute__((visibility("hidden")))
const char *pqb_aes256_impl(void);

/* Name of the i-th compiled-in implementation (NULL past the last), and
 * whether this CPU can run it. */
__attribute__((visibility("hidden")))
const char *pqb_aes256_impl_name(int i);
__attribute__((visibility("hidden")))
int pqb_aes256_impl_usable(const char *name);

/* Chooses the implementation: a name, or "auto"/NULL/"" for the fastest the
 * CPU runs. Returns 0, or -1 (nothing changed) for an unknown name or one
 * this CPU cannot run. Round keys have one layout for every implementation,
 * so a context outlives a change (not thread-safe: tools and tests only). */
__attribute__((visibility("hidden")))
int pqb_aes256_select(const char *name);

#endif
