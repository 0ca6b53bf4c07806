/*
 * adapter_nist_api.c - the half of the NIST adapter that sees the
 * submission (see adapter_nist.h). Compiled into every NIST-API instance
 * library with the instance's own flags, defines and include directories,
 * and:
 *   -include <api header>        declares crypto_* and the CRYPTO_* macros
 *   -DPQB_KIND_IS_SIGN | -DPQB_KIND_IS_KEM
 *   -DPQB_NS=<prefix>            namespace of every symbol and macro; always
 *                                defined, possibly empty (-DPQB_NS=)
 *   [-DPQB_SFX=<suffix>]         tail of the API function names, not of the
 *                                macros (crypto_kem_keypair_Frodo640)
 *   [-DPQB_LEN_SIZE_T]           the API's length pointers are size_t *
 *                                (default unsigned long long *)
 *   [-DPQB_SIGN_CONTEXT]         signatures only: crypto_sign and
 *                                crypto_sign_open take a context string
 *                                after the message (FIPS 204, FIPS 205:
 *                                ..., m, mlen, ctx, ctxlen, sk/pk); they are
 *                                called with the empty context
 *   -I <this directory>
 */
#include "adapter_nist.h"

#ifndef PQB_NS
#error "PQB_NS must be defined (it may be empty: -DPQB_NS=)"
#endif

/* NS(crypto_sign) -> <PQB_NS>crypto_sign, then rescanned, so a namespaced
 * macro (NS(CRYPTO_BYTES)) expands to its value. With an empty PQB_NS the
 * plain name results. Note that the argument is macro-expanded before the
 * paste: if api.h maps a plain name with a macro, leave PQB_NS empty. */
#define PQB_NSX(a, b) a##b
#define PQB_NSY(a, b) PQB_NSX(a, b)
#define NS(x) PQB_NSY(PQB_NS, x)
/* An API function: namespaced, then given the suffix (empty: none). */
#ifndef PQB_SFX
#define PQB_SFX
#endif
#define FN(x) PQB_NSY(NS(x), PQB_SFX)

#ifdef PQB_LEN_SIZE_T
typedef size_t pqb_nist_len;
#else
typedef unsigned long long pqb_nist_len;
#endif

/* First in the file: a namespace that does not fit the header shows in
 * its first error as the paste onto CRYPTO_PUBLICKEYBYTES. */
void pqb_nist_api_figures(pqb_nist_figures *out)
{
    out->pk_bytes = (size_t)NS(CRYPTO_PUBLICKEYBYTES);
    out->sk_bytes = (size_t)NS(CRYPTO_SECRETKEYBYTES);
    out->bytes = (size_t)NS(CRYPTO_BYTES);
#ifdef PQB_KIND_IS_SIGN
    out->ct_bytes = 0;
#else
    out->ct_bytes = (size_t)NS(CRYPTO_CIPHERTEXTBYTES);
#endif
    out->algname = NS(CRYPTO_ALGNAME);
}

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

int pqb_nist_api_keypair(unsigned char *pk, unsigned char *sk)
{
    return FN(crypto_sign_keypair)(pk, sk);
}

int pqb_nist_api_sign(unsigned char *sm, size_t *smlen, const unsigned char *m, size_t mlen,
                      const unsigned char *sk)
{
    pqb_nist_len len = 0;
    int rc = FN(crypto_sign)(sm, &len, m, (pqb_nist_len)mlen PQB_SIGN_CTX, sk);
    *smlen = (size_t)len;
    return rc;
}

int pqb_nist_api_open(unsigned char *m, size_t *mlen, const unsigned char *sm, size_t smlen,
                      const unsigned char *pk)
{
    pqb_nist_len len = 0;
    int rc = FN(crypto_sign_open)(m, &len, sm, (pqb_nist_len)smlen PQB_SIGN_CTX, pk);
    *mlen = (size_t)len;
    return rc;
}

#else /* PQB_KIND_IS_KEM */

int pqb_nist_api_keypair(unsigned char *pk, unsigned char *sk)
{
    return FN(crypto_kem_keypair)(pk, sk);
}

int pqb_nist_api_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk)
{
    return FN(crypto_kem_enc)(ct, ss, pk);
}

int pqb_nist_api_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk)
{
    return FN(crypto_kem_dec)(ss, ct, sk);
}

#endif
