/*
 * auxfunc.c - NGCC/ICCS symmetric helper functions, pqbench STAND-IN.
 *
 * Stand-in for the official NGCC/ICCS auxfunc.c (see auxfunc.h and
 * README.md); users evaluating real submissions point pqbench at the
 * official file instead.  Demonstration code only, not a secure or reviewed
 * implementation.
 */
#include <string.h>
#include "sm3.h"
#include "auxfunc.h"

/* largest output the 32-bit block counter can address, in bits */
#define KDF_MAX_OUT_BITS (0xFFFFFFFFULL * 256ULL)

static void copy_truncated(unsigned char *out, const unsigned char *src,
                           unsigned long long out_bits)
{
    size_t nbytes = (size_t)((out_bits + 7) / 8);
    unsigned int rest = (unsigned int)(out_bits % 8);

    memcpy(out, src, nbytes);
    if (rest)
        out[nbytes - 1] &= (unsigned char)(0xFF00u >> rest);
}

int sm3hash(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out)
{
    unsigned char digest[32];

    if (out_bits > 256)
        return -1;
    if ((msg == NULL && msg_bits > 0) || (out == NULL && out_bits > 0))
        return -1;
    sm3_digest(msg, msg_bits, digest);
    if (out_bits > 0)
        copy_truncated(out, digest, out_bits);
    memset(digest, 0, sizeof digest);
    return 0;
}

/* KDF-SM3 over (prefix || msg), prefix of 0 or 1 byte. */
static int kdf_sm3(unsigned long long out_bits, const unsigned char *prefix, size_t prefix_len,
                   const unsigned char *msg, unsigned long long msg_bits, unsigned char *out)
{
    standin_sm3_ctx base, ctx;
    unsigned char block[32], ctr_be[4];
    unsigned long long done = 0, need;
    uint32_t ctr = 1;
    size_t take;

    if (msg_bits % 8 != 0 || out_bits > KDF_MAX_OUT_BITS)
        return -1;
    if ((msg == NULL && msg_bits > 0) || (out == NULL && out_bits > 0))
        return -1;

    standin_sm3_init(&base);
    if (prefix_len > 0)
        standin_sm3_update(&base, prefix, prefix_len);
    if (msg_bits > 0)
        standin_sm3_update(&base, msg, (size_t)(msg_bits / 8));

    need = (out_bits + 7) / 8;
    while (done < need) {
        ctr_be[0] = (unsigned char)(ctr >> 24);
        ctr_be[1] = (unsigned char)(ctr >> 16);
        ctr_be[2] = (unsigned char)(ctr >> 8);
        ctr_be[3] = (unsigned char)ctr;
        ctx = base;
        standin_sm3_update(&ctx, ctr_be, 4);
        standin_sm3_final(&ctx, block);
        take = (need - done < 32) ? (size_t)(need - done) : 32;
        memcpy(out + done, block, take);
        done += take;
        ctr++;
    }
    if (out_bits % 8)
        out[need - 1] &= (unsigned char)(0xFF00u >> (unsigned)(out_bits % 8));
    memset(block, 0, sizeof block);
    memset(&base, 0, sizeof base);
    return 0;
}

int pseudoXOF(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out)
{
    return kdf_sm3(out_bits, NULL, 0, msg, msg_bits, out);
}

int pseudohash(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out)
{
    static const unsigned char domain = 0x01;

    return kdf_sm3(out_bits, &domain, 1, msg, msg_bits, out);
}
