/*
 * sm3.c - SM3 cryptographic hash (GB/T 32905-2016), pqbench ICCS helper
 * STAND-IN.
 *
 * Stand-in for the hash used by the official NGCC/ICCS auxfunc.c; not the
 * official code.  Demonstration quality only: not reviewed for side channels
 * and not intended for protecting anything.
 */
#include <string.h>
#include "sm3.h"

#define ROTL32(x, n) ((uint32_t)(((x) << ((n) & 31)) | ((x) >> ((32 - ((n) & 31)) & 31))))
#define P0(x) ((x) ^ ROTL32((x), 9) ^ ROTL32((x), 17))
#define P1(x) ((x) ^ ROTL32((x), 15) ^ ROTL32((x), 23))

static const uint32_t standin_sm3_iv[8] = {
    0x7380166fUL, 0x4914b2b9UL, 0x172442d7UL, 0xda8a0600UL,
    0xa96f30bcUL, 0x163138aaUL, 0xe38dee4dUL, 0xb0fb0e4eUL
};

static uint32_t load_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void store_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void sm3_compress(uint32_t h[8], const unsigned char block[64])
{
    uint32_t w[68], w1[64];
    uint32_t a, b, c, d, e, f, g, hh;
    uint32_t ss1, ss2, tt1, tt2, ff, gg, t;
    int j;

    for (j = 0; j < 16; j++)
        w[j] = load_be32(block + 4 * j);
    for (j = 16; j < 68; j++) {
        t = w[j - 16] ^ w[j - 9] ^ ROTL32(w[j - 3], 15);
        w[j] = P1(t) ^ ROTL32(w[j - 13], 7) ^ w[j - 6];
    }
    for (j = 0; j < 64; j++)
        w1[j] = w[j] ^ w[j + 4];

    a = h[0]; b = h[1]; c = h[2]; d = h[3];
    e = h[4]; f = h[5]; g = h[6]; hh = h[7];

    for (j = 0; j < 64; j++) {
        t = (j < 16) ? 0x79cc4519UL : 0x7a879d8aUL;
        ss1 = ROTL32(ROTL32(a, 12) + e + ROTL32(t, (unsigned)j), 7);
        ss2 = ss1 ^ ROTL32(a, 12);
        if (j < 16) {
            ff = a ^ b ^ c;
            gg = e ^ f ^ g;
        } else {
            ff = (a & b) | (a & c) | (b & c);
            gg = (e & f) | (~e & g);
        }
        tt1 = ff + d + ss2 + w1[j];
        tt2 = gg + hh + ss1 + w[j];
        d = c;
        c = ROTL32(b, 9);
        b = a;
        a = tt1;
        hh = g;
        g = ROTL32(f, 19);
        f = e;
        e = P0(tt2);
    }

    h[0] ^= a; h[1] ^= b; h[2] ^= c; h[3] ^= d;
    h[4] ^= e; h[5] ^= f; h[6] ^= g; h[7] ^= hh;
}

void standin_sm3_init(standin_sm3_ctx *ctx)
{
    memcpy(ctx->h, standin_sm3_iv, sizeof ctx->h);
    ctx->buf_len = 0;
    ctx->total_bytes = 0;
}

void standin_sm3_update(standin_sm3_ctx *ctx, const unsigned char *data, size_t len)
{
    size_t take;

    if (len == 0)
        return;
    ctx->total_bytes += (unsigned long long)len;
    if (ctx->buf_len > 0) {
        take = 64 - ctx->buf_len;
        if (take > len)
            take = len;
        memcpy(ctx->buf + ctx->buf_len, data, take);
        ctx->buf_len += (unsigned int)take;
        data += take;
        len -= take;
        if (ctx->buf_len < 64)
            return;
        sm3_compress(ctx->h, ctx->buf);
        ctx->buf_len = 0;
    }
    while (len >= 64) {
        sm3_compress(ctx->h, data);
        data += 64;
        len -= 64;
    }
    if (len > 0) {
        memcpy(ctx->buf, data, len);
        ctx->buf_len = (unsigned int)len;
    }
}

void standin_sm3_final_bits(standin_sm3_ctx *ctx, unsigned char tail_byte,
                            unsigned int tail_bits, unsigned char out[32])
{
    unsigned long long bit_len;
    unsigned char mask;
    int i;

    tail_bits &= 7;
    bit_len = ctx->total_bytes * 8ULL + tail_bits;
    /* the partial byte's valid high bits, then the single 1 bit */
    mask = (unsigned char)(0xFF00u >> tail_bits);
    ctx->buf[ctx->buf_len++] = (unsigned char)((tail_byte & mask) | (0x80u >> tail_bits));
    if (ctx->buf_len > 56) {
        memset(ctx->buf + ctx->buf_len, 0, 64 - ctx->buf_len);
        sm3_compress(ctx->h, ctx->buf);
        ctx->buf_len = 0;
    }
    memset(ctx->buf + ctx->buf_len, 0, 56 - ctx->buf_len);
    for (i = 0; i < 8; i++)
        ctx->buf[56 + i] = (unsigned char)(bit_len >> (56 - 8 * i));
    sm3_compress(ctx->h, ctx->buf);
    for (i = 0; i < 8; i++)
        store_be32(out + 4 * i, ctx->h[i]);
    memset(ctx, 0, sizeof *ctx);
}

void standin_sm3_final(standin_sm3_ctx *ctx, unsigned char out[32])
{
    standin_sm3_final_bits(ctx, 0, 0, out);
}

void sm3_digest(const unsigned char *msg, unsigned long long msg_bits, unsigned char out[32])
{
    standin_sm3_ctx ctx;
    size_t whole = (size_t)(msg_bits / 8);
    unsigned int rest = (unsigned int)(msg_bits % 8);

    standin_sm3_init(&ctx);
    if (whole > 0)
        standin_sm3_update(&ctx, msg, whole);
    standin_sm3_final_bits(&ctx, rest ? msg[whole] : 0, rest, out);
}
