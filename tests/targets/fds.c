// SPDX-License-Identifier: MIT
/*
 * fds: prints every file descriptor it has and what it points to ("FD path"),
 * then emits one span. A launched command must inherit nothing of the
 * profiler's but stdin, stdout and stderr (tests/integration/test_security.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "leanprofiler.h"

int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[300], to[4096];
		ssize_t n;

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
		printf("%s %s\n", de->d_name, to);
	}
	if (d)
		closedir(d);
	fflush(stdout);
	LP_SPAN_ENTER("fds.span", NULL);
	LP_SPAN_EXIT("fds.span");
	return 0;
}
