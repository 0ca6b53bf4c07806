/*
 * driver_keys.c - a key pair made once per operation and given to every
 * process that measures it.
 *
 * Why: the set-up of sign, verify, enc and dec begins with a key
 * generation. Where that costs more than the calls a trial times (Classic
 * McEliece's clean keygen: a second or more, retried a random number of
 * times), every calibration, trial and replay process spends most of its
 * time on a key it throws away, and the kernel's witness sees a set-up
 * that varies several-fold between processes. So pqbench runs one
 * process of mode `keys`, whose set-up is the usual one (the library
 * seeded from the settings' seed, one key generation) and which prints
 *
 *   keys pk=<hex> sk=<hex>
 *
 * and gives the bytes to the operation's later processes as the files
 * keys.pk and keys.sk in their job directories, with `keys=1` in their
 * settings. Their set-up then reads the pair instead of making one, and
 * does the rest as before: verify's honest signature and dec's honest
 * round trip run under the given pair, so a pair that works only inside
 * the process that made it fails there.
 */

#include "driver.h"

static int g_keys_given;

/* keys=1: the pair is in keys.pk and keys.sk. */
void keys_setting(const char *v)
{
    g_keys_given = (int)setting_long("keys", v, 0, 1);
}

int keys_given(void)
{
    return g_keys_given;
}

/* The file `name` of the job directory into p, at most cap bytes. */
static size_t keys_file(const char *name, unsigned char *p, size_t cap)
{
    FILE *f = fopen(name, "rb");
    size_t n;
    int more;
    if (!f)
        fail("setup", "no_%s", name);
    n = fread(p, 1, cap, f);
    more = fgetc(f);
    fclose(f);
    if (more != EOF)
        fail("setup", "%s_longer_than_its_API_figure_%zu", name, cap);
    if (n == 0)
        fail("setup", "%s_is_empty", name);
    return n;
}

/* The given pair into g_pk and g_sk; their lengths count as the library's
 * (it returned them, in the `keys` process). */
void keys_load(void)
{
    if (g_op == OP_EXT)
        fail("settings", "shared_keys_are_for_sign_verify_enc_and_dec");
    g_pk_len = keys_file("keys.pk", g_pk, E->pk_bytes);
    g_sk_len = keys_file("keys.sk", g_sk, E->sk_bytes);
    note_max(&max_pk, g_pk_len);
    note_max(&max_sk, g_sk_len);
}

/* mode keys: the pair this process's set-up made, printed for the others. */
void mode_keys(void)
{
    if (g_op != OP_KEYGEN || g_keys_given)
        fail("settings", "mode_keys_wants_keygen_without_given_keys");
    out_write("keys", 4);
    out_hex("pk", g_pk, g_pk_len);
    out_hex("sk", g_sk, g_sk_len);
    line("%s", "");
}
