// SPDX-License-Identifier: MIT
/*
 * distinct N [meta|names [METALEN]]: N spans one after the other, each a group
 * of its own (a name and metadata text no other span has), built at run time
 * in buffers the program reuses:
 *   meta   (default) the literal name "distinct.query"
 *   names  the name "distinct.K"
 * for K = 0 .. N-1, with the metadata "i=K", padded to METALEN bytes with
 * ", pad=xxx..." when METALEN is given (names: 500 unless given). Prints
 * "emitted N spans, done at S.NNNNNNNNN", the CLOCK_REALTIME time after its
 * last span (make bench times the profiler's exit from it). The load of a
 * recording whose groups outnumber the cap (--max-groups): a query log with
 * the SQL as metadata, or a target that names every span differently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leanprofiler.h"

#define META_BUF 4096

/* "i=K", then ", pad=xx..." up to len bytes (none for 0). */
static void fill_meta(char *meta, long k, long len)
{
	int n = snprintf(meta, META_BUF, len ? "i=%ld, pad=" : "i=%ld", k);

	if (n < len) {
		memset(meta + n, 'x', (size_t)(len - n));
		meta[len] = '\0';
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int names = argc > 2 && !strcmp(argv[2], "names");
	long metalen = argc > 3 ? atol(argv[3]) : names ? 500 : 0;
	/* On the stack: no constant address, so the markers copy them as runtime strings. */
	char name[64], meta[META_BUF];
	struct timespec done;

	if (n < 0 || metalen < 0 || metalen >= META_BUF)
		return 2;
	for (long k = 0; k < n; k++) {
		fill_meta(meta, k, metalen);
		if (names) {
			snprintf(name, sizeof(name), "distinct.%ld", k);
			LP_SPAN_ENTER(name, meta);
			LP_SPAN_EXIT(name);
		} else {
			LP_SPAN_ENTER("distinct.query", meta);
			LP_SPAN_EXIT("distinct.query");
		}
	}
	clock_gettime(CLOCK_REALTIME, &done);
	printf("emitted %ld spans, done at %lld.%09ld\n", n, (long long)done.tv_sec, done.tv_nsec);
	return 0;
}
