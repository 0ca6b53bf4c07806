/*
 * api.h - NGCC KEM API of Pebble, a DEMONSTRATION module-LWE KEM bundled
 * with pqbench.  NOT a secure scheme; do not use it to protect anything.
 */
#ifndef PEBBLE_API_H
#define PEBBLE_API_H

unsigned long long kem_get_pk_len_bytes(void);
unsigned long long kem_get_sk_len_bytes(void);
unsigned long long kem_get_ss_len_bytes(void);
unsigned long long kem_get_ct_len_bytes(void);

int kem_keygen(unsigned char *pk, unsigned long long *pk_len,
               unsigned char *sk, unsigned long long *sk_len);
int kem_enc(const unsigned char *pk, unsigned long long pk_len,
            unsigned char *ss, unsigned long long *ss_len,
            unsigned char *ct, unsigned long long *ct_len);
int kem_dec(const unsigned char *sk, unsigned long long sk_len,
            const unsigned char *ct, unsigned long long ct_len,
            unsigned char *ss, unsigned long long *ss_len);

#endif
