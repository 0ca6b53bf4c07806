/*
 * ctr_drbg.c - the NIST PQC KAT AES-256 CTR_DRBG, see ctr_drbg.h.
 */
#include "ctr_drbg.h"

#include <string.h>

#include "aes256.h"

#define PQB_DRBG_SEEDLEN 48

/* V += 1, V a 128-bit big-endian integer. */
static void pqb_drbg_increment(unsigned char v[16])
{
    int i;
    for (i = 15; i >= 0; i--) {
        v[i] = (unsigned char)(v[i] + 1u);
        if (v[i] != 0)
            break;
    }
}

/* Update(d); d is 48 bytes or NULL (no provided data). */
static void pqb_drbg_update(pqb_ctr_drbg *d, const unsigned char *data)
{
    pqb_aes256_ctx aes;
    unsigned char temp[PQB_DRBG_SEEDLEN];
    unsigned i;

    pqb_aes256_init(&aes, d->key);
    for (i = 0; i < 3; i++) {
        pqb_drbg_increment(d->v);
        pqb_aes256_encrypt(&aes, d->v, temp + 16 * i);
    }
    if (data != NULL)
        for (i = 0; i < PQB_DRBG_SEEDLEN; i++)
            temp[i] ^= data[i];
    memcpy(d->key, temp, 32);
    memcpy(d->v, temp + 32, 16);
}

void pqb_ctr_drbg_init(pqb_ctr_drbg *d, const unsigned char entropy[48],
                       const unsigned char *personalization)
{
    unsigned char seed_material[PQB_DRBG_SEEDLEN];
    unsigned i;

    memcpy(seed_material, entropy, PQB_DRBG_SEEDLEN);
    if (personalization != NULL)
        for (i = 0; i < PQB_DRBG_SEEDLEN; i++)
            seed_material[i] ^= personalization[i];
    memset(d->key, 0, sizeof d->key);
    memset(d->v, 0, sizeof d->v);
    pqb_drbg_update(d, seed_material);
}

void pqb_ctr_drbg_generate(pqb_ctr_drbg *d, unsigned char *out, size_t n)
{
    pqb_aes256_ctx aes;
    unsigned char block[16];

    pqb_aes256_init(&aes, d->key);
    while (n > 0) {
        size_t take = n < 16 ? n : 16;
        pqb_drbg_increment(d->v);
        pqb_aes256_encrypt(&aes, d->v, block);
        memcpy(out, block, take);
        out += take;
        n -= take;
    }
    pqb_drbg_update(d, NULL);
}
