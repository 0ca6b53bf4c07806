/*
 * sha256.h - SHA-256 (FIPS 180-4) for Larch, a DEMONSTRATION signature
 * bundled with pqbench (NOT a secure scheme; this hash implementation was
 * not reviewed for side channels).  Symbols are namespaced per parameter set
 * so that several Larch builds can be linked into one program.
 */
#ifndef PQB_LARCH_SHA256_H
#define PQB_LARCH_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include "params.h"

typedef struct {
    uint32_t h[8];
    uint8_t buf[64];
    size_t buf_len;
    uint64_t total;    /* bytes absorbed */
} PQB_LARCH_NS(sha256_ctx);

#define larch_sha256_ctx PQB_LARCH_NS(sha256_ctx)
#define larch_sha256_init PQB_LARCH_NS(sha256_init)
#define larch_sha256_update PQB_LARCH_NS(sha256_update)
#define larch_sha256_final PQB_LARCH_NS(sha256_final)

void larch_sha256_init(larch_sha256_ctx *ctx);
void larch_sha256_update(larch_sha256_ctx *ctx, const uint8_t *data, size_t len);
void larch_sha256_final(larch_sha256_ctx *ctx, uint8_t out[32]);

#endif
