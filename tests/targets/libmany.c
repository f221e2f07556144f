// SPDX-License-Identifier: MIT
/*
 * libmany.so: a small marked library, copied hundreds of times (each copy its
 * own file) by tests/integration/test_security.c to load many at once. Its
 * span's metadata is the file it runs from (a runtime string), so every copy's
 * spans are told apart in the log (famlog.h) and in the recording.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "leanprofiler.h"
#include "famlog.h"

static const char base_of_copy = 0;

/* k spans "many.lib [file=BASENAME]" logged to fd. */
void many_work(int fd, int k)
{
	Dl_info info;
	const char *base = "?";
	char meta[128];

	/* This copy's own address: many_work itself resolves to the first copy loaded. */
	if (dladdr((void *)&base_of_copy, &info) && info.dli_fname) {
		base = strrchr(info.dli_fname, '/');
		base = base ? base + 1 : info.dli_fname;
	}
	snprintf(meta, sizeof(meta), "file=%s", base);
	for (int i = 0; i < k; i++)
		FAM_SPAN(fd, "many.lib", meta, {});
}
