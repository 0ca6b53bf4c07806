/*
 * driver_out.c - pqb-driver's results channel: lines, their running
 * FNV-1a hash, the end line, and the failure exit.
 */
#include "driver.h"


/* The results channel, the bytes written to it and their FNV-1a 64 hash. */
FILE *g_out;
int g_out_fd = STDOUT_FILENO;
unsigned long long g_out_bytes;
unsigned long long g_out_fnv = 0xcbf29ce484222325ULL;

void out_hash(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        g_out_fnv ^= (unsigned char)p[i];
        g_out_fnv *= 0x100000001b3ULL;
    }
    g_out_bytes += n;
}

void out_write(const char *p, size_t n)
{
    out_hash(p, n);
    fwrite(p, 1, n, g_out);
}

/* ` key=<hex>` on the current line (bytes too many for `line`). */
void out_hex(const char *key, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char chunk[512];
    size_t i, k = 0;
    out_write(" ", 1);
    out_write(key, strlen(key));
    out_write("=", 1);
    for (i = 0; i < n; i++) {
        chunk[k++] = digits[p[i] >> 4];
        chunk[k++] = digits[p[i] & 15];
        if (k == sizeof chunk) {
            out_write(chunk, k);
            k = 0;
        }
    }
    out_write(chunk, k);
}

/* The line `<tag> v0 v1 ...`: one number per call (samples, counts,
 * output hashes), too long for `line`'s buffer. */
void numbers_line(const char *tag, const unsigned long long *v, long n)
{
    char num[32];
    long i;
    out_write(tag, strlen(tag));
    for (i = 0; i < n; i++) {
        int k = snprintf(num, sizeof num, " %llu", v[i]);
        out_write(num, (size_t)k);
    }
    out_write("\n", 1);
    fflush(g_out);
}

void line(const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        out_write(small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big)
            return;
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        out_write(big, (size_t)n);
        free(big);
    }
    out_write("\n", 1);
    fflush(g_out);
}

/* The channel's last line (not itself counted). */
void end_line(void)
{
    fprintf(g_out, "end bytes=%llu fnv1a64=%016llx\n", g_out_bytes, g_out_fnv);
    fflush(g_out);
}

/* Copies s into out as one word: anything but printable non-space ASCII
 * becomes '_'. */
const char *word(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    if (!s || !*s)
        s = "unknown";
    for (; s[i] && i + 1 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[i] = (ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\'') ? (char)ch : '_';
    }
    out[i] = '\0';
    return out;
}

void fail(const char *stage, const char *fmt, ...)
{
    char raw[512], clean[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    line("error stage=%s msg=%s", stage, word(raw, clean, sizeof clean));
    end_line();
    exit(EXIT_FAIL);
}

void usage(const char *why)
{
    fprintf(stderr,
            "pqb-driver: %s\n"
            "usage: pqb-driver [--results-fd N] --inputs-fd N --lib PATH\n"
            "       (the operation, mode, counts and inputs: a settings block on the\n"
            "       input descriptor, read once the library is loaded; driver_settings.c)\n",
            why);
    exit(EXIT_USAGE);
}

