// SPDX-License-Identifier: MIT
/*
 * second: a different program with markers, exec'ed by `svc` ("exec K").
 * Usage: second LOG K
 * Runs "second.main" around K steps "second.step [i=N]" (50 us of CPU, then
 * 500 us asleep, so the run lasts K * ~0.6 ms), then exits 0. Logs to LOG in
 * svc.c's format (N, E and X lines, appended with one write(2) per line).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"
#include "target.h"

static int logfd;
static int pid, tid, next_id, depth, stack[8];

static void log_mark(void *ctx, int is_exit, const char *name, const char *meta, uint64_t t0,
		     uint64_t t1, int a0, int a1)
{
	(void)ctx;
	if (!is_exit) {
		log_to(logfd, "E %d %d %d %d %d %llu %llu %d %d %s\t%s\n", pid, tid, next_id,
		       depth ? stack[depth - 1] : -1, depth, (unsigned long long)t0,
		       (unsigned long long)t1, a0, a1, name, meta ? meta : "");
		stack[depth++] = next_id++;
	} else {
		depth--;
		log_to(logfd, "X %d %d %d %llu %llu %d %d\n", pid, tid, stack[depth],
		       (unsigned long long)t0, (unsigned long long)t1, a0, a1);
	}
}

#define MARK(is_exit, name, meta, marker) TARGET_MARK(log_mark, NULL, is_exit, name, meta, marker)

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 500000 };
	char meta[32];
	int k;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LOG K\n", argv[0]);
		return 2;
	}
	logfd = open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (logfd < 0)
		return 2;
	k = atoi(argv[2]);
	pid = getpid();
	tid = gettid();
	log_to(logfd, "N %d %d second\n", pid, tid);
	MARK(0, "second.main", NULL, LP_SPAN_ENTER("second.main", NULL));
	for (int i = 0; i < k; i++) {
		snprintf(meta, sizeof(meta), "i=%d", i);
		MARK(0, "second.step", meta, LP_SPAN_ENTER("second.step", meta));
		spin_us(50);
		nanosleep(&nap, NULL);
		MARK(1, "second.step", NULL, LP_SPAN_EXIT("second.step"));
	}
	MARK(1, "second.main", NULL, LP_SPAN_EXIT("second.main"));
	return 0;
}
