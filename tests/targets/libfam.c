// SPDX-License-Identifier: MIT
/*
 * libfama.so and libfamb.so (FAM_LIB "a" or "b"): a marked library, for
 * tests/integration/test_follow.c. Both are built from this file, so their
 * literals have the same lengths and offsets: one loaded where the other was
 * unloaded holds other texts at the same addresses.
 */
#define _GNU_SOURCE
#include "leanprofiler.h"
#include "famlog.h"

#ifndef FAM_LIB
#define FAM_LIB "a"
#endif

/* k spans "liba.work [lib=a]" around "liba.leaf [i=N]" (runtime metadata). */
void fam_lib_work(int fd, int k)
{
	char meta[32];

	for (int i = 0; i < k; i++) {
		FAM_SPAN(fd, "lib" FAM_LIB ".work", "lib=" FAM_LIB, {
			snprintf(meta, sizeof(meta), "i=%d", i);
			FAM_SPAN(fd, "lib" FAM_LIB ".leaf", meta, {});
		});
	}
}

/* Whether a profiler has attached to this library's markers (its semaphore is raised). */
int fam_lib_active(void)
{
	return LP_ACTIVE();
}
