/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler list`: the USDT probes of a file, one row per probe (its
 * sites grouped), formatted one line each. Pure: the notes come from usdt.c.
 */
#ifndef LP_PROBELIST_H
#define LP_PROBELIST_H

#include "common.h"
#include "text.h"
#include "usdt.h"

struct lp_probe_row {
	const struct lp_usdt_note *first; /* provider, name, args of the first site */
	size_t sites;
	bool args_vary;     /* sites with other argument specs (the first one's are shown) */
	uint64_t sema_addr; /* 0: no semaphore */
	bool sema_vary;     /* sites with another semaphore */
	const struct lp_usdt_note *bad; /* the first site libbpf cannot decode, NULL: none */
	size_t bad_sites;               /* how many sites it cannot decode */
};

/*
 * Groups notes by provider:name, in order of first appearance. rows must hold
 * n entries; returns the number of rows.
 */
size_t lp_probe_rows(const struct lp_usdt_note *notes, size_t n, struct lp_probe_row *rows);

/*
 * Appends one line (with '\n') for a row of file: probe, sites, semaphore,
 * arguments, file, then what applies: "marker=leanprofiler" for our own
 * probes, "presets=a,b" for presets using it, "unsupported=ARG" for the first
 * argument spec libbpf cannot decode (of the first site with one), followed by
 * "(N of M sites)" when only some sites have one. Untrusted bytes are shown
 * escaped.
 */
int lp_probe_line(struct lp_buf *out, const struct lp_probe_row *r, const char *file);

#endif
