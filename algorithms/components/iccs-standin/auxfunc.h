/*
 * auxfunc.h - NGCC/ICCS symmetric helper functions, pqbench STAND-IN.
 *
 * This is a stand-in for the official NGCC/ICCS auxfunc.c shipped with
 * submissions, written so that pqbench's demonstration algorithms build on
 * their own.  It is NOT the official file and its outputs are not claimed to
 * match it bit for bit: to evaluate a real submission, point the algorithm
 * TOML at the official auxfunc.c / drng.c.  Demonstration code, not a
 * hardened or reviewed implementation.
 *
 * All lengths are in BITS.  All functions return 0 on success and -1 on a
 * parameter error.
 */
#ifndef PQB_ICCS_STANDIN_AUXFUNC_H
#define PQB_ICCS_STANDIN_AUXFUNC_H

/*
 * SM3 of the first msg_bits bits of msg (bit-granular), truncated to out_bits
 * (out_bits <= 256, else -1).  Writes ceil(out_bits/8) bytes; in a partial
 * last byte the high bits are kept and the remaining low bits are zero.
 */
int sm3hash(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out);

/*
 * KDF-SM3 counter mode (as the SM2 key derivation function):
 *   SM3(msg || 00000001) || SM3(msg || 00000002) || ...
 * with a 32-bit big-endian counter starting at 1, truncated to out_bits
 * (partial last byte: high bits kept, rest zero).  msg_bits must be a
 * multiple of 8 (else -1); out_bits may be any length up to (2^32-1)*256.
 */
int pseudoXOF(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out);

/*
 * Domain-separated hash of any output length, defined in this stand-in as
 *   pseudohash(out_bits, msg) = pseudoXOF(out_bits, 0x01 || msg).
 * The leading byte 0x01 separates it from plain pseudoXOF calls on the same
 * input.  msg_bits must be a multiple of 8 (else -1).
 */
int pseudohash(unsigned long long out_bits, const unsigned char *msg, unsigned long long msg_bits, unsigned char *out);

#endif
