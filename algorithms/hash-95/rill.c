/*
 * rill.c - Rill, a DEMONSTRATION hash function on the NGCC hash API,
 * bundled with pqbench. NOT A SECURE DESIGN: it exists so that pqbench has
 * a hash candidate over the ICCS helpers whose cost differs from theirs.
 *
 * Merkle-Damgard over sm3hash: h = 0^256; for every full 64-byte block B,
 * h = sm3hash(256, h || B); then the digest is
 *   pseudoXOF(d, h || tail || msg_bits as 8 bytes big-endian)
 * where tail is the last partial block (its last byte masked to the
 * message's high bits). Messages are bit strings, MSB first. Any digest
 * width that is a multiple of 8 up to 2^16 bits.
 */
#include <string.h>

#include "api.h"
#include "auxfunc.h"

#define BLOCK 64

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest)
{
    unsigned char chain[32 + BLOCK], tail[32 + BLOCK + 8];
    unsigned long long full = msg_len_bits / (8 * BLOCK), i;
    size_t rest_bits = (size_t)(msg_len_bits - full * 8 * BLOCK), rest = (rest_bits + 7) / 8;
    int k;

    if (digest_len_bits <= 0 || digest_len_bits % 8 != 0 || digest_len_bits > 65536 ||
        (msg == NULL && msg_len_bits > 0))
        return -1;
    memset(chain, 0, 32);
    for (i = 0; i < full; i++) {
        memcpy(chain + 32, msg + i * BLOCK, BLOCK);
        if (sm3hash(256, chain, 8ULL * sizeof chain, chain) != 0)
            return -1;
    }
    memcpy(tail, chain, 32);
    if (rest > 0)
        memcpy(tail + 32, msg + full * BLOCK, rest);
    if (rest_bits % 8)
        tail[32 + rest - 1] &= (unsigned char)(0xFF00u >> (rest_bits % 8));
    for (k = 0; k < 8; k++)
        tail[32 + rest + (size_t)k] = (unsigned char)(msg_len_bits >> (56 - 8 * k));
    return pseudoXOF((unsigned long long)digest_len_bits, tail, 8ULL * (32 + rest + 8), digest);
}
