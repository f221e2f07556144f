// SPDX-License-Identifier: MIT
/*
 * famlinked [-w] LOG K: an executable without markers of its own, linked with
 * the marked libfama.so (tests/integration/test_follow.c). With -w it prints
 * "ready pid=N" and waits for a line on stdin first. Then K library spans.
 */
#define _GNU_SOURCE
#include "famlog.h"

void fam_lib_work(int fd, int k);

int main(int argc, char **argv)
{
	int wait = argc > 1 && strcmp(argv[1], "-w") == 0;
	char line[64];

	if (argc != 3 + wait)
		return 2;
	fam_log_open(argv[1 + wait]);
	if (wait) {
		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	fam_lib_work(fam_log_fd, atoi(argv[2 + wait]));
	return 0;
}
