/*
 * driver_ext.h - the key-exchange and hash operations of pqb-driver
 * (driver_kex.c, driver_hash.c, included at the end of driver.c: one
 * translation unit, sharing its entry table, counter and output).
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
static int ext_parse_op(const char *op);
/* Whether the loaded library's kind fits the operation. */
static int ext_fits_kind(void);
static const char *ext_kind_name(int kind);
static void ext_setup(void);
static int ext_call(void);
static void ext_print_lengths(void);
/* A KEX step (not the exchange). */
static int ext_is_step(void);
/* Memory mode: the protocol before and after a step, off the painted stack. */
static void ext_before_call(void);
static void ext_after_call(void);
static void ext_mode_trial_steps(long warm, long iters, int want_samples);
/* Constant-time mode (KEX): with declassifying on, what each step hands to
 * the other party (public keys, messages, return codes and lengths) is
 * marked public as soon as the step returns, as it would be on the wire;
 * ext_ct_publish marks everything the driver holds public after a call. */
static void ext_ct_declassify(int on);
static void ext_ct_publish(void);

#endif
