// SPDX-License-Identifier: MIT
/*
 * thief HELPER SECRETFILE ADDR: a profiled program that tries to read another
 * program's memory through the profiler (tests/integration/test_security.c).
 * It forks; the parent execs HELPER (a setuid-root program that loads a
 * root-only secret at ADDR, an address the thief itself does not map), and
 * once the helper says it is ready, the child names a span by ADDR: as a
 * literal (through the probe site directly, with the literal flag) and as a
 * runtime string. The profiler must read that text in the child, where
 * nothing is mapped: "(unreadable)", never the helper's secret.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leanprofiler.h"

int main(int argc, char **argv)
{
	const char *addr;
	char line[16];
	int ready[2];
	pid_t pid;

	if (argc != 4)
		return 2;
	addr = (const char *)(uintptr_t)strtoull(argv[3], NULL, 0);
	LP_SPAN_ENTER("thief.main", NULL);
	LP_SPAN_EXIT("thief.main");
	if (pipe(ready))
		return 3;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid > 0) {
		/* The parent becomes the setuid program; its fd 3 says "ready". */
		close(ready[0]);
		if (dup2(ready[1], 3) != 3)
			return 3;
		execl(argv[1], argv[1], argv[2], (char *)NULL);
		return 4;
	}
	close(ready[1]);
	if (read(ready[0], line, sizeof(line)) <= 0)
		_exit(5);
	/* The forked child's sites (lp__state is LP__FORKED here), with the literal flags. */
	if (LP_ACTIVE()) {
		lp__probe_enter_forked(addr, addr, 0,
				       (LP_MARKER_ABI << LP_MARKER_ABI_SHIFT) | LP_MARKER_NAME_LITERAL |
					       LP_MARKER_META_LITERAL);
		lp__probe_exit_forked(addr, 0,
				      (LP_MARKER_ABI << LP_MARKER_ABI_SHIFT) | LP_MARKER_NAME_LITERAL);
	}
	/* And as runtime strings, copied at the marker. */
	LP_SPAN_ENTER((const char *)(uintptr_t)strtoull(argv[3], NULL, 0), argv[3] + 100);
	LP_SPAN_EXIT((const char *)(uintptr_t)strtoull(argv[3], NULL, 0));
	_exit(0);
}
