// SPDX-License-Identifier: MIT
/*
 * After fork() a child's markers must use the 1-byte nop sites (see the
 * header): prints the flag that selects them, in the parent before and after
 * fork(), in the child, and in a grandchild.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leanprofiler.h"

static int child_of_child(void)
{
	pid_t p = fork();
	int st = 0;

	if (p == 0) {
		printf("grandchild %d\n", lp__state);
		fflush(stdout);
		_exit(0);
	}
	waitpid(p, &st, 0);
	return st;
}

int main(void)
{
	pid_t p;
	int st = 0;

	printf("parent-before %d\n", lp__state);
	fflush(stdout);
	p = fork();
	if (p == 0) {
		printf("child %d\n", lp__state);
		fflush(stdout);
		_exit(child_of_child());
	}
	waitpid(p, &st, 0);
	printf("parent-after %d\n", lp__state);
	return st;
}
