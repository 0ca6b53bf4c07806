/*
 * wots.c - Wintertide, a DEMONSTRATION Winternitz-style one-time signature on
 * the NGCC signature API, bundled with pqbench.
 *
 * NOT A SECURE SCHEME.  Each key pair may sign a single message; there is no
 * state keeping, no side-channel care and no review.  It exists so pqbench
 * has a small signature that draws on the ICCS helpers (sm3hash, pseudoXOF,
 * pseudohash, get_random_number) from several places, and, with
 * WINTER_REJECT=1, one whose signing sometimes fails and must be retried
 * like a rejection-sampling scheme.
 *
 * Construction (N = WINTER_N bytes, w = 16, LEN = 2N + 3 chains):
 *   keygen  sk_seed, pub_seed <- DRNG
 *           x_i   = pseudoXOF(sk_seed || pub_seed) split into LEN blocks
 *           end_i = F^15(x_i) with F(i, j, x) = sm3hash(pub_seed || i || j || x)
 *           root  = pseudohash(pub_seed || end_0 || ... || end_{LEN-1})
 *           pk = pub_seed || root,  sk = sk_seed || pub_seed || root
 *   sign    salt <- DRNG;  D = pseudohash(salt || pk || m)  (N bytes)
 *           digits d_i: 2N base-16 digits of D, then 3 digits of the
 *           checksum sum(15 - d_i);  sn = salt || F^{d_i}(x_i) for all i
 *   verify  recompute D and digits, walk each chain the remaining 15 - d_i
 *           steps, compare pseudohash(pub_seed || ends) with root.
 * With WINTER_REJECT=1 a digest whose checksum exceeds WINTER_CSUM_BOUND
 * (about 8 % of digests) is refused: sig_sign returns WINTER_ERR_REJECTED and
 * the caller retries with a fresh call (which draws a fresh salt); verify
 * refuses such digests too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "params.h"
#include "auxfunc.h"
#include "drng.h"

#define ADDR_BYTES 4
#define F_IN_BYTES (WINTER_N + ADDR_BYTES + WINTER_N)

unsigned long long sig_get_pk_len_bytes(void) { return WINTER_PK_BYTES; }
unsigned long long sig_get_sk_len_bytes(void) { return WINTER_SK_BYTES; }
unsigned long long sig_get_sn_len_bytes(void) { return WINTER_SIG_BYTES; }

static void wipe(void *p, size_t n)
{
    volatile unsigned char *q = (volatile unsigned char *)p;
    while (n--)
        *q++ = 0;
}

/* Walk chain `chain` from position `start` for `steps` steps, in place. */
static int chain_walk(unsigned char x[WINTER_N], const unsigned char pub_seed[WINTER_N],
                      unsigned int chain, unsigned int start, unsigned int steps)
{
    unsigned char in[F_IN_BYTES];
    unsigned int j;

    memcpy(in, pub_seed, WINTER_N);
    in[WINTER_N + 0] = (unsigned char)(chain >> 8);
    in[WINTER_N + 1] = (unsigned char)chain;
    in[WINTER_N + 3] = 0x00;           /* address type: chain step */
    for (j = start; j < start + steps; j++) {
        in[WINTER_N + 2] = (unsigned char)j;
        memcpy(in + WINTER_N + ADDR_BYTES, x, WINTER_N);
        if (sm3hash(8ULL * WINTER_N, in, 8ULL * F_IN_BYTES, x) != 0)
            return WINTER_ERR_HELPER;
    }
    return WINTER_OK;
}

/* All LEN chain starting values from the secret seed. */
static int expand_secret(unsigned char out[WINTER_LEN * WINTER_N],
                         const unsigned char sk_seed[WINTER_N],
                         const unsigned char pub_seed[WINTER_N])
{
    unsigned char in[2 * WINTER_N];
    int r;

    memcpy(in, sk_seed, WINTER_N);
    memcpy(in + WINTER_N, pub_seed, WINTER_N);
    r = pseudoXOF(8ULL * WINTER_LEN * WINTER_N, in, 8ULL * sizeof in, out);
    wipe(in, sizeof in);
    return r == 0 ? WINTER_OK : WINTER_ERR_HELPER;
}

/* root = pseudohash(pub_seed || ends) */
static int compress_ends(unsigned char root[WINTER_N], const unsigned char pub_seed[WINTER_N],
                         const unsigned char ends[WINTER_LEN * WINTER_N])
{
    unsigned char in[WINTER_N + WINTER_LEN * WINTER_N];

    memcpy(in, pub_seed, WINTER_N);
    memcpy(in + WINTER_N, ends, WINTER_LEN * WINTER_N);
    return pseudohash(8ULL * WINTER_N, in, 8ULL * sizeof in, root) == 0 ? WINTER_OK : WINTER_ERR_HELPER;
}

/* D = pseudohash(salt || pk || m) */
static int message_digest(unsigned char d[WINTER_N], const unsigned char salt[WINTER_N],
                          const unsigned char pk[WINTER_PK_BYTES],
                          const unsigned char *m, unsigned long long m_len)
{
    const size_t head = WINTER_SALT_BYTES + WINTER_PK_BYTES;
    unsigned char *buf;
    size_t total;
    int r;

    if (m == NULL && m_len > 0)
        return WINTER_ERR_PARAM;
    if (m_len > (unsigned long long)(SIZE_MAX - head) || m_len > (~0ULL >> 4))
        return WINTER_ERR_PARAM;
    total = head + (size_t)m_len;
    buf = (unsigned char *)malloc(total);
    if (buf == NULL)
        return WINTER_ERR_ALLOC;
    memcpy(buf, salt, WINTER_SALT_BYTES);
    memcpy(buf + WINTER_SALT_BYTES, pk, WINTER_PK_BYTES);
    if (m_len > 0)
        memcpy(buf + head, m, (size_t)m_len);
    r = pseudohash(8ULL * WINTER_N, buf, 8ULL * total, d);
    free(buf);
    return r == 0 ? WINTER_OK : WINTER_ERR_HELPER;
}

/* Base-16 digits of the digest followed by the checksum digits; returns the
 * checksum. */
static unsigned int digest_digits(unsigned int digits[WINTER_LEN], const unsigned char d[WINTER_N])
{
    unsigned int i, csum = 0;

    for (i = 0; i < WINTER_N; i++) {
        digits[2 * i] = d[i] >> 4;
        digits[2 * i + 1] = d[i] & 0x0F;
    }
    for (i = 0; i < WINTER_LEN1; i++)
        csum += (WINTER_W - 1) - digits[i];
    digits[WINTER_LEN1 + 0] = (csum >> 8) & 0x0F;
    digits[WINTER_LEN1 + 1] = (csum >> 4) & 0x0F;
    digits[WINTER_LEN1 + 2] = csum & 0x0F;
    return csum;
}

static int digest_rejected(unsigned int csum)
{
#if WINTER_REJECT
    return csum > WINTER_CSUM_BOUND;
#else
    (void)csum;
    return 0;
#endif
}

int sig_keygen(unsigned char *pk, unsigned long long *pk_len,
               unsigned char *sk, unsigned long long *sk_len)
{
    unsigned char seeds[2 * WINTER_N];           /* sk_seed || pub_seed */
    unsigned char chains[WINTER_LEN * WINTER_N];
    unsigned char root[WINTER_N];
    unsigned int i;
    int r;

    if (pk == NULL || pk_len == NULL || sk == NULL || sk_len == NULL)
        return WINTER_ERR_PARAM;
    if (get_random_number(&drng_algorithm, seeds, 8ULL * sizeof seeds) != 0)
        return WINTER_ERR_HELPER;

    r = expand_secret(chains, seeds, seeds + WINTER_N);
    for (i = 0; r == WINTER_OK && i < WINTER_LEN; i++)
        r = chain_walk(chains + i * WINTER_N, seeds + WINTER_N, i, 0, WINTER_W - 1);
    if (r == WINTER_OK)
        r = compress_ends(root, seeds + WINTER_N, chains);
    if (r == WINTER_OK) {
        memcpy(pk, seeds + WINTER_N, WINTER_N);
        memcpy(pk + WINTER_N, root, WINTER_N);
        memcpy(sk, seeds, 2 * WINTER_N);
        memcpy(sk + 2 * WINTER_N, root, WINTER_N);
        *pk_len = WINTER_PK_BYTES;
        *sk_len = WINTER_SK_BYTES;
    }
    wipe(seeds, sizeof seeds);
    wipe(chains, sizeof chains);
    return r;
}

int sig_sign(const unsigned char *sk, unsigned long long sk_len,
             const unsigned char *m, unsigned long long m_len,
             unsigned char *sn, unsigned long long *sn_len)
{
    const unsigned char *sk_seed, *pub_seed, *pk;
    unsigned char salt[WINTER_SALT_BYTES], d[WINTER_N];
    unsigned char chains[WINTER_LEN * WINTER_N];
    unsigned int digits[WINTER_LEN], i, csum;
    int r;

    if (sn_len != NULL)
        *sn_len = 0;
    if (sk == NULL || sk_len != WINTER_SK_BYTES || sn == NULL || sn_len == NULL)
        return WINTER_ERR_PARAM;
    sk_seed = sk;
    pub_seed = sk + WINTER_N;
    pk = sk + WINTER_N;                /* pub_seed || root */

    if (get_random_number(&drng_algorithm, salt, 8ULL * sizeof salt) != 0)
        return WINTER_ERR_HELPER;
    r = message_digest(d, salt, pk, m, m_len);
    if (r != WINTER_OK)
        return r;
    csum = digest_digits(digits, d);
    if (digest_rejected(csum))
        return WINTER_ERR_REJECTED;

    r = expand_secret(chains, sk_seed, pub_seed);
    for (i = 0; r == WINTER_OK && i < WINTER_LEN; i++)
        r = chain_walk(chains + i * WINTER_N, pub_seed, i, 0, digits[i]);
    if (r == WINTER_OK) {
        memcpy(sn, salt, WINTER_SALT_BYTES);
        memcpy(sn + WINTER_SALT_BYTES, chains, WINTER_LEN * WINTER_N);
        *sn_len = WINTER_SIG_BYTES;
    }
    wipe(chains, sizeof chains);
    return r;
}

int sig_verify(const unsigned char *pk, unsigned long long pk_len,
               const unsigned char *sn, unsigned long long sn_len,
               const unsigned char *m, unsigned long long m_len)
{
    unsigned char d[WINTER_N], root[WINTER_N];
    unsigned char ends[WINTER_LEN * WINTER_N];
    unsigned int digits[WINTER_LEN], i, csum;
    unsigned char diff = 0;
    int r;

    if (pk == NULL || pk_len != WINTER_PK_BYTES || sn == NULL || sn_len != WINTER_SIG_BYTES)
        return WINTER_ERR_PARAM;

    r = message_digest(d, sn, pk, m, m_len);
    if (r != WINTER_OK)
        return r;
    csum = digest_digits(digits, d);
    if (digest_rejected(csum))
        return 1;

    memcpy(ends, sn + WINTER_SALT_BYTES, WINTER_LEN * WINTER_N);
    for (i = 0; r == WINTER_OK && i < WINTER_LEN; i++)
        r = chain_walk(ends + i * WINTER_N, pk, i, digits[i], (WINTER_W - 1) - digits[i]);
    if (r == WINTER_OK)
        r = compress_ends(root, pk, ends);
    if (r != WINTER_OK)
        return r;
    for (i = 0; i < WINTER_N; i++)
        diff |= (unsigned char)(root[i] ^ pk[WINTER_N + i]);
    return diff == 0 ? 0 : 1;
}
