/*
 * driver_leak.c - mode `leak` of the timing driver:
 * a timing test of an operation whose input holds a secret key (sign,
 * dec), run natively, outside Valgrind, as dudect does. It corroborates
 * the constant-time check under memcheck, which a library that tells
 * Valgrind apart can pass with code it never runs otherwise. The same
 * test of the key pair's public operation (verify, enc) is its control:
 * time that follows the key there follows its public part.
 *
 * Two classes of calls, interleaved in an order drawn from the kernel's
 * random source:
 *   fixed   the key pair setup made, every call;
 *   random  one of LEAK_KEYS other key pairs of the library's own keygen,
 *           in turn.
 * The other input is drawn alike for both: sign gets a message of fresh
 * random bytes; dec one of LEAK_CTS ciphertexts enc made for the key,
 * verify one of LEAK_CTS signatures of random messages by the key, both
 * picked at random; enc draws its own randomness. Before each call the
 * key (and ciphertext, message, signature) are copied into the same
 * working buffers, outside the counter reads, so neither class runs from
 * memory the other does not.
 *
 * Output: `leak fixed=F random=R keys=K`, then one `samples` line: the
 * fixed class's cycles in call order, then the random class's. pqbench
 * computes Welch's t from them (and `check` again from the record).
 */

#include "driver.h"

#include <sys/random.h>

#define LEAK_KEYS 16
#define LEAK_CTS 4
#define LEAK_MAX_SECONDS 30.0

/* Per key pair: its keys, and its ciphertexts (dec) or signatures with
 * their messages (verify). */
static unsigned char *leak_sk[LEAK_KEYS + 1], *leak_pk[LEAK_KEYS + 1];
static size_t leak_sk_len[LEAK_KEYS + 1], leak_pk_len[LEAK_KEYS + 1];
static unsigned char *leak_in[LEAK_KEYS + 1][LEAK_CTS], *leak_msg[LEAK_KEYS + 1][LEAK_CTS];
static size_t leak_in_len[LEAK_KEYS + 1][LEAK_CTS];

static uint64_t leak_bits(void);
static void leak_message(void);

/* A copy of n bytes. */
static unsigned char *leak_copy(const unsigned char *p, size_t n)
{
    unsigned char *q = buffer(n);
    memcpy(q, p, n);
    return q;
}

/* Key pair k and, for dec and verify, its inputs: k = 0 is the pair
 * setup made (in g_pk/g_sk), the others are made here. */
static void leak_key(int k)
{
    int j;
    if (k > 0 && do_keygen() != 0)
        fail("setup", "%s", g_err);
    leak_sk[k] = leak_copy(g_sk, g_sk_len);
    leak_sk_len[k] = g_sk_len;
    leak_pk[k] = leak_copy(g_pk, g_pk_len);
    leak_pk_len[k] = g_pk_len;
    for (j = 0; j < LEAK_CTS && (g_op == OP_DEC || g_op == OP_VERIFY); j++) {
        if (g_op == OP_DEC && do_enc() != 0)
            fail("setup", "%s", g_err);
        if (g_op == OP_VERIFY) {
            leak_message();
            if (do_sign() != 0)
                fail("setup", "%s", g_err);
            leak_msg[k][j] = leak_copy(g_msg, MSG_BYTES);
        }
        leak_in[k][j] = leak_copy(g_op == OP_DEC ? g_ct : g_sig,
                                  g_op == OP_DEC ? g_ct_len : g_sig_len);
        leak_in_len[k][j] = g_op == OP_DEC ? g_ct_len : g_sig_len;
    }
}

/* A message of fresh random bytes in g_msg. */
static void leak_message(void)
{
    size_t i;
    for (i = 0; i < MSG_BYTES; i += 8) {
        uint64_t m = leak_bits();
        memcpy(g_msg + i, &m, MSG_BYTES - i < 8 ? MSG_BYTES - i : 8);
    }
}

/* Random bits from the kernel, 64 at a time. */
static uint64_t leak_bits(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        fail("setup", "getrandom_failed_errno_%d", errno);
    return v;
}

/* Puts key pair k's inputs in the working buffers; r: random bits. */
static void leak_load(int k, uint64_t r)
{
    int j = (int)(r % LEAK_CTS);
    memcpy(g_sk, leak_sk[k], leak_sk_len[k]);
    g_sk_len = leak_sk_len[k];
    memcpy(g_pk, leak_pk[k], leak_pk_len[k]);
    g_pk_len = leak_pk_len[k];
    if (g_op == OP_DEC) {
        memcpy(g_ct, leak_in[k][j], leak_in_len[k][j]);
        g_ct_len = leak_in_len[k][j];
    } else if (g_op == OP_VERIFY) {
        memcpy(g_sig, leak_in[k][j], leak_in_len[k][j]);
        g_sig_len = leak_in_len[k][j];
        memcpy(g_msg, leak_msg[k][j], MSG_BYTES);
    } else if (g_op == OP_SIGN) {
        leak_message();
    }
}

void mode_leak(long warm, long iters)
{
    unsigned long long *fixed, *random;
    long nf = 0, nr = 0, i;
    int k, next = 1;
    double start;

    if (g_op == OP_KEYGEN || g_op == OP_EXT)
        fail("settings", "mode_leak_is_for_sign_verify_enc_and_dec");
    for (k = 0; k <= LEAK_KEYS; k++)
        leak_key(k);
    fixed = malloc((size_t)iters * sizeof *fixed);
    random = malloc((size_t)iters * sizeof *random);
    if (!fixed || !random)
        fail("setup", "out_of_memory_for_samples");
    g_verify_rejects = 0;
    for (i = 0; i < warm; i++) {
        leak_load((int)(i % (LEAK_KEYS + 1)), leak_bits());
        call_or_die();
    }
    start = pqb_now_seconds();
    for (i = 0; i < iters && pqb_now_seconds() - start < LEAK_MAX_SECONDS; i++) {
        uint64_t r = leak_bits();
        int random_class = (int)(r >> 63);
        unsigned long long c0, c1;
        k = random_class ? next : 0;
        if (random_class)
            next = next % LEAK_KEYS + 1;
        leak_load(k, r);
        c0 = pqb_counter_read(&C);
        call_or_die();
        c1 = pqb_counter_read(&C);
        if (random_class)
            random[nr++] = c1 - c0;
        else
            fixed[nf++] = c1 - c0;
    }
    if (g_op == OP_VERIFY && g_verify_rejects)
        fail("op", "verify_rejected_%llu_honest_signatures", g_verify_rejects);
    line("leak fixed=%ld random=%ld keys=%d", nf, nr, LEAK_KEYS);
    for (i = 0; i < nr; i++)
        fixed[nf + i] = random[i];
    numbers_line("samples", fixed, nf + nr);
    free(fixed);
    free(random);
}
