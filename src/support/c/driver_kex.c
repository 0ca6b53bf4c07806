/*
 * driver_kex.c - the KEX operations of pqb-driver (see driver_ext.h).
 *
 * The protocol is a list of steps: init_a, init_b, pass1..passP,
 * derive_a, derive_b (P = kex_get_passes_num()). `exchange` runs all of
 * them; a step's timed call is that one step, inside a complete protocol
 * run: the steps before it and after it run untimed around it, so every
 * call sees the state a real exchange gives it.
 *
 * Step trials (--mode trial on a step): per iteration the steps before,
 * then t0, c0, the step, c1, t1, then the steps after. The trial line's
 * calls, seconds and cycles are those of the timed steps alone (samples:
 * one per step call); cpu_seconds is the timed seconds times the share of
 * the whole loop's wall time the thread spent on the CPU (the loop's own
 * figures follow as loop_seconds, loop_cpu_seconds). An `overhead` line
 * gives the median cycles of reading the counter twice around nothing:
 * the part of every step sample that is the measurement itself.
 *
 * Setup runs one whole protocol and fails unless both sides derive the
 * same secret.
 */

#include "driver.h"

#define KEX_STEPS_MAX (PQB_KEX_MAX_PASSES + 4)
#define OVERHEAD_PAIRS 1001

int g_kex_op;     /* 0: not a KEX op; 1: exchange; 2: a step */
char g_kex_name[16];
static int g_kex_target; /* the step index of a step op */
static int g_kex_passes;

static unsigned char *kx_pka, *kx_ska, *kx_sta, *kx_pkb, *kx_skb, *kx_stb, *kx_ssa, *kx_ssb;
static unsigned char *kx_m[PQB_KEX_MAX_PASSES + 1];
static size_t kx_pka_len, kx_ska_len, kx_sta_len, kx_pkb_len, kx_skb_len, kx_stb_len;
static size_t kx_ssa_len, kx_ssb_len;
static size_t kx_m_len[PQB_KEX_MAX_PASSES + 1];
/* Largest lengths returned over all calls. */
static size_t kx_max_pka, kx_max_pkb, kx_max_ska, kx_max_skb, kx_max_ss, kx_max_msgs;
static size_t kx_max_m[PQB_KEX_MAX_PASSES + 1];
static int kx_declassify; /* ct mode: see ext_ct_declassify */

static int kex_parse_op(const char *op)
{
    static const char *const fixed[] = {"exchange", "init_a", "init_b", "derive_a", "derive_b"};
    size_t i;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(op, fixed[i]) == 0)
            break;
    if (i == sizeof fixed / sizeof fixed[0]) {
        char *end;
        long k;
        if (strncmp(op, "pass", 4) != 0)
            return 0;
        errno = 0;
        k = strtol(op + 4, &end, 10);
        if (errno != 0 || end == op + 4 || *end != '\0' || k < 1 || k > PQB_KEX_MAX_PASSES)
            return 0;
    }
    g_kex_op = i == 0 ? 1 : 2;
    snprintf(g_kex_name, sizeof g_kex_name, "%s", op);
    return 1;
}

static const char *kex_step_name(int s, char *buf, size_t n)
{
    if (s == 0)
        return "kex_init_a";
    if (s == 1)
        return "kex_init_b";
    if (s == g_kex_passes + 2)
        return "kex_derive_ss_a";
    if (s == g_kex_passes + 3)
        return "kex_derive_ss_b";
    snprintf(buf, n, "pass%d", s - 1);
    return buf;
}

/* init_a (s = 0) or init_b (s = 1). */
static int kex_step_init(int s)
{
    int a = s == 0, rc;
    char nb[16];
    size_t *pl = a ? &kx_pka_len : &kx_pkb_len, *sl = a ? &kx_ska_len : &kx_skb_len;
    size_t *tl = a ? &kx_sta_len : &kx_stb_len;
    *pl = E->pk_bytes, *sl = E->sk_bytes, *tl = a ? E->kex_sta_bytes : E->kex_stb_bytes;
    rc = E->kex_init(a ? PQB_KEX_A : PQB_KEX_B, a ? kx_pka : kx_pkb, pl, a ? kx_ska : kx_skb, sl,
                     a ? kx_sta : kx_stb, tl);
    if (kx_declassify) {
        ct_public(&rc, sizeof rc);
        ct_public(pl, sizeof *pl);
        ct_public(sl, sizeof *sl);
        ct_public(tl, sizeof *tl);
        ct_public(a ? kx_pka : kx_pkb, E->pk_bytes);
    }
    if (rc != 0)
        return call_failed("%s_returned_%d", kex_step_name(s, nb, sizeof nb), rc);
    if (*pl > E->pk_bytes || *sl > E->sk_bytes || *tl > (a ? E->kex_sta_bytes : E->kex_stb_bytes))
        return call_failed("%s_length_exceeds_its_cap", kex_step_name(s, nb, sizeof nb));
    note_max(a ? &kx_max_pka : &kx_max_pkb, *pl);
    note_max(a ? &kx_max_ska : &kx_max_skb, *sl);
    return 0;
}

/* Pass k of np: side A on odd passes, B on even ones. */
static int kex_step_pass(int k, int np)
{
    int a = k % 2 == 1, rc;
    size_t *tl = a ? &kx_sta_len : &kx_stb_len;
    kx_m_len[k] = E->kex_msg_bytes;
    rc = E->kex_pass(k, a ? kx_ska : kx_skb, a ? kx_ska_len : kx_skb_len, a ? kx_pkb : kx_pka,
                     a ? kx_pkb_len : kx_pka_len, k > 1 ? kx_m[k - 1] : NULL,
                     k > 1 ? kx_m_len[k - 1] : 0, a ? kx_sta : kx_stb, tl, kx_m[k], &kx_m_len[k]);
    if (kx_declassify) {
        ct_public(&rc, sizeof rc);
        ct_public(tl, sizeof *tl);
        ct_public(&kx_m_len[k], sizeof kx_m_len[k]);
        ct_public(kx_m[k], E->kex_msg_bytes);
    }
    if (rc < 0 || rc > PQB_KEX_LAST_PASS)
        return call_failed("pass%d_returned_%d", k, rc);
    if (rc == PQB_KEX_LAST_PASS && k < np)
        return call_failed("pass%d_of_%d_ended_the_protocol_early", k, np);
    if (rc != PQB_KEX_LAST_PASS && k == np)
        return call_failed("pass%d_of_%d_did_not_end_the_protocol", k, np);
    if (kx_m_len[k] > E->kex_msg_bytes || *tl > (a ? E->kex_sta_bytes : E->kex_stb_bytes))
        return call_failed("pass%d_length_exceeds_its_cap", k);
    note_max(&kx_max_m[k], kx_m_len[k]);
    if (k == np) {
        size_t total = 0;
        int j;
        for (j = 1; j <= np; j++)
            total += kx_m_len[j];
        note_max(&kx_max_msgs, total);
    }
    return 0;
}

/* derive_a (a) or derive_b, from the last message the other side sent
 * (none: empty); s is the step's index, for its name. */
static int kex_step_derive(int s, int a, int np)
{
    int last = a ? np - (np % 2 == 1) : np - (np % 2 == 0), rc;
    char nb[16];
    size_t *ssl = a ? &kx_ssa_len : &kx_ssb_len;
    *ssl = E->ss_bytes;
    rc = E->kex_derive(a ? PQB_KEX_A : PQB_KEX_B, a ? kx_ska : kx_skb, a ? kx_ska_len : kx_skb_len,
                       a ? kx_pkb : kx_pka, a ? kx_pkb_len : kx_pka_len,
                       last > 0 ? kx_m[last] : NULL, last > 0 ? kx_m_len[last] : 0,
                       a ? kx_sta : kx_stb, a ? kx_sta_len : kx_stb_len, a ? kx_ssa : kx_ssb, ssl);
    if (kx_declassify) {
        ct_public(&rc, sizeof rc);
        ct_public(ssl, sizeof *ssl);
    }
    if (rc != 0)
        return call_failed("%s_returned_%d", kex_step_name(s, nb, sizeof nb), rc);
    if (*ssl > E->ss_bytes)
        return call_failed("%s_length_exceeds_its_cap", kex_step_name(s, nb, sizeof nb));
    note_max(&kx_max_ss, *ssl);
    return 0;
}

/* One step of the protocol: 0, or -1 with g_err set. */
static int kex_step(int s)
{
    int np = g_kex_passes;
    if (s == 0 || s == 1)
        return kex_step_init(s);
    if (s <= np + 1)
        return kex_step_pass(s - 1, np);
    return kex_step_derive(s, s == np + 2, np);
}

/* Steps [from, to). */
static int kex_run(int from, int to)
{
    int s;
    for (s = from; s < to; s++)
        if (kex_step(s) != 0)
            return -1;
    return 0;
}

int kex_all(void)
{
    return kex_run(0, g_kex_passes + 4);
}

static void kex_setup(void)
{
    unsigned char seed[SEED_BYTES];
    int k, rc;
    size_t i;
    g_kex_passes = E->kex_passes;
    if (g_kex_passes < 1 || g_kex_passes > PQB_KEX_MAX_PASSES)
        fail("setup", "kex_get_passes_num_is_%d", g_kex_passes);
    for (k = 1; k <= g_kex_passes; k++)
        if (!E->kex_has_pass(k))
            fail("setup", "pass%d_of_%d_is_not_defined", k, g_kex_passes);
    if (strncmp(g_kex_name, "pass", 4) == 0) {
        k = atoi(g_kex_name + 4);
        if (k > g_kex_passes)
            fail("load", "%s_but_the_protocol_has_%d_passes", g_kex_name, g_kex_passes);
        g_kex_target = k + 1;
    } else if (strcmp(g_kex_name, "init_a") == 0) {
        g_kex_target = 0;
    } else if (strcmp(g_kex_name, "init_b") == 0) {
        g_kex_target = 1;
    } else if (strcmp(g_kex_name, "derive_a") == 0) {
        g_kex_target = g_kex_passes + 2;
    } else {
        g_kex_target = g_kex_passes + 3;
    }
    kx_pka = buffer(E->pk_bytes), kx_ska = buffer(E->sk_bytes);
    kx_pkb = buffer(E->pk_bytes), kx_skb = buffer(E->sk_bytes);
    kx_sta = buffer(E->kex_sta_bytes), kx_stb = buffer(E->kex_stb_bytes);
    kx_ssa = buffer(E->ss_bytes), kx_ssb = buffer(E->ss_bytes);
    for (k = 1; k <= g_kex_passes; k++)
        kx_m[k] = buffer(E->kex_msg_bytes);
    for (i = 0; i < SEED_BYTES; i++)
        seed[i] = (unsigned char)i;
    rc = E->seed(seed, SEED_BYTES);
    if (rc != 0)
        fail("setup", "seed_returned_%d", rc);
    if (kex_all() != 0)
        fail("setup", "%s", g_err);
    if (kx_ssa_len != kx_ssb_len || kx_ssa_len == 0 ||
        memcmp(kx_ssa, kx_ssb, kx_ssa_len) != 0)
        fail("setup", "the_two_shared_secrets_differ");
}

/* A hash of everything the protocol run just made that is not the
 * parties' private state (which may hold pointers): both key pairs, every
 * message and both secrets. With the randomness re-seeded before the run,
 * a replay of the run makes the same. */
unsigned long long kex_output_hash(void)
{
    unsigned long long h = hash_bytes(0, kx_pka, kx_pka_len);
    int k;
    h = hash_bytes(h, kx_ska, kx_ska_len);
    h = hash_bytes(h, kx_pkb, kx_pkb_len);
    h = hash_bytes(h, kx_skb, kx_skb_len);
    for (k = 1; k <= g_kex_passes; k++)
        h = hash_bytes(h, kx_m[k], kx_m_len[k]);
    h = hash_bytes(h, kx_ssa, kx_ssa_len);
    return hash_bytes(h, kx_ssb, kx_ssb_len);
}

/* Whether the run just made gave both sides the same secret. */
int kex_agrees(void)
{
    return kx_ssa_len == kx_ssb_len && kx_ssa_len > 0 && memcmp(kx_ssa, kx_ssb, kx_ssa_len) == 0;
}

static int kex_call(void)
{
    return g_kex_op == 1 ? kex_all() : kex_step(g_kex_target);
}

static void kex_before(void)
{
    if (g_kex_op == 2 && kex_run(0, g_kex_target) != 0)
        fail("op", "%s", g_err);
}

static void kex_after(void)
{
    if (g_kex_op == 2 && kex_run(g_kex_target + 1, g_kex_passes + 4) != 0)
        fail("op", "%s", g_err);
}

static int cmp_ull(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* Median cycles of two counter reads around nothing. */
static unsigned long long counter_overhead(void)
{
    static unsigned long long d[OVERHEAD_PAIRS];
    int i;
    for (i = 0; i < OVERHEAD_PAIRS; i++) {
        unsigned long long c0 = pqb_counter_read(&C);
        unsigned long long c1 = pqb_counter_read(&C);
        d[i] = c1 - c0;
    }
    qsort(d, OVERHEAD_PAIRS, sizeof d[0], cmp_ull);
    return d[OVERHEAD_PAIRS / 2];
}

void ext_mode_trial_steps(long warm, long iters, int want_samples)
{
    unsigned long long *samples = NULL, *outs = inputs_outputs_alloc(iters), cycles = 0, c0, c1;
    double seconds = 0.0, t0, t1, loop0, loop1, cpu0, cpu1, share;
    long i;
    int end = g_kex_passes + 4;

    if (want_samples) {
        samples = malloc((size_t)iters * sizeof *samples);
        if (!samples)
            fail("setup", "out_of_memory_for_samples");
    }
    for (i = 0; i < warm; i++) {
        inputs_next();
        if (kex_all() != 0)
            fail("op", "%s", g_err);
    }
    cpu0 = pqb_thread_cpu_seconds();
    loop0 = pqb_now_seconds();
    for (i = 0; i < iters; i++) {
        inputs_next(); /* the run's randomness, before its first step */
        if (kex_run(0, g_kex_target) != 0)
            fail("op", "%s", g_err);
        t0 = pqb_now_seconds();
        c0 = pqb_counter_read(&C);
        if (kex_step(g_kex_target) != 0)
            fail("op", "%s", g_err);
        c1 = pqb_counter_read(&C);
        t1 = pqb_now_seconds();
        if (kex_run(g_kex_target + 1, end) != 0)
            fail("op", "%s", g_err);
        cycles += c1 - c0;
        seconds += t1 - t0;
        if (samples)
            samples[i] = c1 - c0;
        if (outs)
            outs[i] = inputs_output_hash();
    }
    loop1 = pqb_now_seconds();
    cpu1 = pqb_thread_cpu_seconds();
    share = loop1 > loop0 ? (cpu1 - cpu0) / (loop1 - loop0) : 1.0;
    if (share > 1.0)
        share = 1.0;
    line("trial calls=%ld seconds=%.9e cycles=%llu cpu_seconds=%.9e sign_retries=0 "
         "verify_rejects=0 loop_seconds=%.9e loop_cpu_seconds=%.9e",
         iters, seconds, cycles, seconds * share, loop1 - loop0, cpu1 - cpu0);
    inputs_report(warm, iters, outs);
    free(outs);
    if (samples) {
        numbers_line("samples", samples, iters);
        free(samples);
    }
    line("overhead counter_read_cycles=%llu pairs=%d", counter_overhead(), OVERHEAD_PAIRS);
}

static void kex_print_lengths(void)
{
    char buf[512];
    int k, n;
    n = snprintf(buf, sizeof buf, "lengths pka=%zu pkb=%zu ska=%zu skb=%zu ss=%zu msgs=%zu",
                 kx_max_pka, kx_max_pkb, kx_max_ska, kx_max_skb, kx_max_ss, kx_max_msgs);
    for (k = 1; k <= g_kex_passes && n > 0 && (size_t)n < sizeof buf; k++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " m%d=%zu", k, kx_max_m[k]);
    line("%s", buf);
}

/* ---- the ext interface (driver_ext.h) ---------------------------------- */

int ext_parse_op(const char *op)
{
    return hash_parse_op(op) || kex_parse_op(op);
}

int ext_fits_kind(void)
{
    return E->kind == (g_hash_bytes ? PQB_KIND_HASH : PQB_KIND_KEX) && pqb_kind_complete(E);
}

void ext_setup(void)
{
    if (g_hash_bytes)
        hash_setup();
    else
        kex_setup();
}

int ext_call(void)
{
    return g_hash_bytes ? hash_call() : kex_call();
}

void ext_print_lengths(void)
{
    if (g_hash_bytes)
        line("lengths digest=%zu", g_hash_digest_len);
    else
        kex_print_lengths();
}

int ext_is_step(void)
{
    return g_kex_op == 2;
}

void ext_before_call(void)
{
    kex_before();
}

void ext_after_call(void)
{
    kex_after();
}

void ext_ct_declassify(int on)
{
    kx_declassify = on;
}

void ext_ct_publish(void)
{
    int k;
    if (g_hash_bytes)
        return;
    ct_public(kx_pka, E->pk_bytes), ct_public(kx_pkb, E->pk_bytes);
    ct_public(kx_ska, E->sk_bytes), ct_public(kx_skb, E->sk_bytes);
    ct_public(kx_sta, E->kex_sta_bytes), ct_public(kx_stb, E->kex_stb_bytes);
    ct_public(kx_ssa, E->ss_bytes), ct_public(kx_ssb, E->ss_bytes);
    for (k = 1; k <= g_kex_passes; k++)
        ct_public(kx_m[k], E->kex_msg_bytes);
    ct_public(&kx_pka_len, sizeof kx_pka_len), ct_public(&kx_pkb_len, sizeof kx_pkb_len);
    ct_public(&kx_ska_len, sizeof kx_ska_len), ct_public(&kx_skb_len, sizeof kx_skb_len);
    ct_public(&kx_sta_len, sizeof kx_sta_len), ct_public(&kx_stb_len, sizeof kx_stb_len);
    ct_public(&kx_ssa_len, sizeof kx_ssa_len), ct_public(&kx_ssb_len, sizeof kx_ssb_len);
    ct_public(kx_m_len, sizeof kx_m_len);
    ct_public(&kx_max_ss, sizeof kx_max_ss);
}
