/*
 * adapter_nist.c - turns a NIST PQC API submission into a pqb_entry table.
 *
 * Compiled by pqbench into every NIST-API instance library, together with
 * the submission's sources, aes256.c and ctr_drbg.c, with:
 *   -include <api header>        declares crypto_* and the CRYPTO_* macros
 *   -DPQB_KIND_IS_SIGN | -DPQB_KIND_IS_KEM
 *   -DPQB_NS=<prefix>            namespace of every symbol and macro; always
 *                                defined, possibly empty (-DPQB_NS=)
 *   -DPQB_RANDOMBYTES=<symbol>   the name the submission calls for randomness
 *   [-DPQB_LEN_SIZE_T]           the API's length pointers are size_t *
 *                                (default unsigned long long *)
 *   [-DPQB_SIGN_CONTEXT]         signatures only: crypto_sign and
 *                                crypto_sign_open take a context string
 *                                after the message (FIPS 204, FIPS 205:
 *                                ..., m, mlen, ctx, ctxlen, sk/pk); they are
 *                                called with the empty context
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

#include "pqb_entry.h"

#if defined(PQB_KIND_IS_SIGN) && defined(PQB_KIND_IS_KEM)
#error "define exactly one of PQB_KIND_IS_SIGN and PQB_KIND_IS_KEM"
#endif
#if !defined(PQB_KIND_IS_SIGN) && !defined(PQB_KIND_IS_KEM)
#error "define one of PQB_KIND_IS_SIGN and PQB_KIND_IS_KEM"
#endif
#ifndef PQB_NS
#error "PQB_NS must be defined (it may be empty: -DPQB_NS=)"
#endif
#if !defined(PQB_SUBMISSION_RNG) && !defined(PQB_RANDOMBYTES)
#error "PQB_RANDOMBYTES (the randomness symbol the submission calls) must be defined"
#endif

/* NS(crypto_sign) -> <PQB_NS>crypto_sign, then rescanned, so a namespaced
 * macro (NS(CRYPTO_BYTES)) expands to its value. With an empty PQB_NS the
 * plain name results. Note that the argument is macro-expanded before the
 * paste: if api.h maps a plain name with a macro, leave PQB_NS empty. */
#define PQB_NSX(a, b) a##b
#define PQB_NSY(a, b) PQB_NSX(a, b)
#define NS(x) PQB_NSY(PQB_NS, x)

#define PQB_STRX(x) #x
#define PQB_STR(x) PQB_STRX(x)
#ifdef __USER_LABEL_PREFIX__
#define PQB_ASM_NAME(sym) PQB_STR(__USER_LABEL_PREFIX__) PQB_STR(sym)
#else
#define PQB_ASM_NAME(sym) PQB_STR(sym)
#endif

#ifdef PQB_LEN_SIZE_T
typedef size_t pqb_nist_len;
#else
typedef unsigned long long pqb_nist_len;
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
 * real symbols, so that a declaration in the included headers (whatever
 * its exact types) cannot conflict with these. The return values of init
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
 * PQB_RANDOMBYTES. The private C name keeps the included headers' own
 * declaration of that name (if any, whatever its types) from conflicting.
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

#ifdef PQB_KIND_IS_SIGN

/* The context-string forms get the empty context as KAT generators pass
 * it: NULL with length 0 (liboqs's OQS_SIG_sign, which its KAT test
 * calls, does exactly this). The context is signed with the message, so
 * any other context gives other signatures and KATs that match no
 * published file. */
#ifdef PQB_SIGN_CONTEXT
#define PQB_SIGN_CTX , NULL, 0
#else
#define PQB_SIGN_CTX
#endif

static int pqb_nist_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    int rc = NS(crypto_sign_keypair)(pk, sk);
    *pk_len = (size_t)NS(CRYPTO_PUBLICKEYBYTES);
    *sk_len = (size_t)NS(CRYPTO_SECRETKEYBYTES);
    return rc;
}

/* Writes the signed message; out must hold CRYPTO_BYTES + mlen bytes. */
static int pqb_nist_sign(unsigned char *out, size_t *out_len, const unsigned char *m, size_t mlen,
                         const unsigned char *sk, size_t sk_len)
{
    pqb_nist_len smlen = 0;
    int rc;
    (void)sk_len;
    rc = NS(crypto_sign)(out, &smlen, m, (pqb_nist_len)mlen PQB_SIGN_CTX, sk);
    *out_len = (size_t)smlen;
    return rc;
}

/* Opens the signed message into a guarded scratch buffer and accepts only
 * when the recovered message is exactly m. */
static int pqb_nist_verify(const unsigned char *out, size_t out_len, const unsigned char *m,
                           size_t mlen, const unsigned char *pk, size_t pk_len)
{
    unsigned char *scratch;
    unsigned char *msg;
    pqb_nist_len opened_len = 0;
    size_t i;
    int rc;
    int guards_ok = 1;

    (void)pk_len;
    scratch = (unsigned char *)malloc(out_len + 2 * PQB_SCRATCH_GUARD);
    if (scratch == NULL)
        return -1;
    memset(scratch, PQB_SCRATCH_FILL, out_len + 2 * PQB_SCRATCH_GUARD);
    msg = scratch + PQB_SCRATCH_GUARD;

    rc = NS(crypto_sign_open)(msg, &opened_len, out, (pqb_nist_len)out_len PQB_SIGN_CTX, pk);

    for (i = 0; i < PQB_SCRATCH_GUARD; i++)
        if (scratch[i] != PQB_SCRATCH_FILL || msg[out_len + i] != PQB_SCRATCH_FILL)
            guards_ok = 0;
    if (!guards_ok || (unsigned long long)opened_len > (unsigned long long)out_len)
        rc = PQB_VERIFY_SCRATCH_OVERFLOW;
    else if (rc == 0 && ((unsigned long long)opened_len != (unsigned long long)mlen ||
                         (mlen != 0 && memcmp(msg, m, mlen) != 0)))
        rc = -1;
    free(scratch);
    return rc;
}

#else /* PQB_KIND_IS_KEM */

static int pqb_nist_keygen(unsigned char *pk, size_t *pk_len, unsigned char *sk, size_t *sk_len)
{
    int rc = NS(crypto_kem_keypair)(pk, sk);
    *pk_len = (size_t)NS(CRYPTO_PUBLICKEYBYTES);
    *sk_len = (size_t)NS(CRYPTO_SECRETKEYBYTES);
    return rc;
}

static int pqb_nist_enc(unsigned char *ct, size_t *ct_len, unsigned char *ss, size_t *ss_len,
                        const unsigned char *pk, size_t pk_len)
{
    int rc;
    (void)pk_len;
    rc = NS(crypto_kem_enc)(ct, ss, pk);
    *ct_len = (size_t)NS(CRYPTO_CIPHERTEXTBYTES);
    *ss_len = (size_t)NS(CRYPTO_BYTES);
    return rc;
}

static int pqb_nist_dec(unsigned char *ss, size_t *ss_len, const unsigned char *ct, size_t ct_len,
                        const unsigned char *sk, size_t sk_len)
{
    int rc;
    (void)ct_len;
    (void)sk_len;
    rc = NS(crypto_kem_dec)(ss, ct, sk);
    *ss_len = (size_t)NS(CRYPTO_BYTES);
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
        e->abi_version = PQB_ABI_VERSION;
        e->api = PQB_API_NIST;
        e->algname = NS(CRYPTO_ALGNAME);
        e->pk_bytes = (size_t)NS(CRYPTO_PUBLICKEYBYTES);
        e->sk_bytes = (size_t)NS(CRYPTO_SECRETKEYBYTES);
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
        e->sig_bytes = (size_t)NS(CRYPTO_BYTES);
        e->sig_attached = 1;
        e->sign = pqb_nist_sign;
        e->verify = pqb_nist_verify;
#else
        e->kind = PQB_KIND_KEM;
        e->ct_bytes = (size_t)NS(CRYPTO_CIPHERTEXTBYTES);
        e->ss_bytes = (size_t)NS(CRYPTO_BYTES);
        e->enc = pqb_nist_enc;
        e->dec = pqb_nist_dec;
#endif
        pqb_nist_table_ready = 1;
    }
    return &pqb_nist_table;
}
