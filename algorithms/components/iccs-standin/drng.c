/*
 * drng.c - SM3 Hash_DRBG (NIST SP 800-90A Rev. 1, 10.1.1), pqbench ICCS
 * helper STAND-IN.
 *
 * Stand-in for the official NGCC/ICCS drng.c (see drng.h and README.md);
 * users evaluating real submissions point pqbench at the official file
 * instead.  Deterministic by design (it replays known-answer tests); it is a
 * demonstration, not a secure random number generator.
 */
#include <string.h>
#include "sm3.h"
#include "drng.h"

#define SEEDLEN_BYTES 55                /* 440 bits */
#define SEEDLEN_BITS 440u
#define RESEED_INTERVAL (1ULL << 48)

DRNG_ctx drng_algorithm;

/*
 * Hash_df (SP 800-90A 10.3.1) with SM3, returning exactly SEEDLEN_BYTES bytes:
 *   temp = SM3(0x01 || be32(440) || input) || SM3(0x02 || be32(440) || input)
 * truncated to 440 bits.  input = prefix (0 or 1 byte) || data.
 */
static void hash_df_seedlen(unsigned char out[SEEDLEN_BYTES],
                            const unsigned char *prefix, size_t prefix_len,
                            const unsigned char *data, size_t data_len)
{
    standin_sm3_ctx ctx;
    unsigned char head[5], block[32];
    size_t done = 0, take;
    unsigned char counter = 1;

    head[1] = (unsigned char)(SEEDLEN_BITS >> 24);
    head[2] = (unsigned char)(SEEDLEN_BITS >> 16);
    head[3] = (unsigned char)(SEEDLEN_BITS >> 8);
    head[4] = (unsigned char)SEEDLEN_BITS;
    while (done < SEEDLEN_BYTES) {
        head[0] = counter;
        standin_sm3_init(&ctx);
        standin_sm3_update(&ctx, head, 5);
        if (prefix_len > 0)
            standin_sm3_update(&ctx, prefix, prefix_len);
        if (data_len > 0)
            standin_sm3_update(&ctx, data, data_len);
        standin_sm3_final(&ctx, block);
        take = SEEDLEN_BYTES - done;
        if (take > 32)
            take = 32;
        memcpy(out + done, block, take);
        done += take;
        counter++;
    }
    memset(block, 0, sizeof block);
}

/* acc = (acc + addend) mod 2^440, both big-endian; addend is right-aligned
 * and addend_len <= SEEDLEN_BYTES. */
static void add_be(unsigned char acc[SEEDLEN_BYTES], const unsigned char *addend, size_t addend_len)
{
    unsigned int carry = 0;
    size_t i;

    for (i = 0; i < SEEDLEN_BYTES; i++) {
        size_t ai = SEEDLEN_BYTES - 1 - i;
        unsigned int sum = acc[ai] + carry;
        if (i < addend_len)
            sum += addend[addend_len - 1 - i];
        acc[ai] = (unsigned char)sum;
        carry = sum >> 8;
    }
}

int init_random_number(DRNG_ctx *ctx, const unsigned char *seed, unsigned long long seed_len_bytes)
{
    static const unsigned char zero = 0x00;

    if (ctx == NULL || (seed == NULL && seed_len_bytes > 0))
        return -1;
    if (seed_len_bytes > (unsigned long long)((size_t)-1))
        return -1;
    hash_df_seedlen(ctx->V, NULL, 0, seed, (size_t)seed_len_bytes);
    hash_df_seedlen(ctx->C, &zero, 1, ctx->V, SEEDLEN_BYTES);
    ctx->reseed_counter = 1;
    return 0;
}

int get_random_number(DRNG_ctx *ctx, unsigned char *out, unsigned long long len_bits)
{
    standin_sm3_ctx hctx;
    unsigned char data[SEEDLEN_BYTES], block[32], ctr_be[8];
    static const unsigned char one = 0x01, three = 0x03;
    unsigned long long need, done = 0;
    size_t take;
    int i;

    if (ctx == NULL || (out == NULL && len_bits > 0))
        return -1;
    if (ctx->reseed_counter == 0)
        return -2;
    if (ctx->reseed_counter > RESEED_INTERVAL)
        return -3;

    /* Hashgen(len_bits, V) */
    need = (len_bits + 7) / 8;
    memcpy(data, ctx->V, SEEDLEN_BYTES);
    while (done < need) {
        standin_sm3_init(&hctx);
        standin_sm3_update(&hctx, data, SEEDLEN_BYTES);
        standin_sm3_final(&hctx, block);
        take = (need - done < 32) ? (size_t)(need - done) : 32;
        memcpy(out + done, block, take);
        done += take;
        add_be(data, &one, 1);
    }
    if (len_bits % 8)
        out[need - 1] &= (unsigned char)(0xFF00u >> (unsigned)(len_bits % 8));

    /* H = SM3(0x03 || V); V = V + H + C + reseed_counter */
    standin_sm3_init(&hctx);
    standin_sm3_update(&hctx, &three, 1);
    standin_sm3_update(&hctx, ctx->V, SEEDLEN_BYTES);
    standin_sm3_final(&hctx, block);
    add_be(ctx->V, block, 32);
    add_be(ctx->V, ctx->C, SEEDLEN_BYTES);
    for (i = 0; i < 8; i++)
        ctr_be[i] = (unsigned char)(ctx->reseed_counter >> (56 - 8 * i));
    add_be(ctx->V, ctr_be, 8);
    ctx->reseed_counter++;

    memset(data, 0, sizeof data);
    memset(block, 0, sizeof block);
    return 0;
}
