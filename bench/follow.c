// SPDX-License-Identifier: MIT
/*
 * follow dlopen N LIB | follow exec N PROGRAM: what following processes and
 * libraries costs a target, for make bench (row 8). dlopen: N times dlopen()
 * LIB, call its bench_lib_span() and dlclose() it (a LIB with "%d" names
 * another file each round: LIB with 0..N-1); exec: N times fork() and exec
 * PROGRAM, and wait for it. Prints the mean wall time of one round.
 * Run alone, then under `leanprofiler record`: while recording, a dlopen() or
 * an exec pauses the process until its new files are attached.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc == 4 ? atol(argv[2]) : 0;
	uint64_t t0;

	if (n <= 0 || (strcmp(argv[1], "dlopen") && strcmp(argv[1], "exec"))) {
		fprintf(stderr, "usage: follow dlopen|exec N LIB|PROGRAM\n");
		return 2;
	}
	LP_SPAN_ENTER("follow.run", NULL); /* markers of its own: a program to record */
	t0 = now();
	for (long i = 0; i < n; i++) {
		if (argv[1][0] == 'd') {
			char path[4096];
			void *h;

			if (strstr(argv[3], "%d"))
				snprintf(path, sizeof(path), argv[3], (int)i);
			else
				snprintf(path, sizeof(path), "%s", argv[3]);
			h = dlopen(path, RTLD_NOW);
			void (*fn)(void) = h ? (void (*)(void))dlsym(h, "bench_lib_span") : NULL;

			if (!fn) {
				fprintf(stderr, "follow: %s\n", dlerror());
				return 1;
			}
			fn();
			dlclose(h);
		} else {
			int st;
			pid_t pid = fork();

			if (pid == 0) {
				execl(argv[3], argv[3], (char *)NULL);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0) {
				fprintf(stderr, "follow: %s failed\n", argv[3]);
				return 1;
			}
		}
	}
	printf("follow: %s %ld, %.1f us each\n", argv[1], n, (double)(now() - t0) / 1e3 / (double)n);
	LP_SPAN_EXIT("follow.run");
	{
		struct timespec ts;

		/* The wall clock of its end: make bench times a recording's end from it. */
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("follow: done at %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
	}
	return 0;
}
