/*
 * pqb_iccs.h - pqbench's CryptHash over one ICCS helper, for measuring the
 * helpers as the baseline of hash candidates (iccs_crypthash.c).
 */
#ifndef PQB_ICCS_H
#define PQB_ICCS_H

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);

/* The component's sm3hash at 256 bits (self-check). */
__attribute__((visibility("hidden"))) int pqb_iccs_sm3(const unsigned char *msg,
                                                       unsigned long long msg_bits,
                                                       unsigned char *out);

#endif
