// SPDX-License-Identifier: MIT
/*
 * A command that does not stop on SIGTERM: it prints "ready pid=N" once it has
 * emitted a span, "term" for each SIGTERM it gets, and emits spans until killed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"

static volatile sig_atomic_t terms;

static void on_term(int sig)
{
	(void)sig;
	terms++;
}

int main(void)
{
	struct sigaction sa;
	int told = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	for (unsigned long i = 0;; i++) {
		struct timespec nap = { 0, 1000000 };

		LP_SPAN_ENTER("stubborn.tick", NULL);
		nanosleep(&nap, NULL);
		LP_SPAN_EXIT("stubborn.tick");
		if (i == 0) {
			printf("ready pid=%d\n", (int)getpid());
			fflush(stdout);
		}
		while (told < terms) {
			puts("term");
			fflush(stdout);
			told++;
		}
	}
}
