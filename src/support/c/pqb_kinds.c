/*
 * pqb_kinds.c - the kinds by number (pqb_kinds.h).
 */
#include "pqb_kinds.h"

#include "pqb_entry.h"

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
