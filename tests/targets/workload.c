// SPDX-License-Identifier: MIT
/*
 * A target with a known span tree, for the integration tests. Usage:
 *   workload OUT THREADS ROUNDS
 * Each thread runs ROUNDS rounds of: a recursion of the same name (depth 1..4),
 * a span whose name and metadata are built at run time in buffers the thread
 * reuses (up to 150 distinct names), and a literal span with a counter. The
 * first marker is the first statement of main. Every span's four clock
 * readings (before/after its enter and exit markers, CLOCK_MONOTONIC) are
 * written to OUT, one line per span in pre-order:
 *   tid depth t_before_enter t_after_enter t_before_exit t_after_exit name<TAB>meta
 * `workload --forever` instead emits spans until killed (a process of the same
 * binary that must not be recorded), printing "ready" once it has begun.
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
	char name[64], meta[64];
};

struct thread {
	pthread_t th;
	int index, rounds;
	pid_t tid;
	struct span *spans;
	int n, depth;
};

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Brackets a marker with clock readings, in the order the markers run. */
#define ENTER(t, nm, mt, call)                                                                   \
	int idx_##__LINE__ = (t)->n++;                                                           \
	struct span *sp = &(t)->spans[idx_##__LINE__];                                           \
	sp->depth = (t)->depth++;                                                                \
	snprintf(sp->name, sizeof(sp->name), "%s", nm);                                          \
	snprintf(sp->meta, sizeof(sp->meta), "%s", or_empty(mt));              \
	sp->clk[0] = now_ns();                                                                     \
	call;                                                                                    \
	sp->clk[1] = now_ns()

#define EXIT(t, call)                                                                            \
	do {                                                                                     \
		sp->clk[2] = now_ns();                                                             \
		call;                                                                            \
		sp->clk[3] = now_ns();                                                             \
		(t)->depth--;                                                                    \
	} while (0)

static void recurse(struct thread *t, int level)
{
	char meta[32];

	snprintf(meta, sizeof(meta), "level=%d", level);
	ENTER(t, "recurse", meta, LP_SPAN_ENTER("recurse", meta));
	spin_us(5);
	if (level > 1)
		recurse(t, level - 1);
	EXIT(t, LP_SPAN_EXIT("recurse"));
}

static void *run(void *arg)
{
	struct thread *t = arg;
	char name[64], meta[64];
	uint64_t work = 0;

	t->tid = gettid();
	{
		snprintf(meta, sizeof(meta), "thread=%d", t->index);
		ENTER(t, "thread.root", meta, LP_SPAN_ENTER("thread.root", meta));
		for (int r = 0; r < t->rounds; r++) {
			recurse(t, 1 + r % 4);
			/* The same two buffers, new text each round. */
			snprintf(name, sizeof(name), "item-%d-%d", t->index, r % 150);
			snprintf(meta, sizeof(meta), "round=%d, parity=%s", r, r % 2 ? "odd" : "even");
			{
				ENTER(t, name, meta, LP_SPAN_ENTER(name, meta));
				spin_us(3);
				{
					ENTER(t, "leaf", "kind=literal",
					      LP_SPAN_ENTER_COUNTER("leaf", "kind=literal", work));
					work += 7;
					EXIT(t, LP_SPAN_EXIT_COUNTER("leaf", work));
				}
				/* The buffer changes before the exit: the entry's text must stay. */
				snprintf(name, sizeof(name), "clobbered");
				EXIT(t, LP_SPAN_EXIT(sp->name));
			}
		}
		EXIT(t, LP_SPAN_EXIT("thread.root"));
	}
	return NULL;
}

/* A bystander: the same binary, never recorded, emitting spans until killed. */
static int forever(void)
{
	for (unsigned long i = 0;; i++) {
		LP_SPAN_ENTER("bystander", "recorded=never");
		LP_SPAN_EXIT("bystander");
		if (i == 0) {
			puts("ready");
			fflush(stdout);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct thread main_t = { .index = -1, .rounds = 0 };

	if (argc == 2 && !strcmp(argv[1], "--forever"))
		return forever();
	struct thread *ts;
	int nthreads, rounds;
	FILE *out;

	main_t.spans = calloc(1, sizeof(struct span));
	{
		ENTER(&main_t, "main", NULL, LP_SPAN_ENTER("main", NULL));
		if (argc != 4) {
			fprintf(stderr, "usage: %s OUT THREADS ROUNDS\n", argv[0]);
			return 2;
		}
		nthreads = atoi(argv[2]);
		rounds = atoi(argv[3]);
		ts = calloc((size_t)nthreads, sizeof(*ts));
		for (int i = 0; i < nthreads; i++) {
			ts[i].index = i;
			ts[i].rounds = rounds;
			/* root + per round: recursion (<= 4) + item + leaf */
			ts[i].spans = calloc((size_t)rounds * 6 + 1, sizeof(struct span));
			pthread_create(&ts[i].th, NULL, run, &ts[i]);
		}
		for (int i = 0; i < nthreads; i++)
			pthread_join(ts[i].th, NULL);
		EXIT(&main_t, LP_SPAN_EXIT("main"));
	}
	main_t.tid = gettid();
	out = fopen(argv[1], "w");
	if (!out)
		return 2;
	for (int i = -1; i < nthreads; i++) {
		struct thread *t = i < 0 ? &main_t : &ts[i];

		for (int k = 0; k < t->n; k++) {
			struct span *s = &t->spans[k];

			fprintf(out, "%d %d %llu %llu %llu %llu %s\t%s\n", (int)t->tid, s->depth,
				(unsigned long long)s->clk[0], (unsigned long long)s->clk[1],
				(unsigned long long)s->clk[2], (unsigned long long)s->clk[3], s->name,
				s->meta);
		}
	}
	return fclose(out) ? 2 : 0;
}
