/*
 * aes256.c - AES-256 block encryption (FIPS-197), see aes256.h.
 */
#include "aes256.h"

#include <string.h>

/* Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1. */
static unsigned char pqb_aes_xtime(unsigned char a)
{
    return (unsigned char)((a << 1) ^ ((a & 0x80u) ? 0x1bu : 0x00u));
}

static unsigned char pqb_aes_gmul(unsigned char a, unsigned char b)
{
    unsigned char r = 0;
    while (b != 0) {
        if (b & 1u)
            r ^= a;
        a = pqb_aes_xtime(a);
        b >>= 1;
    }
    return r;
}

static unsigned char pqb_aes_rotl8(unsigned char a, unsigned n)
{
    return (unsigned char)((a << n) | (a >> (8u - n)));
}

/* S-box, filled once by pqb_aes_build_sbox(). */
static unsigned char pqb_aes_sbox[256];
static int pqb_aes_sbox_ready;

static void pqb_aes_build_sbox(void)
{
    unsigned x;
    for (x = 0; x < 256; x++) {
        /* Inverse as a^254 (a^-1 for a != 0, and 0 for 0). */
        unsigned char a = (unsigned char)x;
        unsigned char inv = 1;
        unsigned char sq = a;
        unsigned e = 254;
        while (e != 0) {
            if (e & 1u)
                inv = pqb_aes_gmul(inv, sq);
            sq = pqb_aes_gmul(sq, sq);
            e >>= 1;
        }
        if (x == 0)
            inv = 0;
        /* Affine transformation. */
        pqb_aes_sbox[x] = (unsigned char)(inv ^ pqb_aes_rotl8(inv, 1) ^ pqb_aes_rotl8(inv, 2) ^
                                          pqb_aes_rotl8(inv, 3) ^ pqb_aes_rotl8(inv, 4) ^ 0x63u);
    }
    pqb_aes_sbox_ready = 1;
}

/* Built when the executable or library is loaded, so the lazy path in
 * pqb_aes256_init() normally never runs (and never races). */
__attribute__((constructor)) static void pqb_aes_sbox_ctor(void)
{
    if (!pqb_aes_sbox_ready)
        pqb_aes_build_sbox();
}

void pqb_aes256_init(pqb_aes256_ctx *ctx, const unsigned char key[32])
{
    unsigned char *w = ctx->rk; /* 60 words of 4 bytes */
    unsigned char rcon = 1;
    unsigned i;

    if (!pqb_aes_sbox_ready)
        pqb_aes_build_sbox();

    memcpy(w, key, 32);
    for (i = 8; i < 4 * (PQB_AES256_ROUNDS + 1); i++) {
        unsigned char t[4];
        memcpy(t, w + 4 * (i - 1), 4);
        if (i % 8 == 0) {
            /* RotWord, SubWord, xor Rcon */
            unsigned char t0 = t[0];
            t[0] = (unsigned char)(pqb_aes_sbox[t[1]] ^ rcon);
            t[1] = pqb_aes_sbox[t[2]];
            t[2] = pqb_aes_sbox[t[3]];
            t[3] = pqb_aes_sbox[t0];
            rcon = pqb_aes_xtime(rcon);
        } else if (i % 8 == 4) {
            t[0] = pqb_aes_sbox[t[0]];
            t[1] = pqb_aes_sbox[t[1]];
            t[2] = pqb_aes_sbox[t[2]];
            t[3] = pqb_aes_sbox[t[3]];
        }
        w[4 * i + 0] = (unsigned char)(w[4 * (i - 8) + 0] ^ t[0]);
        w[4 * i + 1] = (unsigned char)(w[4 * (i - 8) + 1] ^ t[1]);
        w[4 * i + 2] = (unsigned char)(w[4 * (i - 8) + 2] ^ t[2]);
        w[4 * i + 3] = (unsigned char)(w[4 * (i - 8) + 3] ^ t[3]);
    }
}

/* The state is kept column by column: s[r + 4c] is row r of column c, which
 * is also the order of the input, output and round-key bytes. */

static void pqb_aes_add_round_key(unsigned char s[16], const unsigned char *rk)
{
    unsigned i;
    for (i = 0; i < 16; i++)
        s[i] ^= rk[i];
}

static void pqb_aes_sub_shift(unsigned char s[16])
{
    unsigned char t[16];
    unsigned r, c;
    for (c = 0; c < 4; c++)
        for (r = 0; r < 4; r++)
            t[r + 4 * c] = pqb_aes_sbox[s[r + 4 * ((c + r) & 3u)]];
    memcpy(s, t, 16);
}

static void pqb_aes_mix_columns(unsigned char s[16])
{
    unsigned c;
    for (c = 0; c < 4; c++) {
        unsigned char *col = s + 4 * c;
        unsigned char a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
        unsigned char all = (unsigned char)(a0 ^ a1 ^ a2 ^ a3);
        /* b_i = a_i ^ all ^ 2 (a_i ^ a_{i+1}) */
        col[0] = (unsigned char)(a0 ^ all ^ pqb_aes_xtime((unsigned char)(a0 ^ a1)));
        col[1] = (unsigned char)(a1 ^ all ^ pqb_aes_xtime((unsigned char)(a1 ^ a2)));
        col[2] = (unsigned char)(a2 ^ all ^ pqb_aes_xtime((unsigned char)(a2 ^ a3)));
        col[3] = (unsigned char)(a3 ^ all ^ pqb_aes_xtime((unsigned char)(a3 ^ a0)));
    }
}

void pqb_aes256_encrypt(const pqb_aes256_ctx *ctx, const unsigned char in[16],
                        unsigned char out[16])
{
    unsigned char s[16];
    unsigned round;

    memcpy(s, in, 16);
    pqb_aes_add_round_key(s, ctx->rk);
    for (round = 1; round < PQB_AES256_ROUNDS; round++) {
        pqb_aes_sub_shift(s);
        pqb_aes_mix_columns(s);
        pqb_aes_add_round_key(s, ctx->rk + 16 * round);
    }
    pqb_aes_sub_shift(s);
    pqb_aes_add_round_key(s, ctx->rk + 16 * PQB_AES256_ROUNDS);
    memcpy(out, s, 16);
}
