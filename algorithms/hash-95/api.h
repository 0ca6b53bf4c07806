/*
 * api.h - NGCC hash API of Rill, a DEMONSTRATION hash function bundled with
 * pqbench. NOT a secure design.
 */
#ifndef RILL_API_H
#define RILL_API_H

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);

#endif
