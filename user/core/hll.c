// SPDX-License-Identifier: MIT
#include "hll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lp_hll {
	unsigned bits;
	size_t nhash; /* exact phase: hashes kept in data; SIZE_MAX once registers */
	/*
	 * 2^bits bytes: the distinct hashes seen (exact phase), then one
	 * register per byte, the longest run of leading zeros seen + 1.
	 */
	uint64_t data[];
};

#define REGISTERS SIZE_MAX

size_t lp_hll_exact_max(unsigned bits)
{
	return ((size_t)1 << bits) / sizeof(uint64_t);
}

struct lp_hll *lp_hll_new(unsigned bits)
{
	struct lp_hll *h;

	if (bits < LP_HLL_BITS_MIN || bits > LP_HLL_BITS_MAX)
		return NULL;
	h = calloc(1, sizeof(*h) + ((size_t)1 << bits));
	if (h)
		h->bits = bits;
	return h;
}

void lp_hll_free(struct lp_hll *h)
{
	free(h);
}

/* The top bits pick the register, the rest give the rank (1 .. 65 - bits). */
static void add_register(struct lp_hll *h, uint64_t hash)
{
	uint8_t *reg = (uint8_t *)h->data;
	size_t i = (size_t)(hash >> (64 - h->bits));
	uint64_t rest = hash << h->bits;
	uint8_t rank = rest ? (uint8_t)(__builtin_clzll(rest) + 1) : (uint8_t)(65 - h->bits);

	if (rank > reg[i])
		reg[i] = rank;
}

/* The exact phase is full: its hashes go into the registers that take its place. */
static void to_registers(struct lp_hll *h)
{
	uint64_t kept[(1u << LP_HLL_BITS_MAX) / sizeof(uint64_t)];
	size_t n = h->nhash;

	memcpy(kept, h->data, n * sizeof(uint64_t));
	memset(h->data, 0, (size_t)1 << h->bits);
	h->nhash = REGISTERS;
	for (size_t i = 0; i < n; i++)
		add_register(h, kept[i]);
}

void lp_hll_add(struct lp_hll *h, uint64_t hash)
{
	if (h->nhash != REGISTERS) {
		for (size_t i = 0; i < h->nhash; i++)
			if (h->data[i] == hash)
				return;
		if (h->nhash < lp_hll_exact_max(h->bits)) {
			h->data[h->nhash++] = hash;
			return;
		}
		to_registers(h);
	}
	add_register(h, hash);
}

/* Ertl's sigma(x) = x + sum_k x^(2^k) 2^(k-1), for the registers still 0. */
static double sigma(double x)
{
	double y = 1.0, z = x, prev;

	if (x == 1.0)
		return INFINITY;
	do {
		x *= x;
		prev = z;
		z += x * y;
		y += y;
	} while (z != prev);
	return z;
}

/* Ertl's tau(x), for the registers at the largest rank. */
static double tau(double x)
{
	double y = 1.0, z = 1.0 - x, prev;

	if (x == 0.0 || x == 1.0)
		return 0.0;
	do {
		x = sqrt(x);
		prev = z;
		y *= 0.5;
		z -= (1.0 - x) * (1.0 - x) * y;
	} while (z != prev);
	return z / 3.0;
}

uint64_t lp_hll_estimate(const struct lp_hll *h)
{
	const uint8_t *reg = (const uint8_t *)h->data;
	unsigned q = 64 - h->bits;
	size_t m = (size_t)1 << h->bits;
	uint32_t count[66] = { 0 }; /* registers per rank, 0 .. q + 1 */
	double z, md = (double)m;

	if (h->nhash != REGISTERS)
		return h->nhash;
	for (size_t i = 0; i < m; i++)
		count[reg[i]]++;
	z = md * tau(1.0 - (double)count[q + 1] / md);
	for (unsigned k = q; k >= 1; k--)
		z = 0.5 * (z + (double)count[k]);
	z += md * sigma((double)count[0] / md);
	/* alpha_inf = 1 / (2 ln 2) */
	return (uint64_t)llround(md * md / (2.0 * M_LN2 * z));
}

double lp_hll_std_error(unsigned bits)
{
	return 1.04 / sqrt((double)((size_t)1 << bits));
}
