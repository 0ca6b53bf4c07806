/*
 * kat_formats.c - the record schedules of pqb-kat: NIST PQCgenKAT (with
 * pqbench's master DRBG or the submission's own KAT RNG) and NGCC's.
 */
#include "kat_runner.h"


/* The 48-byte start given with --start, or NULL for the fixed one. */
const unsigned char *g_start;

/* The NIST entropy input: the --start value, else 0x00..0x2f. */
static void start_entropy(unsigned char entropy[NIST_SEED_BYTES])
{
    unsigned i;
    for (i = 0; i < NIST_SEED_BYTES; i++)
        entropy[i] = g_start != NULL ? g_start[i] : (unsigned char)i;
}

void master_init(pqb_ctr_drbg *d)
{
    unsigned char entropy[NIST_SEED_BYTES];
    start_entropy(entropy);
    pqb_ctr_drbg_init(d, entropy, NULL);
}

/* Most bytes the master stream of the submission's own RNG may take in
 * memory (seeds and messages of every record, drawn before the first). */
#define MAX_MASTER_BYTES (512UL * 1024 * 1024)

/*
 * NIST PQCgenKAT with the submission's own KAT RNG (the library's drng_*
 * functions): the classic generator seeds that RNG with entropy 0x00..0x2f,
 * draws every count's seed (and, for signatures, right after it the
 * message) into its .req file, and only then runs the counts, re-seeding
 * the same RNG with each seed. One global state serves both, so the whole
 * master stream is drawn first here too.
 */
void run_nist_submission_rng(run_state *r, unsigned long records)
{
    const pqb_entry *e = r->e;
    int sign = e->kind == PQB_KIND_SIGN;
    unsigned char entropy[NIST_SEED_BYTES];
    unsigned char *stream = NULL;
    size_t total = 0, at = 0, i;
    void *master;
    char name[1024];

    /* Seeds, plus messages of 33 x (count + 1) bytes for signatures. */
    for (i = 0; i < records; i++) {
        total += NIST_SEED_BYTES + (sign ? 33 * (i + 1) : 0);
        if (total > MAX_MASTER_BYTES) {
            fail(r, ST_CRYPTOFAIL,
                 "the master stream of %lu records exceeds %lu bytes: check fewer records",
                 records, MAX_MASTER_BYTES);
            return;
        }
    }
    one_line(name, sizeof name, e->algname);
    sink_printf(&r->kat, "# %s\n\n", name);
    if (records == 0)
        return;
    stream = (unsigned char *)malloc(total);
    if (stream == NULL) {
        fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte master stream", total);
        return;
    }
    start_entropy(entropy);
    master = e->drng_new(entropy, sizeof entropy);
    if (master == NULL) {
        fail(r, ST_CRYPTOFAIL, "seeding the submission's KAT RNG failed");
        free(stream);
        return;
    }
    for (i = 0; i < records; i++) {
        size_t mlen = sign ? 33 * (i + 1) : 0;
        if (e->drng_draw(master, stream + at, NIST_SEED_BYTES) != 0 ||
            (mlen > 0 && e->drng_draw(master, stream + at + NIST_SEED_BYTES, mlen) != 0)) {
            fail(r, ST_CRYPTOFAIL, "drawing the master stream of record %lu failed",
                 (unsigned long)i);
            break;
        }
        at += NIST_SEED_BYTES + mlen;
    }
    e->drng_free(master);
    at = 0;
    for (r->record = 0; r->status == ST_PASS && r->record < records; r->record++) {
        size_t mlen = sign ? 33 * (size_t)(r->record + 1) : 0;
        if (sign)
            sign_record(r, 1, stream + at, NIST_SEED_BYTES, stream + at + NIST_SEED_BYTES, mlen);
        else
            kem_record(r, 1, stream + at, NIST_SEED_BYTES);
        at += NIST_SEED_BYTES + mlen;
    }
    free(stream);
}

/*
 * NIST PQCgenKAT: the reference first draws every count's seed (and, for
 * signatures, right after it the message) from the master DRBG, then runs
 * the counts. The master DRBG here is the runner's own, untouched by the
 * library, so drawing each count's seed and message just before running it
 * consumes the same stream in the same order and gives the same bytes,
 * without holding every message (33 x N^2 / 2 bytes) in memory.
 */
void run_nist(run_state *r, unsigned long records)
{
    pqb_ctr_drbg master;
    unsigned char seed[NIST_SEED_BYTES];
    unsigned char *msg = NULL;
    char name[1024];

    one_line(name, sizeof name, r->e->algname);
    sink_printf(&r->kat, "# %s\n\n", name);
    master_init(&master);
    for (r->record = 0; r->record < records; r->record++) {
        pqb_ctr_drbg_generate(&master, seed, sizeof seed);
        if (r->e->kind == PQB_KIND_SIGN) {
            size_t mlen = 33 * (size_t)(r->record + 1);
            unsigned char *m2 = (unsigned char *)realloc(msg, mlen);
            if (m2 == NULL) {
                fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte message of record %lu", mlen,
                     r->record);
                break;
            }
            msg = m2;
            pqb_ctr_drbg_generate(&master, msg, mlen);
            sign_record(r, 1, seed, sizeof seed, msg, mlen);
        } else {
            kem_record(r, 1, seed, sizeof seed);
        }
        if (r->status != ST_PASS)
            break;
    }
    free(msg);
}

/* NGCC KAT_SIG.c / KAT_KEM.c. */
void run_ngcc(run_state *r, unsigned long records)
{
    const pqb_entry *e = r->e;
    unsigned char nonce[NGCC_SEED_BYTES];
    unsigned char seed[NGCC_SEED_BYTES];
    unsigned char *msg = NULL;
    void *seed_drng = NULL, *msg_drng = NULL;
    int rc;
    unsigned i;

    for (i = 0; i < 16; i++)
        memcpy(nonce + 4 * i, "seed", 4);
    if (g_start != NULL)
        memcpy(nonce, g_start, NIST_SEED_BYTES);
    seed_drng = e->drng_new(nonce, sizeof nonce);
    if (seed_drng == NULL) {
        fail(r, ST_CRYPTOFAIL, "initialising the seed DRNG failed");
        return;
    }
    if (e->kind == PQB_KIND_SIGN) {
        for (i = 0; i < 21; i++)
            memcpy(nonce + 3 * i, "msg", 3);
        nonce[63] = 'm';
        if (g_start != NULL)
            memcpy(nonce, g_start, NIST_SEED_BYTES);
        msg_drng = e->drng_new(nonce, sizeof nonce);
        if (msg_drng == NULL) {
            fail(r, ST_CRYPTOFAIL, "initialising the message DRNG failed");
            e->drng_free(seed_drng);
            return;
        }
    }

    if (e->kind == PQB_KIND_KEX && kex_check_table(r) != 0)
        records = 0;
    for (r->record = 0; r->record < records; r->record++) {
        rc = e->drng_draw(seed_drng, seed, sizeof seed);
        if (rc != 0) {
            fail(r, ST_CRYPTOFAIL, "drawing the seed of record %lu returned %d", r->record, rc);
            break;
        }
        if (e->kind == PQB_KIND_SIGN) {
            size_t mlen = 56 + 8 * (size_t)r->record;
            unsigned char *m2 = (unsigned char *)realloc(msg, mlen);
            if (m2 == NULL) {
                fail(r, ST_CRYPTOFAIL, "cannot allocate the %zu-byte message of record %lu", mlen,
                     r->record);
                break;
            }
            msg = m2;
            rc = e->drng_draw(msg_drng, msg, mlen);
            if (rc != 0) {
                fail(r, ST_CRYPTOFAIL, "drawing the message of record %lu returned %d",
                     r->record, rc);
                break;
            }
            sign_record(r, 0, seed, sizeof seed, msg, mlen);
        } else if (e->kind == PQB_KIND_KEX) {
            kex_record(r, seed, sizeof seed);
        } else {
            kem_record(r, 0, seed, sizeof seed);
        }
        if (r->status != ST_PASS)
            break;
    }
    free(msg);
    e->drng_free(seed_drng);
    if (msg_drng != NULL)
        e->drng_free(msg_drng);
}

