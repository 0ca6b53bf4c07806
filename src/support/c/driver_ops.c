/*
 * driver_ops.c - the signature and KEM operations pqb-driver calls, their
 * buffers and the untimed set-up each operation needs.
 */
#include "driver.h"

const char *const op_names[5] = {"keygen", "sign", "verify", "enc", "dec"};

const pqb_entry *E;
int g_op;

unsigned char *g_pk, *g_sk, *g_sig, *g_ct, *g_ss, *g_ss2, *g_msg;
size_t g_pk_len, g_sk_len, g_sig_len, g_ct_len, g_ss_len;
size_t g_sig_cap;

/* Maximum lengths returned over all calls. */
size_t max_pk, max_sk, max_sig, max_ct, max_ss;

/* Counted during every call; reset before the timed calls. */
unsigned long long g_sign_retries, g_verify_rejects;

/* Failed signing attempts of the setup (verify's honest signature), kept
 * apart: they are not inside any timed call, but a page reports them. */
unsigned long long g_setup_sign_retries;

/* Set when a call fails; reported by the caller. */
char g_err[256];

void note_max(size_t *m, size_t v)
{
    if (v > *m)
        *m = v;
}

int call_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    return -1;
}

int do_keygen(void)
{
    int rc;
    g_pk_len = E->pk_bytes;
    g_sk_len = E->sk_bytes;
    rc = E->keygen(g_pk, &g_pk_len, g_sk, &g_sk_len);
    if (rc != 0)
        return call_failed("keygen_returned_%d", rc);
    if (g_pk_len > E->pk_bytes || g_sk_len > E->sk_bytes)
        return call_failed("keygen_length_exceeds_buffer_pk_%zu_sk_%zu", g_pk_len, g_sk_len);
    note_max(&max_pk, g_pk_len);
    note_max(&max_sk, g_sk_len);
    return 0;
}

/* One sign, retried inside the call while the library reports failure. */
int do_sign(void)
{
    int attempt, rc = 0;
    for (attempt = 0; attempt < SIGN_ATTEMPTS; attempt++) {
        g_sig_len = g_sig_cap;
        rc = E->sign(g_sig, &g_sig_len, g_msg, MSG_BYTES, g_sk, g_sk_len);
        if (rc == 0)
            break;
        if (attempt + 1 < SIGN_ATTEMPTS)
            g_sign_retries++;
    }
    if (rc != 0)
        return call_failed("sign_failed_%d_times_last_rc_%d", SIGN_ATTEMPTS, rc);
    if (g_sig_len > g_sig_cap)
        return call_failed("sign_length_%zu_exceeds_buffer_%zu", g_sig_len, g_sig_cap);
    if (E->sig_attached)
        note_max(&max_sig, g_sig_len >= MSG_BYTES ? g_sig_len - MSG_BYTES : 0);
    else
        note_max(&max_sig, g_sig_len);
    return 0;
}

int g_verify_rc;

int do_verify(void)
{
    g_verify_rc = E->verify(g_sig, g_sig_len, g_msg, MSG_BYTES, g_pk, g_pk_len);
    if (g_verify_rc != 0)
        g_verify_rejects++;
    return 0;
}

int do_enc(void)
{
    int rc;
    g_ct_len = E->ct_bytes;
    g_ss_len = E->ss_bytes;
    rc = E->enc(g_ct, &g_ct_len, g_ss, &g_ss_len, g_pk, g_pk_len);
    if (rc != 0)
        return call_failed("enc_returned_%d", rc);
    if (g_ct_len > E->ct_bytes || g_ss_len > E->ss_bytes)
        return call_failed("enc_length_exceeds_buffer_ct_%zu_ss_%zu", g_ct_len, g_ss_len);
    note_max(&max_ct, g_ct_len);
    note_max(&max_ss, g_ss_len);
    return 0;
}

/* Decapsulates g_ct into g_ss2; *len receives the secret's length. */
int do_dec_into(size_t *len)
{
    int rc;
    *len = E->ss_bytes;
    rc = E->dec(g_ss2, len, g_ct, g_ct_len, g_sk, g_sk_len);
    if (rc != 0)
        return call_failed("dec_returned_%d", rc);
    if (*len > E->ss_bytes)
        return call_failed("dec_length_%zu_exceeds_buffer_%zu", *len, E->ss_bytes);
    note_max(&max_ss, *len);
    return 0;
}

size_t g_dec_len;

static int do_dec(void)
{
    return do_dec_into(&g_dec_len);
}

/* One timed call of the chosen operation: 0, or -1 with g_err set. */
int call_op(void)
{
    switch (g_op) {
    case OP_KEYGEN:
        return do_keygen();
    case OP_SIGN:
        return do_sign();
    case OP_VERIFY:
        return do_verify();
    case OP_ENC:
        return do_enc();
    case OP_EXT:
        return ext_call();
    default:
        return do_dec();
    }
}

void call_or_die(void)
{
    if (call_op() != 0)
        fail("op", "%s", g_err);
}

unsigned char *buffer(size_t n)
{
    unsigned char *p = malloc(n + BUF_SLACK);
    if (!p)
        fail("setup", "out_of_memory");
    memset(p, 0, n + BUF_SLACK);
    return p;
}

/* The settings, read from the input descriptor g_in_fd once the library
 * is loaded (driver_settings.c). */
struct drv_settings g_set = {"", "", -1, 20, 0, 0, 1, -1, 1};
int g_in_fd = -1;

/* Distinct inputs per call (driver_inputs.c). */
int g_inputs;

/* Whether the set-up makes a key pair: not for keygen's own timed modes,
 * whose calls make theirs (for a dear key generation, such as Classic
 * McEliece's, a set-up pair would double what each process costs). The
 * other modes keep it: memory measures one call after it, and the counts
 * and leak checks run as they always have. */
static int keygen_in_setup(void)
{
    static const char *const timed[] = {"calibrate", "trial", "replay"};
    size_t i;
    if (g_op != OP_KEYGEN)
        return 1;
    for (i = 0; i < sizeof timed / sizeof timed[0]; i++)
        if (strcmp(g_set.mode, timed[i]) == 0)
            return 0;
    return 1;
}

void setup(void)
{
    unsigned char seed[SEED_BYTES];
    size_t i;
    int rc;

    if (g_op == OP_EXT) {
        ext_setup();
        inputs_setup();
        return;
    }
    for (i = 0; i < SEED_BYTES; i++)
        seed[i] = (unsigned char)i;
    if (g_inputs)
        inputs_library_seed(seed);
    g_msg = buffer(MSG_BYTES);
    for (i = 0; i < MSG_BYTES; i++)
        g_msg[i] = (unsigned char)((131 * i + 64) % 256);
    g_pk = buffer(E->pk_bytes);
    g_sk = buffer(E->sk_bytes);
    if (E->kind == PQB_KIND_SIGN) {
        g_sig_cap = E->sig_bytes + (E->sig_attached ? MSG_BYTES : 0);
        g_sig = buffer(g_sig_cap);
    } else {
        g_ct = buffer(E->ct_bytes);
        g_ss = buffer(E->ss_bytes);
        g_ss2 = buffer(E->ss_bytes);
    }

    rc = E->seed(seed, SEED_BYTES);
    if (rc != 0)
        fail("setup", "seed_returned_%d", rc);
    if (keys_given())
        keys_load();
    else if (keygen_in_setup() && do_keygen() != 0)
        fail("setup", "%s", g_err);
    if (inputs_pooled()) {
        /* The pool's first entry makes the honest signature or round trip. */
        inputs_setup();
        return;
    }
    if (g_op == OP_VERIFY && do_sign() != 0)
        fail("setup", "%s", g_err);
    if (g_op == OP_DEC) {
        size_t len;
        if (do_enc() != 0)
            fail("setup", "%s", g_err);
        if (do_dec_into(&len) != 0)
            fail("setup", "%s", g_err);
        if (len != g_ss_len || memcmp(g_ss, g_ss2, len) != 0)
            fail("setup", "dec_secret_differs_from_enc_secret");
    }
}

void print_lengths(void)
{
    if (g_op == OP_EXT)
        ext_print_lengths();
    else if (E->kind == PQB_KIND_SIGN)
        line("lengths pk=%zu sk=%zu sig=%zu", max_pk, max_sk, max_sig);
    else
        line("lengths pk=%zu sk=%zu ct=%zu ss=%zu", max_pk, max_sk, max_ct, max_ss);
}
