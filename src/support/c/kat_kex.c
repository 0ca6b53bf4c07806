/*
 * kat_kex.c - the KEX KAT (KAT_KEX_<instance>.txt) of pqb-kat. Included by
 * kat_runner.c (one translation unit: it uses the runner's sinks, guarded
 * buffers and failure bookkeeping); never compiled on its own.
 *
 * Seed schedule as for the other NGCC kinds: a seed DRNG from "seed" x 16,
 * one 64-byte seed per record re-initialising the library's DRNG, then
 * kex_init_a, kex_init_b, passes 1..Pass_Num, kex_derive_ss_a and _b. Per
 * record: Count, Seed_Len, Seed, Pass_Num, PKa_Len, PKa, SKa_Len, SKa,
 * Init_Sta_Len, Init_Sta, PKb_Len, PKb, SKb_Len, SKb, Init_Stb_Len,
 * Init_Stb, per pass k Pass<k>_Sta_Len/Pass<k>_Sta (odd k) or
 * Pass<k>_Stb_Len/Pass<k>_Stb (even k), M<k>_Len, M<k>, then SS_Len, SS
 * and an empty line.
 *
 * Checks: guard bytes around every buffer after every call; every returned
 * length against its cap (and all messages together against the total
 * cap): OVERFLOW. A call returning an error, a pass reporting the last pass
 * before Pass_Num (early) or not at Pass_Num (late), or two different
 * shared secrets: CRYPTOFAIL, naming the record and the pass.
 */

typedef struct {
    size_t max_pka, max_pkb, max_ska, max_skb, max_sta, max_stb, max_ss, max_msgs;
    size_t max_m[PQB_KEX_MAX_PASSES + 1];
} kex_figures;

static kex_figures g_kex;

/* Writes `<name>_Len = n` and `<name> = hex`. */
static void kat_field(sink *f, const char *name, const unsigned char *p, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "%s_Len", name);
    kat_num(f, key, n);
    kat_hex(f, name, p, n);
}

/* A pass's return code against the protocol's length: 0 when it fits. */
static int kex_pass_verdict(run_state *r, int k, int passes, int rc)
{
    if (rc == PQB_KEX_NO_PASS) {
        fail(r, ST_LOADFAIL, "pass %d of %d is not defined (no kex_generate_pass%d_msg_%c)", k,
             passes, k, k % 2 ? 'a' : 'b');
        return -1;
    }
    if (rc < 0 || rc > PQB_KEX_LAST_PASS) {
        fail(r, ST_CRYPTOFAIL, "pass %d of %d returned %d in record %lu", k, passes, rc, r->record);
        return -1;
    }
    if (rc == PQB_KEX_LAST_PASS && k < passes) {
        fail(r, ST_CRYPTOFAIL,
             "pass %d reported the last pass, but kex_get_passes_num() is %d, in record %lu", k,
             passes, r->record);
        return -1;
    }
    if (rc != PQB_KEX_LAST_PASS && k == passes) {
        fail(r, ST_CRYPTOFAIL,
             "pass %d of %d did not report the last pass (returned %d) in record %lu", k, passes,
             rc, r->record);
        return -1;
    }
    return 0;
}

static void kex_record(run_state *r, const unsigned char *seed, size_t seed_len)
{
    const pqb_entry *e = r->e;
    sink *f = &r->kat;
    int passes = e->kex_passes, k, rc;
    gbuf pka, ska, sta, pkb, skb, stb, ssa, ssb, msg[PQB_KEX_MAX_PASSES + 1];
    size_t pka_len, ska_len, sta_len, pkb_len, skb_len, stb_len, ssa_len, ssb_len, total = 0;
    size_t mlen[PQB_KEX_MAX_PASSES + 1];
    char name[48], call[48];

    memset(mlen, 0, sizeof mlen);
    kat_num(f, "Count", r->record);
    kat_num(f, "Seed_Len", seed_len);
    kat_hex(f, "Seed", seed, seed_len);
    kat_num(f, "Pass_Num", (unsigned long long)passes);

    if (alloc_live(r, &pka, "PKa", e->pk_bytes) || alloc_live(r, &ska, "SKa", e->sk_bytes) ||
        alloc_live(r, &sta, "Sta", e->kex_sta_bytes) || alloc_live(r, &pkb, "PKb", e->pk_bytes) ||
        alloc_live(r, &skb, "SKb", e->sk_bytes) || alloc_live(r, &stb, "Stb", e->kex_stb_bytes) ||
        alloc_live(r, &ssa, "SSa", e->ss_bytes) || alloc_live(r, &ssb, "SSb", e->ss_bytes))
        goto out;
    for (k = 1; k <= passes; k++) {
        static const char *const names[PQB_KEX_MAX_PASSES + 1] = {
            "", "M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8",
            "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M16"};
        if (alloc_live(r, &msg[k], names[k], e->kex_msg_bytes))
            goto out;
    }

    rc = e->seed(seed, seed_len);
    check_guards(r, "seed");
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "seeding the DRNG with %zu bytes returned %d in record %lu",
             seed_len, rc, r->record);
        goto out;
    }

    pka_len = pka.cap, ska_len = ska.cap, sta_len = sta.cap;
    rc = e->kex_init(PQB_KEX_A, gdata(&pka), &pka_len, gdata(&ska), &ska_len, gdata(&sta),
                     &sta_len);
    if (check_guards(r, "kex_init_a") != 0)
        goto out;
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "kex_init_a returned %d in record %lu", rc, r->record);
        goto out;
    }
    note_max(&g_kex.max_pka, pka_len), note_max(&g_kex.max_ska, ska_len);
    note_max(&g_kex.max_sta, sta_len);
    pka_len = check_len(r, "kex_init_a", "pk", pka_len, pka.cap);
    ska_len = check_len(r, "kex_init_a", "sk", ska_len, ska.cap);
    sta_len = check_len(r, "kex_init_a", "state", sta_len, sta.cap);
    kat_field(f, "PKa", gdata(&pka), pka_len);
    kat_field(f, "SKa", gdata(&ska), ska_len);
    kat_field(f, "Init_Sta", gdata(&sta), sta_len);

    pkb_len = pkb.cap, skb_len = skb.cap, stb_len = stb.cap;
    rc = e->kex_init(PQB_KEX_B, gdata(&pkb), &pkb_len, gdata(&skb), &skb_len, gdata(&stb),
                     &stb_len);
    if (check_guards(r, "kex_init_b") != 0)
        goto out;
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "kex_init_b returned %d in record %lu", rc, r->record);
        goto out;
    }
    note_max(&g_kex.max_pkb, pkb_len), note_max(&g_kex.max_skb, skb_len);
    note_max(&g_kex.max_stb, stb_len);
    pkb_len = check_len(r, "kex_init_b", "pk", pkb_len, pkb.cap);
    skb_len = check_len(r, "kex_init_b", "sk", skb_len, skb.cap);
    stb_len = check_len(r, "kex_init_b", "state", stb_len, stb.cap);
    kat_field(f, "PKb", gdata(&pkb), pkb_len);
    kat_field(f, "SKb", gdata(&skb), skb_len);
    kat_field(f, "Init_Stb", gdata(&stb), stb_len);

    for (k = 1; k <= passes; k++) {
        int a = k % 2 == 1;
        gbuf *st = a ? &sta : &stb;
        size_t *st_len = a ? &sta_len : &stb_len;
        mlen[k] = msg[k].cap;
        snprintf(call, sizeof call, "pass %d", k);
        rc = e->kex_pass(k, a ? gdata(&ska) : gdata(&skb), a ? ska_len : skb_len,
                         a ? gdata(&pkb) : gdata(&pka), a ? pkb_len : pka_len,
                         k > 1 ? gdata(&msg[k - 1]) : NULL, k > 1 ? mlen[k - 1] : 0, gdata(st),
                         st_len, gdata(&msg[k]), &mlen[k]);
        if (check_guards(r, call) != 0)
            goto out;
        if (rc == PQB_KEX_NO_PASS) {
            kex_pass_verdict(r, k, passes, rc);
            goto out;
        }
        note_max(a ? &g_kex.max_sta : &g_kex.max_stb, *st_len);
        note_max(&g_kex.max_m[k], mlen[k]);
        *st_len = check_len(r, call, "state", *st_len, st->cap);
        mlen[k] = check_len(r, call, "message", mlen[k], msg[k].cap);
        total += mlen[k];
        snprintf(name, sizeof name, "Pass%d_St%c", k, a ? 'a' : 'b');
        kat_field(f, name, gdata(st), *st_len);
        snprintf(name, sizeof name, "M%d", k);
        kat_field(f, name, gdata(&msg[k]), mlen[k]);
        if (kex_pass_verdict(r, k, passes, rc) != 0)
            goto out;
    }
    note_max(&g_kex.max_msgs, total);
    if (total > e->kex_msg_bytes)
        fail(r, ST_OVERFLOW,
             "the %d messages hold %zu bytes, above kex_get_total_msg_len_bytes() = %zu in record "
             "%lu",
             passes, total, e->kex_msg_bytes, r->record);

    {
        /* The last message each side sent (none: an empty message). */
        int last_b = passes - (passes % 2 == 1), last_a = passes - (passes % 2 == 0);
        ssa_len = ssa.cap;
        rc = e->kex_derive(PQB_KEX_A, gdata(&ska), ska_len, gdata(&pkb), pkb_len,
                           last_b > 0 ? gdata(&msg[last_b]) : NULL, last_b > 0 ? mlen[last_b] : 0,
                           gdata(&sta), sta_len, gdata(&ssa), &ssa_len);
        if (check_guards(r, "kex_derive_ss_a") != 0)
            goto out;
        if (rc != 0) {
            fail(r, ST_CRYPTOFAIL, "kex_derive_ss_a returned %d in record %lu", rc, r->record);
            goto out;
        }
        ssb_len = ssb.cap;
        rc = e->kex_derive(PQB_KEX_B, gdata(&skb), skb_len, gdata(&pka), pka_len,
                           last_a > 0 ? gdata(&msg[last_a]) : NULL, last_a > 0 ? mlen[last_a] : 0,
                           gdata(&stb), stb_len, gdata(&ssb), &ssb_len);
        if (check_guards(r, "kex_derive_ss_b") != 0)
            goto out;
        if (rc != 0) {
            fail(r, ST_CRYPTOFAIL, "kex_derive_ss_b returned %d in record %lu", rc, r->record);
            goto out;
        }
    }
    note_max(&g_kex.max_ss, ssa_len), note_max(&g_kex.max_ss, ssb_len);
    ssa_len = check_len(r, "kex_derive_ss_a", "ss", ssa_len, ssa.cap);
    ssb_len = check_len(r, "kex_derive_ss_b", "ss", ssb_len, ssb.cap);
    kat_field(f, "SS", gdata(&ssa), ssa_len);
    sink_write(f, "\n", 1);
    r->records_written++;

    if (ssa_len != ssb_len || (ssa_len != 0 && memcmp(gdata(&ssa), gdata(&ssb), ssa_len) != 0))
        fail(r, ST_CRYPTOFAIL,
             "the shared secrets differ after pass %d of %d: kex_derive_ss_a gave %zu bytes, "
             "kex_derive_ss_b %zu bytes%s, in record %lu",
             passes, passes, ssa_len, ssb_len, ssa_len == ssb_len ? " of other values" : "",
             r->record);
    else if (ssa_len == 0)
        fail(r, ST_CRYPTOFAIL, "the shared secret is empty in record %lu", r->record);
out:
    free_live(r);
}

/* Refuses a protocol the runner cannot run; 0 when it can. */
static int kex_check_table(run_state *r)
{
    const pqb_entry *e = r->e;
    if (e->kex_init == NULL || e->kex_pass == NULL || e->kex_derive == NULL) {
        fail(r, ST_LOADFAIL, "entry table lacks the key-exchange functions");
        return -1;
    }
    if (e->kex_passes < 1 || e->kex_passes > PQB_KEX_MAX_PASSES) {
        fail(r, ST_LOADFAIL, "kex_get_passes_num() is %d, not 1 to %d", e->kex_passes,
             PQB_KEX_MAX_PASSES);
        return -1;
    }
    return 0;
}

static void kex_print_figures(const run_state *r)
{
    const pqb_entry *e = r->e;
    int k;
    char key[32];
    out_size("passes", (size_t)(e->kex_passes < 0 ? 0 : e->kex_passes));
    out_size("api_pk_bytes", e->pk_bytes);
    out_size("api_sk_bytes", e->sk_bytes);
    out_size("api_sta_bytes", e->kex_sta_bytes);
    out_size("api_stb_bytes", e->kex_stb_bytes);
    out_size("api_msg_bytes", e->kex_msg_bytes);
    out_size("api_ss_bytes", e->ss_bytes);
    out_size("max_pka_len", g_kex.max_pka);
    out_size("max_pkb_len", g_kex.max_pkb);
    out_size("max_ska_len", g_kex.max_ska);
    out_size("max_skb_len", g_kex.max_skb);
    out_size("max_sta_len", g_kex.max_sta);
    out_size("max_stb_len", g_kex.max_stb);
    for (k = 1; k <= e->kex_passes && k <= PQB_KEX_MAX_PASSES; k++) {
        snprintf(key, sizeof key, "max_m%d_len", k);
        out_size(key, g_kex.max_m[k]);
    }
    out_size("max_msgs_len", g_kex.max_msgs);
    out_size("max_ss_len", g_kex.max_ss);
}
