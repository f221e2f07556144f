// SPDX-License-Identifier: MIT
/*
 * flood THREADS SPANS: each thread emits SPANS outer spans, each holding one
 * inner span, as fast as it can; prints how many enters and exits it emitted.
 * With a small --buffer-size the ring buffer overflows: what was recorded
 * plus what the profiler reports lost must equal what this program emitted.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "leanprofiler.h"

static long spans;

static void *run(void *arg)
{
	uint64_t work = 0;

	(void)arg;
	for (long i = 0; i < spans; i++) {
		LP_SPAN_ENTER_COUNTER("flood.outer", "kind=outer", work);
		LP_SPAN_ENTER("flood.inner", NULL);
		work++;
		LP_SPAN_EXIT("flood.inner");
		LP_SPAN_EXIT_COUNTER("flood.outer", work);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t th[64];

	spans = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("emitted enters=%ld exits=%ld\n", 2L * threads * spans, 2L * threads * spans);
	return 0;
}
