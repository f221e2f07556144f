// SPDX-License-Identifier: MIT
/*
 * pausee: a target tests/integration/test_security.c pauses. It runs one
 * span, prints "ready pid=N", then for each line "open PATH" on stdin
 * dlopen()s PATH (a marked library new to the recording: the profiler pauses
 * it there) and prints "opened". Its SIGCONT handler (no SA_RESTART) counts
 * the continues; a second thread, blocked in read() of a pipe nobody writes
 * to, counts the EINTRs it gets (the handler runs there: the main thread
 * blocks SIGCONT). At EOF it prints "conts=N eintr=M" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "leanprofiler.h"

static volatile sig_atomic_t conts;
static int eintr, pipefd[2];

static void on_cont(int sig)
{
	(void)sig;
	conts++;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	for (;;) {
		ssize_t n = read(pipefd[0], &c, 1);

		if (n < 0 && errno == EINTR)
			eintr++;
		else
			return NULL; /* main's byte: the end */
	}
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_cont }; /* no SA_RESTART */
	char line[4096];
	sigset_t cont;
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipefd) || sigaction(SIGCONT, &sa, NULL) || pthread_create(&t, NULL, reader, NULL))
		return 2;
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &cont, NULL);
	LP_SPAN_ENTER("pausee.main", NULL);
	LP_SPAN_EXIT("pausee.main");
	printf("ready pid=%d\n", getpid());
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "open ", 5) != 0)
			return 3;
		if (!dlopen(line + 5, RTLD_NOW)) {
			fprintf(stderr, "pausee: %s\n", dlerror());
			return 4;
		}
		printf("opened\n");
	}
	if (write(pipefd[1], "x", 1) != 1 || pthread_join(t, NULL))
		return 5;
	printf("conts=%d eintr=%d\n", (int)conts, eintr);
	return 0;
}
