/*
 * driver_hash.c - hash_<bytes>: one CryptHash of a <bytes>-byte message
 * msg[i] = (131*i + bytes) mod 256 with the instance's digest width
 * (see driver_ext.h).
 */

#include "driver.h"

unsigned long long g_hash_bytes; /* 0: not a hash operation */
unsigned char *g_hash_msg, *g_hash_digest;
size_t g_hash_digest_len;

int hash_parse_op(const char *op)
{
    char *end;
    unsigned long long n;
    if (strncmp(op, "hash_", 5) != 0)
        return 0;
    errno = 0;
    n = strtoull(op + 5, &end, 10);
    if (errno != 0 || end == op + 5 || *end != '\0' || n == 0 || n > (1ULL << 30))
        return 0;
    g_hash_bytes = n;
    return 1;
}

void hash_setup(void)
{
    size_t i;
    g_hash_digest_len = (E->digest_bits + 7) / 8;
    g_hash_msg = buffer((size_t)g_hash_bytes);
    g_hash_digest = buffer(g_hash_digest_len);
    for (i = 0; i < g_hash_bytes; i++)
        g_hash_msg[i] = (unsigned char)((131 * (unsigned long long)i + g_hash_bytes) % 256);
}

int hash_call(void)
{
    int rc = E->hash(g_hash_msg, 8 * g_hash_bytes, g_hash_digest);
    if (rc != 0)
        return call_failed("CryptHash_returned_%d", rc);
    return 0;
}
