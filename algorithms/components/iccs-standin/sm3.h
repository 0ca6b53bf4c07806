/*
 * sm3.h - SM3 cryptographic hash (GB/T 32905-2016) for the pqbench ICCS
 * helper STAND-IN.
 *
 * This directory is a stand-in for the official NGCC/ICCS helper files
 * (auxfunc.c / drng.c) so that the demonstration algorithms shipped with
 * pqbench build out of the box.  It is NOT the official code: to evaluate a
 * real submission, point pqbench at the official helper files instead.
 * It is a demonstration, not a hardened implementation (no side-channel
 * review, no zeroisation guarantees).
 */
#ifndef PQB_ICCS_STANDIN_SM3_H
#define PQB_ICCS_STANDIN_SM3_H

#include <stddef.h>
#include <stdint.h>

/*
 * SM3 digest of the first msg_bits bits of msg (bit-granular: when msg_bits
 * is not a multiple of 8, the high (msg_bits mod 8) bits of the last byte are
 * used and the padding 1 bit follows immediately after them).
 */
void sm3_digest(const unsigned char *msg, unsigned long long msg_bits, unsigned char out[32]);

/* Incremental interface used by the other stand-in files. */
typedef struct {
    uint32_t h[8];
    unsigned char buf[64];
    unsigned int buf_len;          /* bytes currently in buf (0..63) */
    unsigned long long total_bytes; /* whole bytes absorbed so far    */
} standin_sm3_ctx;

void standin_sm3_init(standin_sm3_ctx *ctx);
void standin_sm3_update(standin_sm3_ctx *ctx, const unsigned char *data, size_t len);
/* Finish.  tail_bits (0..7) high bits of tail_byte are appended as a final
 * partial byte before the padding. */
void standin_sm3_final_bits(standin_sm3_ctx *ctx, unsigned char tail_byte,
                            unsigned int tail_bits, unsigned char out[32]);
void standin_sm3_final(standin_sm3_ctx *ctx, unsigned char out[32]);

#endif
