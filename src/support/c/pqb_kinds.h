/*
 * pqb_kinds.h - what the driver and the KAT runner know of a kind by its
 * number (PQB_KIND_* of pqb_entry.h), in one place (pqb_kinds.c).
 */
#ifndef PQB_KINDS_H
#define PQB_KINDS_H

/* The kind's name as the records spell it ("sign", "kem", "kex", "hash"),
 * or NULL for a number that is no kind. */
const char *pqb_kind_name(int kind);

#endif
