// SPDX-License-Identifier: MIT
/*
 * manylibs: a process that loads many marked libraries at once, for
 * tests/integration/test_security.c.
 * Usage: manylibs LOG DIR N K [interval-ms]
 *   without an interval: dlopens DIR/m0.so ... DIR/m(N-1).so, then (every one
 *   mapped) runs K spans of each (libmany.c), logged to LOG (famlog.h), and
 *   prints "done". Libraries given in LD_PRELOAD are mapped before main: the
 *   same N then are there already (dlopen finds them).
 *   with an interval: waits for a line on stdin, then dlopens one every
 *   interval ms, running its K spans at once, and prints "loaded I" after
 *   each (a plugin host).
 * Exits 0; 2 when a library cannot be loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <time.h>

#include "famlog.h"

typedef void many_work_fn(int fd, int k);

static many_work_fn *load(const char *dir, int i)
{
	char path[PATH_MAX];
	void *h;
	many_work_fn *fn;

	snprintf(path, sizeof(path), "%s/m%d.so", dir, i);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	fn = h ? (many_work_fn *)dlsym(h, "many_work") : NULL;
	if (!fn) {
		fprintf(stderr, "manylibs: %s\n", dlerror());
		exit(2);
	}
	return fn;
}

int main(int argc, char **argv)
{
	int n, k, interval;
	many_work_fn **fns;

	if (argc < 5)
		return 1;
	fam_log_open(argv[1]);
	n = atoi(argv[3]);
	k = atoi(argv[4]);
	interval = argc > 5 ? atoi(argv[5]) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	fns = calloc((size_t)n, sizeof(*fns));
	if (!fns)
		return 1;
	if (interval && !fgets((char[16]){ 0 }, 16, stdin))
		return 1;
	for (int i = 0; i < n; i++) {
		fns[i] = load(argv[2], i);
		if (interval) {
			struct timespec d = { interval / 1000, (interval % 1000) * 1000000L };

			fns[i](fam_log_fd, k);
			printf("loaded %d\n", i);
			nanosleep(&d, NULL);
		}
	}
	if (!interval) {
		for (int i = 0; i < n; i++)
			fns[i](fam_log_fd, k);
		printf("done\n");
	}
	return 0;
}
