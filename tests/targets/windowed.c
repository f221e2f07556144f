// SPDX-License-Identifier: MIT
/*
 * windowed LOG ROUNDS: a fixed number of spans, for
 * tests/integration/test_window.c. Each round (every 100 ms) one
 * "win.outer" (4 ms) with four "win.inner" (1 ms each) inside; one
 * "win.long" open from round 3 to round ROUNDS - 3, across several windows.
 * The counts do not depend on timing: ROUNDS outer, 4 * ROUNDS inner, one
 * long. Each span is logged to LOG as "NAME START BEFORE AFTER" (CLOCK_MONOTONIC
 * ns: its enter, and the clock right before and right after its exit marker),
 * so that a test can tell which window its end falls in.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "leanprofiler.h"
#include "target.h"

static void exit_logged(int fd, const char *name, uint64_t start)
{
	uint64_t before = now_ns(), after;

	LP_SPAN_EXIT(name);
	after = now_ns();
	log_to(fd, "%s %llu %llu %llu\n", name, (unsigned long long)start,
	       (unsigned long long)before, (unsigned long long)after);
}

int main(int argc, char **argv)
{
	int fd = argc > 2 ? open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644) : -1;
	long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	uint64_t t0 = now_ns(), long_start = 0;

	if (fd < 0 || rounds < 7) {
		fprintf(stderr, "usage: windowed LOG ROUNDS (ROUNDS >= 7)\n");
		return 2;
	}
	for (long round = 0; round < rounds; round++) {
		uint64_t next = t0 + (uint64_t)(round + 1) * 100000000ULL, start, t;

		if (round == 3) {
			long_start = now_ns();
			LP_SPAN_ENTER("win.long", NULL);
		}
		start = now_ns();
		LP_SPAN_ENTER("win.outer", NULL);
		for (int i = 0; i < 4; i++) {
			uint64_t s = now_ns();

			LP_SPAN_ENTER("win.inner", "kind=inner");
			spin_us(1000);
			exit_logged(fd, "win.inner", s);
		}
		exit_logged(fd, "win.outer", start);
		if (round == rounds - 3)
			exit_logged(fd, "win.long", long_start);
		t = now_ns();
		if (t < next) {
			struct timespec d = { 0, (long)(next - t) };

			nanosleep(&d, NULL);
		}
	}
	return 0;
}
