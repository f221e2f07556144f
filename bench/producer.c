// SPDX-License-Identifier: MIT
/*
 * producer THREADS SPANS [RATE]: the load for make bench's capacity and memory
 * rows. Each thread emits SPANS spans (literal names and metadata, a counter),
 * in pairs: an outer span holding one of 8 inner ones, so the names stay a
 * bounded set however long it runs. RATE is spans per second per thread
 * (0 or absent: as fast as the markers go), paced against the clock, never by
 * sleeping, so the offered rate is what is asked.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "leanprofiler.h"

#define MAX_THREADS 64

static long spans;
static double rate;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Literal names must be written out: a name picked from an array is copied per event. */
#define INNER(i, work)                                                   \
	do {                                                             \
		switch ((i) & 7) {                                       \
		case 0: LP_SPAN_ENTER("bench.parse", "stage=0"); break;  \
		case 1: LP_SPAN_ENTER("bench.plan", "stage=1"); break;   \
		case 2: LP_SPAN_ENTER("bench.run", "stage=2"); break;    \
		case 3: LP_SPAN_ENTER("bench.sort", "stage=3"); break;   \
		case 4: LP_SPAN_ENTER("bench.hash", "stage=4"); break;   \
		case 5: LP_SPAN_ENTER("bench.io", "stage=5"); break;     \
		case 6: LP_SPAN_ENTER("bench.lock", "stage=6"); break;   \
		default: LP_SPAN_ENTER("bench.emit", "stage=7"); break;  \
		}                                                        \
		(work)++;                                                \
		switch ((i) & 7) {                                       \
		case 0: LP_SPAN_EXIT("bench.parse"); break;              \
		case 1: LP_SPAN_EXIT("bench.plan"); break;               \
		case 2: LP_SPAN_EXIT("bench.run"); break;                \
		case 3: LP_SPAN_EXIT("bench.sort"); break;               \
		case 4: LP_SPAN_EXIT("bench.hash"); break;               \
		case 5: LP_SPAN_EXIT("bench.io"); break;                 \
		case 6: LP_SPAN_EXIT("bench.lock"); break;               \
		default: LP_SPAN_EXIT("bench.emit"); break;              \
		}                                                        \
	} while (0)

struct result {
	uint64_t ns;
};

static void *run(void *arg)
{
	struct result *res = arg;
	uint64_t work = 0, t0 = now(), interval = rate > 0 ? (uint64_t)(2e9 / rate) : 0;

	for (long i = 0; i < spans / 2; i++) {
		if (interval)
			while (now() < t0 + (uint64_t)i * interval)
				; /* ahead of the asked rate: wait for it */
		LP_SPAN_ENTER_COUNTER("bench.request", "kind=outer", work);
		INNER(i, work);
		LP_SPAN_EXIT_COUNTER("bench.request", work);
	}
	res->ns = now() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t th[MAX_THREADS];
	struct result res[MAX_THREADS] = { 0 };
	double per_thread = 0;

	spans = argc > 2 ? atol(argv[2]) : 1000000;
	rate = argc > 3 ? atof(argv[3]) : 0;
	if (threads < 1 || threads > MAX_THREADS || spans < 2 || rate < 0) {
		fprintf(stderr, "usage: producer THREADS(1-%d) SPANS(>=2) [SPANS_PER_SECOND]\n",
			MAX_THREADS);
		return 2;
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, run, &res[i]);
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		per_thread += (double)(spans / 2 * 2) / ((double)res[i].ns / 1e9);
	}
	printf("producer: %d threads, %ld spans each, %.0f spans/s per thread, %.0f spans/s in "
	       "all\n",
	       threads, spans / 2 * 2, per_thread / threads, per_thread);
	return 0;
}
