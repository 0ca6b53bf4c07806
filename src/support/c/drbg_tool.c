/*
 * drbg_tool.c - pqb-drbg, the NIST KAT CTR_DRBG of pqbench on its own: what
 * it runs on this host, what it costs, and what it draws.
 *
 *   pqb-drbg --bench [--batches N] [--batch B]
 *   pqb-drbg --draw ENTROPY_HEX [--perso HEX] LEN...
 *   pqb-drbg --impls
 *
 * Built by pqbench from this file, ctr_drbg.c, aes256.c and counter.c with
 * the tools' flags. The AES implementation is the one every NIST-API
 * instance library chooses on this host (PQB_DRBG_IMPL forces one, see
 * aes256.h), so --bench gives the per-call cost that a timed operation pays
 * for each randombytes call.
 *
 * Output is `tag key=value ...` lines, as pqb-driver's:
 *   --bench  `meta impl= usable= counter= counter_hz=`, then per draw size
 *            `draw bytes= batches= batch= median_cycles= min_cycles=
 *            median_seconds=`, then `done`. Each batch times B consecutive
 *            draws (amortising the counter reads); the figures are per draw.
 *            Batches alternate between the sizes so both see the same host.
 *   --draw   `impl name=`, then `draw bytes=N out=HEX` per LEN, all from one
 *            DRBG seeded with ENTROPY_HEX (48 bytes) and optional
 *            personalization, then `done`.
 *   --impls  `impl name= usable=0|1` per compiled-in implementation, then
 *            `active name=` and `done`.
 * Exit codes: 0 success, 2 usage error or unusable PQB_DRBG_IMPL, 3 no
 * counter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aes256.h"
#include "counter.h"
#include "ctr_drbg.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3
#define MAX_DRAW 65536UL

static void usage(void)
{
    fputs("usage: pqb-drbg --bench [--batches N] [--batch B]\n"
          "       pqb-drbg --draw ENTROPY_HEX [--perso HEX] LEN...\n"
          "       pqb-drbg --impls\n",
          stderr);
    exit(EXIT_USAGE);
}

static unsigned long parse_count(const char *s, unsigned long lo, unsigned long hi)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        usage();
    return v;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Exactly 48 bytes of hex. */
static void parse_seed(const char *s, unsigned char out[48])
{
    size_t i;
    if (strlen(s) != 96)
        usage();
    for (i = 0; i < 48; i++) {
        int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
        if (a < 0 || b < 0)
            usage();
        out[i] = (unsigned char)(a * 16 + b);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static void print_impls(void)
{
    int i;
    const char *name;
    for (i = 0; (name = pqb_aes256_impl_name(i)) != NULL; i++)
        printf("impl name=%s usable=%d\n", name, pqb_aes256_impl_usable(name));
    printf("active name=%s\ndone\n", pqb_aes256_impl());
}

static int draw(int argc, char **argv)
{
    unsigned char entropy[48], perso[48];
    unsigned char *buf;
    int have_perso = 0, i = 0;
    pqb_ctr_drbg d;

    if (argc < 1)
        usage();
    parse_seed(argv[i++], entropy);
    if (i + 1 < argc && strcmp(argv[i], "--perso") == 0) {
        parse_seed(argv[i + 1], perso);
        have_perso = 1;
        i += 2;
    }
    buf = (unsigned char *)malloc(MAX_DRAW);
    if (buf == NULL)
        return EXIT_FAIL;
    pqb_ctr_drbg_init(&d, entropy, have_perso ? perso : NULL);
    printf("impl name=%s\n", pqb_aes256_impl());
    for (; i < argc; i++) {
        size_t n = (size_t)parse_count(argv[i], 0, MAX_DRAW), k;
        pqb_ctr_drbg_generate(&d, buf, n);
        printf("draw bytes=%zu out=", n);
        for (k = 0; k < n; k++)
            printf("%02X", buf[k]);
        printf("\n");
    }
    printf("done\n");
    free(buf);
    return 0;
}

static int bench(unsigned long batches, unsigned long batch)
{
    static const size_t sizes[2] = {32, 64};
    unsigned char entropy[48], out[64];
    char err[128];
    pqb_counter c;
    pqb_ctr_drbg d;
    double *cyc[2], *sec[2], lo[2];
    unsigned long b, k;
    int s, first;

    if (pqb_counter_open(&c, err, sizeof err) != 0) {
        printf("error stage=counter msg=%s\n", err);
        return EXIT_FAIL;
    }
    pqb_counter_measure_rate(&c);
    for (k = 0; k < 48; k++)
        entropy[k] = (unsigned char)k;
    pqb_ctr_drbg_init(&d, entropy, NULL);
    for (s = 0; s < 2; s++) {
        cyc[s] = (double *)malloc(batches * sizeof(double));
        sec[s] = (double *)malloc(batches * sizeof(double));
        if (cyc[s] == NULL || sec[s] == NULL)
            return EXIT_FAIL;
        lo[s] = -1.0;
    }
    /* Warm-up: caches, branch predictors, the core's clock. */
    for (k = 0; k < 20 * batch; k++)
        pqb_ctr_drbg_generate(&d, out, sizes[k % 2]);
    for (b = 0; b < batches; b++) {
        for (s = 0; s < 2; s++) {
            double t0, t1;
            unsigned long long c0, c1;
            t0 = pqb_now_seconds();
            c0 = pqb_counter_read(&c);
            for (k = 0; k < batch; k++)
                pqb_ctr_drbg_generate(&d, out, sizes[s]);
            c1 = pqb_counter_read(&c);
            t1 = pqb_now_seconds();
            cyc[s][b] = (double)(c1 - c0) / (double)batch;
            sec[s][b] = (t1 - t0) / (double)batch;
            if (lo[s] < 0.0 || cyc[s][b] < lo[s])
                lo[s] = cyc[s][b];
        }
    }
    printf("meta impl=%s usable=", pqb_aes256_impl());
    first = 1;
    for (s = 0; pqb_aes256_impl_name(s) != NULL; s++)
        if (pqb_aes256_impl_usable(pqb_aes256_impl_name(s))) {
            printf("%s%s", first ? "" : ",", pqb_aes256_impl_name(s));
            first = 0;
        }
    printf(" counter=%s counter_hz=%.6e\n", c.name, c.hz);
    for (s = 0; s < 2; s++) {
        printf("draw bytes=%zu batches=%lu batch=%lu median_cycles=%.1f min_cycles=%.1f "
               "median_seconds=%.4e\n",
               sizes[s], batches, batch, median(cyc[s], batches), lo[s],
               median(sec[s], batches));
        free(cyc[s]);
        free(sec[s]);
    }
    printf("done\n");
    pqb_counter_close(&c);
    return 0;
}

int main(int argc, char **argv)
{
    const char *force = getenv("PQB_DRBG_IMPL");
    unsigned long batches = 201, batch = 64;
    int i;

    /* Before any draw: an unusable forced choice would abort there. */
    if (force != NULL && !pqb_aes256_impl_usable(force)) {
        fprintf(stderr, "pqb-drbg: PQB_DRBG_IMPL=%s is unknown or not supported by this CPU\n",
                force);
        return EXIT_USAGE;
    }
    if (argc == 2 && strcmp(argv[1], "--impls") == 0) {
        print_impls();
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--draw") == 0)
        return draw(argc - 2, argv + 2);
    if (argc < 2 || strcmp(argv[1], "--bench") != 0)
        usage();
    for (i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--batches") == 0)
            batches = parse_count(argv[i + 1], 1, 1000000UL);
        else if (strcmp(argv[i], "--batch") == 0)
            batch = parse_count(argv[i + 1], 1, 1000000UL);
        else
            usage();
    }
    if (i != argc)
        usage();
    return bench(batches, batch);
}
