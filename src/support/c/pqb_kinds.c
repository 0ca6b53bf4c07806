/*
 * pqb_kinds.c - the kinds by number (pqb_kinds.h).
 */
#include "pqb_kinds.h"

#include <stddef.h>

const char *pqb_kind_name(int kind)
{
    switch (kind) {
    case PQB_KIND_SIGN:
        return "sign";
    case PQB_KIND_KEM:
        return "kem";
    case PQB_KIND_KEX:
        return "kex";
    case PQB_KIND_HASH:
        return "hash";
    default:
        return NULL;
    }
}

int pqb_kind_complete(const pqb_entry *e)
{
    if (e->seed == NULL)
        return 0;
    switch (e->kind) {
    case PQB_KIND_SIGN:
        return e->keygen && e->sign && e->verify;
    case PQB_KIND_KEM:
        return e->keygen && e->enc && e->dec;
    case PQB_KIND_KEX:
        return e->kex_init && e->kex_pass && e->kex_has_pass && e->kex_derive;
    case PQB_KIND_HASH:
        return e->hash != NULL;
    default:
        return 0;
    }
}
