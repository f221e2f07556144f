// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: report's reader of the Perfetto trace (user/read/pftrace_read.c) on
 * hostile files. The input is the file: top-level packets (plain, or compressed ones the
 * seeds hold), which the fuzzer changes field by field.
 *
 * Invariants (abort() when broken): the reader returns 0 or says why with one of the
 * errors it documents (-EBADMSG, -EFBIG; -EIO from its own spool); every span it hands
 * out has a name and a metadata blob that lie in what it handed (the blob walks to its
 * end with lp_tr_meta_next), a thread name likewise; no more spans than packets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "pftrace_read.h"

struct seen {
	uint64_t spans;
};

static int on_span(void *ctx, const struct lp_tr_span *s)
{
	struct seen *n = ctx;
	const char *k, *v;
	size_t kl, vl, pos = 0;
	volatile char sink = 0;

	n->spans++;
	FUZZ_CHECK(s->name || !s->name_len, "a span's name is NULL with %zu bytes", s->name_len);
	for (size_t i = 0; i < s->name_len; i++)
		sink ^= s->name[i]; /* ASan: every byte there */
	while (lp_tr_meta_next(s->meta, s->meta_len, &pos, &k, &kl, &v, &vl))
		sink ^= (char)(k[0 < kl ? kl - 1 : 0] ^ v[0 < vl ? vl - 1 : 0]);
	FUZZ_CHECK(pos == s->meta_len, "the metadata blob ends at %zu of %zu", pos, s->meta_len);
	(void)sink;
	return 0;
}

static int on_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
		   size_t len)
{
	volatile char sink = 0;

	for (size_t i = 0; i < len; i++)
		sink ^= name[i];
	(void)sink;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct seen n = { 0 };
	struct lp_tr_sink sink = { .span = on_span, .thread_name = on_name, .ctx = &n };
	struct lp_tr_stats st;
	int err;

	if (fd < 0) {
		/* One file for every input: the reader registers what it reads (outfile.h). */
		fd = memfd_create("pftrace", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FUZZ_CHECK(!ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size,
		   "writing the input: %s", strerror(errno));
	err = lp_pftrace_read(path, &sink, &st);
	FUZZ_CHECK(!err || err == -EBADMSG || err == -EFBIG || err == -EIO, "unexpected error %d",
		   err);
	FUZZ_CHECK(n.spans <= st.lines, "%llu spans from %llu packets",
		   (unsigned long long)n.spans, (unsigned long long)st.lines);
	return 0;
}
