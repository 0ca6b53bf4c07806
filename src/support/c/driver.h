/*
 * driver.h - what the translation units of pqb-driver share: the entry
 * table, the operation and its buffers, the settings, the counter, the
 * results channel. Every name here is hidden: the driver is linked with
 * -rdynamic (so the library's malloc binds to driver_heap.c), and no
 * helper of the driver's may bind a library's own symbol of the same name.
 */
#ifndef PQB_DRIVER_H
#define PQB_DRIVER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "counter.h"
#include "pqb_entry.h"
#include "pqb_kinds.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

#define EXIT_USAGE 2
#define EXIT_FAIL 3

#define SEED_BYTES 48
#define MSG_BYTES 64
#define SIGN_ATTEMPTS 64
#define BUF_SLACK 64 /* spare bytes behind every output buffer */

#define CALIB_MIN_CALLS 2
#define CALIB_MIN_SECONDS 0.05
#define CALIB_MAX_SECONDS 10.0
#define CALIB_SLOW_SECONDS 0.5

#define STACK_BYTES ((size_t)16 << 20)

#if defined(__GNUC__)
#define PQB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define PQB_NORETURN __attribute__((noreturn))
#else
#define PQB_PRINTF(a, b)
#define PQB_NORETURN
#endif

/* glibc's own allocator entry points, which driver_heap.c forwards to. */
#if defined(__GLIBC__)
#define PQB_HEAP_ACCOUNTING 1
#else
#define PQB_HEAP_ACCOUNTING 0
#endif

/* ---- the results channel (driver_out.c) ---- */
extern FILE *g_out;
extern int g_out_fd;
extern unsigned long long g_out_bytes, g_out_fnv;
void out_hash(const char *p, size_t n);
void out_write(const char *p, size_t n);
void out_hex(const char *key, const unsigned char *p, size_t n);
/* The line `<tag> v0 v1 ...`: one number per call. */
void numbers_line(const char *tag, const unsigned long long *v, long n);
void line(const char *fmt, ...) PQB_PRINTF(1, 2);
void end_line(void);
const char *word(const char *s, char *out, size_t cap);
PQB_NORETURN void fail(const char *stage, const char *fmt, ...) PQB_PRINTF(2, 3);
PQB_NORETURN void usage(const char *why);

/* ---- heap accounting (driver_heap.c) ---- */
extern long long heap_peak;
extern unsigned long long heap_allocs;
void heap_begin(void);
void heap_end(void);

/* ---- the operation (driver_ops.c) ---- */
/* OP_EXT: a key-exchange or hash operation (driver_ext.h). */
enum { OP_KEYGEN, OP_SIGN, OP_VERIFY, OP_ENC, OP_DEC, OP_EXT };
extern const char *const op_names[5];
extern const pqb_entry *E;
extern int g_op;
extern unsigned char *g_pk, *g_sk, *g_sig, *g_ct, *g_ss, *g_ss2, *g_msg;
extern size_t g_pk_len, g_sk_len, g_sig_len, g_ct_len, g_ss_len, g_sig_cap;
/* Maximum lengths returned over all calls. */
extern size_t max_pk, max_sk, max_sig, max_ct, max_ss;
/* Counted during every call; reset before the timed calls. */
extern unsigned long long g_sign_retries, g_verify_rejects;
/* Failed signing attempts of the setup, kept apart (not timed). */
extern unsigned long long g_setup_sign_retries;
/* Set when a call fails; reported by the caller. */
extern char g_err[256];
extern int g_verify_rc;
extern size_t g_dec_len;
void note_max(size_t *m, size_t v);
int call_failed(const char *fmt, ...) PQB_PRINTF(1, 2);
int do_keygen(void);
int do_sign(void);
int do_verify(void);
int do_enc(void);
int do_dec_into(size_t *len);
/* One timed call of the chosen operation: 0, or -1 with g_err set. */
int call_op(void);
void call_or_die(void);
unsigned char *buffer(size_t n);
void setup(void);
void print_lengths(void);

/* ---- loading (driver_load.c) ---- */
void *sym(void *lib, const char *name);
void *load(const char *path);
void check_op_fits(void);
/* The profiling runtime's hooks (a library relinked with prof_runtime.c). */
struct drv_prof {
    void (*enable)(int);
    void (*reset)(void);
    unsigned long long (*ticks)(void);
    double (*tick_hz)(void);
    int (*count)(void);
    int (*get)(int, const char **, const char **, unsigned long long *, unsigned long long *,
               unsigned long long *, unsigned long long *);
};
extern struct drv_prof P;
void prof_load(void *lib);

/* ---- the settings (driver_settings.c) ---- */
struct drv_settings {
    char op[32];
    char mode[16];
    long warm; /* -1: the mode's default */
    long iters;
    int samples, profile, checks, mark_fd, repeat;
};
extern struct drv_settings g_set;
extern int g_in_fd;
void settings_read(void);
long setting_long(const char *key, const char *v, long min, long max);

/* ---- distinct inputs per call (driver_inputs.c) ---- */
extern int g_inputs;
void inputs_setting(const char *key, const char *v);
void inputs_library_seed(unsigned char *seed);
int inputs_pooled(void);
void inputs_setup(void);
void inputs_next(void);
unsigned long long inputs_output_hash(void);
unsigned long long hash_bytes(unsigned long long h, const unsigned char *p, size_t n);
unsigned long long *inputs_outputs_alloc(long iters);
void inputs_report(long warm, long iters, unsigned long long *outs);
long inputs_pool_size(void);
unsigned long long inputs_pool_sign_retries(void);
const unsigned char *inputs_entry(long k, const unsigned char **msg, size_t *sig_len);

/* ---- verify's shared pool (driver_pool.c) ---- */
void pool_setting_bytes(const char *v);
void pool_payload(const unsigned char *p, size_t n);
int pool_shared(void);
long pool_shared_load(void);
const unsigned char *pool_shared_entry(long k, const unsigned char **msg, size_t *sig_len);
void mode_pool(void);

/* ---- a key pair shared by an operation's processes (driver_keys.c) ---- */
void keys_setting(const char *v);
int keys_given(void);
void keys_load(void);
void mode_keys(void);

/* ---- the modes: one file each ---- */
extern pqb_counter C;
void warmups(long n);
void mode_calibrate(long warm);                                 /* driver_time.c */
void mode_trial(long warm, long iters, int want_samples, int profile);
void mode_memory(void);                                         /* driver_memory.c */
void mode_count(long warm, long iters);                         /* driver_vg.c */
void mode_ct(void *lib, long iters);
void ct_public(const volatile void *p, size_t n);
void mode_replay(long warm);                                    /* driver_inputs.c */
void mode_trip(void);                                           /* driver_trip.c */
void mode_leak(long warm, long iters);                          /* driver_leak.c */

#include "driver_ext.h"

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
