// SPDX-License-Identifier: MIT
/*
 * twolibs FIRST SECOND LOG: dlopen()s FIRST (a library the profiler should
 * refuse, see libmanyprobes.c), then SECOND (libfama.so) and runs its two
 * logged spans (famlog.h), for tests/integration/test_security.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "leanprofiler.h"
#include "famlog.h"

int main(int argc, char **argv)
{
	void (*work)(int, int);
	void *first, *second;

	if (argc != 4)
		return 2;
	fam_log_open(argv[3]);
	FAM_SPAN(fam_log_fd, "twolibs.main", NULL, {
		first = dlopen(argv[1], RTLD_NOW);
		second = dlopen(argv[2], RTLD_NOW);
		if (!first || !second)
			return 3;
		work = (void (*)(int, int))dlsym(second, "fam_lib_work");
		if (!work)
			return 4;
		work(fam_log_fd, 2);
	});
	return 0;
}
