/*
 * driver_vg.c - the driver's exact-count and constant-time modes.
 *
 * mode=count     after setup and W warm-up calls (warmup=, default 1),
 *                I counted calls (iters=):
 *                - under callgrind (pqbench runs it with --instr-atstart=no
 *                  --collect-atstart=no): instrumentation starts after the
 *                  warm-ups, collection is toggled on around each call only
 *                  and every call ends with a statistics dump, so dump k
 *                  holds exactly the instructions of call k;
 *                  prints `count method=callgrind calls=I warmup=W`;
 *                - otherwise: the user-mode hardware `instructions` event
 *                  (perf_event_open) read around each call; prints
 *                  `count method=perf-instructions calls=I warmup=W` and
 *                  `instructions n1 n2 ...`.
 * mode=ct        under memcheck only: after setup, I calls (iters=), each
 *                with the secret inputs marked undefined before it (the
 *                secret key for sign and dec; every draw of randomness in
 *                every operation, through the library's pqb_ct hooks) and
 *                the public outputs marked defined after it (public key,
 *                signature, ciphertext and the returned lengths); a KEX's
 *                exchange has no secret input (both parties' keys come
 *                from marked draws) and what each step sends the other
 *                party is marked defined as the step returns. Error
 *                reporting is on only during the calls. Prints
 *                `ct calls=I secrets=<list> draws=D`.
 */

#include "driver.h"

#include <fcntl.h>

#include "valgrind_hooks.h"

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

/* One expansion of each client request (each is a block of inline asm). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
void ct_public(const volatile void *p, size_t n)
{
    PQB_CT_PUBLIC((const void *)p, n);
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void ct_secret(const volatile void *p, size_t n)
{
    PQB_CT_SECRET((const void *)p, n);
}

/* Under memcheck, errors are reported only inside the checked calls: setup
 * and the driver's own start run with reporting off. */
#if defined(__GNUC__)
__attribute__((constructor))
#endif
static void pqb_vg_quiet_at_start(void)
{
    if (PQB_VG_RUNNING())
        PQB_CT_REPORT_OFF();
}

/* The user-mode hardware instruction counter of this thread, or -1. */
static int pqb_instructions_open(int *err)
{
#if defined(__linux__) && defined(SYS_perf_event_open)
    struct perf_event_attr attr;
    long fd;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    *err = fd < 0 ? errno : 0;
    if (fd >= 0)
        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
#else
    *err = ENOSYS;
    return -1;
#endif
}

static unsigned long long pqb_instructions_read(int fd)
{
    unsigned long long v = 0;
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        fail("count", "cannot_read_the_instruction_counter");
    return v;
}

void mode_count(long warm, long iters)
{
    long i;
    warmups(warm);
    if (PQB_VG_RUNNING()) {
        if (!PQB_HAVE_CALLGRIND)
            fail("count", "driver_built_without_valgrind_callgrind_h");
        PQB_CG_START();
        PQB_CG_ZERO();
        for (i = 0; i < iters; i++) {
            PQB_CG_TOGGLE();
            call_or_die();
            PQB_CG_TOGGLE();
            PQB_CG_DUMP("pqb-call");
        }
        line("count method=callgrind calls=%ld warmup=%ld", iters, warm);
        return;
    }
    {
        int err = 0, fd = pqb_instructions_open(&err);
        unsigned long long *v, a, b;
        if (fd < 0)
            fail("count", "no_hardware_instruction_counter_errno_%d", err);
        v = malloc((size_t)iters * sizeof *v);
        if (!v)
            fail("setup", "out_of_memory_for_counts");
        for (i = 0; i < iters; i++) {
            a = pqb_instructions_read(fd);
            call_or_die();
            b = pqb_instructions_read(fd);
            v[i] = b - a;
        }
        close(fd);
        line("count method=perf-instructions calls=%ld warmup=%ld", iters, warm);
        numbers_line("instructions", v, iters);
        free(v);
    }
}

/* Everything the driver holds after an operation: defined again, so that
 * nothing the driver does with it later is an error of the library. */
static void ct_publish_outputs(void)
{
    if (E->kind == PQB_KIND_KEX) {
        ext_ct_publish();
        return;
    }
    ct_public(&g_pk_len, sizeof g_pk_len);
    ct_public(&g_sk_len, sizeof g_sk_len);
    ct_public(g_pk, E->pk_bytes);
    if (E->kind == PQB_KIND_SIGN) {
        ct_public(&g_sig_len, sizeof g_sig_len);
        ct_public(g_sig, g_sig_cap);
    } else {
        ct_public(&g_ct_len, sizeof g_ct_len);
        ct_public(&g_ss_len, sizeof g_ss_len);
        ct_public(g_ct, E->ct_bytes);
    }
}

typedef void (*ct_marking_fn)(int);
typedef unsigned long long (*ct_draws_fn)(void);

void mode_ct(void *lib, long iters)
{
    ct_marking_fn marking;
    ct_draws_fn draws;
    void *p;
    long i;
    int rc, secret_key = g_op == OP_SIGN || g_op == OP_DEC;

    if (!PQB_HAVE_MEMCHECK)
        fail("ct", "driver_built_without_valgrind_memcheck_h");
    if (!PQB_VG_RUNNING())
        fail("ct", "not_running_under_valgrind");
    p = sym(lib, "pqb_ct_random_marking");
    if (!p)
        fail("ct", "library_lacks_the_pqb_ct_randomness_hooks");
    memcpy(&marking, &p, sizeof marking);
    p = sym(lib, "pqb_ct_random_draws");
    if (!p)
        fail("ct", "library_lacks_the_pqb_ct_randomness_hooks");
    memcpy(&draws, &p, sizeof draws);

    if (E->kind == PQB_KIND_HASH)
        fail("ct", "a_hash_has_no_secret_input");
    ext_ct_declassify(E->kind == PQB_KIND_KEX);
    marking(1);
    for (i = 0; i < iters; i++) {
        if (secret_key)
            ct_secret(g_sk, E->sk_bytes);
        PQB_CT_REPORT_ON();
        rc = call_op();
        PQB_CT_REPORT_OFF();
        /* The key and whatever the call returned are the driver's again. */
        ct_public(g_sk, E->sk_bytes);
        ct_public(&rc, sizeof rc);
        ct_public(g_err, sizeof g_err);
        ct_publish_outputs();
        if (rc != 0)
            fail("op", "%s", g_err);
    }
    marking(0);
    ext_ct_declassify(0);
    /* Retry and rejection counters and maximum lengths follow the secret
     * data too: defined again before they are printed. */
    ct_public(&g_sign_retries, sizeof g_sign_retries);
    ct_public(&g_verify_rejects, sizeof g_verify_rejects);
    ct_public(&max_pk, sizeof max_pk);
    ct_public(&max_sk, sizeof max_sk);
    ct_public(&max_sig, sizeof max_sig);
    ct_public(&max_ct, sizeof max_ct);
    ct_public(&max_ss, sizeof max_ss);
    /* Everything is defined again: reporting back on for a clean exit. */
    PQB_CT_REPORT_ON();
    line("ct calls=%ld secrets=%s draws=%llu", iters,
         secret_key ? "secret-key,randomness" : "randomness", draws());
}
