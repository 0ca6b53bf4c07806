/*
 * ct_hooks.c - the randomness wrapper of pqbench's constant-time check.
 *
 * Linked only into the `ct` stage's debug-info build of an instance, with
 * -Wl,--wrap=<PQB_CT_RANDOM_SYM>: every call the submission's objects make
 * to the randomness function reaches __wrap_<sym>, which calls the real one
 * and, while the driver has switched marking on, marks the bytes it
 * returned as undefined memory. Memcheck then reports every branch and
 * every memory index computed from them (TIMECOP's treatment of
 * randombytes). The random state itself stays defined, so the generator's
 * own bookkeeping (counters, reseed checks) is not reported.
 *
 * Compiled with:
 *   -DPQB_CT_RANDOM_SYM=<symbol>  get_random_number (NGCC) or the NIST
 *                                 randombytes name of the algorithm TOML
 *   -DPQB_CT_RANDOM_NGCC          the NGCC signature
 *                                 int f(DRNG_ctx *, unsigned char *, unsigned long long bits)
 *                                 (default: NIST, int f(unsigned char *, unsigned long long bytes))
 *
 * Exported (version script `pqb_ct_*`): pqb_ct_random_marking(on) and
 * pqb_ct_random_draws(), the number of draws marked so far; a draw that does
 * not cross an object boundary never reaches the wrapper and is not counted.
 */
#include "valgrind_hooks.h"

#ifndef PQB_CT_RANDOM_SYM
#error "PQB_CT_RANDOM_SYM (the randomness symbol to wrap) must be defined"
#endif

#define PQB_CT_PASTE(a, b) a##b
#define PQB_CT_CAT(a, b) PQB_CT_PASTE(a, b)
#define PQB_CT_REAL PQB_CT_CAT(__real_, PQB_CT_RANDOM_SYM)
#define PQB_CT_WRAP PQB_CT_CAT(__wrap_, PQB_CT_RANDOM_SYM)

#define PQB_CT_EXPORT __attribute__((visibility("default")))

static int pqb_ct_marking;
static unsigned long long pqb_ct_draws;

PQB_CT_EXPORT void pqb_ct_random_marking(int on);
PQB_CT_EXPORT unsigned long long pqb_ct_random_draws(void);

void pqb_ct_random_marking(int on)
{
    pqb_ct_marking = on;
}

unsigned long long pqb_ct_random_draws(void)
{
    return pqb_ct_draws;
}

static void pqb_ct_mark(unsigned char *out, unsigned long long bytes)
{
    if (pqb_ct_marking && out != 0 && bytes > 0) {
        PQB_CT_SECRET(out, (unsigned long)bytes);
        pqb_ct_draws++;
    }
}

#ifdef PQB_CT_RANDOM_NGCC

int PQB_CT_REAL(void *ctx, unsigned char *out, unsigned long long len_bits);
int PQB_CT_WRAP(void *ctx, unsigned char *out, unsigned long long len_bits);

int PQB_CT_WRAP(void *ctx, unsigned char *out, unsigned long long len_bits)
{
    int rc = PQB_CT_REAL(ctx, out, len_bits);
    pqb_ct_mark(out, (len_bits + 7) / 8);
    return rc;
}

#else

/* int return and 64-bit length: ABI-compatible on LP64 targets with callers
 * declaring void or size_t (as the NIST adapter's own randombytes). */
int PQB_CT_REAL(unsigned char *out, unsigned long long len);
int PQB_CT_WRAP(unsigned char *out, unsigned long long len);

int PQB_CT_WRAP(unsigned char *out, unsigned long long len)
{
    int rc = PQB_CT_REAL(out, len);
    pqb_ct_mark(out, len);
    return rc;
}

#endif
