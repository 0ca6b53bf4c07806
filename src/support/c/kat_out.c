/*
 * kat_out.c - pqb-kat's output: sinks that count and hash what they write,
 * the results channel's lines, and the KAT file's fields.
 */
#include "kat_runner.h"

#include <stdarg.h>

const char *status_name(int st)
{
    switch (st) {
    case ST_PASS:
        return "PASS";
    case ST_CRYPTOFAIL:
        return "CRYPTOFAIL";
    case ST_OVERFLOW:
        return "OVERFLOW";
    case ST_MISMATCH:
        return "MISMATCH";
    default:
        return "LOADFAIL";
    }
}

/* ---- output sinks: a stream with its byte count and FNV-1a 64 hash ---- */


void sink_init(sink *k, FILE *fp)
{
    k->fp = fp;
    k->bytes = 0;
    k->fnv = 0xcbf29ce484222325ULL;
}

void sink_write(sink *k, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        k->fnv ^= b[i];
        k->fnv *= 0x100000001b3ULL;
    }
    k->bytes += n;
    fwrite(p, 1, n, k->fp);
}

void sink_printf(sink *k, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    sink_write(k, buf, (size_t)n);
}

/* ---- the results channel ---------------------------------------------- */

sink g_res;

void out_line(const char *key, const char *value)
{
    sink_printf(&g_res, "%s = %s\n", key, value);
    fflush(g_res.fp);
}

/* The channel's last line (not itself counted). */
void out_end(void)
{
    fprintf(g_res.fp, "end bytes=%llu fnv1a64=%016llx\n", g_res.bytes, g_res.fnv);
    fflush(g_res.fp);
}

void out_size(const char *key, size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    out_line(key, buf);
}

/* Copies s into dst (size n) replacing control characters, so that it fits
 * on one line. */
void one_line(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    if (s == NULL)
        s = "(null)";
    for (; s[i] != '\0' && i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    dst[i] = '\0';
}

void out_status(int st, const char *detail)
{
    out_line("status", status_name(st));
    if (st != ST_PASS) {
        char buf[1024];
        one_line(buf, sizeof buf, detail);
        out_line("detail", buf);
    }
}

/* ---- KAT file --------------------------------------------------------- */

void kat_hex(sink *f, const char *name, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789ABCDEF";
    char buf[512];
    size_t i, k = 0;
    sink_printf(f, "%s = ", name);
    if (n == 0)
        sink_write(f, "00", 2);
    for (i = 0; i < n; i++) {
        buf[k++] = digits[p[i] >> 4];
        buf[k++] = digits[p[i] & 15];
        if (k == sizeof buf) {
            sink_write(f, buf, k);
            k = 0;
        }
    }
    sink_write(f, buf, k);
    sink_write(f, "\n", 1);
}

void kat_num(sink *f, const char *name, unsigned long long v)
{
    sink_printf(f, "%s = %llu\n", name, v);
}

