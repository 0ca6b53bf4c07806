/*
 * adapter_nist.c - turns a NIST PQC API submission into a pqb_entry table.
 *
 * The half of the NIST adapter that does not see the submission (see
 * adapter_nist.h): it reaches the API through adapter_nist_api.c. Compiled
 * by pqbench into every NIST-API instance library, together with that
 * half, the submission's sources, aes256.c and ctr_drbg.c, with the flag
 * profile's flags and the instance's CPU features only, and:
 *   -DPQB_KIND_IS_SIGN | -DPQB_KIND_IS_KEM
 *   -DPQB_RANDOMBYTES=<symbol>   the name the submission calls for randomness
 *   [-DPQB_SUBMISSION_RNG]       the submission brings its own KAT RNG: no
 *                                randomness function is defined here; seed()
 *                                calls its init function
 *                                (-DPQB_RANDOMBYTES_INIT=<symbol>, default
 *                                randombytes_init) with the argument shape
 *                                -DPQB_INIT_ARGS_CLASSIC (entropy, NULL, 256,
 *                                the default), _ENTROPY (entropy),
 *                                _ENTROPY_LENGTH (entropy, 48) or
 *                                _ENTROPY_PERSONALIZATION (entropy, NULL);
 *                                the entry table's drng_* functions give the
 *                                KAT runner that same RNG for the master
 *                                stream (seeds and messages), as the classic
 *                                PQCgenKAT draws them
 *   -I <this directory>
 *
 * Exported: pqb_entry_table() and, without PQB_SUBMISSION_RNG, the
 * randomness function. Everything else is static or hidden.
 *
 * With PQB_SUBMISSION_RNG the submission's RNG is one global state: the
 * runner draws the whole master stream from it before the first record
 * re-seeds it, exactly as the classic generator writes its .req file
 * first.
 *
 * Lengths: the NIST API has fixed sizes, so keygen/enc/dec report the
 * CRYPTO_* figures and sign reports the smlen the submission returned; the
 * caller's incoming *len values are never read.
 */
#include <stdlib.h>
#include <string.h>

#include "adapter_nist.h"
#include "pqb_entry.h"

#if !defined(PQB_SUBMISSION_RNG) && !defined(PQB_RANDOMBYTES)
#error "PQB_RANDOMBYTES (the randomness symbol the submission calls) must be defined"
#endif

#define PQB_STRX(x) #x
#define PQB_STR(x) PQB_STRX(x)
#ifdef __USER_LABEL_PREFIX__
#define PQB_ASM_NAME(sym) PQB_STR(__USER_LABEL_PREFIX__) PQB_STR(sym)
#else
#define PQB_ASM_NAME(sym) PQB_STR(sym)
#endif

/* Returned by verify() when crypto_sign_open wrote outside the adapter's
 * scratch buffer (its 64 guard bytes) or returned a message length above
 * the signed-message length. The KAT runner reports it as OVERFLOW
 * (PQB_VERIFY_SCRATCH_OVERFLOW, pqb_entry.h). */
#define PQB_SCRATCH_GUARD 64
#define PQB_SCRATCH_FILL 0xA5

/* ---- randomness ------------------------------------------------------- */

#ifdef PQB_SUBMISSION_RNG

#ifndef PQB_RANDOMBYTES_INIT
#define PQB_RANDOMBYTES_INIT randombytes_init
#endif

/* The submission's KAT RNG. Declared under private C names bound to the
 * real symbols: the submission's own declarations may use other exact
 * types, and must not conflict with these wherever both are seen (this
 * half is also compiled with an api header force-included, in pqbench's
 * tests). The return values of init
 * and randombytes are never read: callers declared void or int alike. */
#if defined(PQB_INIT_ARGS_ENTROPY)
extern void pqb_nist_submission_init(unsigned char *entropy_input)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES_INIT));
#define PQB_NIST_INIT(e) pqb_nist_submission_init(e)
#elif defined(PQB_INIT_ARGS_ENTROPY_LENGTH)
extern void pqb_nist_submission_init(unsigned char *entropy_input, size_t entropy_len)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES_INIT));
#define PQB_NIST_INIT(e) pqb_nist_submission_init(e, 48)
#elif defined(PQB_INIT_ARGS_ENTROPY_PERSONALIZATION)
extern void pqb_nist_submission_init(unsigned char *entropy_input,
                                     unsigned char *personalization_string)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES_INIT));
#define PQB_NIST_INIT(e) pqb_nist_submission_init(e, NULL)
#else
extern void pqb_nist_submission_init(unsigned char *entropy_input,
                                     unsigned char *personalization_string,
                                     int security_strength)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES_INIT));
#define PQB_NIST_INIT(e) pqb_nist_submission_init(e, NULL, 256)
#endif

extern void pqb_nist_submission_randombytes(unsigned char *x, unsigned long long xlen)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES));

static int pqb_nist_seed(const unsigned char *seed, size_t seed_len)
{
    unsigned char entropy[48];
    if (seed_len != 48)
        return -1;
    memcpy(entropy, seed, 48);
    PQB_NIST_INIT(entropy);
    return 0;
}

/* The master stream: the same global RNG, seeded the classic way. The
 * context is a token; there is only the one state. */
static int pqb_nist_master_token;

static void *pqb_nist_master_new(const unsigned char *seed, size_t seed_len)
{
    return pqb_nist_seed(seed, seed_len) == 0 ? (void *)&pqb_nist_master_token : NULL;
}

static int pqb_nist_master_draw(void *ctx, unsigned char *out, size_t out_len)
{
    (void)ctx;
    pqb_nist_submission_randombytes(out, (unsigned long long)out_len);
    return 0;
}

static void pqb_nist_master_free(void *ctx)
{
    (void)ctx;
}

#else /* built-in randomness */

#include "ctr_drbg.h"

static pqb_ctr_drbg pqb_nist_drbg; /* all zero until seeded: still a valid state */

/* The randomness function the submission calls, under the symbol name
 * PQB_RANDOMBYTES. The private C name keeps a declaration of that name by
 * the submission (whatever its types) from conflicting, wherever both are
 * seen.
 * The int return and 64-bit length are ABI-compatible on LP64 targets with
 * callers that declare it returning void or taking a size_t. */
__attribute__((visibility("default")))
int pqb_nist_randombytes(unsigned char *x, unsigned long long xlen)
    __asm__(PQB_ASM_NAME(PQB_RANDOMBYTES));

int pqb_nist_randombytes(unsigned char *x, unsigned long long xlen)
{
    pqb_ctr_drbg_generate(&pqb_nist_drbg, x, (size_t)xlen);
    return 0;
}

static int pqb_nist_seed(const unsigned char *seed, size_t seed_len)
{
    if (seed_len != 48)
        return -1;
    pqb_ctr_drbg_init(&pqb_nist_drbg, seed, NULL);
    return 0;
}

#endif

/* ---- operations ------------------------------------------------------- */

/* The API's figures, read once (before the first operation: the entry
 * table is built first). */
static pqb_nist_figures pqb_nist_fig;

#ifdef PQB_KIND_IS_SIGN

static int pqb_nist_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    int rc = pqb_nist_api_keypair(pk, sk);
    *pk_len = pqb_nist_fig.pk_bytes;
    *sk_len = pqb_nist_fig.sk_bytes;
    return rc;
}

/* Writes the signed message; out must hold CRYPTO_BYTES + mlen bytes. */
static int pqb_nist_sign(unsigned char *out, size_t *out_len, const unsigned char *m, size_t mlen,
                         const unsigned char *sk, size_t sk_len)
{
    size_t smlen = 0;
    int rc;
    (void)sk_len;
    rc = pqb_nist_api_sign(out, &smlen, m, mlen, sk);
    *out_len = smlen;
    return rc;
}

/* Opens the signed message into a guarded scratch buffer and accepts only
 * when the recovered message is exactly m. */
static int pqb_nist_verify(const unsigned char *out, size_t out_len, const unsigned char *m,
                           size_t mlen, const unsigned char *pk, size_t pk_len)
{
    unsigned char *scratch;
    unsigned char *msg;
    size_t opened_len = 0;
    size_t i;
    int rc;
    int guards_ok = 1;

    (void)pk_len;
    scratch = (unsigned char *)malloc(out_len + 2 * PQB_SCRATCH_GUARD);
    if (scratch == NULL)
        return -1;
    memset(scratch, PQB_SCRATCH_FILL, out_len + 2 * PQB_SCRATCH_GUARD);
    msg = scratch + PQB_SCRATCH_GUARD;

    rc = pqb_nist_api_open(msg, &opened_len, out, out_len, pk);

    for (i = 0; i < PQB_SCRATCH_GUARD; i++)
        if (scratch[i] != PQB_SCRATCH_FILL || msg[out_len + i] != PQB_SCRATCH_FILL)
            guards_ok = 0;
    if (!guards_ok || opened_len > out_len)
        rc = PQB_VERIFY_SCRATCH_OVERFLOW;
    else if (rc == 0 && (opened_len != mlen || (mlen != 0 && memcmp(msg, m, mlen) != 0)))
        rc = -1;
    free(scratch);
    return rc;
}

#else /* PQB_KIND_IS_KEM */

static int pqb_nist_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    int rc = pqb_nist_api_keypair(pk, sk);
    *pk_len = pqb_nist_fig.pk_bytes;
    *sk_len = pqb_nist_fig.sk_bytes;
    return rc;
}

static int pqb_nist_enc(unsigned char *ct, size_t *ct_len, unsigned char *ss, size_t *ss_len,
                        const unsigned char *pk, size_t pk_len)
{
    int rc;
    (void)pk_len;
    rc = pqb_nist_api_enc(ct, ss, pk);
    *ct_len = pqb_nist_fig.ct_bytes;
    *ss_len = pqb_nist_fig.bytes;
    return rc;
}

static int pqb_nist_dec(unsigned char *ss, size_t *ss_len, const unsigned char *ct, size_t ct_len,
                        const unsigned char *sk, size_t sk_len)
{
    int rc;
    (void)ct_len;
    (void)sk_len;
    rc = pqb_nist_api_dec(ss, ct, sk);
    *ss_len = pqb_nist_fig.bytes;
    return rc;
}

#endif

/* ---- the table -------------------------------------------------------- */

static pqb_entry pqb_nist_table;
static int pqb_nist_table_ready;

__attribute__((visibility("default")))
const pqb_entry *pqb_entry_table(void)
{
    if (!pqb_nist_table_ready) {
        pqb_entry *e = &pqb_nist_table;
        pqb_nist_api_figures(&pqb_nist_fig);
        e->abi_version = PQB_ABI_VERSION;
        e->api = PQB_API_NIST;
        e->algname = pqb_nist_fig.algname;
        e->pk_bytes = pqb_nist_fig.pk_bytes;
        e->sk_bytes = pqb_nist_fig.sk_bytes;
        e->seed = pqb_nist_seed;
        e->keygen = pqb_nist_keygen;
#ifdef PQB_SUBMISSION_RNG
        e->drng_new = pqb_nist_master_new;
        e->drng_draw = pqb_nist_master_draw;
        e->drng_free = pqb_nist_master_free;
#else
        e->drng_new = NULL;
        e->drng_draw = NULL;
        e->drng_free = NULL;
#endif
#ifdef PQB_KIND_IS_SIGN
        e->kind = PQB_KIND_SIGN;
        e->sig_bytes = pqb_nist_fig.bytes;
        e->sig_attached = 1;
        e->sign = pqb_nist_sign;
        e->verify = pqb_nist_verify;
#else
        e->kind = PQB_KIND_KEM;
        e->ct_bytes = pqb_nist_fig.ct_bytes;
        e->ss_bytes = pqb_nist_fig.bytes;
        e->enc = pqb_nist_enc;
        e->dec = pqb_nist_dec;
#endif
        pqb_nist_table_ready = 1;
    }
    return &pqb_nist_table;
}
