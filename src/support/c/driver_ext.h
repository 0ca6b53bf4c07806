/*
 * driver_ext.h - the key-exchange and hash operations of pqb-driver
 * (driver_kex.c, driver_hash.c; included by driver.h, whose names are
 * hidden).
 *
 * Operations: a hash's hash_<bytes>; a KEX's exchange (one whole protocol)
 * and its steps init_a, init_b, pass1..passP, derive_a, derive_b, each
 * timed inside complete protocol runs with the counter read around the one
 * call (--mode trial; a step has no calibration of its own: pqbench plans
 * it from the exchange's).
 */
#ifndef PQB_DRIVER_EXT_H
#define PQB_DRIVER_EXT_H

/* 1 when `op` is a KEX or hash operation (remembered for later). */
int ext_parse_op(const char *op);
/* Whether the loaded library's kind fits the operation. */
int ext_fits_kind(void);
void ext_setup(void);
int ext_call(void);
void ext_print_lengths(void);
/* A KEX step (not the exchange). */
int ext_is_step(void);
/* Memory mode: the protocol before and after a step, off the painted stack. */
void ext_before_call(void);
void ext_after_call(void);
void ext_mode_trial_steps(long warm, long iters, int want_samples);
/* Constant-time mode (KEX): with declassifying on, what each step hands to
 * the other party (public keys, messages, return codes and lengths) is
 * marked public as soon as the step returns, as it would be on the wire;
 * ext_ct_publish marks everything the driver holds public after a call. */
void ext_ct_declassify(int on);
void ext_ct_publish(void);

/* The hash operation (driver_hash.c). */
extern unsigned long long g_hash_bytes; /* 0: not a hash operation */
extern unsigned char *g_hash_msg, *g_hash_digest;
extern size_t g_hash_digest_len;
int hash_parse_op(const char *op);
void hash_setup(void);
int hash_call(void);

/* The KEX operations (driver_kex.c). */
extern int g_kex_op; /* 0: not a KEX op; 1: exchange; 2: a step */
extern char g_kex_name[16];
int kex_all(void);
unsigned long long kex_output_hash(void);
int kex_agrees(void);

#endif
