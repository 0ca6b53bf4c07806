/*
 * kat_kex.c - the KEX KAT (KAT_KEX_<instance>.txt) of pqb-kat.
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

#include "kat_runner.h"

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

/* One record's buffers and lengths; index 0 is side A, 1 side B. */
typedef struct {
    gbuf pk[2], sk[2], st[2], ss[2], msg[PQB_KEX_MAX_PASSES + 1];
    size_t pk_len[2], sk_len[2], st_len[2], ss_len[2], mlen[PQB_KEX_MAX_PASSES + 1];
} kex_bufs;

/* Every buffer of a record, in the order the guards are checked. */
static int kex_alloc(run_state *r, kex_bufs *b)
{
    static const char *const names[PQB_KEX_MAX_PASSES + 1] = {
        "", "M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8",
        "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M16"};
    const pqb_entry *e = r->e;
    int k;
    if (alloc_live(r, &b->pk[0], "PKa", e->pk_bytes) ||
        alloc_live(r, &b->sk[0], "SKa", e->sk_bytes) ||
        alloc_live(r, &b->st[0], "Sta", e->kex_sta_bytes) ||
        alloc_live(r, &b->pk[1], "PKb", e->pk_bytes) ||
        alloc_live(r, &b->sk[1], "SKb", e->sk_bytes) ||
        alloc_live(r, &b->st[1], "Stb", e->kex_stb_bytes) ||
        alloc_live(r, &b->ss[0], "SSa", e->ss_bytes) ||
        alloc_live(r, &b->ss[1], "SSb", e->ss_bytes))
        return -1;
    for (k = 1; k <= e->kex_passes; k++)
        if (alloc_live(r, &b->msg[k], names[k], e->kex_msg_bytes))
            return -1;
    return 0;
}

/* kex_init_a (s = 0) or kex_init_b (s = 1), and its fields. */
static int kex_init_side(run_state *r, kex_bufs *b, int s)
{
    static const char *const calls[2] = {"kex_init_a", "kex_init_b"};
    static const char *const fields[2][3] = {{"PKa", "SKa", "Init_Sta"},
                                             {"PKb", "SKb", "Init_Stb"}};
    const char *call = calls[s];
    sink *f = &r->kat;
    int rc;
    b->pk_len[s] = b->pk[s].cap, b->sk_len[s] = b->sk[s].cap, b->st_len[s] = b->st[s].cap;
    rc = r->e->kex_init(s == 0 ? PQB_KEX_A : PQB_KEX_B, gdata(&b->pk[s]), &b->pk_len[s],
                        gdata(&b->sk[s]), &b->sk_len[s], gdata(&b->st[s]), &b->st_len[s]);
    if (check_guards(r, call) != 0)
        return -1;
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "%s returned %d in record %lu", call, rc, r->record);
        return -1;
    }
    note_max(s == 0 ? &g_kex.max_pka : &g_kex.max_pkb, b->pk_len[s]);
    note_max(s == 0 ? &g_kex.max_ska : &g_kex.max_skb, b->sk_len[s]);
    note_max(s == 0 ? &g_kex.max_sta : &g_kex.max_stb, b->st_len[s]);
    b->pk_len[s] = check_len(r, call, "pk", b->pk_len[s], b->pk[s].cap);
    b->sk_len[s] = check_len(r, call, "sk", b->sk_len[s], b->sk[s].cap);
    b->st_len[s] = check_len(r, call, "state", b->st_len[s], b->st[s].cap);
    kat_field(f, fields[s][0], gdata(&b->pk[s]), b->pk_len[s]);
    kat_field(f, fields[s][1], gdata(&b->sk[s]), b->sk_len[s]);
    kat_field(f, fields[s][2], gdata(&b->st[s]), b->st_len[s]);
    return 0;
}

/* Pass k: side A on odd passes, B on even ones, answering message k - 1. */
static int kex_one_pass(run_state *r, kex_bufs *b, int k, size_t *total)
{
    int s = k % 2 == 1 ? 0 : 1, o = 1 - s, passes = r->e->kex_passes, rc;
    char name[48], call[48];
    b->mlen[k] = b->msg[k].cap;
    snprintf(call, sizeof call, "pass %d", k);
    rc = r->e->kex_pass(k, gdata(&b->sk[s]), b->sk_len[s], gdata(&b->pk[o]), b->pk_len[o],
                        k > 1 ? gdata(&b->msg[k - 1]) : NULL, k > 1 ? b->mlen[k - 1] : 0,
                        gdata(&b->st[s]), &b->st_len[s], gdata(&b->msg[k]), &b->mlen[k]);
    if (check_guards(r, call) != 0)
        return -1;
    if (rc == PQB_KEX_NO_PASS) {
        kex_pass_verdict(r, k, passes, rc);
        return -1;
    }
    note_max(s == 0 ? &g_kex.max_sta : &g_kex.max_stb, b->st_len[s]);
    note_max(&g_kex.max_m[k], b->mlen[k]);
    b->st_len[s] = check_len(r, call, "state", b->st_len[s], b->st[s].cap);
    b->mlen[k] = check_len(r, call, "message", b->mlen[k], b->msg[k].cap);
    *total += b->mlen[k];
    snprintf(name, sizeof name, "Pass%d_St%c", k, s == 0 ? 'a' : 'b');
    kat_field(&r->kat, name, gdata(&b->st[s]), b->st_len[s]);
    snprintf(name, sizeof name, "M%d", k);
    kat_field(&r->kat, name, gdata(&b->msg[k]), b->mlen[k]);
    return kex_pass_verdict(r, k, passes, rc);
}

/* kex_derive_ss_a (s = 0) or _b from the last message the other side sent
 * (none: an empty message). */
static int kex_derive_side(run_state *r, kex_bufs *b, int s)
{
    static const char *const calls[2] = {"kex_derive_ss_a", "kex_derive_ss_b"};
    int passes = r->e->kex_passes, o = 1 - s, rc;
    int last = s == 0 ? passes - (passes % 2 == 1) : passes - (passes % 2 == 0);
    b->ss_len[s] = b->ss[s].cap;
    rc = r->e->kex_derive(s == 0 ? PQB_KEX_A : PQB_KEX_B, gdata(&b->sk[s]), b->sk_len[s],
                          gdata(&b->pk[o]), b->pk_len[o], last > 0 ? gdata(&b->msg[last]) : NULL,
                          last > 0 ? b->mlen[last] : 0, gdata(&b->st[s]), b->st_len[s],
                          gdata(&b->ss[s]), &b->ss_len[s]);
    if (check_guards(r, calls[s]) != 0)
        return -1;
    if (rc != 0) {
        fail(r, ST_CRYPTOFAIL, "%s returned %d in record %lu", calls[s], rc, r->record);
        return -1;
    }
    return 0;
}

/* The record's passes and both secrets, written; 0 when the protocol ran
 * to its end (its checks may still have failed). */
static int kex_protocol(run_state *r, kex_bufs *b)
{
    const pqb_entry *e = r->e;
    int passes = e->kex_passes, k;
    size_t total = 0;
    for (k = 1; k <= passes; k++)
        if (kex_one_pass(r, b, k, &total) != 0)
            return -1;
    note_max(&g_kex.max_msgs, total);
    if (total > e->kex_msg_bytes)
        fail(r, ST_OVERFLOW,
             "the %d messages hold %zu bytes, above kex_get_total_msg_len_bytes() = %zu in record "
             "%lu",
             passes, total, e->kex_msg_bytes, r->record);
    if (kex_derive_side(r, b, 0) != 0 || kex_derive_side(r, b, 1) != 0)
        return -1;
    note_max(&g_kex.max_ss, b->ss_len[0]), note_max(&g_kex.max_ss, b->ss_len[1]);
    b->ss_len[0] = check_len(r, "kex_derive_ss_a", "ss", b->ss_len[0], b->ss[0].cap);
    b->ss_len[1] = check_len(r, "kex_derive_ss_b", "ss", b->ss_len[1], b->ss[1].cap);
    kat_field(&r->kat, "SS", gdata(&b->ss[0]), b->ss_len[0]);
    sink_write(&r->kat, "\n", 1);
    r->records_written++;
    return 0;
}

void kex_record(run_state *r, const unsigned char *seed, size_t seed_len)
{
    sink *f = &r->kat;
    int passes = r->e->kex_passes;
    kex_bufs b;
    size_t la, lb;

    memset(b.mlen, 0, sizeof b.mlen);
    kat_num(f, "Count", r->record);
    kat_num(f, "Seed_Len", seed_len);
    kat_hex(f, "Seed", seed, seed_len);
    kat_num(f, "Pass_Num", (unsigned long long)passes);
    if (kex_alloc(r, &b) != 0)
        goto out;
    if (seed_record(r, seed, seed_len) != 0)
        goto out;
    if (kex_init_side(r, &b, 0) != 0 || kex_init_side(r, &b, 1) != 0 || kex_protocol(r, &b) != 0)
        goto out;
    la = b.ss_len[0], lb = b.ss_len[1];
    if (la != lb || (la != 0 && memcmp(gdata(&b.ss[0]), gdata(&b.ss[1]), la) != 0))
        fail(r, ST_CRYPTOFAIL,
             "the shared secrets differ after pass %d of %d: kex_derive_ss_a gave %zu bytes, "
             "kex_derive_ss_b %zu bytes%s, in record %lu",
             passes, passes, la, lb, la == lb ? " of other values" : "", r->record);
    else if (la == 0)
        fail(r, ST_CRYPTOFAIL, "the shared secret is empty in record %lu", r->record);
out:
    free_live(r);
}

/* Refuses a protocol the runner cannot run; 0 when it can. */
int kex_check_table(run_state *r)
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

void kex_print_figures(const run_state *r)
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
