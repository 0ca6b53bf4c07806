/*
 * adapter_nist.h - the NIST adapter's two halves and what joins them.
 *
 * adapter_nist_api.c is the half that sees the submission: compiled with
 * the instance's flags, defines, include directories and api header, it
 * calls the namespaced crypto_* functions and reads the CRYPTO_* sizes.
 * adapter_nist.c is the rest (the randomness, the guarded verify, the
 * entry table): it never sees the submission's header or defines, so one
 * object of it serves every instance of one kind, API options and flag
 * set, and a cold build compiles it once instead of once per instance.
 *
 * Lengths are size_t here; the API half converts them to the API's own
 * length type (-DPQB_LEN_SIZE_T or unsigned long long). Both halves are
 * hidden inside the library.
 */
#ifndef PQB_ADAPTER_NIST_H
#define PQB_ADAPTER_NIST_H

#include <stddef.h>

#if defined(PQB_KIND_IS_SIGN) && defined(PQB_KIND_IS_KEM)
#error "define exactly one of PQB_KIND_IS_SIGN and PQB_KIND_IS_KEM"
#endif
#if !defined(PQB_KIND_IS_SIGN) && !defined(PQB_KIND_IS_KEM)
#error "define one of PQB_KIND_IS_SIGN and PQB_KIND_IS_KEM"
#endif

#define PQB_NIST_HIDDEN __attribute__((visibility("hidden")))

/* The CRYPTO_* figures and CRYPTO_ALGNAME, as the api header gives them. */
typedef struct pqb_nist_figures {
    const char *algname;
    size_t pk_bytes;
    size_t sk_bytes;
    size_t bytes;    /* CRYPTO_BYTES: the signature's or the shared secret's */
    size_t ct_bytes; /* CRYPTO_CIPHERTEXTBYTES (KEMs; 0 for signatures) */
} pqb_nist_figures;

PQB_NIST_HIDDEN void pqb_nist_api_figures(pqb_nist_figures *out);
PQB_NIST_HIDDEN int pqb_nist_api_keypair(unsigned char *pk, unsigned char *sk);

#ifdef PQB_KIND_IS_SIGN
/* crypto_sign and crypto_sign_open (with the empty context under
 * -DPQB_SIGN_CONTEXT). */
PQB_NIST_HIDDEN int pqb_nist_api_sign(unsigned char *sm, size_t *smlen, const unsigned char *m,
                                      size_t mlen, const unsigned char *sk);
PQB_NIST_HIDDEN int pqb_nist_api_open(unsigned char *m, size_t *mlen, const unsigned char *sm,
                                      size_t smlen, const unsigned char *pk);
#else
PQB_NIST_HIDDEN int pqb_nist_api_enc(unsigned char *ct, unsigned char *ss,
                                     const unsigned char *pk);
PQB_NIST_HIDDEN int pqb_nist_api_dec(unsigned char *ss, const unsigned char *ct,
                                     const unsigned char *sk);
#endif

#endif
