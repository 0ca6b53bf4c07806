/*
 * driver_trip.c - mode `trip` of the timing driver:
 * one step of a round trip across processes. Its inputs are files pqbench
 * put in the job directory, the bytes another process of the same library
 * produced (a KAT record, or an earlier step's output); its output goes on
 * the results channel in hex. No key generation runs in this process, so
 * nothing the library kept in memory elsewhere (a table its "public keys"
 * index, a ciphertext it remembers) can stand in for the bytes.
 *
 *   op=sign    trip.sk, trip.msg            -> trip sig=<hex>
 *   op=verify  trip.pk, trip.msg, trip.sig  -> trip verify=<rc> flipped=<rc>
 *              (flipped: the check again with one bit flipped, which an
 *              honest verify rejects: the message's first bit for a detached
 *              signature, as the KAT runner flips it, else the signed
 *              message's first, which the library itself must reject)
 *   op=enc     trip.pk                      -> trip ct=<hex> ss=<hex>
 *   op=dec     trip.sk, trip.ct             -> trip ss=<hex>
 *
 * A key exchange's steps, each party's own in its own process (sk, st:
 * the party's own key and state as its previous step left them; peer_pk:
 * the other party's public key; m1..: the messages so far):
 *
 *   op=init_a|init_b                         -> trip pk=<hex> sk=<hex> st=<hex>
 *   op=pass<k>  trip.sk, trip.st, trip.peer_pk, trip.m1..m<k-1>
 *                                            -> trip st=<hex> msg=<hex> last=<0|1>
 *   op=derive_a|derive_b  trip.sk, trip.st, trip.peer_pk, trip.m1..m<P>
 *                                            -> trip ss=<hex>
 *
 * A pass ends the protocol exactly at pass P (kex_get_passes_num()); the
 * messages together fit the total cap; a secret has the API length.
 *
 * An input longer than the API figure that holds it is an error: the
 * library announced a smaller buffer.
 */

#include "driver.h"

#define TRIP_MSG_CAP (1u << 20)

/* The file trip.<name>, at most cap bytes, in a guarded buffer. */
static unsigned char *trip_input(const char *name, size_t cap, size_t *len)
{
    char path[32];
    unsigned char *p = buffer(cap);
    FILE *f;
    int more;
    snprintf(path, sizeof path, "trip.%s", name);
    f = fopen(path, "rb");
    if (!f)
        fail("trip", "no_input_%s", name);
    *len = fread(p, 1, cap, f);
    more = fgetc(f);
    fclose(f);
    if (more != EOF)
        fail("trip", "input_%s_longer_than_its_API_figure_%zu", name, cap);
    return p;
}

static void trip_end_line(void)
{
    out_write("\n", 1);
    fflush(g_out);
}

static void trip_sign(void)
{
    size_t sk_len, m_len, cap, out_len;
    unsigned char *sk = trip_input("sk", E->sk_bytes, &sk_len);
    unsigned char *m = trip_input("msg", TRIP_MSG_CAP, &m_len);
    unsigned char *out;
    int rc;
    int attempt;
    cap = E->sig_bytes + (E->sig_attached ? m_len : 0);
    out = buffer(cap);
    /* Retried while the library reports failure, as every timed sign is. */
    for (attempt = 0, rc = -1; rc != 0 && attempt < SIGN_ATTEMPTS; attempt++) {
        out_len = cap;
        rc = E->sign(out, &out_len, m, m_len, sk, sk_len);
    }
    if (rc != 0)
        fail("trip", "sign_failed_%d_times_last_rc_%d", SIGN_ATTEMPTS, rc);
    if (out_len > cap)
        fail("trip", "sign_length_%zu_exceeds_buffer_%zu", out_len, cap);
    out_write("trip", 4);
    out_hex("sig", out, out_len);
    trip_end_line();
}

static void trip_verify(void)
{
    size_t pk_len, m_len, sig_len;
    unsigned char *pk = trip_input("pk", E->pk_bytes, &pk_len);
    unsigned char *m = trip_input("msg", TRIP_MSG_CAP, &m_len);
    unsigned char *sig =
        trip_input("sig", E->sig_bytes + (E->sig_attached ? m_len : 0), &sig_len);
    int rc = E->verify(sig, sig_len, m, m_len, pk, pk_len), flipped = 0;
    unsigned char *bit = E->sig_attached || m_len == 0 ? sig : m;
    if (sig_len > 0) {
        bit[0] ^= 1;
        flipped = E->verify(sig, sig_len, m, m_len, pk, pk_len);
        bit[0] ^= 1;
    }
    line("trip verify=%d flipped=%d", rc, flipped);
}

static void trip_enc(void)
{
    size_t pk_len, ct_len = E->ct_bytes, ss_len = E->ss_bytes;
    unsigned char *pk = trip_input("pk", E->pk_bytes, &pk_len);
    unsigned char *ct = buffer(E->ct_bytes), *ss = buffer(E->ss_bytes);
    int rc = E->enc(ct, &ct_len, ss, &ss_len, pk, pk_len);
    if (rc != 0)
        fail("trip", "enc_returned_%d", rc);
    if (ct_len > E->ct_bytes || ss_len > E->ss_bytes)
        fail("trip", "enc_length_exceeds_buffer_ct_%zu_ss_%zu", ct_len, ss_len);
    out_write("trip", 4);
    out_hex("ct", ct, ct_len);
    out_hex("ss", ss, ss_len);
    trip_end_line();
}

static void trip_dec(void)
{
    size_t sk_len, ct_len, ss_len = E->ss_bytes;
    unsigned char *sk = trip_input("sk", E->sk_bytes, &sk_len);
    unsigned char *ct = trip_input("ct", E->ct_bytes, &ct_len);
    unsigned char *ss = buffer(E->ss_bytes);
    int rc = E->dec(ss, &ss_len, ct, ct_len, sk, sk_len);
    if (rc != 0)
        fail("trip", "dec_returned_%d", rc);
    if (ss_len > E->ss_bytes)
        fail("trip", "dec_length_%zu_exceeds_buffer_%zu", ss_len, E->ss_bytes);
    out_write("trip", 4);
    out_hex("ss", ss, ss_len);
    trip_end_line();
}

/* ---- key exchange ------------------------------------------------------ */

static size_t trip_kex_st_cap(int a)
{
    return a ? E->kex_sta_bytes : E->kex_stb_bytes;
}

/* The step's number in the protocol (init_a 1, init_b 2, pass<k> k + 2,
 * derive_a P + 3, derive_b P + 4); 0 for any other operation. */
static int trip_kex_tag(void)
{
    if (g_op != OP_EXT || g_kex_op != 2)
        return 0;
    if (strncmp(g_kex_name, "pass", 4) == 0)
        return atoi(g_kex_name + 4) + 2;
    if (strcmp(g_kex_name, "init_a") == 0)
        return 1;
    if (strcmp(g_kex_name, "init_b") == 0)
        return 2;
    return E->kex_passes + (strcmp(g_kex_name, "derive_a") == 0 ? 3 : 4);
}

/* The messages m1..m<n> into m[1..n], len[1..n]; together within the cap. */
static size_t trip_kex_msgs(int n, unsigned char **m, size_t *len)
{
    size_t total = 0;
    char name[16];
    int j;
    for (j = 1; j <= n; j++) {
        snprintf(name, sizeof name, "m%d", j);
        m[j] = trip_input(name, E->kex_msg_bytes, &len[j]);
        total += len[j];
    }
    if (total > E->kex_msg_bytes)
        fail("trip", "messages_hold_%zu_bytes_above_the_total_cap_%zu", total, E->kex_msg_bytes);
    return total;
}

static void trip_kex_init(int a)
{
    size_t pk_len = E->pk_bytes, sk_len = E->sk_bytes, st_len = trip_kex_st_cap(a);
    unsigned char *pk = buffer(pk_len), *sk = buffer(sk_len), *st = buffer(st_len);
    int rc = E->kex_init(a ? PQB_KEX_A : PQB_KEX_B, pk, &pk_len, sk, &sk_len, st, &st_len);
    if (rc != 0)
        fail("trip", "%s_returned_%d", g_kex_name, rc);
    if (pk_len > E->pk_bytes || sk_len > E->sk_bytes || st_len > trip_kex_st_cap(a))
        fail("trip", "%s_length_exceeds_its_cap_pk_%zu_sk_%zu_state_%zu", g_kex_name, pk_len,
             sk_len, st_len);
    out_write("trip", 4);
    out_hex("pk", pk, pk_len);
    out_hex("sk", sk, sk_len);
    out_hex("st", st, st_len);
    trip_end_line();
}

/* A pass's return code against the protocol's length. */
static void trip_kex_pass_rc(int k, int rc)
{
    int P = E->kex_passes;
    if (rc < 0 || rc > PQB_KEX_LAST_PASS)
        fail("trip", "pass%d_returned_%d", k, rc);
    if (rc == PQB_KEX_LAST_PASS && k < P)
        fail("trip", "pass%d_of_%d_ended_the_protocol_early", k, P);
    if (rc != PQB_KEX_LAST_PASS && k == P)
        fail("trip", "pass%d_of_%d_did_not_end_the_protocol", k, P);
}

static void trip_kex_pass(int k)
{
    int a = k % 2 == 1, rc;
    unsigned char *m[PQB_KEX_MAX_PASSES + 1], *sk, *st, *pk, *out;
    size_t ml[PQB_KEX_MAX_PASSES + 1], sk_len, st_len, pk_len, total;
    size_t out_len = E->kex_msg_bytes;
    if (k > E->kex_passes)
        fail("trip", "pass%d_but_the_protocol_has_%d_passes", k, E->kex_passes);
    sk = trip_input("sk", E->sk_bytes, &sk_len);
    st = trip_input("st", trip_kex_st_cap(a), &st_len);
    pk = trip_input("peer_pk", E->pk_bytes, &pk_len);
    total = trip_kex_msgs(k - 1, m, ml);
    out = buffer(E->kex_msg_bytes);
    rc = E->kex_pass(k, sk, sk_len, pk, pk_len, k > 1 ? m[k - 1] : NULL, k > 1 ? ml[k - 1] : 0,
                     st, &st_len, out, &out_len);
    trip_kex_pass_rc(k, rc);
    if (out_len > E->kex_msg_bytes || st_len > trip_kex_st_cap(a))
        fail("trip", "pass%d_length_exceeds_its_cap_msg_%zu_state_%zu", k, out_len, st_len);
    if (total + out_len > E->kex_msg_bytes)
        fail("trip", "messages_hold_%zu_bytes_above_the_total_cap_%zu", total + out_len,
             E->kex_msg_bytes);
    out_write("trip", 4);
    out_hex("st", st, st_len);
    out_hex("msg", out, out_len);
    out_write(rc == PQB_KEX_LAST_PASS ? " last=1" : " last=0", 7);
    trip_end_line();
}

/* The secret from the last message the other party sent (none: empty). */
static void trip_kex_derive(int a)
{
    int P = E->kex_passes, last = a ? P - (P % 2 == 1) : P - (P % 2 == 0), rc;
    unsigned char *m[PQB_KEX_MAX_PASSES + 1], *sk, *st, *pk, *ss = buffer(E->ss_bytes);
    size_t ml[PQB_KEX_MAX_PASSES + 1], sk_len, st_len, pk_len, ss_len = E->ss_bytes;
    sk = trip_input("sk", E->sk_bytes, &sk_len);
    st = trip_input("st", trip_kex_st_cap(a), &st_len);
    pk = trip_input("peer_pk", E->pk_bytes, &pk_len);
    trip_kex_msgs(P, m, ml);
    rc = E->kex_derive(a ? PQB_KEX_A : PQB_KEX_B, sk, sk_len, pk, pk_len,
                       last > 0 ? m[last] : NULL, last > 0 ? ml[last] : 0, st, st_len, ss,
                       &ss_len);
    if (rc != 0)
        fail("trip", "%s_returned_%d", g_kex_name, rc);
    if (ss_len != E->ss_bytes)
        fail("trip", "%s_gave_%zu_bytes_not_the_API_length_%zu", g_kex_name, ss_len,
             E->ss_bytes);
    out_write("trip", 4);
    out_hex("ss", ss, ss_len);
    trip_end_line();
}

static void trip_kex(void)
{
    int k;
    if (E->kex_passes < 1 || E->kex_passes > PQB_KEX_MAX_PASSES)
        fail("trip", "kex_get_passes_num_is_%d", E->kex_passes);
    for (k = 1; k <= E->kex_passes; k++)
        if (!E->kex_has_pass(k))
            fail("trip", "pass%d_of_%d_is_not_defined", k, E->kex_passes);
    if (strncmp(g_kex_name, "pass", 4) == 0)
        trip_kex_pass(atoi(g_kex_name + 4));
    else if (strncmp(g_kex_name, "init_", 5) == 0)
        trip_kex_init(g_kex_name[5] == 'a');
    else
        trip_kex_derive(strcmp(g_kex_name, "derive_a") == 0);
}

/* One step; the library's randomness seeded as `setup` seeds it (a key
 * exchange's step with its number mixed in, so the two parties' passes
 * draw different bytes). */
void mode_trip(void)
{
    unsigned char seed[SEED_BYTES];
    size_t i;
    int rc, tag;
    if (g_op == OP_KEYGEN || (g_op == OP_EXT && (E->kind != PQB_KIND_KEX || g_kex_op != 2)))
        fail("settings", "a_trip_step_is_sign_verify_enc_dec_or_a_KEX_step");
    tag = trip_kex_tag();
    for (i = 0; i < SEED_BYTES; i++)
        seed[i] = (unsigned char)(i ^ (size_t)tag);
    rc = E->seed(seed, SEED_BYTES);
    if (rc != 0)
        fail("setup", "seed_returned_%d", rc);
    switch (g_op) {
    case OP_SIGN:
        trip_sign();
        break;
    case OP_VERIFY:
        trip_verify();
        break;
    case OP_ENC:
        trip_enc();
        break;
    case OP_EXT:
        trip_kex();
        break;
    default:
        trip_dec();
        break;
    }
}
