/*
 * adapter_kex_passes.c - finds a KEX's pass functions by name.
 *
 * kex_generate_pass<k>_msg_<a|b> for k = 1..16 (odd k: the initiator A)
 * are weak references: a pass the submission does not define is NULL. This
 * unit includes none of the submission's headers, so their prototypes
 * (which differ in constness between submissions) never clash with the
 * declarations here; the adapter calls each through the NGCC signature.
 * Renamed functions arrive as -D<ngcc name>=<name>.
 */
#include <stddef.h>

typedef void (*pqb_kex_any_fn)(void); /* the generic function pointer: cast freely */
pqb_kex_any_fn pqb_kex_pass_fn(int k);

#define PQB_WEAK_PASS(name) extern void name(void) __attribute__((weak));
PQB_WEAK_PASS(kex_generate_pass1_msg_a)
PQB_WEAK_PASS(kex_generate_pass2_msg_b)
PQB_WEAK_PASS(kex_generate_pass3_msg_a)
PQB_WEAK_PASS(kex_generate_pass4_msg_b)
PQB_WEAK_PASS(kex_generate_pass5_msg_a)
PQB_WEAK_PASS(kex_generate_pass6_msg_b)
PQB_WEAK_PASS(kex_generate_pass7_msg_a)
PQB_WEAK_PASS(kex_generate_pass8_msg_b)
PQB_WEAK_PASS(kex_generate_pass9_msg_a)
PQB_WEAK_PASS(kex_generate_pass10_msg_b)
PQB_WEAK_PASS(kex_generate_pass11_msg_a)
PQB_WEAK_PASS(kex_generate_pass12_msg_b)
PQB_WEAK_PASS(kex_generate_pass13_msg_a)
PQB_WEAK_PASS(kex_generate_pass14_msg_b)
PQB_WEAK_PASS(kex_generate_pass15_msg_a)
PQB_WEAK_PASS(kex_generate_pass16_msg_b)

__attribute__((visibility("hidden"))) pqb_kex_any_fn pqb_kex_pass_fn(int k)
{
    static pqb_kex_any_fn const table[16] = {
        kex_generate_pass1_msg_a,  kex_generate_pass2_msg_b,  kex_generate_pass3_msg_a,
        kex_generate_pass4_msg_b,  kex_generate_pass5_msg_a,  kex_generate_pass6_msg_b,
        kex_generate_pass7_msg_a,  kex_generate_pass8_msg_b,  kex_generate_pass9_msg_a,
        kex_generate_pass10_msg_b, kex_generate_pass11_msg_a, kex_generate_pass12_msg_b,
        kex_generate_pass13_msg_a, kex_generate_pass14_msg_b, kex_generate_pass15_msg_a,
        kex_generate_pass16_msg_b};
    if (k < 1 || k > 16)
        return NULL;
    return table[k - 1];
}
