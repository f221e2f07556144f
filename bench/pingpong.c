// SPDX-License-Identifier: MIT
/*
 * pingpong N [same|two]: a load made of context switches, for make bench's
 * off-cpu rows (bench/offcpu.sh). Two processes bounce one byte through two
 * pipes N times (after N/100 untimed round trips to warm up) and the parent
 * prints the mean wall time of a round trip, the CPU time both processes spent
 * per round trip (all of it, user and kernel: what a CPU runs on their behalf
 * on a context switch is in it, less sensitive to other load than the wall
 * time), and the context switches both made per round trip. "same" (the default) pins both to one CPU, the last one the
 * process may run on: each round trip is then two switches from one to the
 * other, with the wakeup of each. "two" pins the parent there and the child to
 * the first one: each round trip is then two wakeups of the other CPU, each
 * CPU switching from its idle task to its process and back. (Left to the
 * scheduler, the two sometimes share a CPU and sometimes not, and the time of
 * a round trip jumps between the two cases from run to run.)
 *
 * Built without markers, it is the bystander: a program no recording looks at,
 * which pays only for what the kernel runs on every context switch of the host.
 * Built with -DMARKED (another file: probes are set per file), each of the
 * parent's round trips is a span, "pingpong.trip": a span that sleeps in the
 * middle. And `pingpong wait` (MARKED only) is an idle target to record: one
 * span, "pingpong.wait", around reading its stdin until end of file; inside
 * it, once its first marker has run, it prints "ready PID attached" (or "not
 * attached") on stdout, so that a script knows the recording is attached
 * without sleeping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef MARKED
#include "leanprofiler.h"
#define TRIP_ENTER() LP_SPAN_ENTER("pingpong.trip", "kind=pipe")
#define TRIP_EXIT() LP_SPAN_EXIT("pingpong.trip")
#else
#define TRIP_ENTER() ((void)0)
#define TRIP_EXIT() ((void)0)
#endif

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(int fd, char c)
{
	while (write(fd, &c, 1) != 1)
		if (errno != EINTR)
			die("write");
}

/* The byte read, -1 at end of file. */
static int get(int fd)
{
	unsigned char c;
	ssize_t r;

	while ((r = read(fd, &c, 1)) < 0)
		if (errno != EINTR)
			die("read");
	return r == 1 ? c : -1;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* What the child spent in the timed round trips, sent to the parent at the end. */
struct usage {
	uint64_t cpu_ns;
	long switches;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

#ifdef MARKED
static int wait_for_eof(void)
{
	char buf[256];
	ssize_t r;

	LP_SPAN_ENTER("pingpong.wait", "kind=idle");
	printf("ready %d %s\n", (int)getpid(), LP_ACTIVE() ? "attached" : "not attached");
	fflush(stdout);
	while ((r = read(0, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		;
	LP_SPAN_EXIT("pingpong.wait");
	printf("done\n");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	long n, warm, i;
	int same, ab[2], ba[2], first = -1, last = -1;
	cpu_set_t allowed;
	pid_t child;
	uint64_t t0, t1, c0, c1;
	long sw0, sw1;
	struct usage cu;
	ssize_t r;
	int status;

#ifdef MARKED
	if (argc == 2 && !strcmp(argv[1], "wait"))
		return wait_for_eof();
#endif
	n = argc > 1 ? atol(argv[1]) : 0;
	same = argc < 3 || !strcmp(argv[2], "same");
	if (n <= 0 || argc > 3 || (argc == 3 && !same && strcmp(argv[2], "two"))) {
		fprintf(stderr, "usage: pingpong N [same|two]%s\n",
#ifdef MARKED
			"\n       pingpong wait"
#else
			""
#endif
		);
		return 2;
	}
	warm = n / 100 + 1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed)) {
			if (first < 0)
				first = c;
			last = c;
		}
	if (!same && first == last) {
		fprintf(stderr, "pingpong: \"two\" needs two CPUs\n");
		return 2;
	}
	pin(last); /* the child inherits it */
	if (pipe(ab) || pipe(ba))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) { /* echo every byte back until end of file */
		struct usage u = { 0, 0 };
		int c;

		if (!same)
			pin(first);
		close(ab[1]);
		close(ba[0]);
		while ((c = get(ab[0])) >= 0) {
			if (c == 's') { /* the timed round trips start */
				u.cpu_ns = cpu_ns();
				u.switches = switches();
			}
			put(ba[1], 'b');
		}
		u.cpu_ns = cpu_ns() - u.cpu_ns;
		u.switches = switches() - u.switches;
		if (write(ba[1], &u, sizeof(u)) != (ssize_t)sizeof(u))
			die("write");
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	for (i = 0; i < warm; i++) {
		put(ab[1], 'a');
		if (get(ba[0]) < 0)
			die("the child ended");
	}
	put(ab[1], 's');
	if (get(ba[0]) < 0)
		die("the child ended");
	sw0 = switches();
	c0 = cpu_ns();
	t0 = now();
	for (i = 0; i < n; i++) {
		TRIP_ENTER();
		put(ab[1], 'a');
		if (get(ba[0]) < 0)
			die("the child ended");
		TRIP_EXIT();
	}
	t1 = now();
	c1 = cpu_ns();
	sw1 = switches();
	close(ab[1]); /* the child sees end of file and sends its usage */
	while ((r = read(ba[0], &cu, sizeof(cu))) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)sizeof(cu))
		die("the child's usage");
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	/* The child counts from its 's' round trip, one more than the parent's. */
	printf("pingpong: %ld round trips (%s), %.1f ns per round trip, %.1f ns of CPU per round trip, %.2f context switches per round trip\n",
	       n, same ? "one CPU" : "two CPUs", (double)(t1 - t0) / (double)n,
	       (double)(c1 - c0 + cu.cpu_ns) / (double)n,
	       (double)(sw1 - sw0 + cu.switches) / (double)n);
	return 0;
}
