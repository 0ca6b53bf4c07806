/*
 * aes256.c - AES-256 encryption (FIPS-197) for the CTR_DRBG, see aes256.h.
 *
 * A 64-byte CTR_DRBG draw on an AMD EPYC VM (TSC ticks, `pqb-drbg --bench`):
 * ~130 with aesni, ~1,400 with table, against ~12,800 with the byte-wise AES
 * this file used to hold. Of the aesni figure, ~80 is the key expansion that
 * every draw needs (the DRBG re-keys after each generate).
 */
#include "aes256.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PQB_AES_HAVE_AESNI 1
#include <cpuid.h>
#include <emmintrin.h>
#include <wmmintrin.h>
#else
#define PQB_AES_HAVE_AESNI 0
#endif

#if defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PQB_AES_HAVE_ARMV8 1
#include <arm_neon.h>
#include <sys/auxv.h>
#ifndef HWCAP_AES
#define HWCAP_AES (1UL << 3)
#endif
#ifdef __clang__
#define PQB_AES_ARM_TARGET __attribute__((target("aes")))
#else
#define PQB_AES_ARM_TARGET __attribute__((target("+crypto")))
#endif
#else
#define PQB_AES_HAVE_ARMV8 0
#endif

/* ---- tables, derived at load time ------------------------------------- */

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

static uint32_t pqb_aes_rotl32(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32u - n));
}

/* Words are little-endian views of 4 bytes: byte j of a column (its row j)
 * is bits 8j..8j+7, whatever the host's byte order. */
static uint32_t pqb_aes_load32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static void pqb_aes_store32(unsigned char *p, uint32_t x)
{
    p[0] = (unsigned char)x;
    p[1] = (unsigned char)(x >> 8);
    p[2] = (unsigned char)(x >> 16);
    p[3] = (unsigned char)(x >> 24);
}

/* The CTR_DRBG's V: a 128-bit big-endian counter, kept as two halves. */
static uint64_t pqb_aes_load_be64(const unsigned char *p)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    return __builtin_bswap64(x);
#else
    uint64_t x = 0;
    int i;
    for (i = 0; i < 8; i++)
        x = (x << 8) | p[i];
    return x;
#endif
}

static void pqb_aes_store_be64(unsigned char *p, uint64_t x)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
    memcpy(p, &x, 8);
#else
    int i;
    for (i = 7; i >= 0; i--) {
        p[i] = (unsigned char)x;
        x >>= 8;
    }
#endif
}

static unsigned char pqb_aes_sbox[256];
/* pqb_aes_t0[x] = column (2 S[x], S[x], S[x], 3 S[x]): SubBytes then
 * MixColumns of a row-0 byte; rows 1..3 use it rotated by 8, 16, 24 bits. */
static uint32_t pqb_aes_t0[256];
static uint32_t pqb_aes_t1[256];
static uint32_t pqb_aes_t2[256];
static uint32_t pqb_aes_t3[256];
static int pqb_aes_tables_ready;

static void pqb_aes_build_tables(void)
{
    unsigned x;
    for (x = 0; x < 256; x++) {
        /* Inverse as a^254 (a^-1 for a != 0, and 0 for 0). */
        unsigned char a = (unsigned char)x;
        unsigned char inv = 1;
        unsigned char sq = a;
        unsigned e = 254;
        unsigned char s;
        uint32_t t;
        while (e != 0) {
            if (e & 1u)
                inv = pqb_aes_gmul(inv, sq);
            sq = pqb_aes_gmul(sq, sq);
            e >>= 1;
        }
        if (x == 0)
            inv = 0;
        /* Affine transformation. */
        s = (unsigned char)(inv ^ pqb_aes_rotl8(inv, 1) ^ pqb_aes_rotl8(inv, 2) ^
                            pqb_aes_rotl8(inv, 3) ^ pqb_aes_rotl8(inv, 4) ^ 0x63u);
        pqb_aes_sbox[x] = s;
        t = (uint32_t)pqb_aes_xtime(s) | ((uint32_t)s << 8) | ((uint32_t)s << 16) |
            ((uint32_t)(pqb_aes_xtime(s) ^ s) << 24);
        pqb_aes_t0[x] = t;
        pqb_aes_t1[x] = pqb_aes_rotl32(t, 8);
        pqb_aes_t2[x] = pqb_aes_rotl32(t, 16);
        pqb_aes_t3[x] = pqb_aes_rotl32(t, 24);
    }
    pqb_aes_tables_ready = 1;
}

/* ---- portable key expansion and table AES ------------------------------ */

static uint32_t pqb_aes_subword_table(uint32_t w)
{
    return (uint32_t)pqb_aes_sbox[w & 0xffu] | ((uint32_t)pqb_aes_sbox[(w >> 8) & 0xffu] << 8) |
           ((uint32_t)pqb_aes_sbox[(w >> 16) & 0xffu] << 16) |
           ((uint32_t)pqb_aes_sbox[w >> 24] << 24);
}

/* FIPS-197 key expansion over little-endian words; subword applies the
 * S-box to each byte (a table here, the AES instructions on AArch64). */
static void pqb_aes_expand_words(pqb_aes256_ctx *ctx, const unsigned char key[32],
                                 uint32_t (*subword)(uint32_t))
{
    uint32_t w[4 * (PQB_AES256_ROUNDS + 1)];
    uint32_t rcon = 1;
    unsigned i;

    for (i = 0; i < 8; i++)
        w[i] = pqb_aes_load32(key + 4 * i);
    for (i = 8; i < 4 * (PQB_AES256_ROUNDS + 1); i++) {
        uint32_t t = w[i - 1];
        if (i % 8 == 0) {
            /* RotWord moves byte 1 to byte 0: a right rotation here. */
            t = subword((t >> 8) | (t << 24)) ^ rcon;
            rcon = pqb_aes_xtime((unsigned char)rcon);
        } else if (i % 8 == 4) {
            t = subword(t);
        }
        w[i] = w[i - 8] ^ t;
    }
    for (i = 0; i < 4 * (PQB_AES256_ROUNDS + 1); i++)
        pqb_aes_store32(ctx->rk + 4 * i, w[i]);
}

static void pqb_aes_expand_table(pqb_aes256_ctx *ctx, const unsigned char key[32])
{
    pqb_aes_expand_words(ctx, key, pqb_aes_subword_table);
}

/* One round's column c: the bytes of row r come from column c + r. */
#define PQB_AES_TCOL(a, b, c, d)                                                                  \
    (pqb_aes_t0[(a) & 0xffu] ^ pqb_aes_t1[((b) >> 8) & 0xffu] ^ pqb_aes_t2[((c) >> 16) & 0xffu] ^ \
     pqb_aes_t3[(d) >> 24])
#define PQB_AES_SCOL(a, b, c, d)                                                                \
    ((uint32_t)pqb_aes_sbox[(a) & 0xffu] | ((uint32_t)pqb_aes_sbox[((b) >> 8) & 0xffu] << 8) | \
     ((uint32_t)pqb_aes_sbox[((c) >> 16) & 0xffu] << 16) |                                      \
     ((uint32_t)pqb_aes_sbox[(d) >> 24] << 24))

/* Encrypts counters hi:lo + 1 .. + n into out. */
static void pqb_aes_ctr_table(const pqb_aes256_ctx *ctx, uint64_t hi, uint64_t lo,
                              unsigned char *out, size_t n)
{
    const unsigned char *rk = ctx->rk;
    unsigned char in[16];
    size_t b;
    for (b = 0; b < n; b++, out += 16) {
        uint32_t s0, s1, s2, s3, t0, t1, t2, t3;
        unsigned r;
        lo++;
        hi += (lo == 0);
        pqb_aes_store_be64(in, hi);
        pqb_aes_store_be64(in + 8, lo);
        s0 = pqb_aes_load32(in) ^ pqb_aes_load32(rk);
        s1 = pqb_aes_load32(in + 4) ^ pqb_aes_load32(rk + 4);
        s2 = pqb_aes_load32(in + 8) ^ pqb_aes_load32(rk + 8);
        s3 = pqb_aes_load32(in + 12) ^ pqb_aes_load32(rk + 12);
        for (r = 1; r < PQB_AES256_ROUNDS; r++) {
            const unsigned char *k = rk + 16 * r;
            t0 = PQB_AES_TCOL(s0, s1, s2, s3) ^ pqb_aes_load32(k);
            t1 = PQB_AES_TCOL(s1, s2, s3, s0) ^ pqb_aes_load32(k + 4);
            t2 = PQB_AES_TCOL(s2, s3, s0, s1) ^ pqb_aes_load32(k + 8);
            t3 = PQB_AES_TCOL(s3, s0, s1, s2) ^ pqb_aes_load32(k + 12);
            s0 = t0;
            s1 = t1;
            s2 = t2;
            s3 = t3;
        }
        rk += 16 * PQB_AES256_ROUNDS;
        t0 = PQB_AES_SCOL(s0, s1, s2, s3) ^ pqb_aes_load32(rk);
        t1 = PQB_AES_SCOL(s1, s2, s3, s0) ^ pqb_aes_load32(rk + 4);
        t2 = PQB_AES_SCOL(s2, s3, s0, s1) ^ pqb_aes_load32(rk + 8);
        t3 = PQB_AES_SCOL(s3, s0, s1, s2) ^ pqb_aes_load32(rk + 12);
        rk = ctx->rk;
        pqb_aes_store32(out, t0);
        pqb_aes_store32(out + 4, t1);
        pqb_aes_store32(out + 8, t2);
        pqb_aes_store32(out + 12, t3);
    }
}

/* The next 8 counters after hi:lo as the 64-bit halves of their blocks'
 * bytes read little-endian (what a vector load of the block would see):
 * the instruction-set paths build the blocks in registers from these,
 * never from bytes stored just before (a 16-byte load of two 8-byte stores
 * stalls store forwarding). */
#if PQB_AES_HAVE_AESNI || PQB_AES_HAVE_ARMV8
static void pqb_aes_counters8(uint64_t hi, uint64_t lo, uint64_t h[8], uint64_t l[8])
{
    unsigned j;
    unsigned char b[8];
    for (j = 0; j < 8; j++) {
        lo++;
        hi += (lo == 0);
        pqb_aes_store_be64(b, hi);
        memcpy(&h[j], b, 8);
        pqb_aes_store_be64(b, lo);
        memcpy(&l[j], b, 8);
    }
}
#endif

/* ---- x86-64 AES-NI ----------------------------------------------------- */

#if PQB_AES_HAVE_AESNI

static int pqb_aes_cpu_aesni(void)
{
    unsigned int a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    /* ECX bit 25 AES; SSE2 is part of x86-64. */
    return (c >> 25) & 1u;
}

/* Key expansion after Intel's AES-NI white paper: aeskeygenassist gives
 * RotWord/SubWord xor Rcon (or SubWord alone) of the previous round key's
 * last word; the shifts and xors fold in the earlier words. */
#define PQB_AESNI_FOLD(x)                                                                         \
    do {                                                                                          \
        x = _mm_xor_si128(x, _mm_slli_si128(x, 4));                                               \
        x = _mm_xor_si128(x, _mm_slli_si128(x, 8));                                               \
    } while (0)
#define PQB_AESNI_EVEN(k0, k1, rcon)                                                              \
    do {                                                                                          \
        __m128i t_ = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(k1, rcon), 0xff);                \
        PQB_AESNI_FOLD(k0);                                                                       \
        k0 = _mm_xor_si128(k0, t_);                                                               \
    } while (0)
#define PQB_AESNI_ODD(k0, k1)                                                                     \
    do {                                                                                          \
        __m128i t_ = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(k0, 0), 0xaa);                   \
        PQB_AESNI_FOLD(k1);                                                                       \
        k1 = _mm_xor_si128(k1, t_);                                                               \
    } while (0)

__attribute__((target("aes,sse2")))
static void pqb_aes_expand_aesni(pqb_aes256_ctx *ctx, const unsigned char key[32])
{
    __m128i *rk = (__m128i *)(void *)ctx->rk;
    __m128i k0 = _mm_loadu_si128((const __m128i *)(const void *)key);
    __m128i k1 = _mm_loadu_si128((const __m128i *)(const void *)(key + 16));
    rk[0] = k0;
    rk[1] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x01);
    rk[2] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[3] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x02);
    rk[4] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[5] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x04);
    rk[6] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[7] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x08);
    rk[8] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[9] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x10);
    rk[10] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[11] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x20);
    rk[12] = k0;
    PQB_AESNI_ODD(k0, k1);
    rk[13] = k1;
    PQB_AESNI_EVEN(k0, k1, 0x40);
    rk[14] = k0;
}

/* One round on all 8 blocks; written out so that -O2 keeps them in
 * registers. */
#define PQB_AESNI_ROUND8(op, k)                                                                   \
    do {                                                                                          \
        b0 = op(b0, k);                                                                           \
        b1 = op(b1, k);                                                                           \
        b2 = op(b2, k);                                                                           \
        b3 = op(b3, k);                                                                           \
        b4 = op(b4, k);                                                                           \
        b5 = op(b5, k);                                                                           \
        b6 = op(b6, k);                                                                           \
        b7 = op(b7, k);                                                                           \
    } while (0)

/* Always 8 blocks: enough independent ones to hide the instructions'
 * latency (a 64-byte draw and its Update are 7 blocks; the 8th is free). */
__attribute__((target("aes,sse2")))
static void pqb_aes_ctr_aesni(const pqb_aes256_ctx *ctx, uint64_t hi, uint64_t lo,
                              unsigned char *out, size_t n)
{
    const __m128i *rk = (const __m128i *)(const void *)ctx->rk;
    __m128i *dst = (__m128i *)(void *)out;
    uint64_t h[8], l[8];
    __m128i k = rk[0], b0, b1, b2, b3, b4, b5, b6, b7;
    unsigned r;
    (void)n;
    pqb_aes_counters8(hi, lo, h, l);
#define PQB_AESNI_CTR(j) _mm_xor_si128(_mm_set_epi64x((long long)l[j], (long long)h[j]), k)
    b0 = PQB_AESNI_CTR(0);
    b1 = PQB_AESNI_CTR(1);
    b2 = PQB_AESNI_CTR(2);
    b3 = PQB_AESNI_CTR(3);
    b4 = PQB_AESNI_CTR(4);
    b5 = PQB_AESNI_CTR(5);
    b6 = PQB_AESNI_CTR(6);
    b7 = PQB_AESNI_CTR(7);
#undef PQB_AESNI_CTR
    for (r = 1; r < PQB_AES256_ROUNDS; r++) {
        k = rk[r];
        PQB_AESNI_ROUND8(_mm_aesenc_si128, k);
    }
    k = rk[PQB_AES256_ROUNDS];
    PQB_AESNI_ROUND8(_mm_aesenclast_si128, k);
    _mm_storeu_si128(dst + 0, b0);
    _mm_storeu_si128(dst + 1, b1);
    _mm_storeu_si128(dst + 2, b2);
    _mm_storeu_si128(dst + 3, b3);
    _mm_storeu_si128(dst + 4, b4);
    _mm_storeu_si128(dst + 5, b5);
    _mm_storeu_si128(dst + 6, b6);
    _mm_storeu_si128(dst + 7, b7);
}

#endif /* PQB_AES_HAVE_AESNI */

/* ---- AArch64 ARMv8 AES -------------------------------------------------- */

#if PQB_AES_HAVE_ARMV8

static int pqb_aes_cpu_armv8(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_AES) != 0;
}

/* SubWord through AESE with a zero key: with the word in all four columns
 * ShiftRows only moves bytes between equal columns, so lane 0 is
 * SubBytes of the word. */
PQB_AES_ARM_TARGET
static uint32_t pqb_aes_subword_armv8(uint32_t w)
{
    uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(w));
    v = vaeseq_u8(v, vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(v), 0);
}

static void pqb_aes_expand_armv8(pqb_aes256_ctx *ctx, const unsigned char key[32])
{
    pqb_aes_expand_words(ctx, key, pqb_aes_subword_armv8);
}

/* AESE is AddRoundKey, SubBytes, ShiftRows; AESMC is MixColumns. */
#define PQB_ARMV8_ROUND8(k)                                                                       \
    do {                                                                                          \
        b0 = vaesmcq_u8(vaeseq_u8(b0, k));                                                        \
        b1 = vaesmcq_u8(vaeseq_u8(b1, k));                                                        \
        b2 = vaesmcq_u8(vaeseq_u8(b2, k));                                                        \
        b3 = vaesmcq_u8(vaeseq_u8(b3, k));                                                        \
        b4 = vaesmcq_u8(vaeseq_u8(b4, k));                                                        \
        b5 = vaesmcq_u8(vaeseq_u8(b5, k));                                                        \
        b6 = vaesmcq_u8(vaeseq_u8(b6, k));                                                        \
        b7 = vaesmcq_u8(vaeseq_u8(b7, k));                                                        \
    } while (0)

/* Always 8 blocks, as on x86-64. */
PQB_AES_ARM_TARGET
static void pqb_aes_ctr_armv8(const pqb_aes256_ctx *ctx, uint64_t hi, uint64_t lo,
                              unsigned char *out, size_t n)
{
    const unsigned char *rk = ctx->rk;
    uint64_t h[8], l[8];
    uint8x16_t b0, b1, b2, b3, b4, b5, b6, b7, k, last;
    unsigned r;
    (void)n;
    pqb_aes_counters8(hi, lo, h, l);
#define PQB_ARMV8_CTR(j) vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(h[j]), vcreate_u64(l[j])))
    b0 = PQB_ARMV8_CTR(0);
    b1 = PQB_ARMV8_CTR(1);
    b2 = PQB_ARMV8_CTR(2);
    b3 = PQB_ARMV8_CTR(3);
    b4 = PQB_ARMV8_CTR(4);
    b5 = PQB_ARMV8_CTR(5);
    b6 = PQB_ARMV8_CTR(6);
    b7 = PQB_ARMV8_CTR(7);
#undef PQB_ARMV8_CTR
    for (r = 0; r < PQB_AES256_ROUNDS - 1; r++) {
        k = vld1q_u8(rk + 16 * r);
        PQB_ARMV8_ROUND8(k);
    }
    k = vld1q_u8(rk + 16 * (PQB_AES256_ROUNDS - 1));
    last = vld1q_u8(rk + 16 * PQB_AES256_ROUNDS);
    vst1q_u8(out, veorq_u8(vaeseq_u8(b0, k), last));
    vst1q_u8(out + 16, veorq_u8(vaeseq_u8(b1, k), last));
    vst1q_u8(out + 32, veorq_u8(vaeseq_u8(b2, k), last));
    vst1q_u8(out + 48, veorq_u8(vaeseq_u8(b3, k), last));
    vst1q_u8(out + 64, veorq_u8(vaeseq_u8(b4, k), last));
    vst1q_u8(out + 80, veorq_u8(vaeseq_u8(b5, k), last));
    vst1q_u8(out + 96, veorq_u8(vaeseq_u8(b6, k), last));
    vst1q_u8(out + 112, veorq_u8(vaeseq_u8(b7, k), last));
}

#endif /* PQB_AES_HAVE_ARMV8 */

/* ---- selection ---------------------------------------------------------- */

typedef struct {
    const char *name;
    int (*usable)(void);
    void (*expand)(pqb_aes256_ctx *ctx, const unsigned char key[32]);
    /* Counters hi:lo + 1 .. + n (1 <= n <= 8) into out (room for 8). */
    void (*ctr)(const pqb_aes256_ctx *ctx, uint64_t hi, uint64_t lo, unsigned char *out,
                size_t n);
} pqb_aes_impl;

static int pqb_aes_cpu_any(void)
{
    return 1;
}

/* Fastest first: "auto" takes the first usable one. */
static const pqb_aes_impl pqb_aes_impls[] = {
#if PQB_AES_HAVE_AESNI
    {"aesni", pqb_aes_cpu_aesni, pqb_aes_expand_aesni, pqb_aes_ctr_aesni},
#endif
#if PQB_AES_HAVE_ARMV8
    {"armv8-aes", pqb_aes_cpu_armv8, pqb_aes_expand_armv8, pqb_aes_ctr_armv8},
#endif
    {"table", pqb_aes_cpu_any, pqb_aes_expand_table, pqb_aes_ctr_table},
};
#define PQB_AES_NIMPLS ((int)(sizeof pqb_aes_impls / sizeof pqb_aes_impls[0]))

static const pqb_aes_impl *pqb_aes_active;

static const pqb_aes_impl *pqb_aes_find(const char *name)
{
    int i;
    for (i = 0; i < PQB_AES_NIMPLS; i++) {
        const pqb_aes_impl *m = &pqb_aes_impls[i];
        if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
            if (m->usable())
                return m;
        } else if (strcmp(name, m->name) == 0) {
            return m->usable() ? m : NULL;
        }
    }
    return NULL;
}

int pqb_aes256_select(const char *name)
{
    const pqb_aes_impl *m = pqb_aes_find(name);
    if (m == NULL)
        return -1;
    /* Only the table path reads the tables: a process on AES instructions
     * never builds them (about 0.1 ms once). */
    if (!pqb_aes_tables_ready && m->expand == pqb_aes_expand_table)
        pqb_aes_build_tables();
    pqb_aes_active = m;
    return 0;
}

/* The implementation for this process: PQB_DRBG_IMPL or the fastest. An
 * unusable forced choice leaves no honest way to go on. */
static const pqb_aes_impl *pqb_aes_get(void)
{
    if (pqb_aes_active == NULL) {
        const char *force = getenv("PQB_DRBG_IMPL");
        if (pqb_aes256_select(force) != 0) {
            fprintf(stderr, "pqbench: PQB_DRBG_IMPL=%s is unknown or not supported by this CPU\n",
                    force);
            abort();
        }
    }
    return pqb_aes_active;
}

/* Chosen when the executable or library is loaded, so the lazy path in
 * pqb_aes_get() normally never runs (and never races). An unusable forced
 * choice is left to the first use, so that a tool can report it first. */
__attribute__((constructor)) static void pqb_aes_ctor(void)
{
    if (pqb_aes_active == NULL)
        (void)pqb_aes256_select(getenv("PQB_DRBG_IMPL"));
}

const char *pqb_aes256_impl(void)
{
    return pqb_aes_get()->name;
}

const char *pqb_aes256_impl_name(int i)
{
    return i >= 0 && i < PQB_AES_NIMPLS ? pqb_aes_impls[i].name : NULL;
}

int pqb_aes256_impl_usable(const char *name)
{
    return name != NULL && pqb_aes_find(name) != NULL;
}

void pqb_aes256_init(pqb_aes256_ctx *ctx, const unsigned char key[32])
{
    pqb_aes_get()->expand(ctx, key);
}

void pqb_aes256_ctr(const pqb_aes256_ctx *ctx, unsigned char v[16], unsigned char *out,
                    size_t n)
{
    uint64_t hi = pqb_aes_load_be64(v), lo = pqb_aes_load_be64(v + 8);
    if (n == 0 || n > PQB_AES256_CTR_MAX)
        return;
    pqb_aes_get()->ctr(ctx, hi, lo, out, n);
    lo += n;
    hi += (lo < n);
    pqb_aes_store_be64(v, hi);
    pqb_aes_store_be64(v + 8, lo);
}
