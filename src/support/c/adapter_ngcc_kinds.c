/*
 * adapter_ngcc_kinds.c - the key-exchange and hash parts of the NGCC
 * adapter. Included by adapter_ngcc.c (one translation unit: it uses that
 * file's helpers and the API the submission's headers declare); never
 * compiled on its own.
 *
 * KEX: the getters, kex_init_a/b and kex_derive_ss_a/b come from the
 * headers (a TOML's [kex] names turns each NGCC name into the submission's
 * with -D<ngcc name>=<name>). Pass functions are looked up by name up to
 * PQB_KEX_MAX_PASSES in adapter_kex_passes.c, a unit that sees none of the
 * submission's prototypes (they differ in constness between submissions).
 *
 * Hash: CryptHash(PQB_HASH_BITS, msg, msg_bits, digest).
 */

#ifdef PQB_KIND_IS_KEX

typedef void (*pqb_kex_any_fn)(void); /* the generic function pointer: cast freely */
pqb_kex_any_fn pqb_kex_pass_fn(int k);

typedef int (*pqb_kex_pass1_fn)(const unsigned char *, unsigned long long,
                                const unsigned char *, unsigned long long, unsigned char *,
                                unsigned long long *, unsigned char *, unsigned long long *);
typedef int (*pqb_kex_passk_fn)(const unsigned char *, unsigned long long,
                                const unsigned char *, unsigned long long, const unsigned char *,
                                unsigned long long, unsigned char *, unsigned long long *,
                                unsigned char *, unsigned long long *);

static int pqb_kex_init(int side, unsigned char *pk, size_t *pk_len, unsigned char *sk,
                        size_t *sk_len, unsigned char *st, size_t *st_len)
{
    unsigned long long pl = kex_get_pk_len_bytes();
    unsigned long long sl = kex_get_sk_len_bytes();
    unsigned long long tl = side == PQB_KEX_A ? kex_get_sta_len_bytes() : kex_get_stb_len_bytes();
    int rc = side == PQB_KEX_A ? kex_init_a(pk, &pl, sk, &sl, st, &tl)
                               : kex_init_b(pk, &pl, sk, &sl, st, &tl);
    *pk_len = pqb_ull_to_size(pl);
    *sk_len = pqb_ull_to_size(sl);
    *st_len = pqb_ull_to_size(tl);
    return rc;
}

static int pqb_kex_has_pass(int k)
{
    return k >= 1 && k <= PQB_KEX_MAX_PASSES && pqb_kex_pass_fn(k) != NULL;
}

static int pqb_kex_pass(int k, const unsigned char *sk, size_t sk_len, const unsigned char *peer_pk,
                        size_t peer_pk_len, const unsigned char *in, size_t in_len,
                        unsigned char *st, size_t *st_len, unsigned char *out, size_t *out_len)
{
    pqb_kex_any_fn f = k >= 1 && k <= PQB_KEX_MAX_PASSES ? pqb_kex_pass_fn(k) : NULL;
    unsigned long long tl = (unsigned long long)*st_len;
    unsigned long long ml = kex_get_total_msg_len_bytes();
    int rc;
    if (f == NULL)
        return PQB_KEX_NO_PASS;
    if (k == 1) {
        pqb_kex_pass1_fn p1 = (pqb_kex_pass1_fn)f;
        rc = p1(sk, (unsigned long long)sk_len, peer_pk, (unsigned long long)peer_pk_len, st, &tl,
                out, &ml);
    } else {
        pqb_kex_passk_fn pk = (pqb_kex_passk_fn)f;
        rc = pk(sk, (unsigned long long)sk_len, peer_pk, (unsigned long long)peer_pk_len, in,
                (unsigned long long)in_len, st, &tl, out, &ml);
    }
    *st_len = pqb_ull_to_size(tl);
    *out_len = pqb_ull_to_size(ml);
    return rc;
}

static int pqb_kex_derive(int side, const unsigned char *sk, size_t sk_len,
                          const unsigned char *peer_pk, size_t peer_pk_len, const unsigned char *m,
                          size_t m_len, const unsigned char *st, size_t st_len, unsigned char *ss,
                          size_t *ss_len)
{
    unsigned long long sl = kex_get_ss_len_bytes();
    int rc;
    if (side == PQB_KEX_A)
        rc = kex_derive_ss_a(sk, (unsigned long long)sk_len, peer_pk,
                             (unsigned long long)peer_pk_len, m, (unsigned long long)m_len,
                             (unsigned char *)st, (unsigned long long)st_len, ss, &sl);
    else
        rc = kex_derive_ss_b(sk, (unsigned long long)sk_len, peer_pk,
                             (unsigned long long)peer_pk_len, m, (unsigned long long)m_len,
                             (unsigned char *)st, (unsigned long long)st_len, ss, &sl);
    *ss_len = pqb_ull_to_size(sl);
    return rc;
}

static void pqb_ngcc_kind_table(pqb_entry *e)
{
    long long passes = (long long)kex_get_passes_num();
    e->kind = PQB_KIND_KEX;
    e->pk_bytes = pqb_ull_to_size(kex_get_pk_len_bytes());
    e->sk_bytes = pqb_ull_to_size(kex_get_sk_len_bytes());
    e->ss_bytes = pqb_ull_to_size(kex_get_ss_len_bytes());
    e->kex_sta_bytes = pqb_ull_to_size(kex_get_sta_len_bytes());
    e->kex_stb_bytes = pqb_ull_to_size(kex_get_stb_len_bytes());
    e->kex_msg_bytes = pqb_ull_to_size(kex_get_total_msg_len_bytes());
    /* Out of range stays visible (the runner refuses it). */
    e->kex_passes = passes < 0 ? -1 : passes > 1000 ? 1000 : (int)passes;
    e->kex_init = pqb_kex_init;
    e->kex_pass = pqb_kex_pass;
    e->kex_has_pass = pqb_kex_has_pass;
    e->kex_derive = pqb_kex_derive;
}

#else /* PQB_KIND_IS_HASH */

#ifndef PQB_HASH_BITS
#error "PQB_HASH_BITS (the instance's digest width) must be defined"
#endif

static int pqb_hash(const unsigned char *msg, unsigned long long msg_bits, unsigned char *digest)
{
    return CryptHash(PQB_HASH_BITS, (unsigned char *)msg, msg_bits, digest);
}

static void pqb_ngcc_kind_table(pqb_entry *e)
{
    e->kind = PQB_KIND_HASH;
    e->digest_bits = pqb_ull_to_size(PQB_HASH_BITS);
    e->hash = pqb_hash;
#ifdef PQB_ICCS_BASELINE
    e->iccs_sm3 = pqb_iccs_sm3;
#endif
}

#endif
