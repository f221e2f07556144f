/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler diff BASE NEW`: two recordings' rows side by side, matched by
 * name and metadata text, and the rows that became slower.
 *
 * A row regressed when, with at least LP_DIFF_MIN_CALLS calls on each side,
 *   its self time grew by more than the threshold and a one-sided
 *   Mann-Whitney rank test on its calls' self times says NEW's are larger
 *   (z >= LP_DIFF_Z), or
 *   its P95 grew by more than the threshold and the same test on its calls'
 *   (inclusive) durations says NEW's are larger.
 * The tests run on the summaries' per-row histograms (buckets 1/128 of an
 * octave wide: values in one bucket count as ties), with the normal
 * approximation, its tie correction and a continuity correction. More calls of
 * the same cost make a row's self time grow but are not a regression: its
 * calls are not slower.
 */
#ifndef LP_DIFF_H
#define LP_DIFF_H

#include <stdio.h>

#include "summary_read.h"

#define LP_DIFF_SCHEMA "leanprofiler-diff/1"
/* --threshold's default, percent. */
#define LP_DIFF_THRESHOLD 10
/*
 * Calls each side needs before its distribution can support a regression:
 * with 10 against 10, calls all slower than all of BASE's give z = 3.74;
 * fewer could never reach LP_DIFF_Z = 3.29 by much.
 */
#define LP_DIFF_MIN_CALLS 10
/*
 * One-sided p < 0.0005: over a hundred rows that did not change, a false
 * alarm in about one comparison in twenty, and only when the sum also grew
 * past the threshold.
 */
#define LP_DIFF_Z 3.29

struct lp_diff_opts {
	double threshold; /* percent */
	bool json;
};

/*
 * The rank test's z: > 0 when b's values tend to be larger than a's (0 when
 * either is empty or every value is in one bucket).
 */
double lp_rank_z(const struct lp_shist *a, const struct lp_shist *b);
/*
 * Prints the comparison (a table and one line per regression, or JSON) to
 * out and counts the regressions. 0 or -ENOMEM (said on stderr).
 */
int lp_diff_print(FILE *out, const struct lp_summary *base, const struct lp_summary *new_,
		  const struct lp_diff_opts *o, size_t *regressions);

#endif
