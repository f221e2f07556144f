// SPDX-License-Identifier: MIT
/*
 * The Rust crate (bindings/rust): its programs recorded by the real profiler
 * with real BPF, as a Rust user would. `make rust` (make check runs it when
 * cargo is found) builds the crate's examples into BUILD/rust:
 * - spans: threads, a recursion of guards, runtime names and metadata that
 *   change after the enter, counters, spans a panic unwinds, hostile runtime
 *   names. It logs every span it made (tid, depth, clock readings around
 *   each marker, counter, the bytes it passed); each recorded span must be
 *   one of them, launched and attached with -p.
 * - markers: every marker form, mirroring tests/header/markers.c; a probe
 *   reader (bpftrace) must see the names, flags and counters C's markers pass.
 * Needs root (BPF): skipped otherwise. Fails, saying so, when the programs
 * were not built (no cargo).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/wire.h" /* LP_NAME_MAX, LP_META_MAX, the marker flags */

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-rust-XXXXXX";
#define RECORDING_MS 20000

#include "itest.h"
#include "itest_record.h"
#include "tests/unit/unit.h" /* ut_utf8_invalid_at() */

#define ELLIPSIS "\xe2\x80\xa6"
#define FFFD "\xef\xbf\xbd"

/* A program of the crate, which must have been built. */
static const char *rust_program(const char *dir, const char *name)
{
	const char *p = fmt("%s/%s/release/examples/%s", build, dir, name);

	if (access(p, X_OK))
		fail_msg("%s is missing: `make rust` builds it, with cargo (not found when make check "
			 "ran? install Rust with rustup, or pass CARGO=/path/to/cargo)",
			 p);
	return p;
}

/* The bytes of hex ("-": none). */
static char *unhex(const char *hex, size_t *len)
{
	size_t n = strcmp(hex, "-") ? strlen(hex) / 2 : 0;
	char *b = calloc(n + 1, 1);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&b[i]), 1);
	*len = n;
	return b;
}

/*
 * What the trace shows for bytes a marker passed (docs/formats.md, limits.md):
 * up to the first NUL (a C string), cut to max bytes with "…" after, each
 * invalid UTF-8 byte as U+FFFD.
 */
static char *shown(const char *b, size_t len, size_t max)
{
	size_t n = strnlen(b, len), k;
	bool cut = n > max;
	char *out = fmt("");

	if (cut)
		n = max;
	while (n > 0 && (k = ut_utf8_invalid_at(b, n)) != (size_t)-1) {
		out = fmt("%s%.*s" FFFD, out, (int)k, b);
		b += k + 1;
		n -= k + 1;
	}
	return fmt("%s%.*s%s", out, (int)n, b, cut ? ELLIPSIS : "");
}

/* The program's log, each thread's spans together (the file has them in pre-order). */
static size_t read_log(const char *path, struct itest_span **out)
{
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 256;
	struct itest_span *s = calloc(cap, sizeof(*s));
	char line[4096], c[32], nh[1024], mh[1024];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct itest_span *sp;
		size_t nl, ml;
		char *nb, *mb;

		if (n == cap)
			s = realloc(s, (cap *= 2) * sizeof(*s));
		sp = &s[n++];
		if (sscanf(line, "%d %d %lu %lu %lu %lu %31s %1023s %1023s", &sp->tid, &sp->depth,
			   &sp->t[0], &sp->t[1], &sp->t[2], &sp->t[3], c, nh, mh) != 9)
			fail_msg("%s: a line not of the program's format: %s", path, line);
		sp->counter = strcmp(c, "-") ? atoll(c) : -1;
		nb = unhex(nh, &nl);
		mb = unhex(mh, &ml);
		sp->name = shown(nb, nl, LP_NAME_MAX);
		sp->meta = shown(mb, ml, LP_META_MAX);
		free(nb);
		free(mb);
	}
	fclose(f);
	spans_by_tid(s, n);
	*out = s;
	return n;
}

/* The trace's spans, all of process pid (0: of its one process). */
static size_t read_trace(const char *path, int pid, struct itest_span **out)
{
	size_t n = read_trace_spans(path, out);

	for (size_t i = 0; i < n; i++) {
		if (!pid)
			pid = (*out)[i].pid; /* launched: its only process */
		assert_int_equal((*out)[i].pid, pid);
	}
	return n;
}

/*
 * Every span the program logged is recorded, and nothing else: the same
 * thread, depth, name, metadata and counter, its start and end within the
 * clock readings around its enter and exit markers. The summary agrees.
 */
static void compare(const char *dir, const char *log, int pid, int threads)
{
	struct itest_span *want, *got;
	size_t nwant = read_log(log, &want);
	size_t ngot = read_trace(fmt("%s/leanprofiler-trace.json", dir), pid, &got);
	json_object *sum = summary_of(dir);
	long long counters = 0;
	int tids = 0;

	if (ngot != nwant)
		fail_msg("%zu spans recorded, the program made %zu", ngot, nwant);
	for (size_t i = 0; i < nwant; i++) {
		struct itest_span *g = &got[i], *w = &want[i];

		if (g->tid != w->tid || g->depth != w->depth || strcmp(g->name, w->name) ||
		    strcmp(g->meta, w->meta) || g->counter != w->counter)
			fail_msg("span %zu: recorded tid %d depth %d \"%s\" [%s] counter %lld; the "
				 "program made tid %d depth %d \"%s\" [%s] counter %lld",
				 i, g->tid, g->depth, g->name, g->meta, g->counter, w->tid, w->depth,
				 w->name, w->meta, w->counter);
		if (g->start < w->t[0] || g->start > w->t[1] || g->end < w->t[2] || g->end > w->t[3])
			fail_msg("span %zu %s: recorded [%lu, %lu], the program's enter was in "
				 "[%lu, %lu], its exit in [%lu, %lu]",
				 i, w->name, g->start, g->end, w->t[0], w->t[1], w->t[2], w->t[3]);
		counters += w->counter > 0 ? w->counter : 0;
		tids += i == 0 || w->tid != want[i - 1].tid;
	}
	assert_int_equal(tids, threads + 1);
	assert_int_equal(get_i(sum, "events"), (int64_t)nwant);
	assert_int_equal(get_i(sum, "threads"), threads + 1);
	assert_int_equal(get_i(sum, "counter_total"), counters);
	assert_int_equal(get_i(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	assert_int_equal(get_i(get(sum, "input"), "unknown_literals"), 0);
	assert_int_equal(get_i(get(sum, "input"), "abi_mismatch_events"), 0);
	print_message("rust: %zu spans on %d threads match the program's log\n", nwant, tids);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", dir));
}

/* A hostile name as the table and the summary show it: its row, one call. */
static void expect_row(const char *dir, const char *name, const char *meta)
{
	json_object *sum = summary_of(dir), *rows = get(sum, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(get_s(r, "name"), name) && !strcmp(get_s(r, "meta_text"), meta)) {
			json_object_put(sum);
			return;
		}
	}
	fail_msg("no summary row \"%s\" [%s]", name, meta);
}

static void test_launched_span_by_span(void **state)
{
	const char *prog = rust_program("rust", "spans"), *log = fmt("%s/launched.log", tmpdir);
	const char *dir = fmt("%s/launched", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", (char *)dir, "--",
			 (char *)prog, (char *)log, "3", "150", NULL };
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record exited %d:\n%s", r.status, r.err);
	compare(dir, log, 0, 3);
	/* The summary's rows: the name with a NUL up to it, bytes not UTF-8 as U+FFFD. */
	expect_row(dir, "nul.before", "hostile=yes");
	expect_row(dir, "bad." FFFD FFFD ".bytes", "hostile=yes");
	run_free(&r);
}

static void test_attached_with_p(void **state)
{
	const char *prog = rust_program("rust", "spans"), *log = fmt("%s/attached.log", tmpdir);
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE }, err = { .mode = IO_INHERIT };
	char *argv[] = { (char *)prog, "--wait", (char *)log, "2", "100", NULL };
	struct lines *ready;
	char line[128];
	struct lp p;
	pid_t pid;

	(void)state;
	pid = spawn(argv, &in, &out, &err);
	ready = lines_new(out.fd);
	assert_int_equal(lines_read(ready, line, sizeof(line), 10000), 1);
	assert_string_equal(line, fmt("ready %d", (int)pid));
	lp_start(&p, "attached", (const char *[]){ "-p", fmt("%d", (int)pid), NULL });
	lp_wait_recording(&p);
	assert_int_equal(write(in.fd, "go\n", 3), 3);
	close(in.fd);
	assert_int_equal(wait_exit_within(pid, 60000), 0);
	lp_finish(&p, 60000);
	expect_status(&p, 0);
	compare(p.dir, log, (int)pid, 2);
}

/* The value of the line "KEY=value" (the program's) or "@KEY: value" (bpftrace's map). */
static long value(const char *text, const char *key)
{
	const char *forms[] = { fmt("%s=", key), fmt("@%s: ", key) };

	for (int f = 0; f < 2; f++)
		for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
			if (!strncmp(l, forms[f], strlen(forms[f])))
				return atol(l + strlen(forms[f]));
	fail_msg("no %s or %s in:\n%s", forms[0], forms[1], text);
	return -1;
}

/*
 * The flags each marker form passes, read by bpftrace from the probes as
 * tests/header/run.sh reads C's markers.c: what C passes for the same forms
 * (a literal is flagged literal, anything else not, even a runtime None).
 * bpftrace 0.17 places USDT probes of an LLD-linked binary (rustc's default)
 * at wrong offsets, so this reads the build linked by GNU ld (BUILD/rust/bfd).
 */
static void test_flags_as_c(void **state)
{
	const char *prog = rust_program("rust/bfd", "markers");
	enum { N = 1000 };
	const unsigned abi = LP_MARKER_ABI_VERSION << LP_MARKER_ABI_BITS_SHIFT,
		       lit = LP_EV_NAME_LITERAL | LP_EV_META_LITERAL, nul = LP_EV_META_LITERAL,
		       cnt = LP_EV_HAS_COUNTER;
	const char *want = fmt("@enter[loop, %u]: %d\n@enter[outer, %u]: %d\n"
			       "@enter[scope.*, %u]: %d\n@enter[step.*, %u]: %d\n@enter[step.*, %u]: %d\n"
			       "@exit[loop, %u]: %d\n@exit[outer, %u]: %d\n@exit[scope.*, %u]: %d\n"
			       "@exit[step.*, %u]: %d\n@exit[step.*, %u]: %d\n",
			       abi | lit, N, abi | lit, N, abi, N, abi | nul, N, abi | cnt, N,
			       abi | lit, N, abi | lit, N, abi | nul, N, abi | nul, N,
			       abi | nul | cnt, N);
	const char *script = fmt(
		"usdt:%s:leanprofiler:span_enter / (arg3 & 8) == 0 / { @enters = count(); "
		"@enter_counters = sum(arg2); @enter[str(arg0), arg3] = count(); }\n"
		"usdt:%s:leanprofiler:span_exit / (arg2 & 8) == 0 / { @exits = count(); "
		"@exit_counters = sum(arg1); @exit[str(arg0), arg2] = count(); }\n"
		"usdt:%s:leanprofiler:span_enter / arg3 & 8 / { @warm = count(); }\n",
		prog, prog, prog);
	char *argv[] = { "/usr/bin/timeout", "120", "bpftrace", "-c", fmt("%s %d", prog, N), "-e",
			 (char *)script, NULL };
	char *dormant[] = { (char *)prog, fmt("%d", N), NULL };
	char *got = fmt(""), *l;
	struct run r;

	(void)state;
	/* Not attached: no marker argument is evaluated. */
	assert_int_equal(run(&r, dormant), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(value(r.out, "active_start"), 0);
	assert_int_equal(value(r.out, "name_calls") + value(r.out, "meta_calls") +
				 value(r.out, "counter_calls"),
			 0);
	run_free(&r);

	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(value(r.out, "active_start"), 1);
	/* Attached, each argument with a side effect runs once per marker. */
	assert_int_equal(value(r.out, "name_calls"), 2 * N);
	assert_int_equal(value(r.out, "meta_calls"), 2 * N);
	assert_int_equal(value(r.out, "counter_calls"), 2 * N);
	assert_int_equal(value(r.out, "enters"), 5 * N);
	assert_int_equal(value(r.out, "exits"), 5 * N);
	assert_int_equal(value(r.out, "warm"), 1);
	assert_int_equal(value(r.out, "enter_counters"), (long)N * (N - 1) / 2);
	assert_int_equal(value(r.out, "exit_counters"), (long)N * (N + 1) / 2);
	/* The per-(name, flags) counts, the 4 names step.0-3 (scope.0-3) summed. */
	{
		char *keys[16];
		long counts[16];
		int nk = 0;

		for (l = r.out; (l = strstr(l, "\n@e")); l++) {
			char k[64], name[32];
			unsigned flags;
			long c;

			if (sscanf(l + 1, "@%5[a-z][%31[^,], %u]: %ld", k, name, &flags, &c) != 4)
				continue;
			if (!strncmp(name, "step.", 5) || !strncmp(name, "scope.", 6))
				strcpy(strchr(name, '.') + 1, "*");
			char *key = fmt("@%s[%s, %u]", k, name, flags);
			int i;

			for (i = 0; i < nk && strcmp(keys[i], key); i++)
				;
			if (i == nk) {
				assert_true(nk < 16);
				keys[nk] = key;
				counts[nk++] = 0;
			}
			counts[i] += c;
		}
		/* Sorted, as want is. */
		for (int i = 0; i < nk; i++)
			for (int j = i + 1; j < nk; j++)
				if (strcmp(keys[j], keys[i]) < 0) {
					char *t = keys[i];
					long c = counts[i];

					keys[i] = keys[j], counts[i] = counts[j];
					keys[j] = t, counts[j] = c;
				}
		for (int i = 0; i < nk; i++)
			got = fmt("%s%s: %ld\n", got, keys[i], counts[i]);
	}
	if (strcmp(got, want))
		fail_msg("bpftrace saw (name, flags): count\n%swanted\n%sbpftrace's output:\n%s%s", got,
			 want, r.out, r.err);
	run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_launched_span_by_span, stop_started),
		cmocka_unit_test_teardown(test_attached_with_p, stop_started),
		cmocka_unit_test_teardown(test_flags_as_c, stop_started),
	};
	int rc;

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_rust"))
		return 0;
	assert_non_null(mkdtemp(tmpdir));
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0)
		run((struct run[]){ { 0 } }, (char *[]){ "/bin/rm", "-rf", tmpdir, NULL });
	return rc;
}
