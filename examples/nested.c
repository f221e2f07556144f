// SPDX-License-Identifier: MIT
/*
 * The nested example: one root span with three rounds of an input load (~2 ms)
 * followed by a forward pass (~4 ms). A heartbeat counter stands for the work
 * a Lean program counts; every marker passes it.
 *
 *   sudo ./build/leanprofiler record -- ./build/examples/nested
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>

#include "leanprofiler.h"

static uint64_t heartbeats;

/* Stands for real work: time passes and heartbeats are spent. */
static void work(long ms, uint64_t beats)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
	heartbeats += beats;
}

int main(void)
{
	LP_SPAN_ENTER_COUNTER("example.nested-spans", NULL, heartbeats);
	heartbeats += 278; /* setup done in the root itself */
	for (int i = 0; i < 3; i++) {
		LP_SPAN_ENTER_COUNTER("input.load", "phase=input, activity=load", heartbeats);
		work(2, 2);
		LP_SPAN_EXIT_COUNTER("input.load", heartbeats);

		LP_SPAN_ENTER_COUNTER("model.forward", "phase=forward, module=encoder", heartbeats);
		work(4, 2);
		LP_SPAN_EXIT_COUNTER("model.forward", heartbeats);
	}
	LP_SPAN_EXIT_COUNTER("example.nested-spans", heartbeats);
	return 0;
}
