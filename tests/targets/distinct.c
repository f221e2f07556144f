// SPDX-License-Identifier: MIT
/*
 * distinct N [meta|names [METALEN]]: N spans one after the other, each a group
 * of its own (a name and metadata text no other span has), built at run time
 * in buffers the program reuses:
 *   meta   (default) the literal name "distinct.query", metadata "i=K"
 *   names  the name "distinct.K", metadata METALEN bytes (default 500):
 *          "i=K, pad=" and then 'x' up to METALEN
 * for K = 0 .. N-1. Prints "emitted N spans, done at S.NNNNNNNNN", the
 * CLOCK_REALTIME time after its last span (make bench times the profiler's
 * exit from it). The load of a recording whose groups outnumber the cap
 * (--max-groups): a query log with the SQL as metadata, or a target that
 * names every span differently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leanprofiler.h"

#define META_BUF 4096

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int names = argc > 2 && !strcmp(argv[2], "names");
	long metalen = argc > 3 ? atol(argv[3]) : 500;
	/* On the stack: no constant address, so the markers copy them as runtime strings. */
	char name[64], meta[META_BUF];
	struct timespec done;

	if (n < 0 || metalen < 16 || metalen >= META_BUF)
		return 2;
	for (long k = 0; k < n; k++) {
		if (names) {
			int len = snprintf(meta, sizeof(meta), "i=%ld, pad=", k);

			memset(meta + len, 'x', (size_t)(metalen - len));
			meta[metalen] = '\0';
			snprintf(name, sizeof(name), "distinct.%ld", k);
			LP_SPAN_ENTER(name, meta);
			LP_SPAN_EXIT(name);
		} else {
			snprintf(meta, sizeof(meta), "i=%ld", k);
			LP_SPAN_ENTER("distinct.query", meta);
			LP_SPAN_EXIT("distinct.query");
		}
	}
	clock_gettime(CLOCK_REALTIME, &done);
	printf("emitted %ld spans, done at %lld.%09ld\n", n, (long long)done.tv_sec, done.tv_nsec);
	return 0;
}
