/*
 * Every leanprofiler marker in one program; compiled as C and as C++ by run.sh.
 *
 * Usage: markers [ITERATIONS]   (default 1000)
 *
 * Each iteration runs ENTERS_PER_ITER span_enter markers and as many span_exit
 * markers: literal names and meta, runtime names in reused buffers (one on the
 * stack, one static), NULL meta, counters, and two nested LP_SPAN_SCOPEs.
 * Arguments with side effects count how often they are evaluated, so run.sh
 * can check they run never when no profiler is attached and exactly once per
 * marker when one is. Output, one "key=value" per line:
 *   active_start, active_end   LP_ACTIVE() before and after the loop
 *   name_calls, meta_calls, counter_calls   side-effect evaluations
 *   expected_enters            ITERATIONS * ENTERS_PER_ITER
 *   work                       the counter value after the loop (== ITERATIONS)
 */
#include <leanprofiler.h>

#include <stdio.h>
#include <stdlib.h>

#define ENTERS_PER_ITER 5u

static unsigned long name_calls, meta_calls, counter_calls;

/* A static buffer has a constant address: it must still not count as a literal. */
static char scope_name[32];

/* Identity functions that record that a marker argument was evaluated. */
static const char *counted_name(const char *name)
{
	name_calls++;
	return name;
}

static const char *counted_meta(const char *meta)
{
	meta_calls++;
	return meta;
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000ul;
	char name[32]; /* one buffer, rewritten for every span: a runtime name */
	uint64_t work = 0;
	unsigned long i;
	int active_start = LP_ACTIVE() != 0;

	for (i = 0; i < iterations; i++) {
		snprintf(name, sizeof name, "step.%lu", i % 4);
		snprintf(scope_name, sizeof scope_name, "scope.%lu", i % 4);

		LP_SPAN_ENTER("loop", "phase=loop, kind=literal");   /* literal name+meta */
		LP_SPAN_ENTER(name, NULL);                            /* runtime name, NULL meta */
		LP_SPAN_ENTER_COUNTER(counted_name(name), counted_meta("k=v"),
				      (counter_calls++, work));
		{
			LP_SPAN_SCOPE("outer", "scope=outer");
			{
				/* nested scope; runtime name, meta only evaluated if attached */
				LP_SPAN_SCOPE(scope_name, counted_meta(NULL));
				work++;
			}
		}
		LP_SPAN_EXIT_COUNTER(counted_name(name), (counter_calls++, work));
		LP_SPAN_EXIT(name);
		LP_SPAN_EXIT("loop");
	}

	printf("active_start=%d\n", active_start);
	printf("active_end=%d\n", LP_ACTIVE() != 0);
	printf("name_calls=%lu\n", name_calls);
	printf("meta_calls=%lu\n", meta_calls);
	printf("counter_calls=%lu\n", counter_calls);
	printf("expected_enters=%lu\n", iterations * ENTERS_PER_ITER);
	printf("work=%lu\n", (unsigned long)work);
	return 0;
}
