// SPDX-License-Identifier: MIT
/*
 * rates LOG SECONDS: spans at known rates, for tests/integration/test_top.c.
 * Every 200 ms one span "rates.slow" (a 60 ms sleep), then 20 spans
 * "rates.fast" (a 1 ms sleep each, a metadata that makes its row's name long): 5 slow and 100 fast spans a second, the
 * slow ones first by self time, the fast ones by calls. Each span's end is
 * logged to LOG as "NAME END_NS" (CLOCK_MONOTONIC, read right after its exit
 * marker). Prints "ready pid=N" first; ends after SECONDS (0: never; SIGTERM).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "leanprofiler.h"
#include "target.h"

static void nap_us(unsigned us)
{
	struct timespec d = { 0, (long)us * 1000L };

	nanosleep(&d, NULL);
}

int main(int argc, char **argv)
{
	int fd = argc > 2 ? open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644) : -1;
	uint64_t start = now_ns(), until = argc > 2 ? strtoull(argv[2], NULL, 10) * 1000000000ULL : 0;

	if (fd < 0) {
		fprintf(stderr, "usage: rates LOG SECONDS\n");
		return 2;
	}
	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	for (uint64_t round = 1; !until || now_ns() - start < until; round++) {
		uint64_t next = start + round * 200000000ULL, t;

		LP_SPAN_ENTER("rates.slow", NULL);
		nap_us(60000);
		LP_SPAN_EXIT("rates.slow");
		log_to(fd, "rates.slow %llu\n", (unsigned long long)now_ns());
		for (int i = 0; i < 20; i++) {
			LP_SPAN_ENTER("rates.fast", "kind=fast, every=10ms, sleep=1ms");
			nap_us(1000);
			LP_SPAN_EXIT("rates.fast");
			log_to(fd, "rates.fast %llu\n", (unsigned long long)now_ns());
		}
		t = now_ns();
		if (t < next)
			nap_us((unsigned)((next - t) / 1000));
	}
	return 0;
}
