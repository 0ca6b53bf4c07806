/*
 * iccs_crypthash.c - CryptHash over one ICCS helper of the component a
 * campaign names, so the helpers are built, self-checked and timed exactly
 * like hash candidates (the baseline of the summary's "Hash functions").
 *
 * Compiled into an ICCS baseline instance with the component's sources and
 * include dirs, one of -DPQB_ICCS_HELPER_sm3hash / _pseudohash / _pseudoXOF,
 * and -DPQB_HASH_BITS=<width>. The helpers' prototypes come from the
 * component's auxfunc.h.
 */
#include "auxfunc.h"
#include "pqb_iccs.h"

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest)
{
    unsigned long long out_bits = (unsigned long long)digest_len_bits;
#if defined(PQB_ICCS_HELPER_sm3hash)
    return sm3hash(out_bits, (unsigned char *)msg, msg_len_bits, digest);
#elif defined(PQB_ICCS_HELPER_pseudohash)
    return pseudohash(out_bits, (unsigned char *)msg, msg_len_bits, digest);
#elif defined(PQB_ICCS_HELPER_pseudoXOF)
    return pseudoXOF(out_bits, (unsigned char *)msg, msg_len_bits, digest);
#else
#error "define PQB_ICCS_HELPER_sm3hash, _pseudohash or _pseudoXOF"
#endif
}

int pqb_iccs_sm3(const unsigned char *msg, unsigned long long msg_bits, unsigned char *out)
{
    return sm3hash(256, (unsigned char *)msg, msg_bits, out);
}
