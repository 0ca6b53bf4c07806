/*
 * kat_runner.h - what the translation units of pqb-kat share: the output
 * sinks, the guarded buffers, a run's state and the record writers. Every
 * name here is hidden, so none can bind a symbol of the library's.
 */
#ifndef PQB_KAT_RUNNER_H
#define PQB_KAT_RUNNER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctr_drbg.h"
#include "pqb_entry.h"
#include "pqb_kinds.h"

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#define PQB_KAT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PQB_KAT_PRINTF(a, b)
#endif

#define GUARD_BYTES 64
#define GUARD_FILL 0xA5
#define MAX_SIGN_ATTEMPTS 64
#define MAX_RECORDS 100000UL
#define NIST_SEED_BYTES 48
#define NGCC_SEED_BYTES 64

enum { ST_PASS = 0, ST_CRYPTOFAIL, ST_OVERFLOW, ST_LOADFAIL, ST_MISMATCH };

/* ---- output (kat_out.c): a stream with its byte count and FNV-1a 64 hash */
typedef struct {
    FILE *fp;
    unsigned long long bytes;
    unsigned long long fnv;
} sink;

const char *status_name(int st);
void sink_init(sink *k, FILE *fp);
void sink_write(sink *k, const void *p, size_t n);
void sink_printf(sink *k, const char *fmt, ...) PQB_KAT_PRINTF(2, 3);
/* The results channel. */
extern sink g_res;
void out_line(const char *key, const char *value);
void out_end(void);
void out_size(const char *key, size_t v);
void one_line(char *dst, size_t n, const char *s);
void out_status(int st, const char *detail);
/* The KAT file's fields. */
void kat_hex(sink *f, const char *name, const unsigned char *p, size_t n);
void kat_num(sink *f, const char *name, unsigned long long v);

/* ---- guarded buffers and a run's state (kat_guard.c) ---- */
typedef struct {
    const char *name;
    unsigned char *base; /* GUARD_BYTES, cap data bytes, GUARD_BYTES */
    size_t cap;
} gbuf;

#define MAX_LIVE 32 /* a KEX: keys, states, secrets and 16 messages */

typedef struct {
    const pqb_entry *e;
    sink kat;
    int status;
    char detail[768];
    unsigned long record; /* current record */
    gbuf *live[MAX_LIVE]; /* buffers checked after every call */
    int nlive;
    size_t max_pk, max_sk, max_sig, max_ct, max_ss;
    /* Shortest signature and ciphertext (variable-length outputs). */
    size_t min_sig, min_ct;
    unsigned long sign_retries;
    unsigned long records_written;
    /* CPU seconds spent in each operation's calls (COST_*), summed over the
     * records: the time stage's estimate of what measuring them costs. */
    double cost[5];
} run_state;

enum { COST_KEYGEN, COST_SIGN, COST_VERIFY, COST_ENC, COST_DEC };
/* This thread's CPU time, seconds. */
double kat_cpu(void);

unsigned char *gdata(const gbuf *b);
int galloc(gbuf *b, const char *name, size_t cap);
void gfree(gbuf *b);
int gcheck(const gbuf *b);
/* Records the first failure only. */
void fail(run_state *r, int st, const char *fmt, ...) PQB_KAT_PRINTF(3, 4);
int alloc_live(run_state *r, gbuf *b, const char *name, size_t cap);
void free_live(run_state *r);
int check_guards(run_state *r, const char *call);
size_t check_len(run_state *r, const char *call, const char *what, size_t len, size_t cap);
void note_max(size_t *m, size_t v);
void note_min(size_t *m, size_t v);
int seed_record(run_state *r, const unsigned char *seed, size_t seed_len);

/* ---- one record of each kind ---- */
int do_keygen(run_state *r, gbuf *pk, size_t *pk_len, gbuf *sk, size_t *sk_len);
void sign_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len,
                 const unsigned char *m, size_t mlen);                /* kat_sign.c */
void kem_record(run_state *r, int nist, const unsigned char *seed, size_t seed_len);
void kex_record(run_state *r, const unsigned char *seed, size_t seed_len); /* kat_kex.c */
int kex_check_table(run_state *r);
void kex_print_figures(const run_state *r);
void run_hash(run_state *r, const char *file, const char *helper);     /* kat_hash.c */
void hash_print_figures(const run_state *r);

/* ---- the record schedules (kat_formats.c) ---- */
/* The 48-byte start given with --start, or NULL for the fixed one. */
extern const unsigned char *g_start;
void master_init(pqb_ctr_drbg *d);
void run_nist_submission_rng(run_state *r, unsigned long records);
void run_nist(run_state *r, unsigned long records);
void run_ngcc(run_state *r, unsigned long records);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
