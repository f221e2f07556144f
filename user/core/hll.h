/* SPDX-License-Identifier: MIT */
/*
 * HyperLogLog: how many distinct values were seen, estimated in a fixed
 * 2^bits bytes however many there are (counting them exactly would take
 * memory that grows with them). Up to 2^bits / 8 distinct values the bytes
 * hold their hashes and the count is exact; past that they become 2^bits
 * one-byte registers and the estimate's relative standard error is
 * 1.04 / sqrt(2^bits) (lp_hll_std_error). Ertl's estimator ("New cardinality
 * estimation algorithms for HyperLogLog sketches", 2017) needs neither bias
 * tables nor a switch to linear counting for small counts.
 */
#ifndef LP_HLL_H
#define LP_HLL_H

#include "common.h"

#define LP_HLL_BITS_MIN 4
#define LP_HLL_BITS_MAX 12 /* 4 KiB; the exact phase's copy at the switch is on the stack */

struct lp_hll;

/* bits from LP_HLL_BITS_MIN to LP_HLL_BITS_MAX; NULL on ENOMEM or a bad size. */
struct lp_hll *lp_hll_new(unsigned bits);
void lp_hll_free(struct lp_hll *h);
/* hash: the value's 64-bit hash, every bit uniform (lp_hash64() of a distinct key). */
void lp_hll_add(struct lp_hll *h, uint64_t hash);
uint64_t lp_hll_estimate(const struct lp_hll *h);
/* Distinct values counted exactly, before the registers: 2^bits / 8. */
size_t lp_hll_exact_max(unsigned bits);
/* The relative standard error of an estimate with 2^bits registers. */
double lp_hll_std_error(unsigned bits);

#endif
