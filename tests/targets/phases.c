// SPDX-License-Identifier: MIT
/*
 * phases ROUNDS LOAD COMPUTE [extra]: one root span holding ROUNDS rounds,
 * each a span holding a load phase (50 ms x LOAD) and a compute phase
 * (100 ms x COMPUTE). LOAD and COMPUTE are speeds: 1 is the usual, 3 three
 * times slower, 1.05 five percent slower. "extra" adds a third phase
 * (phase.extra, 10 ms) to each round: a row that only that recording has.
 * The phases sleep, and long enough that a host busy with other jobs, which
 * wakes a sleeper a few ms late, moves them by a few percent only.
 * Prints nothing (the tests compare the profiler's stdout).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leanprofiler.h"

static void sleep_ms(double ms)
{
	long ns = (long)(ms * 1e6);
	struct timespec d = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&d, &d))
		;
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? atoi(argv[1]) : 0;
	double load = argc > 3 ? atof(argv[2]) : 0, compute = argc > 3 ? atof(argv[3]) : 0;
	int extra = argc > 4 && !strcmp(argv[4], "extra");

	if (rounds < 1 || !(load > 0) || !(compute > 0))
		return 2;
	LP_SPAN_ENTER("phases.run", NULL);
	for (int r = 0; r < rounds; r++) {
		LP_SPAN_ENTER("phases.round", NULL);
		LP_SPAN_ENTER("phase.load", "kind=io");
		sleep_ms(50 * load);
		LP_SPAN_EXIT("phase.load");
		LP_SPAN_ENTER("phase.compute", "kind=cpu");
		sleep_ms(100 * compute);
		LP_SPAN_EXIT("phase.compute");
		if (extra) {
			LP_SPAN_ENTER("phase.extra", NULL);
			sleep_ms(10);
			LP_SPAN_EXIT("phase.extra");
		}
		LP_SPAN_EXIT("phases.round");
	}
	LP_SPAN_EXIT("phases.run");
	return 0;
}
