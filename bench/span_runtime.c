// SPDX-License-Identifier: MIT
/*
 * examples/span_cost's loop with runtime strings: the name and metadata a
 * Python span passes ("model.forward", "phase=forward, module=encoder"), in
 * buffers, so the markers flag them as runtime texts the kernel copies at each
 * marker, as the Python module's are. bench/python.sh: span_runtime N.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	char name[32], meta[64];
	volatile uint64_t work = 0;
	uint64_t t0, t1, t2;

	strcpy(name, "model.forward");
	strcpy(meta, "phase=forward, module=encoder");
	t0 = now();
	for (long i = 0; i < n; i++)
		work = work + 1;
	t1 = now();
	for (long i = 0; i < n; i++) {
		LP_SPAN_ENTER(name, meta);
		work = work + 1;
		LP_SPAN_EXIT(name);
	}
	t2 = now();
	printf("%s: %ld spans, %.2f ns per span (enter + exit)\n",
	       LP_ACTIVE() ? "attached" : "not attached", n,
	       ((double)(t2 - t1) - (double)(t1 - t0)) / (double)n);
	return 0;
}
