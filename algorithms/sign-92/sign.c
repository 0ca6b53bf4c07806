/*
 * sign.c - Larch, a DEMONSTRATION hash-based one-time signature (WOTS-style,
 * w = 4) on the NIST PQC API, bundled with pqbench.
 *
 * NOT A SECURE SCHEME: each key pair may sign a single message, there is no
 * state keeping and nothing was reviewed.  It exists to exercise pqbench's
 * NIST adapter: level-dependent symbol and macro namespaces (PQB_LARCH1_ /
 * PQB_LARCH3_), size_t lengths, an externally provided randomness function
 * (larch_randombytes) and its own SHA-256 instead of the ICCS helpers.
 *
 * Construction (n = LARCH_N bytes, LEN = 4n + LEN2 chains of length 3):
 *   keygen  sk_seed, pub_seed <- larch_randombytes
 *           x_i   = H(0x01 || sk_seed || pub_seed || be16(i))
 *           end_i = F^3(x_i),  F(i, j, x) = H(0x00 || pub_seed || be16(i) || j || 0 || x)
 *           root  = H(0x02 || pub_seed || end_0 || ... || end_{LEN-1})
 *           pk = pub_seed || root,  sk = sk_seed || pub_seed || root
 *   sign    R <- larch_randombytes;  D = H(0x03 || R || pk || m)
 *           digits: base-4 digits of D, then of the checksum sum(3 - d_i)
 *           signature = R || F^{d_i}(x_i) for every chain
 *   open    walk each chain the remaining 3 - d_i steps, compare roots.
 * H is SHA-256 truncated to n bytes.  sm = signature || message.
 */
#include <string.h>

#include "api.h"
#include "params.h"
#include "randombytes.h"
#include "sha256.h"

#define DOM_CHAIN 0x00
#define DOM_PRF 0x01
#define DOM_ROOT 0x02
#define DOM_MSG 0x03

static void wipe(void *p, size_t n)
{
    volatile uint8_t *q = (volatile uint8_t *)p;
    while (n--)
        *q++ = 0;
}

/* Truncate a finished SHA-256 context into out (LARCH_N bytes). */
static void finish_n(larch_sha256_ctx *ctx, uint8_t out[LARCH_N])
{
    uint8_t full[32];

    larch_sha256_final(ctx, full);
    memcpy(out, full, LARCH_N);
    wipe(full, sizeof full);
}

static void chain_walk(uint8_t x[LARCH_N], const uint8_t pub_seed[LARCH_N],
                       unsigned int chain, unsigned int start, unsigned int steps)
{
    larch_sha256_ctx ctx;
    uint8_t head[1 + LARCH_N + 4];
    unsigned int j;

    head[0] = DOM_CHAIN;
    memcpy(head + 1, pub_seed, LARCH_N);
    head[1 + LARCH_N] = (uint8_t)(chain >> 8);
    head[2 + LARCH_N] = (uint8_t)chain;
    head[4 + LARCH_N] = 0;
    for (j = start; j < start + steps; j++) {
        head[3 + LARCH_N] = (uint8_t)j;
        larch_sha256_init(&ctx);
        larch_sha256_update(&ctx, head, sizeof head);
        larch_sha256_update(&ctx, x, LARCH_N);
        finish_n(&ctx, x);
    }
}

static void chain_start(uint8_t x[LARCH_N], const uint8_t sk_seed[LARCH_N],
                        const uint8_t pub_seed[LARCH_N], unsigned int chain)
{
    larch_sha256_ctx ctx;
    uint8_t b[3];

    b[0] = DOM_PRF;
    b[1] = (uint8_t)(chain >> 8);
    b[2] = (uint8_t)chain;
    larch_sha256_init(&ctx);
    larch_sha256_update(&ctx, b, 1);
    larch_sha256_update(&ctx, sk_seed, LARCH_N);
    larch_sha256_update(&ctx, pub_seed, LARCH_N);
    larch_sha256_update(&ctx, b + 1, 2);
    finish_n(&ctx, x);
}

static void compress_ends(uint8_t root[LARCH_N], const uint8_t pub_seed[LARCH_N],
                          const uint8_t ends[LARCH_LEN * LARCH_N])
{
    larch_sha256_ctx ctx;
    const uint8_t dom = DOM_ROOT;

    larch_sha256_init(&ctx);
    larch_sha256_update(&ctx, &dom, 1);
    larch_sha256_update(&ctx, pub_seed, LARCH_N);
    larch_sha256_update(&ctx, ends, LARCH_LEN * LARCH_N);
    finish_n(&ctx, root);
}

/* digits of D = H(0x03 || R || pk || m), checksum digits appended */
static void message_digits(unsigned int digits[LARCH_LEN], const uint8_t r[LARCH_N],
                           const uint8_t pk[LARCH_PK_BYTES], const uint8_t *m, size_t mlen)
{
    larch_sha256_ctx ctx;
    const uint8_t dom = DOM_MSG;
    uint8_t d[LARCH_N];
    unsigned int i, csum = 0;

    larch_sha256_init(&ctx);
    larch_sha256_update(&ctx, &dom, 1);
    larch_sha256_update(&ctx, r, LARCH_N);
    larch_sha256_update(&ctx, pk, LARCH_PK_BYTES);
    if (mlen > 0)
        larch_sha256_update(&ctx, m, mlen);
    finish_n(&ctx, d);

    for (i = 0; i < LARCH_LEN1; i++) {
        digits[i] = (d[i / 4] >> (6 - 2 * (i % 4))) & 3u;
        csum += (LARCH_W - 1) - digits[i];
    }
    for (i = 0; i < LARCH_LEN2; i++)
        digits[LARCH_LEN1 + i] = (csum >> (2 * (LARCH_LEN2 - 1 - i))) & 3u;
}

int PQB_LARCH_NS(crypto_sign_keypair)(uint8_t *pk, uint8_t *sk)
{
    uint8_t seeds[2 * LARCH_N];                 /* sk_seed || pub_seed */
    uint8_t ends[LARCH_LEN * LARCH_N];
    uint8_t root[LARCH_N];
    unsigned int i;

    if (pk == NULL || sk == NULL)
        return -1;
    if (larch_randombytes(seeds, sizeof seeds) != 0)
        return -1;
    for (i = 0; i < LARCH_LEN; i++) {
        chain_start(ends + i * LARCH_N, seeds, seeds + LARCH_N, i);
        chain_walk(ends + i * LARCH_N, seeds + LARCH_N, i, 0, LARCH_W - 1);
    }
    compress_ends(root, seeds + LARCH_N, ends);
    memcpy(pk, seeds + LARCH_N, LARCH_N);
    memcpy(pk + LARCH_N, root, LARCH_N);
    memcpy(sk, seeds, 2 * LARCH_N);
    memcpy(sk + 2 * LARCH_N, root, LARCH_N);
    wipe(seeds, sizeof seeds);
    return 0;
}

int PQB_LARCH_NS(crypto_sign)(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk)
{
    const uint8_t *sk_seed, *pub_seed, *pk;
    uint8_t r[LARCH_N];
    unsigned int digits[LARCH_LEN], i;
    uint8_t *sig_chains;

    if (sm == NULL || smlen == NULL || sk == NULL || (m == NULL && mlen > 0))
        return -1;
    if (mlen > (size_t)-1 - LARCH_SIG_BYTES)
        return -1;
    sk_seed = sk;
    pub_seed = sk + LARCH_N;
    pk = sk + LARCH_N;                 /* pub_seed || root */

    if (larch_randombytes(r, sizeof r) != 0)
        return -1;
    /* m and sm may overlap: move the message into place first */
    if (mlen > 0)
        memmove(sm + LARCH_SIG_BYTES, m, mlen);
    message_digits(digits, r, pk, sm + LARCH_SIG_BYTES, mlen);

    memcpy(sm, r, LARCH_N);
    sig_chains = sm + LARCH_N;
    for (i = 0; i < LARCH_LEN; i++) {
        chain_start(sig_chains + i * LARCH_N, sk_seed, pub_seed, i);
        chain_walk(sig_chains + i * LARCH_N, pub_seed, i, 0, digits[i]);
    }
    *smlen = LARCH_SIG_BYTES + mlen;
    return 0;
}

int PQB_LARCH_NS(crypto_sign_open)(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk)
{
    uint8_t ends[LARCH_LEN * LARCH_N];
    uint8_t root[LARCH_N];
    unsigned int digits[LARCH_LEN], i;
    size_t msg_len;
    uint8_t diff = 0;

    if (mlen != NULL)
        *mlen = 0;
    if (m == NULL || mlen == NULL || sm == NULL || pk == NULL || smlen < LARCH_SIG_BYTES)
        return -1;
    msg_len = smlen - LARCH_SIG_BYTES;

    message_digits(digits, sm, pk, sm + LARCH_SIG_BYTES, msg_len);
    memcpy(ends, sm + LARCH_N, LARCH_LEN * LARCH_N);
    for (i = 0; i < LARCH_LEN; i++)
        chain_walk(ends + i * LARCH_N, pk, i, digits[i], (LARCH_W - 1) - digits[i]);
    compress_ends(root, pk, ends);
    for (i = 0; i < LARCH_N; i++)
        diff |= (uint8_t)(root[i] ^ pk[LARCH_N + i]);
    if (diff != 0)
        return -1;
    if (msg_len > 0)
        memmove(m, sm + LARCH_SIG_BYTES, msg_len);
    *mlen = msg_len;
    return 0;
}
