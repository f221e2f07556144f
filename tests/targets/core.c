// SPDX-License-Identifier: MIT
/*
 * core: loads that users run, for tests/integration/test_core.c.
 * Usage: core MODE ARGS... ; every mode prints what it did on stdout.
 *
 *   threads N K    N threads at once, each K "core.work" spans; "threads=N spans=N*K"
 *   reuse K        K times: a thread runs one "core.reuse" span and exits, then the next
 *                  thread is given the same thread id (through
 *                  /proc/sys/kernel/ns_last_pid, root only; retried while other
 *                  processes take the id first): "reused=R threads=T" (R of the T
 *                  threads had an id an earlier thread had)
 *   daemon MS      forks a child that runs 1 ms "daemon.tick" spans until its parent
 *                  has exited and then MS ms more, then exits; the parent runs 50 ms
 *                  and exits. The child appends "child pid=P exit_ns=T" to stderr
 *                  (CLOCK_MONOTONIC just before its exit); the parent prints
 *                  "child pid=P".
 *   spin N         N threads that run 200 us "core.spin" spans until killed; the main
 *                  thread prints "pid=P tids=T1,T2,..." once every thread has begun
 *   exit-after MS  like spin 2, but the process exits MS ms after a profiler attached
 *                  (LP_ACTIVE()): "pid=P tids=..." first, and it grows its memory by
 *                  16 MiB before the exit
 *   busy R N       R children one after the other: in each, N threads run 50 rounds of
 *                  spans "busy.0" .. "busy.23" (metadata "k=0" .. "k=23", literals in
 *                  a page the child has not touched, never read by the program itself)
 *                  while the main thread maps and unmaps memory (each call takes the
 *                  address space's lock); then the main thread runs one round.
 *                  "children=R"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"
#include "target.h"

static long spans_each;
static atomic_int started;
static atomic_int stop;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < spans_each; i++) {
		LP_SPAN_ENTER("core.work", NULL);
		LP_SPAN_EXIT("core.work");
	}
	return NULL;
}

static int threads(int n, long k)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));

	spans_each = k;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads=%d spans=%ld\n", n, n * k);
	free(t);
	return 0;
}

static void *one_span(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	LP_SPAN_ENTER("core.reuse", NULL);
	LP_SPAN_EXIT("core.reuse");
	return NULL;
}

static pid_t run_thread(void)
{
	pthread_t t;
	pid_t tid = 0;

	if (pthread_create(&t, NULL, one_span, &tid))
		exit(1);
	pthread_join(t, NULL);
	return tid;
}

/* The next id the kernel hands out is last + 1 (unless another process takes it first). */
static int set_last_pid(pid_t last)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", (int)last);
	n = write(fd, buf, (size_t)n) == n ? 0 : -1;
	close(fd);
	return n;
}

static int reuse(int k)
{
	int reused = 0, total = 0;

	for (int i = 0; i < k; i++) {
		pid_t tid = run_thread();

		total++;
		/* A thread id is free again once its thread is joined (and reaped). */
		for (int tries = 0; tries < 20; tries++) {
			if (set_last_pid(tid - 1))
				break;
			total++;
			if (run_thread() == tid) {
				reused++;
				break;
			}
		}
	}
	printf("reused=%d threads=%d\n", reused, total);
	return 0;
}

static int daemon_mode(int ms)
{
	pid_t parent = getpid(), child = fork();

	if (child < 0)
		return 1;
	if (child == 0) {
		uint64_t after = 0;

		for (;;) {
			struct timespec nap = { 0, 1000000 };

			LP_SPAN_ENTER("daemon.tick", NULL);
			nanosleep(&nap, NULL);
			LP_SPAN_EXIT("daemon.tick");
			if (!after && getppid() != parent)
				after = now_ns() + (uint64_t)ms * 1000000ull;
			if (after && now_ns() >= after)
				break;
		}
		LP_SPAN_ENTER("daemon.tick", NULL); /* open when the child exits */
		fprintf(stderr, "child pid=%d exit_ns=%llu\n", (int)getpid(),
			(unsigned long long)now_ns());
		_exit(0);
	}
	printf("child pid=%d\n", (int)child);
	fflush(stdout);
	spin_ns(50000000ull);
	return 0;
}

static void *spinner(void *arg)
{
	bool told = false;

	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	while (!stop) {
		LP_SPAN_ENTER("core.spin", NULL);
		spin_ns(200000);
		LP_SPAN_EXIT("core.spin");
		if (!told) {
			told = true;
			atomic_fetch_add(&started, 1);
		}
	}
	return NULL;
}

static int spin(int n, int exit_after_ms)
{
	pthread_t t[64];
	pid_t tids[64] = { 0 };

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, spinner, &tids[i]);
	while (atomic_load(&started) < n)
		spin_ns(100000);
	printf("pid=%d tids=", (int)getpid());
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", (int)tids[i]);
	printf("\n");
	fflush(stdout);
	if (exit_after_ms < 0)
		for (;;)
			pause();
	/* MS counts from the moment a profiler attached (LP_ACTIVE()), however long that took. */
	while (!LP_ACTIVE())
		spin_ns(1000000);
	spin_ns((uint64_t)exit_after_ms * 1000000ull);
	{
		/* Touched memory: the peak RSS a sample before the exit must show. */
		size_t sz = 16u << 20;
		char *p = malloc(sz);

		memset(p, 1, sz);
		__asm__ volatile("" : : "r"(p) : "memory");
	}
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

#define BUSY_SPAN(n)                                  \
	do {                                          \
		LP_SPAN_ENTER("busy." #n, "k=" #n);   \
		LP_SPAN_EXIT("busy." #n);             \
	} while (0)

static void busy_spans(void)
{
	BUSY_SPAN(0); BUSY_SPAN(1); BUSY_SPAN(2); BUSY_SPAN(3); BUSY_SPAN(4); BUSY_SPAN(5);
	BUSY_SPAN(6); BUSY_SPAN(7); BUSY_SPAN(8); BUSY_SPAN(9); BUSY_SPAN(10); BUSY_SPAN(11);
	BUSY_SPAN(12); BUSY_SPAN(13); BUSY_SPAN(14); BUSY_SPAN(15); BUSY_SPAN(16); BUSY_SPAN(17);
	BUSY_SPAN(18); BUSY_SPAN(19); BUSY_SPAN(20); BUSY_SPAN(21); BUSY_SPAN(22); BUSY_SPAN(23);
}

static atomic_int busy_done;

static void *busy_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		busy_spans();
	atomic_fetch_add(&busy_done, 1);
	return NULL;
}

/* A forked child: its threads meet their texts while the address space changes. */
static int busy_child(int n)
{
	pthread_t t[16];

	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, busy_thread, NULL))
			return 1;
	/* Each mmap() and munmap() takes the address space's lock for writing. */
	while (atomic_load(&busy_done) < n) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);

		if (p == MAP_FAILED || munmap(p, 4096))
			return 1;
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	busy_spans(); /* the main thread's round */
	return 0;
}

static int busy(int rounds, int n)
{
	for (int r = 0; r < rounds; r++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(busy_child(n));
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	printf("children=%d\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "reuse"))
		return reuse(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "daemon"))
		return daemon_mode(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "spin"))
		return spin(atoi(argv[2]), -1);
	if (argc >= 3 && !strcmp(argv[1], "exit-after"))
		return spin(2, atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "busy"))
		return busy(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr,
		"usage: core threads N K | reuse K | daemon MS | spin N | exit-after MS | busy R N\n");
	return 2;
}
