// SPDX-License-Identifier: MIT
/*
 * bystander wait | bystander N K: two processes of one marked binary, for make
 * bench (row 15). `wait` is the one recorded (record -p): it prints its PID and
 * blocks until its stdin closes. `N K` is the bystander beside it: it runs N
 * spans (literal name and metadata, as examples/span_cost), each around K
 * rounds of a loop (its work), and prints its rate, per second of wall time
 * and of its own CPU time, and whether its markers saw a profiler (LP_ACTIVE()).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"

static uint64_t now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	volatile uint64_t work = 0;
	uint64_t t0, t1, c0, c1;
	long n, k;
	char c;

	if (argc == 2 && !strcmp(argv[1], "wait")) {
		printf("bystander: waiting, pid %d\n", (int)getpid());
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	n = argc == 3 ? atol(argv[1]) : 0;
	k = argc == 3 ? atol(argv[2]) : 0;
	if (n <= 0 || k < 0) {
		fprintf(stderr, "usage: bystander wait | bystander N K\n");
		return 2;
	}
	t0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		LP_SPAN_ENTER_COUNTER("bystander.span", "kind=literal", work);
		for (long j = 0; j < k; j++)
			work = work + 1;
		LP_SPAN_EXIT_COUNTER("bystander.span", work);
	}
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	t1 = now(CLOCK_MONOTONIC);
	/*
	 * Per second of its own CPU (user and kernel: a trap's cost is its
	 * kernel time), which time the host gives other guests does not swell.
	 */
	printf("bystander: %ld spans, %.0f spans/s, %.0f spans per CPU-second, active %d\n", n,
	       (double)n * 1e9 / (double)(t1 - t0), (double)n * 1e9 / (double)(c1 - c0),
	       LP_ACTIVE());
	return 0;
}
