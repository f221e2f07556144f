// SPDX-License-Identifier: MIT
/*
 * What a span costs: times N spans (enter + exit, literal name and metadata,
 * with a counter) in a tight loop and prints ns per span. Run it alone for the
 * dormant cost, and under the profiler for the attached cost:
 *
 *   ./build/examples/span_cost 10000000
 *   sudo ./build/leanprofiler record -- ./build/examples/span_cost 200000
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "leanprofiler.h"

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	volatile uint64_t work = 0;
	uint64_t t0, t1, t2;

	/* The same loop without markers, to subtract the loop's own cost. */
	t0 = now();
	for (long i = 0; i < n; i++)
		work = work + 1;
	t1 = now();
	for (long i = 0; i < n; i++) {
		LP_SPAN_ENTER_COUNTER("cost.span", "kind=literal", work);
		work = work + 1;
		LP_SPAN_EXIT_COUNTER("cost.span", work);
	}
	t2 = now();
	printf("%s: %ld spans, %.2f ns per span (enter + exit)\n",
	       LP_ACTIVE() ? "attached" : "not attached", n,
	       ((double)(t2 - t1) - (double)(t1 - t0)) / (double)n);
	return 0;
}
