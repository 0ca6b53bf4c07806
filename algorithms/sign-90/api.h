/*
 * api.h - NGCC signature API of Wintertide, a DEMONSTRATION Winternitz-style
 * one-time signature bundled with pqbench.  NOT a secure scheme (one-time
 * keys, no review); do not use it to protect anything.
 */
#ifndef WINTERTIDE_API_H
#define WINTERTIDE_API_H

unsigned long long sig_get_pk_len_bytes(void);
unsigned long long sig_get_sk_len_bytes(void);
unsigned long long sig_get_sn_len_bytes(void);   /* maximum signature length */

int sig_keygen(unsigned char *pk, unsigned long long *pk_len,
               unsigned char *sk, unsigned long long *sk_len);
int sig_sign(const unsigned char *sk, unsigned long long sk_len,
             const unsigned char *m, unsigned long long m_len,
             unsigned char *sn, unsigned long long *sn_len);
int sig_verify(const unsigned char *pk, unsigned long long pk_len,
               const unsigned char *sn, unsigned long long sn_len,
               const unsigned char *m, unsigned long long m_len);

#endif
