// SPDX-License-Identifier: MIT
/*
 * report --format perfetto (user/read/pftrace_convert.c): a recording's JSON
 * trace made into the Perfetto trace record writes for it. The writers are
 * driven here as the pipeline drives them, with the same calls into both
 * (trace.c and pftrace.c), and the file converted from the JSON one must be
 * the recorded one byte for byte; the pieces it rests on (the reader's
 * detail, split and waits; metadata texts rebuilt from args) are checked on
 * their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonw.h"
#include "meta.h"
#include "meta_text.h"
#include "pftrace.h"
#include "pftrace_convert.h"
#include "summary_read.h"
#include "strtab.h"
#include "trace.h"
#include "trace_read.h"
#include "unit.h"

static char dir[] = "/tmp/lp-test-pfconv-XXXXXX";

/* The args object the JSON trace writes for metadata text (reserved: trace.c's or none). */
static char *args_json(const char *text, size_t len, const char *const *reserved)
{
	struct lp_buf b = { 0 };
	struct jw w;

	jw_init_buf(&w, &b);
	jw_obj_begin(&w);
	lp_meta_write(&w, text, len, reserved);
	jw_obj_end(&w);
	assert_int_equal(jw_error(&w), 0);
	return b.p;
}

/* The meta blob the reader makes of a span whose args are args, into blob. */
static void read_args(const char *args, struct lp_buf *blob)
{
	struct lp_tr_scratch sc = { 0 };
	struct lp_tr_span s;
	char *line;

	assert_true(asprintf(&line, "{\"ph\":\"X\",\"name\":\"n\",\"cat\":\"span\",\"pid\":1,"
				    "\"tid\":1,\"ts\":1.000,\"dur\":1.000,\"args\":%s}", args) > 0);
	assert_int_equal(lp_tr_parse_event(line, strlen(line), &s, &sc), LP_TR_SPAN);
	blob->len = 0;
	assert_int_equal(lp_buf_put(blob, s.meta, s.meta_len), 0);
	lp_tr_scratch_free(&sc);
	free(line);
}

/*
 * Metadata a program sent, written into a span's args, read back by the
 * reader, made into text again: that text's args read back the same (as
 * text: invalid UTF-8 is U+FFFD in both, escaped in the first only).
 */
static void gives_back(const char *text, size_t len, const char *const *reserved)
{
	char *args = args_json(text, len, reserved), *again;
	struct lp_buf out = { 0 }, first = { 0 }, second = { 0 };

	read_args(args, &first);
	if (lp_meta_text(first.p, first.len, reserved, &out))
		fail_msg("no text for the args of \"%.*s\": %s", (int)len, text, args);
	again = args_json(out.p, out.len, reserved);
	read_args(again, &second);
	if (first.len != second.len || memcmp(first.p, second.p, first.len))
		fail_msg("\"%.*s\" wrote %s; its text again \"%s\" writes %s", (int)len, text,
			 args, out.p, again);
	free(again);
	lp_buf_free(&out);
	lp_buf_free(&first);
	lp_buf_free(&second);
	free(args);
}

static void test_meta_text_gives_back(void **state)
{
	static const char *const texts[] = {
		"",
		"a=1, b=2",
		" k = v w ,k=2,k=3, k#2=x",          /* repeats: k, k#2, k#3 and a k#2 of its own */
		"counter=5,detail=d,cpu_us=1,meta.counter=6", /* the profiler's keys: meta.* */
		"=v, novalue, ,,  x=a=b",             /* an empty key, no value, empty items */
		"tab\tin=key\tvalue",
		"u=\xc3\xa9\xff,\xfe=bad key",        /* invalid UTF-8: U+FFFD in key and value */
	};
	char long_key[256], many[2048], nul[] = "a=x\0y,b\0c=z";
	int n = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		gives_back(texts[i], strlen(texts[i]), lp_trace_reserved_keys);
		gives_back(texts[i], strlen(texts[i]), NULL); /* a span pair's detail */
	}
	/* Keys past LP_META_KEY_MAX, cut, repeated: "KEY#2" is longer than any key. */
	for (int len = 63; len <= 70; len += 7) {
		char *key = long_key, *p = key;

		for (int i = 0; i < 3; i++) {
			memset(p, 'k', (size_t)len);
			p += len;
			p += sprintf(p, "=%d,", i);
		}
		gives_back(key, (size_t)(p - key), lp_trace_reserved_keys);
	}
	/* More items than LP_META_MAX_ITEMS: the rest in "_rest", verbatim. */
	n += sprintf(many + n, "_rest=mine");
	for (int i = 0; i < 80; i++)
		n += sprintf(many + n, ", i%d=%d ", i, i);
	gives_back(many, (size_t)n, lp_trace_reserved_keys);
	/* NUL bytes: a value keeps them, a key ends at one. */
	gives_back(nul, sizeof(nul) - 1, lp_trace_reserved_keys);
}

/* Items no metadata text makes (not written by record): said so, not made up. */
static void test_meta_text_refuses(void **state)
{
	static const struct {
		const char *blob;
		size_t len;
	} bad[] = {
		{ "\x01\x00k\x03\x00a,b", 8 }, /* a comma in a value */
		{ "\x03\x00k=x\x01\x00v", 8 }, /* '=' in a key */
		{ "\x01\x00k\x02\x00 v", 7 },  /* a blank around a value */
		{ "\x01\x00k\x01\x00v\x01\x00k\x01\x00w", 12 }, /* a key twice */
	};
	struct lp_buf out = { 0 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(lp_meta_text(bad[i].blob, bad[i].len, lp_trace_reserved_keys, &out),
				 -EINVAL);
	lp_buf_free(&out);
}

/* The reader: a span pair's detail, --off-cpu's split and its waits. */
static void test_read_detail_split_waits(void **state)
{
	static const char span[] =
		"{\"ph\":\"X\",\"name\":\"req\",\"cat\":\"span\",\"pid\":3,\"tid\":4,\"ts\":1.500,"
		"\"dur\":2.000,\"args\":{\"k\":\"v\",\"detail\":{\"op\":\"get\",\"n\":1},"
		"\"cpu_us\":1.250,\"steal_us\":0.001,\"runq_us\":0.500,\"blocked_us\":0.249,"
		"\"voluntary_switches\":2,\"involuntary_switches\":3,"
		"\"off_cpu_unmeasured_us\":7.000}}";
	static const char wait[] = ",{\"ph\":\"X\",\"name\":\"runq\",\"cat\":\"off-cpu\",\"pid\":3,"
				   "\"tid\":4,\"ts\":2.000,\"dur\":0.500,\"args\":{}}";
	struct lp_tr_scratch sc = { 0 };
	struct lp_tr_span s;
	size_t pos = 0, kl, vl;
	const char *k, *v;

	(void)state;
	assert_int_equal(lp_tr_parse_event(span, strlen(span), &s, &sc), LP_TR_SPAN);
	/* The detail is no metadata: "k" alone is. */
	assert_int_equal(s.meta_len, 2 + 1 + 2 + 1);
	assert_true(s.has_detail);
	assert_true(lp_tr_meta_next(s.detail, s.detail_len, &pos, &k, &kl, &v, &vl));
	assert_memory_equal(k, "op", 2);
	assert_memory_equal(v, "get", 3);
	assert_int_equal(pos, s.detail_len); /* "n" is no string: not an item */
	assert_true(s.has_sched);
	assert_int_equal(s.sched.cpu_ns, 1250);
	assert_int_equal(s.sched.steal_ns, 1);
	assert_int_equal(s.sched.runq_ns, 500);
	assert_int_equal(s.sched.blocked_ns, 249);
	assert_int_equal(s.sched.vcsw, 2);
	assert_int_equal(s.sched.ivcsw, 3);
	assert_int_equal(s.unmeasured_ns, 7000);
	assert_int_equal(lp_tr_parse_event(wait, strlen(wait), &s, &sc), LP_TR_OFF_CPU);
	assert_int_equal(s.start_ns, 2000);
	assert_int_equal(s.dur_ns, 500);
	assert_memory_equal(s.name, "runq", 4);
	assert_false(s.has_sched);
	assert_false(s.has_detail);
	lp_tr_scratch_free(&sc);
}

/* Both writers, fed as the pipeline feeds them. */
struct rec {
	struct strtab *st;
	struct lp_trace json;
	struct lp_pftrace *pf;
};

static uint32_t id(struct rec *r, const char *s)
{
	return strtab_intern(r->st, s, strlen(s));
}

static void put_span(struct rec *r, struct lp_span s)
{
	s.total_ns = s.end_ns - s.start_ns;
	lp_trace_span(&r->json, &s);
	lp_pftrace_span(r->pf, &s);
}

static void put_wait(struct rec *r, uint32_t tid, uint32_t depth, uint64_t off, uint64_t wake,
		     uint64_t on)
{
	lp_trace_off_cpu(&r->json, 7, tid, off, wake, on);
	lp_pftrace_off_cpu(r->pf, 7, tid, depth, off, wake, on);
}

static void put_name(struct rec *r, bool process, uint32_t tid, const char *name)
{
	lp_trace_name(&r->json, process, 7, tid, id(r, name));
	lp_pftrace_name(r->pf, process, 7, tid, id(r, name));
}

static char *slurp_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

/*
 * A recording of every kind of span record writes: nested spans with
 * metadata (repeated and reserved keys), a counter, flags, --off-cpu's split
 * and waits at several depths, a span pair's detail on a keyed track, a span
 * open at attach rebuilt around spans that closed before it, names at the
 * end. Converted, its JSON trace is the recorded Perfetto trace, byte for byte.
 */
static void test_converted_is_recorded(void **state)
{
	const uint64_t base = 1000000000;
	const uint32_t track = LP_TRACK_TID(1, 8);
	struct rec r = { .st = strtab_new() };
	struct lp_sched sched = { .cpu_ns = 900, .runq_ns = 50, .blocked_ns = 50, .vcsw = 1 };
	char *json_dir, *json_path, *rec_path, *out = NULL, *a, *b;
	size_t alen, blen;
	static const char other[] = "{\"generator\":\"leanprofiler\",\"base_ns\":1000000000,"
				    "\"url\":\"a/b\\u00e9\"}";

	(void)state;
	assert_non_null(r.st);
	assert_true(asprintf(&json_dir, "%s/conv", dir) > 0);
	assert_true(asprintf(&rec_path, "%s/recorded.pftrace", dir) > 0);
	assert_true(asprintf(&json_path, "%s/%s", json_dir, LP_TRACE_FILE) > 0);
	assert_int_equal(mkdir(json_dir, 0700), 0);
	assert_int_equal(lp_trace_open(&r.json, json_path, r.st, base), 0);
	assert_int_equal(lp_pftrace_open(&r.pf, rec_path, r.st, base), 0);

	/* Thread 7: outer [100, 5000] > mid [200, 3000] > leaf [300, 400], waits inside. */
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 7, .name = id(&r, "leaf"),
				       .meta = id(&r, "k=1, k=2, counter=3"), .depth = 2,
				       .start_ns = base + 300, .end_ns = base + 400,
				       .has_sched = true, .sched = sched });
	put_wait(&r, 7, 2, base + 500, base + 600, base + 700);
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 7, .name = id(&r, "mid"), .depth = 1,
				       .start_ns = base + 200, .end_ns = base + 3000,
				       .flags = LP_SPAN_UNCERTAIN, .has_counter = true,
				       .counter_total = 9, .counter_self = 4, .has_sched = true,
				       .sched = sched });
	put_wait(&r, 7, 1, base + 3100, base + 3200, base + 3200); /* blocked only */
	put_wait(&r, 7, 1, base + 3300, base + 3300, base + 3400); /* runq only */
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 7, .name = id(&r, "outer"),
				       .meta = id(&r, "stage=\xff"), .depth = 0,
				       .start_ns = base + 100, .end_ns = base + 5000,
				       .flags = LP_SPAN_UNTERMINATED });
	/* A span pair's span on its keyed track, with its args= as detail. */
	put_span(&r, (struct lp_span){ .pid = 7, .tid = track, .name = id(&r, "req"),
				       .meta = id(&r, "key=42"), .detail = id(&r, "op=get, op=put"),
				       .start_ns = base + 150, .end_ns = base + 6000 });
	/* Thread 9: two spans, then one open at attach enclosing both (rebuilt at depth 0). */
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 9, .name = id(&r, "a"),
				       .start_ns = base + 10, .end_ns = base + 20 });
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 9, .name = id(&r, "b"),
				       .start_ns = base + 30, .end_ns = base + 40 });
	put_span(&r, (struct lp_span){ .pid = 7, .tid = 9, .name = id(&r, "attached"),
				       .flags = LP_SPAN_STARTED_BEFORE, .start_ns = base,
				       .end_ns = base + 50, .has_sched = true, .sched = sched,
				       .unmeasured_ns = 5 });
	put_name(&r, true, 7, "proc");
	put_name(&r, false, 7, "main");
	put_name(&r, false, 9, "worker\n");
	put_name(&r, false, track, "req track");
	assert_int_equal(lp_trace_close(&r.json, other), 0);
	assert_int_equal(lp_pftrace_close(r.pf, other, NULL), 0);

	assert_int_equal(lp_pftrace_convert(json_dir, &out), 0);
	a = slurp_file(rec_path, &alen);
	b = slurp_file(out, &blen);
	assert_true(alen > 0);
	if (alen != blen || memcmp(a, b, alen))
		fail_msg("%s (%zu bytes) is not the recorded %s (%zu bytes)", out, blen, rec_path,
			 alen);
	free(a);
	free(b);
	free(out);
	strtab_free(r.st);
	free(json_dir);
	free(json_path);
	free(rec_path);
}

static int teardown(void **state)
{
	char *cmd;

	(void)state;
	if (asprintf(&cmd, "rm -rf %s", dir) > 0 && system(cmd) != 0)
		return 1;
	free(cmd);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meta_text_gives_back),
		cmocka_unit_test(test_meta_text_refuses),
		cmocka_unit_test(test_read_detail_split_waits),
		cmocka_unit_test(test_converted_is_recorded),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
