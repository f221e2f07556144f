// SPDX-License-Identifier: MIT
/* The Chrome Trace Event writer (user/core/trace.c) and atomic output files (user/core/outfile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "fixtures.h"

#define FFFD "\xef\xbf\xbd"

struct fx {
	char dir[64];
	char path[128];
	struct strtab *st;
	char *text;
	size_t len;
	json_object *root;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/lp-test-trace.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/trace.json", fx->dir);
	fx->st = strtab_new();
	if (!fx->st) {
		rmdir(fx->dir);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

/* Files in the test directory. */
static int dir_entries(struct fx *fx, char names[][64], int max)
{
	DIR *d = opendir(fx->dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n < max)
			snprintf(names[n], 64, "%.63s", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char names[16][64], p[160];
	int n = dir_entries(fx, names, 16);

	for (int i = 0; i < n && i < 16; i++) {
		snprintf(p, sizeof(p), "%.63s/%.63s", fx->dir, names[i]);
		unlink(p);
	}
	rmdir(fx->dir);
	if (fx->root)
		json_object_put(fx->root);
	free(fx->text);
	strtab_free(fx->st);
	free(fx);
	return 0;
}

/* Reads the written trace: valid UTF-8, strict JSON, one value. */
static json_object *load(struct fx *fx)
{
	fx->text = ut_read_file(fx->path, &fx->len);
	assert_non_null(fx->text);
	fx->root = ut_parse_strict(fx->text, fx->len);
	assert_true(json_object_is_type(fx->root, json_type_object));
	return fx->root;
}

static bool has(json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

static void assert_jstr(json_object *o, const char *key, const char *want)
{
	json_object *v = ut_get(o, key);

	assert_true(json_object_is_type(v, json_type_string));
	assert_string_equal(json_object_get_string(v), want);
}

/* A number as written in the file (json-c keeps a double's original text). */
static void assert_jnum_text(json_object *o, const char *key, const char *want)
{
	json_object *v = ut_get(o, key);

	assert_true(json_object_is_type(v, json_type_double) ||
		    json_object_is_type(v, json_type_int));
	assert_string_equal(json_object_get_string(v), want);
}

static void assert_jint(json_object *o, const char *key, int64_t want)
{
	json_object *v = ut_get(o, key);

	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), want);
}

static json_object *events(json_object *root)
{
	json_object *ev = ut_get(root, "traceEvents");

	assert_true(json_object_is_type(ev, json_type_array));
	return ev;
}

static void test_x_and_m_events(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	char names[4][64];
	struct lp_span a = {
		.pid = 10, .tid = 11,
		.name = ut_id(fx->st, "compile"),
		.meta = ut_id(fx->st, "file=a.lean, n = 3"),
		.start_ns = 1001500, .end_ns = 1001500 + 1234567,
		.total_ns = 1234567, .self_ns = 1000000,
		.counter_total = 50, .counter_self = 20, .has_counter = true,
	};
	struct lp_span b = {
		.pid = 10, .tid = 12,
		.name = ut_id(fx->st, "inner"),
		.start_ns = 1000000, .end_ns = 1000000,
		.flags = LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN,
	};
	struct lp_span c = {
		.pid = 10, .tid = 12,
		.name = ut_id(fx->st, "early"),
		.start_ns = 999000, .end_ns = 1000001, .total_ns = 1001, .self_ns = 1001,
	};

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 1000000), 0);
	lp_trace_span(&t, &a);
	lp_trace_span(&t, &b);
	lp_trace_span(&t, &c);
	lp_trace_name(&t, true, 10, 10, ut_id(fx->st, "lean"));
	lp_trace_name(&t, false, 10, 11, ut_id(fx->st, "worker"));
	assert_int_equal(t.spans, 3);
	/* nothing at the final name until the commit */
	assert_int_equal(access(fx->path, F_OK), -1);
	assert_int_equal(lp_trace_close(&t, "{\"generator\":\"leanprofiler\",\"n\":1}"), 0);
	/* renamed into place: the only file left */
	assert_int_equal(dir_entries(fx, names, 4), 1);
	assert_string_equal(names[0], "trace.json");

	json_object *root = load(fx), *ev = events(root), *x, *args, *m;

	assert_jstr(root, "displayTimeUnit", "ns");
	assert_jstr(ut_get(root, "otherData"), "generator", "leanprofiler");
	assert_int_equal(json_object_array_length(ev), 5);

	x = json_object_array_get_idx(ev, 0);
	assert_jstr(x, "ph", "X");
	assert_jstr(x, "name", "compile");
	assert_jstr(x, "cat", "span");
	assert_jint(x, "pid", 10);
	assert_jint(x, "tid", 11);
	assert_jnum_text(x, "ts", "1.500");
	assert_jnum_text(x, "dur", "1234.567");
	args = ut_get(x, "args");
	assert_jstr(args, "file", "a.lean");
	assert_jstr(args, "n", "3");
	assert_jint(args, "counter", 50);
	assert_jint(args, "self_counter", 20);
	assert_false(has(args, "unterminated"));
	assert_false(has(args, "uncertain"));
	assert_int_equal(json_object_object_length(args), 4);

	x = json_object_array_get_idx(ev, 1);
	assert_jstr(x, "name", "inner");
	assert_jint(x, "tid", 12);
	assert_jnum_text(x, "ts", "0.000");
	assert_jnum_text(x, "dur", "0.000");
	args = ut_get(x, "args");
	assert_true(json_object_get_boolean(ut_get(args, "unterminated")));
	assert_true(json_object_get_boolean(ut_get(args, "uncertain")));
	assert_false(has(args, "counter"));
	assert_int_equal(json_object_object_length(args), 2);

	/* a span that started before the base is shown at 0 */
	x = json_object_array_get_idx(ev, 2);
	assert_jnum_text(x, "ts", "0.000");
	assert_jnum_text(x, "dur", "1.001");
	assert_int_equal(json_object_object_length(ut_get(x, "args")), 0);

	m = json_object_array_get_idx(ev, 3);
	assert_jstr(m, "ph", "M");
	assert_jstr(m, "name", "process_name");
	assert_jint(m, "pid", 10);
	assert_jint(m, "tid", 10);
	assert_jstr(ut_get(m, "args"), "name", "lean");
	m = json_object_array_get_idx(ev, 4);
	assert_jstr(m, "ph", "M");
	assert_jstr(m, "name", "thread_name");
	assert_jint(m, "tid", 11);
	assert_jstr(ut_get(m, "args"), "name", "worker");

	/* the raw text carries exactly three decimals */
	assert_non_null(strstr(fx->text, "\"ts\":1.500,\"dur\":1234.567"));
}

/* Metadata keys that collide with the profiler's own, and repeated keys, stay distinct. */
static void test_args_reserved_and_duplicate_keys(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	struct lp_span s = {
		.pid = 1, .tid = 1,
		.name = ut_id(fx->st, "n"),
		.meta = ut_id(fx->st, "counter=x, a=1, a=2, unterminated=no, flag, a=3"),
		.start_ns = 0, .end_ns = 10, .total_ns = 10, .self_ns = 10,
		.has_counter = true, .counter_total = 9, .counter_self = 9,
		.flags = LP_SPAN_UNTERMINATED,
	};

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	lp_trace_span(&t, &s);
	assert_int_equal(lp_trace_close(&t, NULL), 0);

	json_object *root = load(fx), *args;

	assert_false(has(root, "otherData"));
	args = ut_get(json_object_array_get_idx(events(root), 0), "args");
	assert_jstr(args, "meta.counter", "x");
	assert_jstr(args, "a", "1");
	assert_jstr(args, "a#2", "2");
	assert_jstr(args, "a#3", "3");
	assert_jstr(args, "meta.unterminated", "no");
	assert_jstr(args, "flag", "");
	assert_jint(args, "counter", 9);
	assert_jint(args, "self_counter", 9);
	assert_true(json_object_get_boolean(ut_get(args, "unterminated")));
	/* json-c keeps one value per key: 9 distinct keys means none was written twice */
	assert_int_equal(json_object_object_length(args), 9);
}

/*
 * args= of a span-pair spec: a "detail" object next to the metadata items,
 * so that a reader of the trace never folds it into the row's metadata; a
 * metadata key "detail" is renamed like the profiler's own keys.
 */
static void test_detail(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	struct lp_span s = {
		.pid = 1, .tid = 1,
		.name = ut_id(fx->st, "statement"),
		.meta = ut_id(fx->st, "sql=select $1, detail=x"),
		.detail = ut_id(fx->st, "literal=select 5, n=\"q\""),
		.start_ns = 0, .end_ns = 10, .total_ns = 10, .self_ns = 10,
	};
	struct lp_span plain = s;

	plain.detail = 0;
	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	lp_trace_span(&t, &s);
	lp_trace_span(&t, &plain);
	assert_int_equal(lp_trace_close(&t, NULL), 0);

	json_object *root = load(fx), *args, *detail;

	args = ut_get(json_object_array_get_idx(events(root), 0), "args");
	assert_jstr(args, "sql", "select $1");
	assert_jstr(args, "meta.detail", "x");
	detail = ut_get(args, "detail");
	assert_true(json_object_is_type(detail, json_type_object));
	assert_jstr(detail, "literal", "select 5");
	assert_jstr(detail, "n", "\"q\"");
	assert_int_equal(json_object_object_length(args), 3);
	args = ut_get(json_object_array_get_idx(events(root), 1), "args");
	assert_false(has(args, "detail"));
	assert_int_equal(json_object_object_length(args), 2);
}

/* Names and metadata from the target may hold any bytes. */
static void test_hostile_text(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	static const char name[] = "q\"b\\s\n\t\x01\x1f\x7f\xff\xc0\x80\xed\xa0\x80 end\xe2\x82";
	static const char meta[] = "k\xff=v\x80\"\\, \x1b=\n";
	struct lp_span s = {
		.pid = 1, .tid = 1,
		.name = ut_id_n(fx->st, name, sizeof(name) - 1),
		.meta = ut_id_n(fx->st, meta, sizeof(meta) - 1),
		.start_ns = 5, .end_ns = 10, .total_ns = 5, .self_ns = 5,
	};

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	lp_trace_span(&t, &s);
	lp_trace_name(&t, false, 1, 1, s.name);
	assert_int_equal(lp_trace_close(&t, NULL), 0);

	json_object *ev = events(load(fx)), *x = json_object_array_get_idx(ev, 0), *args;

	assert_jstr(x, "name",
		    "q\"b\\s\n\t\x01\x1f\x7f" FFFD FFFD FFFD FFFD FFFD FFFD " end" FFFD FFFD);
	args = ut_get(x, "args");
	assert_jstr(args, "k" FFFD, "v" FFFD "\"\\");
	assert_jstr(args, "\x1b", "\n"); /* only spaces and tabs are trimmed */
	assert_jstr(ut_get(json_object_array_get_idx(ev, 1), "args"), "name",
		    "q\"b\\s\n\t\x01\x1f\x7f" FFFD FFFD FFFD FFFD FFFD FFFD " end" FFFD FFFD);
	/* no raw control byte in the file but the newlines between events */
	for (size_t i = 0; i < fx->len; i++) {
		unsigned char ch = (unsigned char)fx->text[i];

		assert_true(ch == '\n' || (ch >= 0x20 && ch != 0x7f));
	}
}

static void test_many_spans(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	uint32_t name = ut_id(fx->st, "s"), meta = ut_id(fx->st, "i=1");

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		struct lp_span s = {
			.pid = 1, .tid = 1 + (uint32_t)(i % 4), .name = name, .meta = meta,
			.start_ns = i * 1000, .end_ns = i * 1000 + 999, .total_ns = 999,
			.self_ns = 999,
		};

		lp_trace_span(&t, &s);
	}
	assert_int_equal(lp_trace_close(&t, "{}"), 0);

	json_object *ev = events(load(fx));

	assert_int_equal(json_object_array_length(ev), 5000);
	assert_jnum_text(json_object_array_get_idx(ev, 4999), "ts", "4999.000");
	assert_jnum_text(json_object_array_get_idx(ev, 4999), "dur", "0.999");
}

static void test_abort_leaves_nothing(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	char names[4][64];
	struct lp_span s = { .name = ut_id(fx->st, "x"), .total_ns = 1 };

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	lp_trace_span(&t, &s);
	assert_int_equal(dir_entries(fx, names, 4), 1); /* the temporary file */
	lp_trace_abort(&t);
	assert_int_equal(dir_entries(fx, names, 4), 0);
	assert_int_equal(access(fx->path, F_OK), -1);
}

/* An existing file is replaced whole. */
static void test_replaces_existing_file(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	FILE *f = fopen(fx->path, "w");
	char names[4][64];

	assert_non_null(f);
	fputs("old contents that are not JSON", f);
	fclose(f);
	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	assert_int_equal(lp_trace_close(&t, NULL), 0);
	assert_int_equal(json_object_array_length(events(load(fx))), 0);
	assert_int_equal(dir_entries(fx, names, 4), 1);
}

/* The output gets the mode open(2) would give a new file, not mkstemp's 0600. */
static void test_mode_follows_umask(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	struct stat st;
	mode_t old = umask(022);

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	assert_int_equal(lp_trace_close(&t, NULL), 0);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	umask(077);
	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	assert_int_equal(lp_trace_close(&t, NULL), 0);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	umask(old);
}

static void test_open_fails_cleanly(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	char bad[200];

	snprintf(bad, sizeof(bad), "%s/no/such/dir/trace.json", fx->dir);
	assert_int_equal(lp_trace_open(&t, bad, fx->st, 0), -ENOENT);
}


/*
 * The writer as it was before its caches: every span through jw calls,
 * lp_trace_write_args parsing the metadata each time. What lp_trace_span
 * writes must equal it byte for byte.
 */
static void ref_span(struct jw *w, const struct strtab *st, uint64_t base_ns,
		     const struct lp_span *s)
{
	size_t len;
	const char *name = strtab_str(st, s->name, &len);

	jw_newline(w);
	jw_obj_begin(w);
	jw_key(w, "ph", 2);
	jw_cstr(w, "X");
	jw_key(w, "name", 4);
	jw_str(w, name, len);
	jw_key(w, "cat", 3);
	jw_cstr(w, "span");
	jw_key(w, "pid", 3);
	jw_u64(w, s->pid);
	jw_key(w, "tid", 3);
	jw_u64(w, s->tid);
	jw_key(w, "ts", 2);
	jw_usec(w, s->start_ns > base_ns ? s->start_ns - base_ns : 0);
	jw_key(w, "dur", 3);
	jw_usec(w, s->total_ns);
	jw_key(w, "args", 4);
	lp_trace_write_args(w, st, s);
	jw_obj_end(w);
}

/* The reference trace's opening, into a memory stream that fills *buf, *len. */
static FILE *ref_open(struct jw *w, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	assert_non_null(f);
	jw_init(w, f);
	jw_obj_begin(w);
	jw_key(w, "displayTimeUnit", 15);
	jw_cstr(w, "ns");
	jw_key(w, "traceEvents", 11);
	jw_arr_begin(w);
	return f;
}

static void ref_close(struct jw *w, FILE *f, const char *other)
{
	jw_newline(w);
	jw_arr_end(w);
	fputs(",\"otherData\":", f);
	fputs(other, f);
	jw_obj_end(w);
	jw_newline(w);
	assert_int_equal(jw_error(w), 0);
	assert_int_equal(fclose(f), 0);
}

static char *ref_trace(const struct strtab *st, uint64_t base_ns, const struct lp_span *spans,
		       size_t n, const char *other, size_t *len)
{
	char *buf = NULL;
	struct jw w;
	FILE *f = ref_open(&w, &buf, len);

	for (size_t i = 0; i < n; i++)
		ref_span(&w, st, base_ns, &spans[i]);
	ref_close(&w, f, other);
	return buf;
}

/* Every kind of name and metadata, each used more than once (the cache's hits), every flag. */
static void test_cached_equals_uncached(void **state)
{
	struct fx *fx = *state;
	static const char *const names[] = {
		"plain", "say \"hi\"\\", "\x01" "ctl\x7f\n", "caf\xc3\xa9 \xe2\x82", "\xff\xfe",
		"",
	};
	static const char *const metas[] = {
		"",
		"kind=literal,n=3",
		"k=v, k=v2, k, k = v3",
		"counter=1,self_counter=2,unterminated=x,uncertain=y,started_before_recording=z,"
		"meta.counter=q,counter=again",
		"cpu_us=1,runq_us=2,blocked_us=3,voluntary_switches=4,involuntary_switches=5,"
		"off_cpu_unmeasured_us=6,steal_us=7",
		"\xff\xfe=\x01\x7f, \"q\"=\\\\, \xed\xa0\x80=\xf4\x90\x80\x80",
		"=novalue, ,, x= , =, ,",
		"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		"\xe2\x82\xac\xe2\x82\xac=long key cut between characters",
	};
	char many[1200], nul[] = "a\0b=c\0d, e=f\0g";
	struct lp_span spans[600];
	uint32_t name_ids[ARRAY_SIZE(names) + 2], meta_ids[ARRAY_SIZE(metas) + 3];
	size_t nn = 0, nm = 0, n = 0, want_len, pos = 0;
	struct lp_trace t;
	char *want;
	uint64_t x = 1;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		name_ids[nn++] = ut_id(fx->st, names[i]);
	memset(many, 'n', 256); /* LP_NAME_MAX */
	name_ids[nn++] = ut_id_n(fx->st, many, 256);
	name_ids[nn++] = 999999; /* past the table: read as id 0, as strtab_str does */
	for (size_t i = 0; i < ARRAY_SIZE(metas); i++)
		meta_ids[nm++] = ut_id(fx->st, metas[i]);
	meta_ids[nm++] = ut_id_n(fx->st, nul, sizeof(nul) - 1);
	for (int i = 0; i < 70; i++) /* past LP_META_MAX_ITEMS: "_rest" */
		pos += (size_t)snprintf(many + pos, sizeof(many) - pos, "a%d=%d, ", i % 40, i);
	meta_ids[nm++] = ut_id_n(fx->st, many, pos);
	meta_ids[nm++] = 888888;
	for (size_t r = 0; r < 3; r++) {
		for (size_t i = 0; i < nn; i++) {
			for (size_t j = 0; j < nm; j++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				assert_true(n < ARRAY_SIZE(spans));
				spans[n++] = (struct lp_span){
					.pid = (x >> 40) % 3 ? 4242 : UINT32_MAX,
					.tid = (uint32_t)(x >> 20),
					.name = name_ids[i],
					.meta = meta_ids[j],
					.start_ns = (x >> 3) % 5 ? x >> 7 : 17,
					.total_ns = (x >> 9) % 7 ? x >> 30 : UINT64_MAX,
					.has_counter = (x >> 11) & 1,
					.counter_total = (x >> 13) % 5 ? x >> 17 : UINT64_MAX,
					.counter_self = x >> 19,
					.flags = (unsigned)(x >> 23) & 7,
					/* --off-cpu's args, up to their widest */
					.has_sched = (x >> 27) & 1,
					.sched = { .cpu_ns = (x >> 29) % 3 ? x >> 31 : UINT64_MAX,
						   .runq_ns = (x >> 33) % 3 ? x >> 35 : UINT64_MAX,
						   .blocked_ns = x >> 4,
					   .steal_ns = (x >> 47) % 3 ? x >> 49 : UINT64_MAX,
						   .vcsw = (x >> 37) % 3 ? x >> 39 : UINT64_MAX,
						   .ivcsw = UINT64_MAX - (x >> 41) },
					.unmeasured_ns = (x >> 43) % 3 ? 0 : UINT64_MAX - (x >> 45),
				};
			}
		}
	}
	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 1000), 0);
	for (size_t i = 0; i < n; i++)
		lp_trace_span(&t, &spans[i]);
	assert_int_equal(lp_trace_close(&t, "{\"k\":1}"), 0);
	want = ref_trace(fx->st, 1000, spans, n, "{\"k\":1}", &want_len);
	load(fx);
	assert_int_equal(fx->len, want_len);
	assert_memory_equal(fx->text, want, want_len);
	assert_int_equal(json_object_array_length(events(fx->root)), n);
	free(want);
}

static void trace_forget(void *ctx, uint32_t id)
{
	lp_trace_forget(ctx, id);
}

/*
 * Texts collected while the trace is written (user/core/strtab.h): the fragments of
 * freed ids go, so a reused id writes its new text, never the old one's
 * fragment; the fragments buffer keeps only live texts' and stays bounded.
 * Compared with the uncached writer, span by span, with the texts as they were
 * when each span was written.
 */
static void test_forget_and_compact(void **state)
{
	enum { ROUNDS = 40, TEXTS = 30 };
	struct fx *fx = *state;
	uint32_t names[TEXTS], metas[TEXTS];
	size_t want_len, most = 0, reused = 0;
	char *want = NULL, text[96];
	struct jw w;
	FILE *f = ref_open(&w, &want, &want_len);
	struct lp_trace t;
	uint64_t ts = 0;

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	for (int r = 0; r < ROUNDS; r++) {
		struct strtab_gc_result res;

		/* Texts of this round; the odd ones are kept from the round before. */
		for (int i = 0; i < TEXTS; i++) {
			if (r > 0 && i % 2)
				continue;
			snprintf(text, sizeof(text), "round %d name %d \"q\"", r, i);
			names[i] = ut_id(fx->st, text);
			snprintf(text, sizeof(text), "round=%d, i=%d, k=v, k=w", r, i);
			metas[i] = ut_id(fx->st, text);
		}
		for (int i = 0; i < TEXTS; i++) {
			struct lp_span s = { .pid = 1, .tid = 2, .name = names[i],
					     .meta = metas[(i + r) % TEXTS], .start_ns = ts += 10,
					     .total_ns = 5, .flags = (unsigned)i & 7 };

			lp_trace_span(&t, &s);
			ref_span(&w, fx->st, 0, &s);
		}
		strtab_gc_begin(fx->st);
		for (int i = 1; i < TEXTS; i += 2) {
			strtab_mark(fx->st, names[i]);
			strtab_mark(fx->st, metas[i]);
		}
		strtab_gc_end(fx->st, trace_forget, &t, &res);
		/* The even ones go, and their ids are the next round's. */
		assert_int_equal(res.freed_ids, TEXTS);
		reused += r > 0 && names[0] < 2 * TEXTS + 1;
		lp_trace_compact(&t);
		assert_int_equal(t.frags_dead, 0);
		if (t.frags.len > most)
			most = t.frags.len;
	}
	assert_int_equal(reused, ROUNDS - 1);
	/* What the live texts' fragments take: those of one round. */
	assert_true(most < TEXTS * 2 * 60);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);
	ref_close(&w, f, "{}");
	load(fx);
	assert_int_equal(fx->len, want_len);
	assert_memory_equal(fx->text, want, want_len);
	free(want);
}

/* A full disk: ENOSPC from lp_trace_close, no file left behind, not even the temporary one. */
static void test_disk_full(void **state)
{
	struct fx *fx = *state;
	char mnt[128], path[160], names[4][64];
	struct lp_trace t;
	struct lp_span s = { .pid = 1, .tid = 1,
			     .name = ut_id(fx->st, "a span name of some length"),
			     .meta = ut_id(fx->st, "kind=literal, n=3"), .total_ns = 123456 };
	DIR *d;
	int n = 0, err;

	snprintf(mnt, sizeof(mnt), "%s/full", fx->dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		rmdir(mnt);
		print_message("SKIPPED: cannot mount a small tmpfs: %s\n", strerror(errno));
		skip();
	}
	snprintf(path, sizeof(path), "%s/trace.json", mnt);
	assert_int_equal(lp_trace_open(&t, path, fx->st, 0), 0);
	for (int i = 0; i < 20000; i++)
		lp_trace_span(&t, &s);
	err = lp_trace_close(&t, "{}");
	d = opendir(mnt);
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	/* Unmounted before any check can fail: a failing run leaves no mount behind. */
	assert_int_equal(umount2(mnt, MNT_DETACH), 0);
	assert_int_equal(rmdir(mnt), 0);
	assert_int_equal(err, -ENOSPC);
	assert_non_null(d);
	assert_int_equal(n, 0);
	assert_int_equal(dir_entries(fx, names, 4), 0);
}


/*
 * Writes the same spans (4 threads, a wait inside every third span) and
 * names through t, bounded or not; the spans' ends are 1000 ns apart, the
 * last at 5000 * 1000 - 1.
 */
static void write_spans(struct fx *fx, struct lp_trace *t)
{
	uint32_t name = ut_id(fx->st, "s"), meta = ut_id(fx->st, "i=1");

	for (uint64_t i = 0; i < 5000; i++) {
		struct lp_span s = {
			.pid = 1, .tid = 1 + (uint32_t)(i % 4), .name = name, .meta = meta,
			.start_ns = i * 1000, .end_ns = i * 1000 + 999, .total_ns = 999,
			.self_ns = 999,
		};

		if (i % 3 == 0)
			lp_trace_off_cpu(t, s.pid, s.tid, s.start_ns + 100, s.start_ns + 200,
					 s.start_ns + 300);
		lp_trace_span(t, &s);
	}
	lp_trace_name(t, true, 1, 1, ut_id(fx->st, "proc"));
	for (uint32_t tid = 1; tid <= 4; tid++)
		lp_trace_name(t, false, 1, tid, ut_id(fx->st, "thr"));
}

/* The event lines of a trace, without their separator, NUL-terminated in place. */
static size_t event_lines(char *text, char **lines, size_t max)
{
	size_t n = 0;

	for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		if (*p == ',')
			p++;
		if (*p == '{' && strncmp(p, "{\"displayTimeUnit\"", 18) && n < max)
			lines[n++] = p;
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --trace-last: the spans that ended in the window, with their waits; the
 * names whatever happens; every event byte for byte what the unbounded trace
 * has.
 */
static void test_bound_last(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	struct lp_tring_stats st;
	char full[160], *all[16384], *kept[16384];
	size_t nall, nkept, len, spans = 0, waits = 0, names = 0;
	char *text;

	snprintf(full, sizeof(full), "%s/full.json", fx->dir);
	assert_int_equal(lp_trace_open(&t, full, fx->st, 0), 0);
	write_spans(fx, &t);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);
	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	assert_int_equal(lp_trace_bound(&t, 1000000, 0), 0);
	write_spans(fx, &t);
	/* The window [4000000, 5000000]: the spans that end from 4000000 on, i >= 4000. */
	lp_trace_bound_end(&t, 5000000, &st);
	assert_int_equal(st.from_ns, 4000000);
	assert_int_equal(st.spans, 1000);
	assert_int_equal(st.spans_left_out, 4000);
	assert_int_equal(st.inner + st.inner_left_out, 2 * 1667);
	assert_false(st.cut);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);

	json_object *ev = events(load(fx));

	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		double ts;

		if (!strcmp(json_object_get_string(ut_get(e, "ph")), "M")) {
			names++;
			continue;
		}
		ts = json_object_get_double(ut_get(e, "ts"));
		/* Names come last. */
		assert_int_equal(names, 0);
		if (!strcmp(json_object_get_string(ut_get(e, "cat")), "span")) {
			assert_true(ts * 1000 + 999 >= 4000000);
			spans++;
		} else {
			/* A wait is kept with its span, whose start is 100 ns before it. */
			assert_true((uint64_t)(ts * 1000) - 100 >= 4000000 - 999);
			waits++;
		}
	}
	assert_int_equal(spans, 1000);
	assert_int_equal(waits, st.inner);
	assert_int_equal(waits, 2 * 333); /* i from 4002 to 4998, every third */
	assert_int_equal(names, 5);
	text = ut_read_file(full, &len);
	nall = event_lines(text, all, 16384);
	nkept = event_lines(fx->text, kept, 16384);
	assert_int_equal(nkept, spans + waits + names);
	qsort(all, nall, sizeof(*all), cmp_str);
	for (size_t i = 0; i < nkept; i++)
		assert_non_null(bsearch(&kept[i], all, nall, sizeof(*all), cmp_str));
	free(text);
}

/*
 * --trace-max-size: the first spans, with their waits, while the file stays
 * within SIZE; then the names and the closing line only.
 */
static void test_bound_max_size(void **state)
{
	struct fx *fx = *state;
	struct lp_trace t;
	struct lp_tring_stats st;
	const char *closing;
	size_t spans = 0, waits = 0;

	assert_int_equal(lp_trace_open(&t, fx->path, fx->st, 0), 0);
	assert_int_equal(lp_trace_bound(&t, 0, 64 << 10), 0);
	write_spans(fx, &t);
	lp_trace_bound_end(&t, 5000000, &st);
	assert_true(st.full);
	assert_int_equal(st.spans + st.spans_left_out, 5000);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);

	json_object *ev = events(load(fx));

	/* The file up to its names and closing line is within SIZE. */
	closing = strstr(fx->text, "\n{\"ph\":\"M\"");
	if (!closing)
		closing = strstr(fx->text, "\n,{\"ph\":\"M\"");
	assert_non_null(closing);
	assert_true((size_t)(closing - fx->text) <= 64 << 10);
	/* Full: the next span and its waits (at most 400 bytes) did not fit. */
	assert_true((size_t)(closing - fx->text) + 400 > 64 << 10);
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		uint64_t ts;

		if (!strcmp(json_object_get_string(ut_get(e, "ph")), "M"))
			continue;
		ts = (uint64_t)llround(json_object_get_double(ut_get(e, "ts")) * 1000);
		if (!strcmp(json_object_get_string(ut_get(e, "cat")), "span")) {
			/* The first ones, in order. */
			assert_int_equal(ts, spans * 1000);
			spans++;
		} else {
			/* Right before its span. */
			assert_int_equal(ts, spans * 1000 + 100 + 100 * (waits % 2));
			waits++;
		}
	}
	assert_int_equal(spans, st.spans);
	assert_int_equal(waits, st.inner);
	assert_int_equal(st.full_ns, spans * 1000 + 999);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_x_and_m_events),
		T(test_args_reserved_and_duplicate_keys),
		T(test_hostile_text),
		T(test_many_spans),
		T(test_abort_leaves_nothing),
		T(test_replaces_existing_file),
		T(test_mode_follows_umask),
		T(test_open_fails_cleanly),
		T(test_cached_equals_uncached),
		T(test_detail),
		T(test_forget_and_compact),
		T(test_disk_full),
		T(test_bound_last),
		T(test_bound_max_size),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
