// SPDX-License-Identifier: MIT
/*
 * famexec LOG K: the second marked program of tests/integration/test_follow.c,
 * exec'ed by family. Its first instruction of its own is a marker: K spans
 * "exec.work [who=exec]" around "exec.leaf [i=N]", then it exits.
 */
#define _GNU_SOURCE
#include "leanprofiler.h"
#include "famlog.h"

int main(int argc, char **argv)
{
	char meta[32];
	int k;

	if (argc != 3)
		return 2;
	k = atoi(argv[2]);
	LP_SPAN_ENTER("exec.first", NULL); /* before anything touches .rodata */
	fam_log_open(argv[1]);
	fam_log(fam_log_fd, 'E', "exec.first", NULL);
	LP_SPAN_EXIT("exec.first");
	fam_log(fam_log_fd, 'X', "exec.first", NULL);
	for (int i = 0; i < k; i++) {
		FAM_SPAN(fam_log_fd, "exec.work", "who=exec", {
			snprintf(meta, sizeof(meta), "i=%d", i);
			FAM_SPAN(fam_log_fd, "exec.leaf", meta, {});
		});
	}
	return 0;
}
