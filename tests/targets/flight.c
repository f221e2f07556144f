// SPDX-License-Identifier: MIT
/*
 * A target that runs for a given time, for the bounded trace's tests
 * (record --trace-last, --trace-max-size). Usage:
 *   flight OUT SECONDS THREADS SLEEP_US
 * A span "flight.main" holds the whole run; each thread holds a span
 * "flight.thread" and, until SECONDS have passed, runs rounds of a span "tick"
 * (20 us on the CPU, then a child "work" of 30 us, then SLEEP_US asleep: off
 * its CPU inside "tick"). Every span's four clock readings (before/after its
 * enter and exit markers, CLOCK_MONOTONIC) are written to OUT at the end, one
 * line per span, as tests/targets/workload.c writes them:
 *   tid depth t_before_enter t_after_enter t_before_exit t_after_exit name<TAB>meta
 * Each span's metadata is unique (its thread and round), so a test finds each.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"
#include "target.h"

struct span {
	int depth;
	uint64_t clk[4];
	char name[16], meta[48];
};

struct thread {
	pthread_t th;
	int index;
	pid_t tid;
	struct span *spans;
	size_t n, cap;
};

static uint64_t deadline;
static unsigned sleep_us;

/* A new span of t, its enter marker between two clock readings. */
#define ENTER(t, sp, nm, dp, ...)                                                                \
	do {                                                                                     \
		sp = new_span(t);                                                                \
		sp->depth = (dp);                                                                \
		snprintf(sp->name, sizeof(sp->name), "%s", nm);                                  \
		snprintf(sp->meta, sizeof(sp->meta), __VA_ARGS__);                               \
		sp->clk[0] = now_ns();                                                           \
		LP_SPAN_ENTER(sp->name, sp->meta);                                               \
		sp->clk[1] = now_ns();                                                           \
	} while (0)

#define EXIT(sp)                                                                                 \
	do {                                                                                     \
		sp->clk[2] = now_ns();                                                           \
		LP_SPAN_EXIT(sp->name);                                                          \
		sp->clk[3] = now_ns();                                                           \
	} while (0)

/* Spans are found by index, never by pointer: the array grows. */
static size_t new_index(struct thread *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->spans = realloc(t->spans, t->cap * sizeof(*t->spans));
		if (!t->spans)
			abort();
	}
	memset(&t->spans[t->n], 0, sizeof(*t->spans));
	return t->n++;
}

static struct span *new_span(struct thread *t)
{
	size_t i = new_index(t); /* first: it may move the array */

	return &t->spans[i];
}

static void *run(void *arg)
{
	struct thread *t = arg;
	struct span *sp;
	size_t root, tick;

	t->tid = gettid();
	ENTER(t, sp, "flight.thread", 0, "thread=%d", t->index);
	root = t->n - 1;
	for (unsigned r = 0; now_ns() < deadline; r++) {
		ENTER(t, sp, "tick", 1, "thread=%d, round=%u", t->index, r);
		tick = t->n - 1;
		spin_us(20);
		ENTER(t, sp, "work", 2, "thread=%d, round=%u", t->index, r);
		spin_us(30);
		EXIT(sp);
		if (sleep_us)
			usleep(sleep_us);
		sp = &t->spans[tick];
		EXIT(sp);
	}
	sp = &t->spans[root];
	EXIT(sp);
	return NULL;
}

int main(int argc, char **argv)
{
	struct thread main_t = { .index = -1 }, *ts;
	struct span *sp;
	int nthreads;
	FILE *out;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OUT SECONDS THREADS SLEEP_US\n", argv[0]);
		return 2;
	}
	main_t.tid = gettid();
	ENTER(&main_t, sp, "flight.main", 0, "threads=%s", argv[3]);
	deadline = now_ns() + (uint64_t)(atof(argv[2]) * 1e9);
	nthreads = atoi(argv[3]);
	sleep_us = (unsigned)atoi(argv[4]);
	ts = calloc((size_t)nthreads, sizeof(*ts));
	if (!ts)
		return 2;
	for (int i = 0; i < nthreads; i++) {
		ts[i].index = i;
		pthread_create(&ts[i].th, NULL, run, &ts[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(ts[i].th, NULL);
	sp = &main_t.spans[0];
	EXIT(sp);
	out = fopen(argv[1], "w");
	if (!out)
		return 2;
	for (int i = -1; i < nthreads; i++) {
		struct thread *t = i < 0 ? &main_t : &ts[i];

		for (size_t k = 0; k < t->n; k++) {
			struct span *s = &t->spans[k];

			fprintf(out, "%d %d %llu %llu %llu %llu %s\t%s\n", (int)t->tid, s->depth,
				(unsigned long long)s->clk[0], (unsigned long long)s->clk[1],
				(unsigned long long)s->clk[2], (unsigned long long)s->clk[3], s->name,
				s->meta);
		}
	}
	return fclose(out) ? 2 : 0;
}
