/*
 * api.h - NGCC KEX API of Brook, a DEMONSTRATION two-pass key exchange
 * bundled with pqbench. NOT a secure scheme.
 */
#ifndef BROOK_API_H
#define BROOK_API_H

unsigned long long kex_get_passes_num(void);
unsigned long long kex_get_pk_len_bytes(void);
unsigned long long kex_get_sk_len_bytes(void);
unsigned long long kex_get_sta_len_bytes(void);
unsigned long long kex_get_stb_len_bytes(void);
unsigned long long kex_get_ss_len_bytes(void);
unsigned long long kex_get_total_msg_len_bytes(void);

int kex_init_a(unsigned char *pka, unsigned long long *pka_len, unsigned char *ska,
               unsigned long long *ska_len, unsigned char *sta, unsigned long long *sta_len);
int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len, unsigned char *skb,
               unsigned long long *skb_len, unsigned char *stb, unsigned long long *stb_len);
int kex_generate_pass1_msg_a(const unsigned char *ska, unsigned long long ska_len,
                             const unsigned char *pkb, unsigned long long pkb_len,
                             unsigned char *sta, unsigned long long *sta_len, unsigned char *m1,
                             unsigned long long *m1_len);
int kex_generate_pass2_msg_b(const unsigned char *skb, unsigned long long skb_len,
                             const unsigned char *pka, unsigned long long pka_len,
                             const unsigned char *m1, unsigned long long m1_len,
                             unsigned char *stb, unsigned long long *stb_len, unsigned char *m2,
                             unsigned long long *m2_len);
int kex_derive_ss_a(const unsigned char *ska, unsigned long long ska_len,
                    const unsigned char *pkb, unsigned long long pkb_len, const unsigned char *mb,
                    unsigned long long mb_len, const unsigned char *sta,
                    unsigned long long sta_len, unsigned char *ssa, unsigned long long *ssa_len);
int kex_derive_ss_b(const unsigned char *skb, unsigned long long skb_len,
                    const unsigned char *pka, unsigned long long pka_len, const unsigned char *ma,
                    unsigned long long ma_len, const unsigned char *stb,
                    unsigned long long stb_len, unsigned char *ssb, unsigned long long *ssb_len);

#endif
