/*
 * pqb_kinds.h - what the driver and the KAT runner know of a kind by its
 * number (PQB_KIND_* of pqb_entry.h), in one place (pqb_kinds.c).
 */
#ifndef PQB_KINDS_H
#define PQB_KINDS_H

#include "pqb_entry.h"

/* The kind's name as the records spell it ("sign", "kem", "kex", "hash"),
 * or NULL for a number that is no kind. */
const char *pqb_kind_name(int kind);

/* Whether `e` holds every function its kind needs: the seed, and
 * keygen, sign and verify (sign); keygen, enc and dec (kem); kex_init,
 * kex_pass, kex_has_pass and kex_derive (kex); hash (hash). */
int pqb_kind_complete(const pqb_entry *e);

#endif
