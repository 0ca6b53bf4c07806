/*
 * pqb_entry.h - the one table every instance library exports.
 *
 * pqbench compiles an API adapter (adapter_ngcc.c or adapter_nist.c) into
 * every instance library. The adapter turns whatever API the submission
 * exposes into this table, so the KAT runner and the timing driver never
 * care which API family they run.
 *
 * All lengths are size_t. Every function returns 0 on success and nonzero
 * otherwise (the submission's own return code when there is one).
 */
#ifndef PQB_ENTRY_H
#define PQB_ENTRY_H

#include <stddef.h>

/* 2: key exchange and hash entries appended (kex_*, hash, iccs_sm3). */
#define PQB_ABI_VERSION 2

#define PQB_KIND_SIGN 1
#define PQB_KIND_KEM 2
#define PQB_KIND_KEX 3
#define PQB_KIND_HASH 4

/* KEX sides, and what a pass returns when it was the last one. */
#define PQB_KEX_A 0
#define PQB_KEX_B 1
#define PQB_KEX_LAST_PASS 1
#define PQB_KEX_MAX_PASSES 16
/* What kex_pass() returns for a pass the library does not define. */
#define PQB_KEX_NO_PASS (-0x5051)

#define PQB_API_NGCC 1
#define PQB_API_NIST 2

/* What verify() returns when the NIST adapter's own crypto_sign_open
 * scratch buffer was overrun (its guard bytes touched, or a recovered
 * message longer than the signed message): an OVERFLOW, not a rejection. */
#define PQB_VERIFY_SCRATCH_OVERFLOW 0x50514201

typedef struct pqb_entry {
    int abi_version; /* PQB_ABI_VERSION */
    int kind;        /* PQB_KIND_SIGN or PQB_KIND_KEM */
    int api;         /* PQB_API_NGCC or PQB_API_NIST */
    const char *algname; /* CRYPTO_ALGNAME for NIST, the instance label for NGCC */

    /* API figures: what the length functions or CRYPTO_ macros announce. */
    size_t pk_bytes;
    size_t sk_bytes;
    size_t sig_bytes; /* sign: maximum signature bytes (NIST: CRYPTO_BYTES) */
    size_t ct_bytes;  /* kem */
    size_t ss_bytes;  /* kem */
    /* 1 when sign() writes a signed message (signature and message, NIST
     * crypto_sign); its output then needs sig_bytes + mlen bytes. */
    int sig_attached;

    /* Seeds the library's randomness (the global drng_algorithm for NGCC,
     * the adapter's AES-256 CTR_DRBG behind the renamed randombytes for
     * NIST; NIST seeds must be 48 bytes). */
    int (*seed)(const unsigned char *seed, size_t seed_len);

    int (*keygen)(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len);

    /* sign: out receives the signature (NGCC) or signed message (NIST). */
    int (*sign)(unsigned char *out, size_t *out_len, const unsigned char *m, size_t mlen,
                const unsigned char *sk, size_t sk_len);
    /* verify: 0 when out is a valid signature (or signed message) of m. */
    int (*verify)(const unsigned char *out, size_t out_len, const unsigned char *m, size_t mlen,
                  const unsigned char *pk, size_t pk_len);

    int (*enc)(unsigned char *ct, size_t *ct_len, unsigned char *ss, size_t *ss_len,
               const unsigned char *pk, size_t pk_len);
    int (*dec)(unsigned char *ss, size_t *ss_len, const unsigned char *ct, size_t ct_len,
               const unsigned char *sk, size_t sk_len);

    /* A fresh DRNG of the library's own algorithm, independent of the
     * global one: the NGCC KAT draws record seeds and messages from two of
     * these. NIST with pqbench's RNG: NULL (its KAT uses the AES-256
     * CTR_DRBG). NIST with the submission's own KAT RNG: that one global
     * RNG, seeded as the classic generator seeds it (so the runner draws
     * the whole master stream before the first record re-seeds it). */
    void *(*drng_new)(const unsigned char *seed, size_t seed_len);
    int (*drng_draw)(void *ctx, unsigned char *out, size_t out_len);
    void (*drng_free)(void *ctx);

    /* ---- ABI 2: key exchange (kind PQB_KIND_KEX) -------------------------
     * pk_bytes, sk_bytes and ss_bytes above are kex_get_pk/sk/ss_len_bytes().
     * A state length is in/out: the state's current length on input, its
     * new length on output. A message's length is its capacity on input
     * (kex_msg_bytes, the cap of all messages) and its length on output. */
    size_t kex_sta_bytes;  /* kex_get_sta_len_bytes() */
    size_t kex_stb_bytes;  /* kex_get_stb_len_bytes() */
    size_t kex_msg_bytes;  /* kex_get_total_msg_len_bytes() */
    int kex_passes;        /* kex_get_passes_num() */
    /* kex_init_a (side PQB_KEX_A) or kex_init_b; a zero public-key length
     * means "no long-term key". */
    int (*kex_init)(int side, unsigned char *pk, size_t *pk_len, unsigned char *sk,
                    size_t *sk_len, unsigned char *st, size_t *st_len);
    /* kex_generate_pass<k>_msg_<a|b>, k from 1 (odd: initiator); `in` is
     * message k-1 (none for k = 1). Returns the pass's own code: negative
     * on error, PQB_KEX_LAST_PASS when it was the last pass; PQB_KEX_NO_PASS
     * when the library defines no such pass. */
    int (*kex_pass)(int k, const unsigned char *sk, size_t sk_len, const unsigned char *peer_pk,
                    size_t peer_pk_len, const unsigned char *in, size_t in_len, unsigned char *st,
                    size_t *st_len, unsigned char *out, size_t *out_len);
    /* 1 when the library defines pass k. */
    int (*kex_has_pass)(int k);
    /* kex_derive_ss_a (m = the last message B sent) or kex_derive_ss_b
     * (m = the last message A sent). */
    int (*kex_derive)(int side, const unsigned char *sk, size_t sk_len,
                      const unsigned char *peer_pk, size_t peer_pk_len, const unsigned char *m,
                      size_t m_len, const unsigned char *st, size_t st_len, unsigned char *ss,
                      size_t *ss_len);

    /* ---- ABI 2: hash (kind PQB_KIND_HASH) --------------------------------
     * CryptHash with the instance's digest width; messages in bits, a
     * partial last byte taken MSB-first; writes ceil(digest_bits/8) bytes. */
    size_t digest_bits;
    int (*hash)(const unsigned char *msg, unsigned long long msg_bits, unsigned char *digest);
    /* ICCS baseline instances only (else NULL): the component's sm3hash at
     * 256 bits, for the self-check against the published examples. */
    int (*iccs_sm3)(const unsigned char *msg, unsigned long long msg_bits, unsigned char *out);
} pqb_entry;

/* The one entry point the runner and driver look up with dlsym. */
const pqb_entry *pqb_entry_table(void);

#endif
