/*
 * driver_inputs.c - distinct, unpredictable inputs for the timed calls and
 * a record of what they returned (it uses the entry table, buffers and
 * output that driver.h shares).
 *
 * Why: a deterministic operation timed on one repeated input can remember
 * its last answer, and one that is never checked can stop working once
 * timed. So the driver's settings block (driver_settings.c), which it reads
 * from its input descriptor only *after* the library is loaded (the
 * library's constructors cannot see it in argv or memory, and the sandbox
 * keeps it from replacing or tee-ing the descriptor), may carry a seed:
 *
 *   seed=<64 hex> pool_max=<K> pool_seconds=<S>      calibrate, trial
 *   seed=<64 hex> pool=<K> calls=<i>,<j>,...|all     replay
 *
 * (one `key=value` a line there)
 * and derives everything from the seed: the 48 bytes seeding the library's
 * randombytes (so its keys and encapsulations follow the seed) and every
 * message. The untimed setup builds a pool of up to K distinct inputs,
 * stopping early once building took S seconds or the pool would pass
 * INPUT_BUDGET bytes (two entries at least, budget permitting):
 *   dec     K honest encapsulations (ciphertext and the secret enc gave)
 *   verify  K signatures over K distinct messages
 *   sign    K distinct messages
 *   hash_n  K distinct n-byte messages
 * Call number c (warm-ups first, then the timed calls) uses entry c mod K.
 * keygen and enc have no pool: their input is the library's randomness.
 * Before call c of sign, keygen and enc the library's randomness is
 * re-seeded from the seed and c (outside the call's counter reads), so
 * the call's output depends on the seed and c only, and no two calls draw
 * the same randomness; so is every protocol run of a KEX operation (the
 * exchange, or the run around a timed step), before its first step.
 *
 * After a trial, for every checked operation, the line
 *   outputs h0 h1 ...
 * holds a 64-bit hash of each timed call's input and output (the
 * signature, the secret, the accept/reject answer, the digest, the key
 * pair, the ciphertext and secret; KEX: the run's key pairs, messages and
 * both secrets), and
 *   inputs seed=<hex> pool=K warm=W wraps=R pool_sign_retries=F
 * says how the pool was walked (K=0: no pool; R: passes beyond the first;
 * F: failed signing attempts of verify's pool beyond its first signature,
 * whose own stay the trial line's setup_sign_retries). In replay
 * mode a fresh process builds the same pool from the same seed, makes only
 * the named timed calls (untimed) and prints for each
 *   replay call=<i> hash=<h> agrees=1|0|na
 * agrees: dec's secret equals the one enc gave, verify accepted, sign's
 * signature verifies, enc's ciphertext decapsulates to its secret,
 * keygen's pair round-trips (a KEM's enc and dec, a signature's sign and
 * verify), a KEX run gave both sides the same secret (na: hash); the
 * re-seeded operations add repeat=1|0, whether making the call a second
 * time gave the same output (setting repeat=0: each call made once, no
 * repeat= field). With calls=all (and iters=N) it makes every
 * one of the trial's N timed calls instead, and prints their hashes on one
 * `outputs` line, as the trial did.
 */

#include "driver.h"

#define INPUT_BUDGET ((size_t)64 << 20)
#define INPUT_SEED_BYTES 32
#define REPLAY_MAX 64

/* g_inputs (declared in driver.c): the settings carried a seed. */
static unsigned char g_in_seed[INPUT_SEED_BYTES];
static long g_pool_max = 1, g_pool_exact;      /* exact: replay */
static double g_pool_seconds;
static long g_replay[REPLAY_MAX];
static int g_replay_n, g_replay_all; /* calls=all: every timed call */

/* The pool: K entries of g_entry_bytes, each with the hash of its input. */
static unsigned char *g_pool;
static size_t g_entry_bytes;
static long g_pool_k;
static unsigned long long *g_entry_hash;
static unsigned long long g_base_hash; /* the keys every entry goes with */
static long g_call_no;                 /* calls made so far (warm-ups included) */
static long g_entry_now;
static unsigned long long g_pool_sign_retries; /* verify: beyond the first entry */


static unsigned long long mix64(unsigned long long h, unsigned long long w)
{
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

/* A quick 64-bit hash, word by word: it runs beside every timed call, so
 * it must cost a few cycles, not be cryptographic. */
unsigned long long hash_bytes(unsigned long long h, const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) {
        unsigned long long w;
        memcpy(&w, p + i, 8);
        h = mix64(h, w);
    }
    if (i < n) {
        unsigned long long w = 0;
        memcpy(&w, p + i, n - i);
        h = mix64(h, w);
    }
    return mix64(h, (unsigned long long)n);
}

/* Bytes derived from the seed for `label` and `index` (splitmix64 over a
 * state keyed by all of the seed). */
static void derive(unsigned long long label, unsigned long long index, unsigned char *out,
                   size_t n)
{
    unsigned long long s = hash_bytes(mix64(label, index), g_in_seed, INPUT_SEED_BYTES);
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned long long z;
        if (i % 8 == 0)
            s += 0x9E3779B97F4A7C15ULL;
        z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        out[i] = (unsigned char)(z >> (8 * (i % 8)));
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* calls=<i>,<j>,...: the timed calls a replay makes (REPLAY_MAX at most). */
static void inputs_calls(const char *v)
{
    const char *p = v;
    if (strcmp(v, "all") == 0) {
        g_replay_all = 1;
        return;
    }
    for (;;) {
        char num[24];
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof num)
            fail("settings", "calls_wants_call_numbers_separated_by_commas");
        if (g_replay_n == REPLAY_MAX)
            fail("settings", "calls_names_more_than_%d_calls", REPLAY_MAX);
        memcpy(num, p, n);
        num[n] = '\0';
        g_replay[g_replay_n++] = setting_long("calls", num, 0, 1L << 40);
        if (p[n] == '\0')
            return;
        p += n + 1;
    }
}

/* A setting of the distinct inputs (driver_settings.c reads the block). */
void inputs_setting(const char *key, const char *v)
{
    if (strcmp(key, "seed") == 0) {
        int i;
        if (strlen(v) != 2 * INPUT_SEED_BYTES)
            fail("settings", "seed_wants_64_hex_digits");
        for (i = 0; i < INPUT_SEED_BYTES; i++) {
            int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
            if (hi < 0 || lo < 0)
                fail("settings", "seed_is_not_lowercase_hex");
            g_in_seed[i] = (unsigned char)(hi << 4 | lo);
        }
        g_inputs = 1;
    } else if (strcmp(key, "pool_bytes") == 0)
        pool_setting_bytes(v);
    else if (strcmp(key, "pool_max") == 0)
        g_pool_max = setting_long(key, v, 1, 1L << 40);
    else if (strcmp(key, "pool") == 0)
        g_pool_exact = setting_long(key, v, 0, 1L << 40);
    else if (strcmp(key, "pool_seconds") == 0) {
        char *end;
        errno = 0;
        g_pool_seconds = strtod(v, &end);
        if (*v < '0' || *v > '9' || errno != 0 || *end != '\0' || !(g_pool_seconds <= 3600.0))
            fail("settings", "pool_seconds_wants_seconds_in_0..3600_got_%.40s", v);
    } else
        inputs_calls(v);
}

/* The 48 bytes seeding the library's randombytes. */
void inputs_library_seed(unsigned char *seed)
{
    derive(1, 0, seed, SEED_BYTES);
}

/* Whether the operation walks a pool, and whether its outputs are hashed. */
int inputs_pooled(void)
{
    return g_inputs && (g_op == OP_SIGN || g_op == OP_VERIFY || g_op == OP_DEC ||
                        (g_op == OP_EXT && g_hash_bytes));
}

/* A key-exchange operation: the whole exchange or one step of it. */
static int inputs_kex(void)
{
    return g_op == OP_EXT && !g_hash_bytes;
}

/* The operations whose input is the library's randomness. */
static int inputs_randomised(void)
{
    return g_op == OP_SIGN || g_op == OP_KEYGEN || g_op == OP_ENC || inputs_kex();
}

/* Whether the library's randomness is re-seeded before every call. */
static int inputs_reseeded(void)
{
    return g_inputs && g_set.checks && inputs_randomised();
}

static int inputs_checked(void)
{
    return inputs_pooled() || (g_inputs && inputs_randomised());
}

/* sign, keygen, enc: the library's randomness for call c, drawn from the
 * seed before the call (outside its counter reads), so a replay of call c
 * alone makes the same output. */
static void inputs_call_randomness(long c)
{
    unsigned char s[SEED_BYTES];
    int rc;
    if (!inputs_reseeded())
        return;
    derive(3, (unsigned long long)c, s, SEED_BYTES);
    rc = E->seed(s, SEED_BYTES);
    if (rc != 0)
        fail("setup", "seed_returned_%d", rc);
}

static unsigned char *entry_at(long k)
{
    return g_pool + (size_t)k * g_entry_bytes;
}

/* Points the operation's inputs at entry k. */
static void inputs_select(long k)
{
    unsigned char *e = entry_at(k);
    g_entry_now = k;
    if (g_op == OP_DEC) {
        memcpy(&g_ct_len, e, sizeof g_ct_len);
        g_ct = e + sizeof(size_t);
    } else if (g_op == OP_VERIFY) {
        memcpy(&g_sig_len, e, sizeof g_sig_len);
        g_msg = e + sizeof(size_t);
        g_sig = g_msg + MSG_BYTES;
    } else if (g_op == OP_SIGN) {
        g_msg = e;
    } else {
        g_hash_msg = e;
    }
}

/* Before each call (warm-up, calibration or timed): the next entry. */
void inputs_next(void)
{
    if (g_pool_k > 0 || inputs_reseeded()) {
        inputs_call_randomness(g_call_no);
        if (g_pool_k > 0)
            inputs_select(g_call_no % g_pool_k);
        g_call_no++;
    }
}

/* Builds entry k (the library's randomness follows the seed, so a replay
 * that builds entries 0..k in order gets the same bytes). */
static void inputs_build(long k)
{
    unsigned char *e = entry_at(k);
    if (g_op == OP_DEC) {
        size_t len;
        g_ct = e + sizeof(size_t);
        if (do_enc() != 0)
            fail("setup", "%s", g_err);
        memcpy(e, &g_ct_len, sizeof g_ct_len);
        memcpy(g_ct + E->ct_bytes, g_ss, g_ss_len); /* the secret enc gave */
        if (k == 0) {
            /* One honest round trip, as without a pool. */
            if (do_dec_into(&len) != 0)
                fail("setup", "%s", g_err);
            if (len != g_ss_len || memcmp(g_ss, g_ss2, len) != 0)
                fail("setup", "dec_secret_differs_from_enc_secret");
        }
        g_entry_hash[k] = hash_bytes(g_base_hash, g_ct, g_ct_len);
    } else if (g_op == OP_VERIFY && pool_shared()) {
        const unsigned char *msg, *sig = pool_shared_entry(k, &msg, &g_sig_len);
        g_msg = e + sizeof(size_t);
        g_sig = g_msg + MSG_BYTES;
        memcpy(g_msg, msg, MSG_BYTES);
        memcpy(g_sig, sig, g_sig_len);
        memcpy(e, &g_sig_len, sizeof g_sig_len);
        g_entry_hash[k] = hash_bytes(hash_bytes(g_base_hash, g_msg, MSG_BYTES), g_sig, g_sig_len);
    } else if (g_op == OP_VERIFY) {
        g_msg = e + sizeof(size_t);
        g_sig = g_msg + MSG_BYTES;
        derive(2, (unsigned long long)k, g_msg, MSG_BYTES);
        if (do_sign() != 0)
            fail("setup", "%s", g_err);
        memcpy(e, &g_sig_len, sizeof g_sig_len);
        g_entry_hash[k] = hash_bytes(hash_bytes(g_base_hash, g_msg, MSG_BYTES), g_sig, g_sig_len);
    } else {
        size_t n = g_op == OP_SIGN ? MSG_BYTES : (size_t)g_hash_bytes;
        derive(2, (unsigned long long)k, e, n);
        g_entry_hash[k] = hash_bytes(g_base_hash, e, n);
    }
}

static size_t inputs_entry_bytes(void)
{
    if (g_op == OP_DEC)
        return sizeof(size_t) + E->ct_bytes + E->ss_bytes;
    if (g_op == OP_VERIFY)
        return sizeof(size_t) + MSG_BYTES + g_sig_cap;
    if (g_op == OP_SIGN)
        return MSG_BYTES;
    return (size_t)g_hash_bytes;
}

/* The untimed pool, after keygen (or the hash's setup). Its time limit is
 * the thread's CPU time, not the clock's: on a loaded host a clock limit
 * would let each process spend a different share of it on the pool, and
 * the kernel witness's fit of CPU time over call counts would see that as
 * noise. */
void inputs_setup(void)
{
    long cap, k;
    unsigned long long first_retries = 0;
    double t0 = pqb_thread_cpu_seconds();
    if (!inputs_pooled())
        return;
    g_entry_bytes = inputs_entry_bytes() + BUF_SLACK;
    cap = (long)(INPUT_BUDGET / g_entry_bytes);
    if (cap < 1)
        cap = 1;
    if (pool_shared()) {
        /* Exactly the entries given, under the key they were made with. */
        long given = pool_shared_load();
        if (g_pool_exact > 0 && g_pool_exact != given)
            fail("setup", "replay_pool_%ld_but_%ld_shared_entries", g_pool_exact, given);
        if (given > cap)
            fail("setup", "shared_pool_of_%ld_beyond_the_input_budget", given);
        g_pool_exact = cap = given;
    }
    if (g_pool_exact > cap)
        fail("setup", "replay_pool_%ld_beyond_the_input_budget", g_pool_exact);
    if (g_pool_exact < 1 && cap > g_pool_max)
        cap = g_pool_max;
    if (g_pool_exact > 0)
        cap = g_pool_exact;
    g_pool = buffer((size_t)cap * g_entry_bytes);
    g_entry_hash = calloc((size_t)cap, sizeof *g_entry_hash);
    if (!g_entry_hash)
        fail("setup", "out_of_memory");
    /* A shared pool's keys are its public key alone: this process's own
     * key pair is not the one its signatures were made with. */
    if (g_op == OP_EXT)
        g_base_hash = hash_bytes(0, (const unsigned char *)"hash", 4);
    else if (pool_shared())
        g_base_hash = hash_bytes(0, g_pk, g_pk_len);
    else
        g_base_hash = hash_bytes(hash_bytes(0, g_pk, g_pk_len), g_sk, g_sk_len);
    for (k = 0; k < cap; k++) {
        inputs_build(k);
        g_pool_k = k + 1;
        if (k == 0)
            first_retries = g_sign_retries;
        /* Two entries at least, so that no call repeats the one before. */
        if (g_pool_exact < 1 && k >= 1 && pqb_thread_cpu_seconds() - t0 >= g_pool_seconds)
            break;
    }
    /* The setup's retries stay those of its one honest signature, as
     * without a pool (the figure pages show); the pool's other signatures
     * are counted apart, on the inputs line. */
    g_pool_sign_retries = g_sign_retries - first_retries;
    g_sign_retries = first_retries;
}

long inputs_pool_size(void)
{
    return g_pool_k;
}

unsigned long long inputs_pool_sign_retries(void)
{
    return g_pool_sign_retries;
}

/* Entry k of verify's pool: its message and signature. */
const unsigned char *inputs_entry(long k, const unsigned char **msg, size_t *sig_len)
{
    unsigned char *e = entry_at(k);
    memcpy(sig_len, e, sizeof *sig_len);
    *msg = e + sizeof(size_t);
    return e + sizeof(size_t) + MSG_BYTES;
}

/* The hash of the call just made: its input entry and its output. */
unsigned long long inputs_output_hash(void)
{
    unsigned long long h;
    if (inputs_kex())
        return kex_output_hash();
    if (g_op == OP_KEYGEN)
        return hash_bytes(hash_bytes(0, g_pk, g_pk_len), g_sk, g_sk_len);
    if (g_op == OP_ENC)
        return hash_bytes(hash_bytes(0, g_ct, g_ct_len), g_ss, g_ss_len);
    h = g_entry_hash[g_entry_now];
    if (g_op == OP_DEC)
        return hash_bytes(h, g_ss2, g_dec_len);
    if (g_op == OP_VERIFY)
        return mix64(h, (unsigned long long)(long long)g_verify_rc);
    if (g_op == OP_SIGN)
        return hash_bytes(h, g_sig, g_sig_len);
    return hash_bytes(h, g_hash_digest, g_hash_digest_len);
}

/* Storage for the timed calls' output hashes (NULL: not checked). */
unsigned long long *inputs_outputs_alloc(long iters)
{
    unsigned long long *p;
    /* checks=0: only `pqbench bench-checks`, measuring what this costs. */
    if (!inputs_checked() || !g_set.checks)
        return NULL;
    p = calloc((size_t)iters, sizeof *p);
    if (!p)
        fail("setup", "out_of_memory_for_output_hashes");
    return p;
}

void inputs_report(long warm, long iters, unsigned long long *outs)
{
    char hex[2 * INPUT_SEED_BYTES + 1];
    int i;
    if (!inputs_checked())
        return;
    for (i = 0; i < INPUT_SEED_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", g_in_seed[i]);
    line("inputs seed=%s pool=%ld warm=%ld wraps=%ld pool_sign_retries=%llu", hex, g_pool_k, warm,
         g_pool_k > 0 ? (warm + iters - 1) / g_pool_k : 0, g_pool_sign_retries);
    if (outs)
        numbers_line("outputs", outs, iters);
}

/* Whether the output of the call just made is sound, checked by the
 * operation's counterpart ("1", "0", or "na" where there is none). */
static const char *inputs_agrees(void)
{
    size_t len;
    if (g_op == OP_DEC) {
        const unsigned char *ss = g_ct + E->ct_bytes;
        return g_dec_len <= E->ss_bytes && memcmp(ss, g_ss2, g_dec_len) == 0 ? "1" : "0";
    }
    if (g_op == OP_VERIFY)
        return g_verify_rc == 0 ? "1" : "0";
    if (inputs_kex())
        return kex_agrees() ? "1" : "0";
    if (g_op == OP_SIGN || (g_op == OP_KEYGEN && E->kind == PQB_KIND_SIGN)) {
        if (g_op == OP_KEYGEN && do_sign() != 0)
            return "0";
        do_verify();
        return g_verify_rc == 0 ? "1" : "0";
    }
    if (g_op == OP_KEYGEN && do_enc() != 0)
        return "0";
    if (g_op == OP_KEYGEN || g_op == OP_ENC)
        return do_dec_into(&len) == 0 && len == g_ss_len && memcmp(g_ss, g_ss2, len) == 0 ? "1"
                                                                                          : "0";
    return "na";
}

/* One call as the trial made it: a KEX step inside its whole protocol run. */
static void replay_call(void)
{
    if (inputs_kex() && kex_all() != 0)
        fail("op", "%s", g_err);
    if (!inputs_kex())
        call_or_die();
}

/* replay: the named timed calls of a trial with `warm` warm-ups, untimed,
 * on the pool the same seed builds. */
/* replay calls=all: every one of a trial's `iters` timed calls, untimed,
 * their output hashes on one `outputs` line as the trial gave them. */
static void replay_all(long warm, long iters)
{
    unsigned long long *outs = calloc((size_t)iters, sizeof *outs);
    long i;
    if (!outs)
        fail("setup", "out_of_memory_for_output_hashes");
    for (i = 0; i < iters; i++) {
        inputs_call_randomness(warm + i);
        if (g_pool_k > 0)
            inputs_select((warm + i) % g_pool_k);
        replay_call();
        outs[i] = inputs_output_hash();
    }
    numbers_line("outputs", outs, iters);
    free(outs);
}

void mode_replay(long warm)
{
    int i;
    if (!inputs_checked() || (inputs_pooled() && g_pool_exact < 1) ||
        (g_replay_n < 1 && !g_replay_all))
        fail("setup", "replay_wants_a_checked_operation_a_pool_and_calls");
    if (g_replay_all) {
        replay_all(warm, g_set.iters);
        return;
    }
    for (i = 0; i < g_replay_n; i++) {
        long c = warm + g_replay[i];
        unsigned long long h;
        if (g_replay[i] < 0)
            fail("setup", "replay_call_negative");
        inputs_call_randomness(c);
        if (g_pool_k > 0)
            inputs_select(c % g_pool_k);
        replay_call();
        h = inputs_output_hash();
        if (inputs_reseeded() && g_set.repeat) {
            /* The same call again: an output that does not follow the
             * driver's randomness cannot be recomputed (repeat=0). */
            int repeat;
            inputs_call_randomness(c);
            replay_call();
            repeat = inputs_output_hash() == h;
            line("replay call=%ld hash=%llu agrees=%s repeat=%d", g_replay[i], h,
                 inputs_agrees(), repeat);
            continue;
        }
        line("replay call=%ld hash=%llu agrees=%s", g_replay[i], h, inputs_agrees());
    }
}
