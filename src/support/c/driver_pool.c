/*
 * driver_pool.c - verify's pool of signatures, built once per operation
 * and handed as bytes to its trial and replay processes.
 *
 * Why: verify's inputs are signatures, and a process that builds its own
 * pool signs at least twice before its first timed call. For a slow signer
 * (seconds per signature) the pools of every trial and replay process cost
 * far more than the verifications they time. So pqbench runs one process
 * of mode `pool`, which builds the pool from its seed as a trial would
 * (key generation, then signatures over distinct messages within the
 * pool's limits) and prints it:
 *
 *   pool pk=<hex> entries=K setup_sign_retries=S sign_retries=F
 *   (S: failed attempts of its first signature, the honest one a verify
 *   set-up makes; F: of the others)
 *   entry msg=<hex> sig=<hex>                    (K lines)
 *
 * Each later verify process gets those bytes behind its settings block on
 * the input descriptor (`pool_bytes=N` announces N bytes after `end`):
 * u32 public-key length, the public key, u32 K, then K times u32 signature
 * length, the 64-byte message and the signature (u32 little-endian). Its
 * pool is then exactly those entries, under that public key. The input
 * descriptor is a pipe the driver reads only after loading the library: a
 * constructor that read it first would take the pool away from the
 * driver, a failure, never learn the inputs while the driver still gets
 * them.
 */

#include "driver.h"

static const unsigned char *g_payload;
static size_t g_payload_n;
static long g_payload_expected = -1;
static size_t *g_entry_off; /* each entry's offset in the payload */
static long g_entries;

/* pool_bytes=<N>: the bytes that follow the settings block. */
void pool_setting_bytes(const char *v)
{
    g_payload_expected = setting_long("pool_bytes", v, 1, 1L << 30);
}

/* The bytes after the block's `end` line (driver_settings.c). */
void pool_payload(const unsigned char *p, size_t n)
{
    if (g_payload_expected < 0 && n > 0)
        fail("settings", "%zu_bytes_after_end_without_pool_bytes", n);
    if (g_payload_expected >= 0 && n != (size_t)g_payload_expected)
        fail("settings", "pool_bytes_%ld_but_%zu_bytes_after_end", g_payload_expected, n);
    if (n > 0) {
        g_payload = p;
        g_payload_n = n;
    }
}

int pool_shared(void)
{
    return g_payload != NULL;
}

static unsigned long pool_u32(size_t *at)
{
    const unsigned char *p = g_payload + *at;
    if (*at + 4 > g_payload_n)
        fail("setup", "shared_pool_truncated_at_byte_%zu", *at);
    *at += 4;
    return (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 |
           (unsigned long)p[3] << 24;
}

/* Checks the shared pool's layout, takes its public key into g_pk and
 * returns its number of entries. */
long pool_shared_load(void)
{
    size_t at = 0;
    unsigned long pk_len = pool_u32(&at);
    long k;
    if (g_op != OP_VERIFY)
        fail("setup", "a_shared_pool_is_verify's_only");
    if (pk_len == 0 || pk_len > E->pk_bytes || at + pk_len > g_payload_n)
        fail("setup", "shared_pool_public_key_of_%lu_bytes_API_%zu", pk_len, E->pk_bytes);
    memcpy(g_pk, g_payload + at, pk_len);
    g_pk_len = pk_len;
    at += pk_len;
    g_entries = (long)pool_u32(&at);
    if (g_entries < 1)
        fail("setup", "shared_pool_without_entries");
    g_entry_off = calloc((size_t)g_entries, sizeof *g_entry_off);
    if (!g_entry_off)
        fail("setup", "out_of_memory");
    for (k = 0; k < g_entries; k++) {
        size_t sig_len;
        g_entry_off[k] = at;
        sig_len = pool_u32(&at);
        if (sig_len == 0 || sig_len > g_sig_cap || at + MSG_BYTES + sig_len > g_payload_n)
            fail("setup", "shared_pool_entry_%ld_signature_of_%zu_bytes_cap_%zu", k, sig_len,
                 g_sig_cap);
        at += MSG_BYTES + sig_len;
    }
    if (at != g_payload_n)
        fail("setup", "shared_pool_has_%zu_bytes_beyond_its_entries", g_payload_n - at);
    return g_entries;
}

/* Entry k of the shared pool: its message (MSG_BYTES) and signature. */
const unsigned char *pool_shared_entry(long k, const unsigned char **msg, size_t *sig_len)
{
    size_t at = g_entry_off[k];
    *sig_len = pool_u32(&at);
    *msg = g_payload + at;
    return g_payload + at + MSG_BYTES;
}

/* mode pool: the pool this process built, printed for the others. */
void mode_pool(void)
{
    long k, n = inputs_pool_size();
    if (g_op != OP_VERIFY || n < 1 || pool_shared())
        fail("setup", "mode_pool_wants_verify_with_a_seed");
    out_write("pool", 4);
    out_hex("pk", g_pk, g_pk_len);
    line(" entries=%ld setup_sign_retries=%llu sign_retries=%llu", n, g_setup_sign_retries,
         inputs_pool_sign_retries());
    for (k = 0; k < n; k++) {
        const unsigned char *msg, *sig;
        size_t sig_len;
        sig = inputs_entry(k, &msg, &sig_len);
        out_write("entry", 5);
        out_hex("msg", msg, MSG_BYTES);
        out_hex("sig", sig, sig_len);
        line("%s", "");
    }
}
