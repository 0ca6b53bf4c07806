/*
 * driver_trip.c - mode `trip` of the timing driver (included by driver.c):
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
 * An input longer than the API figure that holds it is an error: the
 * library announced a smaller buffer.
 */

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

/* ` key=<hex>` on the current line. */
static void trip_hex(const char *key, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char chunk[512];
    size_t i, k = 0;
    out_write(" ", 1);
    out_write(key, strlen(key));
    out_write("=", 1);
    for (i = 0; i < n; i++) {
        chunk[k++] = digits[p[i] >> 4];
        chunk[k++] = digits[p[i] & 15];
        if (k == sizeof chunk) {
            out_write(chunk, k);
            k = 0;
        }
    }
    out_write(chunk, k);
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
    trip_hex("sig", out, out_len);
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
    trip_hex("ct", ct, ct_len);
    trip_hex("ss", ss, ss_len);
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
    trip_hex("ss", ss, ss_len);
    trip_end_line();
}

/* One step; the library's randomness seeded as `setup` seeds it. */
static void mode_trip(void)
{
    unsigned char seed[SEED_BYTES];
    size_t i;
    int rc;
    if (g_op == OP_EXT || g_op == OP_KEYGEN)
        fail("settings", "a_trip_step_is_sign_verify_enc_or_dec");
    for (i = 0; i < SEED_BYTES; i++)
        seed[i] = (unsigned char)i;
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
    default:
        trip_dec();
        break;
    }
}
