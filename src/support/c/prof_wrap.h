/*
 * prof_wrap.h - link-time wrappers that profile an instance's symmetric
 * helpers (pseudohash, pseudoXOF, sm3hash, get_random_number, a
 * submission's own SHA-2 or Keccak, the adapter's randombytes, ...).
 *
 * A profiling build of an instance library is its objects relinked with
 * prof_runtime.c, one generated file, and -Wl,--wrap=<symbol> for every
 * wrapped symbol. The generated file is this header followed by one line
 * per symbol, with no semicolon after it:
 *
 *     #include "prof_wrap.h"
 *     PQB_WRAP(pseudoXOF, "hash", 2, 0)
 *     PQB_WRAP(get_random_number, "drng", -1, 2)
 *
 * PQB_WRAP(symbol, class, in_arg, out_arg): class is the name of the
 * helper class the symbol's time is shown under (a string literal: `hash`,
 * `xof`, `drng` or a class the configuration declares; pqbench checks it
 * is a lower-case word); in_arg and out_arg are the
 * zero-based indexes of the arguments holding the input and the output
 * length in bits, or -1 when there is none (then 0 is recorded). Only the
 * low 32 bits of those arguments are used: a 32-bit int argument leaves the
 * upper half of its register undefined on x86-64 and AArch64, and no helper
 * is given 2^32 bits or more.
 *
 * The macro defines
 *     uintptr_t __wrap_<symbol>(uintptr_t a0, ..., uintptr_t a5)
 * calling __real_<symbol> (the linker's name for the original) with the
 * same six arguments and returning its result, and a static description of
 * the symbol (name, class) handed to the runtime with every call, so no
 * constructor or registration step is needed.
 *
 * Limitations, by construction:
 * - The symbol must take at most six integer or pointer arguments and
 *   return void, an integer or a pointer. That holds on ABIs passing the
 *   first six such arguments in registers and returning in one (x86-64
 *   System V, AArch64 AAPCS64): unused argument registers are passed on
 *   harmlessly, a narrower return value is read by the caller from the low
 *   part of the register. Floating-point, struct-by-value, variadic or
 *   seven-or-more-argument functions are not supported.
 * - --wrap only redirects references that cross an object boundary: a call
 *   to a helper from inside the object that defines it is not seen.
 * - Not for LTO builds (--wrap and LTO do not mix).
 */
#ifndef PQB_PROF_WRAP_H
#define PQB_PROF_WRAP_H

#include <stdint.h>

typedef struct pqb_prof_fn {
    const char *name;  /* the wrapped symbol */
    const char *klass; /* its helper class */
    int in_arg;       /* index of the input-bits argument, or -1 */
    int out_arg;      /* index of the output-bits argument, or -1 */
} pqb_prof_fn;

#if defined(__GNUC__)
#define PQB_PROF_INTERNAL __attribute__((visibility("hidden")))
#define PQB_PROF_EXPORT __attribute__((visibility("default")))
#else
#define PQB_PROF_INTERNAL
#define PQB_PROF_EXPORT
#endif

/* Called by the wrappers (prof_runtime.c). enter returns 1, with the start
 * tick in *t0, when this call is to be recorded: it is the outermost
 * wrapped call of its thread and profiling is enabled. leave must follow
 * every enter, with the flag enter returned. */
PQB_PROF_INTERNAL int pqb_prof__enter(unsigned long long *t0);
PQB_PROF_INTERNAL void pqb_prof__leave(const pqb_prof_fn *fn, int record,
                                       unsigned long long t0, const uintptr_t *args);

/* Exported for the driver, which looks them up with dlsym. */
PQB_PROF_EXPORT void pqb_prof_enable(int on);
PQB_PROF_EXPORT void pqb_prof_reset(void);
PQB_PROF_EXPORT unsigned long long pqb_prof_ticks(void);
PQB_PROF_EXPORT double pqb_prof_tick_hz(void);
PQB_PROF_EXPORT int pqb_prof_count(void);
PQB_PROF_EXPORT int pqb_prof_get(int i, const char **name, const char **klass,
                                 unsigned long long *in_bits, unsigned long long *out_bits,
                                 unsigned long long *calls, unsigned long long *ticks);

#define PQB_WRAP(sym, klass, in_arg, out_arg)                                               \
    uintptr_t __real_##sym(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,           \
                           uintptr_t);                                                      \
    uintptr_t __wrap_##sym(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,           \
                           uintptr_t);                                                      \
    static const pqb_prof_fn pqb_prof_fn_##sym = {#sym, (klass), (in_arg), (out_arg)};      \
    uintptr_t __wrap_##sym(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3,          \
                           uintptr_t a4, uintptr_t a5)                                      \
    {                                                                                       \
        unsigned long long pqb_t0_ = 0;                                                     \
        const int pqb_rec_ = pqb_prof__enter(&pqb_t0_);                                     \
        const uintptr_t pqb_r_ = __real_##sym(a0, a1, a2, a3, a4, a5);                      \
        uintptr_t pqb_a_[6];                                                                \
        pqb_a_[0] = a0;                                                                     \
        pqb_a_[1] = a1;                                                                     \
        pqb_a_[2] = a2;                                                                     \
        pqb_a_[3] = a3;                                                                     \
        pqb_a_[4] = a4;                                                                     \
        pqb_a_[5] = a5;                                                                     \
        pqb_prof__leave(&pqb_prof_fn_##sym, pqb_rec_, pqb_t0_, pqb_a_);                     \
        return pqb_r_;                                                                      \
    }

#endif
