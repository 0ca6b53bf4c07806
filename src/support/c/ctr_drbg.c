/*
 * ctr_drbg.c - the NIST PQC KAT AES-256 CTR_DRBG, see ctr_drbg.h.
 *
 * A generate and the Update that follows it use one key: it is expanded
 * once per call, and the output blocks and the three Update blocks go to
 * the AES together, up to 8 counters at a time (interleaved on the AES
 * instructions). A draw of n bytes costs one key expansion and
 * ceil(n / 16) + 3 block encryptions.
 */
#include "ctr_drbg.h"

#include <string.h>

#include "aes256.h"

#define PQB_DRBG_SEEDLEN 48

/* Writes n bytes of output (whole blocks, the last one truncated) and then
 * runs Update(data), data being 48 bytes or NULL (no provided data). With
 * n = 0 this is Update alone. */
static void pqb_drbg_run(pqb_ctr_drbg *d, unsigned char *out, size_t n,
                         const unsigned char *data)
{
    pqb_aes256_ctx aes;
    unsigned char ks[16 * PQB_AES256_CTR_MAX];
    unsigned char temp[PQB_DRBG_SEEDLEN];
    size_t out_blocks = n / 16 + (n % 16 != 0);
    size_t total = out_blocks + PQB_DRBG_SEEDLEN / 16;
    size_t i = 0, j;

    pqb_aes256_init(&aes, d->key);
    while (i < total) {
        size_t k = total - i < PQB_AES256_CTR_MAX ? total - i : PQB_AES256_CTR_MAX;
        pqb_aes256_ctr(&aes, d->v, ks, k);
        for (j = 0; j < k; j++, i++) {
            if (i < out_blocks) {
                size_t left = n - 16 * i;
                memcpy(out + 16 * i, ks + 16 * j, left < 16 ? left : 16);
            } else {
                memcpy(temp + 16 * (i - out_blocks), ks + 16 * j, 16);
            }
        }
    }
    if (data != NULL)
        for (j = 0; j < PQB_DRBG_SEEDLEN; j++)
            temp[j] ^= data[j];
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
    pqb_drbg_run(d, NULL, 0, seed_material);
}

void pqb_ctr_drbg_generate(pqb_ctr_drbg *d, unsigned char *out, size_t n)
{
    pqb_drbg_run(d, out, n, NULL);
}
