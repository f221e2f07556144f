// SPDX-License-Identifier: MIT
/*
 * The pictures' core without a browser: the trace reader (user/read/trace_read.c),
 * the model of timeline and call tree (user/pictures/picture.c), and the escaping the
 * SVG and HTML writers rely on (user/pictures/svg.c, user/pictures/html.c, user/core/text.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "nest.h"
#include "picture.h"
#include "svg.h"
#include "trace.h"
#include "trace_read.h"
#include "unit.h"

/* ---- one line ---- */

static struct lp_tr_scratch sc;

static int parse(const char *line, struct lp_tr_span *s)
{
	return lp_tr_parse_event(line, strlen(line), s, &sc);
}

/* The meta blob's items, as "k=v;k=v;" text. */
static char *meta_text(const struct lp_tr_span *s)
{
	static char out[1024];
	const char *k, *v;
	size_t kl, vl, pos = 0, n = 0;

	out[0] = '\0';
	while (lp_tr_meta_next(s->meta, s->meta_len, &pos, &k, &kl, &v, &vl))
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%.*s=%.*s;", (int)kl, k, (int)vl, v);
	return out;
}

static void test_span_line(void **state)
{
	struct lp_tr_span s;

	(void)state;
	assert_int_equal(parse(",{\"ph\":\"X\",\"name\":\"input.load\",\"cat\":\"span\",\"pid\":27193,"
			       "\"tid\":27194,\"ts\":1411.926,\"dur\":2215.103,\"args\":{\"phase\":"
			       "\"input\",\"activity\":\"load\",\"counter\":2,\"self_counter\":2}}",
			       &s),
			 LP_TR_SPAN);
	assert_int_equal(s.pid, 27193);
	assert_int_equal(s.tid, 27194);
	assert_int_equal(s.start_ns, 1411926);
	assert_int_equal(s.dur_ns, 2215103);
	assert_int_equal(s.name_len, 10);
	assert_memory_equal(s.name, "input.load", 10);
	assert_string_equal(meta_text(&s), "phase=input;activity=load;");
	assert_true(s.has_counter);
	assert_int_equal(s.counter, 2);
	assert_int_equal(s.flags, 0);
}

/* What the writer makes of a span is what the reader gives back. */
static void test_writer_round_trip(void **state)
{
	static const char name[] = "a\"b\\c\n\x01</script>\xe2\x80\xa8\xf0\x9f\x98\x80";
	static const char meta[] = "k=v\"1, counter=9, x, __proto__=p";
	struct strtab *st = strtab_new();
	struct lp_span sp = { .pid = 1, .tid = 2, .start_ns = 1000 + 5, .end_ns = 1000 + 12345678901,
			      .total_ns = 12345678896, .has_counter = true, .counter_total = 77,
			      .flags = LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN };
	char path[] = "/tmp/lp-test-pictures.XXXXXX";
	int fd = mkstemp(path);
	struct lp_trace t;
	struct lp_tr_span s;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	sp.name = strtab_intern(st, name, sizeof(name) - 1);
	sp.meta = strtab_intern(st, meta, sizeof(meta) - 1);
	assert_int_equal(lp_trace_open(&t, path, st, 1000), 0);
	lp_trace_span(&t, &sp);
	assert_int_equal(lp_trace_close(&t, NULL), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getline(&line, &cap, f) > 0); /* the frame */
	assert_true(getline(&line, &cap, f) > 0);
	line[strcspn(line, "\n")] = '\0';
	assert_int_equal(parse(line, &s), LP_TR_SPAN);
	assert_int_equal(s.name_len, sizeof(name) - 1);
	assert_memory_equal(s.name, name, sizeof(name) - 1);
	assert_int_equal(s.start_ns, 5);
	assert_int_equal(s.dur_ns, 12345678896);
	assert_string_equal(meta_text(&s), "k=v\"1;meta.counter=9;x=;__proto__=p;");
	assert_int_equal(s.counter, 77);
	assert_int_equal(s.flags, LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN);
	free(line);
	fclose(f);
	unlink(path);
	strtab_free(st);
}

static void test_escapes(void **state)
{
	struct lp_tr_span s;

	(void)state;
	/* \u0000 is kept (the blob has lengths), a pair is one character, a lone half is U+FFFD. */
	assert_int_equal(parse("{\"name\":\"a\\u0000b\\ud83d\\ude00\\ud800x\\/\\t\",\"ph\":\"X\","
			       "\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}", &s),
			 LP_TR_SPAN);
	assert_int_equal(s.name_len, 3 + 4 + 3 + 3);
	assert_memory_equal(s.name, "a\0b\xf0\x9f\x98\x80\xef\xbf\xbdx/\t", s.name_len);
	assert_int_equal(s.start_ns, 1000);
	assert_int_equal(s.dur_ns, 2000);
}

static void test_numbers(void **state)
{
	struct lp_tr_span s;

	(void)state;
	/* Other forms of JSON number, as another writer may make them. */
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1.5e3,\"dur\":0.25}", &s),
			 LP_TR_SPAN);
	assert_int_equal(s.start_ns, 1500000);
	assert_int_equal(s.dur_ns, 250);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":-3,\"dur\":7}", &s),
			 LP_TR_SPAN);
	assert_int_equal(s.start_ns, 0);
	assert_int_equal(s.dur_ns, 7000);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":4294967296,\"tid\":1,\"ts\":1,\"dur\":1}", &s),
			 -ERANGE);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1.5,\"tid\":1,\"ts\":1,\"dur\":1}", &s), -EINVAL);
}

static void test_other_lines(void **state)
{
	struct lp_tr_span s;

	(void)state;
	assert_int_equal(parse(",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":3,\"tid\":4,"
			       "\"args\":{\"name\":\"worker\\u0007\"}}", &s),
			 LP_TR_THREAD_NAME);
	assert_int_equal(s.tid, 4);
	assert_int_equal(s.name_len, 7);
	assert_memory_equal(s.name, "worker\a", 7);
	assert_int_equal(parse("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3,\"tid\":3,"
			       "\"args\":{\"name\":\"p\"}}", &s),
			 LP_TR_PROCESS_NAME);
	assert_int_equal(parse("{\"ph\":\"B\",\"pid\":3,\"tid\":3,\"ts\":1,\"x\":[1,{\"y\":[]}]}", &s),
			 LP_TR_OTHER);
	/* --off-cpu's slices are not spans (waits); a span says its category or none. */
	assert_int_equal(parse("{\"ph\":\"X\",\"name\":\"blocked\",\"cat\":\"off-cpu\",\"pid\":3,"
			       "\"tid\":3,\"ts\":1.000,\"dur\":2.000,\"args\":{}}", &s),
			 LP_TR_OFF_CPU);
	assert_int_equal(parse("{\"ph\":\"X\",\"name\":\"x\",\"cat\":\"other\",\"pid\":3,"
			       "\"tid\":3,\"ts\":1.000,\"dur\":2.000,\"args\":{}}", &s),
			 LP_TR_OTHER);
	assert_int_equal(parse("{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"span\",\"pid\":3,"
			       "\"tid\":3,\"ts\":1.000,\"dur\":2.000,\"args\":{}}", &s),
			 LP_TR_SPAN);
	/* Not events: broken JSON, a missing member, trailing text. */
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1", &s), -EINVAL);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"ts\":1,\"dur\":1}", &s), -EINVAL);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"dur\":1}", &s), -EINVAL);
	assert_int_equal(parse("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1} x", &s), -EINVAL);
	assert_int_equal(parse("{\"name\":\"\\q\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1}", &s),
			 -EINVAL);
	assert_int_equal(parse("", &s), -EINVAL);
}

/* ---- the file, backwards ---- */

struct seen {
	uint64_t spans, names;
	uint64_t first_ts, last_ts;
	bool other_first, other;
	uint64_t end_ns;
};

static int seen_other(void *ctx, json_object *o)
{
	struct seen *s = ctx;
	json_object *v;

	s->other_first = s->spans == 0 && s->names == 0;
	s->other = o != NULL;
	if (o && json_object_object_get_ex(o, "end_ns", &v))
		s->end_ns = (uint64_t)json_object_get_int64(v);
	return 0;
}

static int seen_span(void *ctx, const struct lp_tr_span *sp)
{
	struct seen *s = ctx;

	if (!s->spans++)
		s->first_ts = sp->start_ns;
	s->last_ts = sp->start_ns;
	return 0;
}

static int seen_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *n, size_t l)
{
	struct seen *s = ctx;

	(void)process, (void)pid, (void)tid, (void)n, (void)l;
	s->names++;
	return 0;
}

/* A trace of n spans of names long enough that lines cross the reader's chunks. */
static void write_trace(const char *path, long n, bool other, size_t name_len)
{
	FILE *f = fopen(path, "w");
	char *name = malloc(name_len + 1);

	assert_non_null(f);
	memset(name, 'n', name_len);
	name[name_len] = '\0';
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	for (long i = 0; i < n; i++)
		fprintf(f, "%s{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"span\",\"pid\":1,\"tid\":1,"
			   "\"ts\":%ld.000,\"dur\":1.000,\"args\":{}}\n",
			i ? "," : "", name, i * 2);
	fprintf(f, ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"t\"}}\n");
	if (other)
		fprintf(f, "],\"otherData\":{\"base_ns\":10,\"end_ns\":123456}}\n");
	else
		fprintf(f, "]}\n");
	assert_int_equal(fclose(f), 0);
	free(name);
}

static void test_read_backwards(void **state)
{
	char path[] = "/tmp/lp-test-pictures.XXXXXX";
	struct seen s = { 0 };
	struct lp_tr_sink sink = { .other_data = seen_other, .span = seen_span,
				   .thread_name = seen_name, .ctx = &s };
	struct lp_tr_stats st;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	/* 30000 lines of ~1.1 KB: 32 MB, lines across every 1 MiB chunk boundary. */
	write_trace(path, 30000, true, 1000);
	assert_int_equal(lp_trace_read(path, &sink, &st), 0);
	assert_int_equal(s.spans, 30000);
	assert_int_equal(st.spans, 30000);
	assert_int_equal(st.skipped, 0);
	assert_int_equal(s.names, 1);
	assert_true(s.other_first);
	assert_true(s.other);
	assert_int_equal(s.end_ns, 123456);
	/* From the end: the last span first. */
	assert_int_equal(s.first_ts, 29999ull * 2 * 1000);
	assert_int_equal(s.last_ts, 0);

	/* No otherData: said as NULL, before the events all the same. */
	memset(&s, 0, sizeof(s));
	write_trace(path, 3, false, 5);
	assert_int_equal(lp_trace_read(path, &sink, &st), 0);
	assert_true(s.other_first);
	assert_false(s.other);
	assert_int_equal(s.spans, 3);

	/* A line past LP_TRACE_LINE_MAX is refused, not read into memory without end. */
	write_trace(path, 2, true, LP_TRACE_LINE_MAX + 10);
	assert_int_equal(lp_trace_read(path, &sink, &st), -E2BIG);
	unlink(path);
	assert_int_equal(lp_trace_read(path, &sink, &st), -ENOENT);
}

/* ---- the model ---- */

static struct lp_tr_span span(uint32_t tid, uint64_t start, uint64_t end, const char *name)
{
	return (struct lp_tr_span){ .pid = 1, .tid = tid, .start_ns = start, .dur_ns = end - start,
				    .name = name, .name_len = strlen(name), .meta = "",
				    .has_counter = true, .counter = 1 };
}

static uint32_t group_named(const struct lp_picture *p, const char *name)
{
	for (uint32_t g = 0; g < p->ngroups; g++)
		if (p->groups[g].name_len == strlen(name) &&
		    !memcmp(lp_picture_text(p, p->groups[g].name_off), name, strlen(name)))
			return g;
	fail_msg("no group %s", name);
	return 0;
}

/* The nested example as record writes it (children first), fed from the end. */
static void nested(struct lp_picture *p)
{
	struct lp_tr_span s[] = {
		span(7, 10, 20, "load"), span(7, 20, 40, "fwd"), span(7, 40, 50, "load"),
		span(7, 50, 90, "fwd"), span(7, 0, 100, "root"),
	};

	assert_int_equal(lp_picture_init(p, 100), 0);
	for (int i = (int)ARRAY_SIZE(s) - 1; i >= 0; i--)
		assert_int_equal(lp_picture_span(p, &s[i]), 0);
	assert_int_equal(lp_picture_finish(p), 0);
}

static void test_model_nesting(void **state)
{
	struct lp_picture p;
	const struct lp_pic_level *L;
	uint32_t root, fwd, load;

	(void)state;
	nested(&p);
	root = group_named(&p, "root");
	fwd = group_named(&p, "fwd");
	load = group_named(&p, "load");
	assert_int_equal(p.spans, 5);
	assert_int_equal(p.first_ns, 0);
	assert_int_equal(p.last_ns, 100);
	assert_int_equal(p.out_of_order, 0);
	assert_int_equal(p.nthreads, 1);
	assert_int_equal(p.threads[0].max_depth, 1);
	/* Every span is wider than a bucket: one level, each span an item, by start. */
	assert_int_equal(p.nlevels, 1);
	L = &p.levels[0];
	assert_int_equal(L->n, 5);
	assert_int_equal(L->items[0].group, root);
	assert_int_equal(L->items[0].depth, 0);
	for (int i = 1; i < 5; i++) {
		assert_int_equal(L->items[i].depth, 1);
		assert_int_equal(L->items[i].count, 1);
		assert_int_equal(L->items[i].group, i % 2 ? load : fwd);
	}
	assert_int_equal(L->items[4].start, 50);
	assert_int_equal(L->items[4].end, 90);
	/* The call tree: root -> root -> {fwd, load}, self = total less the children. */
	assert_int_equal(p.nnodes, 4);
	assert_int_equal(p.nodes[0].total_ns, 100);
	assert_int_equal(p.nodes[1].group, root);
	assert_int_equal(p.nodes[1].self_ns, 20);
	for (int i = 2; i < 4; i++) {
		const struct lp_pic_node *n = &p.nodes[i];

		assert_int_equal(n->parent, 1);
		assert_int_equal(n->calls, 2);
		assert_int_equal(n->total_ns, n->group == fwd ? 60 : 20);
		assert_int_equal(n->self_ns, n->total_ns);
	}
	lp_picture_free(&p);
}

static void test_model_labels(void **state)
{
	struct lp_picture p;
	struct lp_tr_span s = span(1, 0, 10, "n");
	struct lp_buf b = { 0 };
	/* k=v, flag (no value), as the reader's blob has them */
	static const char blob[] = "\1\0k\1\0v\4\0flag\0\0";

	(void)state;
	s.meta = blob;
	s.meta_len = sizeof(blob) - 1;
	assert_int_equal(lp_picture_init(&p, 10), 0);
	assert_int_equal(lp_picture_span(&p, &s), 0);
	assert_int_equal(lp_picture_finish(&p), 0);
	assert_int_equal(lp_picture_group_label(&p, p.levels[0].items[0].group, &b), 0);
	assert_string_equal(b.p, "n [k=v, flag]");
	lp_buf_free(&b);
	lp_picture_free(&p);
}

/* Many spans narrower than a bucket: merged per thread and depth, levels within budget. */
static void test_model_merging(void **state)
{
	const uint64_t n = 1000000, extent = 2 * n;
	struct lp_picture p;
	uint64_t spans = 0;

	(void)state;
	assert_int_equal(lp_picture_init(&p, extent), 0);
	for (uint64_t i = n; i-- > 0;) {
		struct lp_tr_span s = span(1, 2 * i, 2 * i + 1, i % 3 ? "a" : "b");

		assert_int_equal(lp_picture_span(&p, &s), 0);
	}
	assert_int_equal(lp_picture_finish(&p), 0);
	/* Level 0: LP_PICTURE_PX buckets of ~977 spans each, several names: merged. */
	assert_int_equal(p.levels[0].n, LP_PICTURE_PX);
	for (size_t i = 0; i < p.levels[0].n; i++) {
		spans += p.levels[0].items[i].count;
		assert_int_equal(p.levels[0].items[i].group, LP_PIC_MIXED);
		if (i)
			assert_true(p.levels[0].items[i].start > p.levels[0].items[i - 1].start);
	}
	assert_int_equal(spans, n);
	assert_int_equal(p.dropped_spans, 0);
	/* Finer levels until the budget: 2048 + 16384 + 131072 fit, 1048576 does not. */
	assert_int_equal(p.nlevels, 3);
	assert_true(p.items <= LP_HTML_BLOCKS_MAX);
	assert_int_equal(p.items, p.levels[0].n + p.levels[1].n + p.levels[2].n);
	assert_int_equal(lp_picture_level_for(&p, (double)extent / 1000), 0);
	assert_int_equal(lp_picture_level_for(&p, (double)extent / 10000), 1);
	assert_int_equal(lp_picture_level_for(&p, 1), 2);
	lp_picture_free(&p);
}

static void test_model_limits(void **state)
{
	struct lp_picture p;
	char name[32];
	struct lp_tr_span s;

	(void)state;
	assert_int_equal(lp_picture_init(&p, 1000000), 0);
	/* More names than LP_PICTURE_GROUPS_MAX: the rest are "(other names)". */
	for (int i = LP_PICTURE_GROUPS_MAX + 100; i-- > 0;) {
		snprintf(name, sizeof(name), "name%d", i);
		s = span(2, (uint64_t)i * 10, (uint64_t)i * 10 + 5, name);
		assert_int_equal(lp_picture_span(&p, &s), 0);
	}
	assert_int_equal(p.other_spans, 100);
	assert_int_equal(p.ngroups, LP_PICTURE_GROUPS_MAX + 2);
	/* Spans out of the writer's order (a child after its parent's end) are counted. */
	s = span(3, 0, 10, "x");
	assert_int_equal(lp_picture_span(&p, &s), 0);
	s = span(3, 20, 30, "x");
	assert_int_equal(lp_picture_span(&p, &s), 0);
	assert_int_equal(p.out_of_order, 1);
	assert_int_equal(lp_picture_finish(&p), 0);
	lp_picture_free(&p);
}

/* More distinct paths than LP_PICTURE_PATHS_MAX: one "(more call paths)" node per parent. */
static void test_model_paths(void **state)
{
	const int names = 300, paths = names * names; /* 90000 paths of 600 names */
	struct lp_picture p;
	struct lp_tr_span r = span(1, 0, 1000000000, "root");
	char name[32];
	uint32_t *sel;
	size_t n;

	(void)state;
	assert_int_equal(lp_picture_init(&p, 1000000000), 0);
	assert_int_equal(lp_picture_span(&p, &r), 0);
	/* root > aI > bJ, from the end as the reader gives them: parents first. */
	for (int k = paths; k-- > 0;) {
		struct lp_tr_span c, d;

		snprintf(name, sizeof(name), "a%d", k / names);
		c = span(1, (uint64_t)k * 10, (uint64_t)k * 10 + 8, name);
		assert_int_equal(lp_picture_span(&p, &c), 0);
		snprintf(name, sizeof(name), "b%d", k % names);
		d = span(1, (uint64_t)k * 10 + 1, (uint64_t)k * 10 + 2, name);
		assert_int_equal(lp_picture_span(&p, &d), 0);
	}
	assert_int_equal(lp_picture_finish(&p), 0);
	assert_int_equal(p.other_spans, 0);
	/*
	 * Past the limit, a span on a new path goes to its parent's "(more call
	 * paths)" node, and the spans inside it are absorbed there: every span is
	 * counted once, as a call of a node or as absorbed.
	 */
	{
		uint64_t calls = 0, more_calls = 0;

		for (size_t i = 1; i < p.nnodes; i++) {
			calls += p.nodes[i].calls;
			if (p.nodes[i].group == LP_PIC_GROUP_MORE)
				more_calls += p.nodes[i].calls;
		}
		assert_true(p.more_paths >= (uint64_t)(paths - LP_PICTURE_PATHS_MAX));
		assert_int_equal(calls + p.more_paths - more_calls, 1 + 2 * (uint64_t)paths);
		assert_true(p.nnodes <= LP_PICTURE_PATHS_MAX + names + 1);
	}
	/* The widest few, ancestors first in pre-order: all, root, then root's widest child... */
	assert_int_equal(lp_picture_flame(&p, 10, &sel, &n), 0);
	assert_int_equal(n, 10);
	assert_int_equal(sel[0], 0);
	assert_int_equal(p.nodes[sel[1]].parent, 0);
	for (size_t i = 2; i < n; i++) {
		bool parent_before = false;

		for (size_t j = 0; j < i; j++)
			parent_before |= sel[j] == p.nodes[sel[i]].parent;
		assert_true(parent_before);
		assert_true(p.nodes[sel[i]].total_ns <= p.nodes[p.nodes[sel[i]].parent].total_ns);
	}
	free(sel);
	lp_picture_free(&p);
}

static void test_model_summary_paths(void **state)
{
	struct lp_picture p;

	(void)state;
	assert_int_equal(lp_picture_init(&p, 100), 0);
	assert_int_equal(lp_picture_path(&p, -1, "main", 4, 1, 100, 10), 0);
	assert_int_equal(lp_picture_path(&p, 0, "work", 4, 3, 90, 90), 0);
	assert_int_equal(lp_picture_path(&p, 5, "bad", 3, 1, 1, 1), -EINVAL);
	{
		struct lp_tr_span s = span(1, 0, 50, "other");

		/* The trace still draws the timeline, but adds nothing to the summary's tree. */
		assert_int_equal(lp_picture_span(&p, &s), 0);
	}
	assert_int_equal(lp_picture_finish(&p), 0);
	assert_true(p.tree_from_summary);
	assert_int_equal(p.nnodes, 3);
	assert_int_equal(p.nodes[0].total_ns, 100);
	assert_int_equal(p.nodes[2].parent, 1);
	assert_int_equal(p.nodes[2].self_ns, 90);
	lp_picture_free(&p);
}

/* ---- escaping ---- */

static char *safe_json(const char *json)
{
	static char out[512];
	FILE *f = fmemopen(out, sizeof(out), "w");

	assert_non_null(f);
	assert_int_equal(lp_html_safe_json(f, json, strlen(json)), 0);
	fclose(f);
	return out;
}

static void test_html_safe_json(void **state)
{
	(void)state;
	assert_string_equal(safe_json("[\"</script><script>\",\"a&b\"]"),
			    "[\"\\u003c/script\\u003e\\u003cscript\\u003e\",\"a\\u0026b\"]");
	assert_string_equal(safe_json("\"\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xaa\""),
			    "\"\\u2028|\\u2029|\xe2\x80\xaa\"");
	assert_string_equal(safe_json("\"<!--\""), "\"\\u003c!--\"");
}

static char *xml(const char *s, size_t len)
{
	static struct lp_buf b;

	b.len = 0;
	assert_int_equal(lp_xml_text(&b, s, len), 0);
	return b.p;
}

static void test_xml_text(void **state)
{
	static const char in[] = "a<b>&\"'\x01\x1b[1m\x7f\xc2\x9b|\xff|\xef\xbf\xbe\xef\xbf\xbf|"
				 "\xe2\x80\xae|\xe2\x80\xa8|\xc3\xa9";
	const char *out = xml(in, sizeof(in) - 1);

	(void)state;
	/* Markup escaped, controls dropped, invalid UTF-8 U+FFFD, U+FFFE/U+FFFF dropped, invisible shown. */
	assert_string_equal(out, "a&lt;b&gt;&amp;&quot;&#39;[1m|\xef\xbf\xbd||\\u202e|\\u2028|\xc3\xa9");
	assert_true(ut_valid_utf8(out, strlen(out)));
	assert_string_equal(xml("", 0), "");
}

static int teardown_all(void **state)
{
	(void)state;
	lp_tr_scratch_free(&sc);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_line),
		cmocka_unit_test(test_writer_round_trip),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_other_lines),
		cmocka_unit_test(test_read_backwards),
		cmocka_unit_test(test_model_nesting),
		cmocka_unit_test(test_model_labels),
		cmocka_unit_test(test_model_merging),
		cmocka_unit_test(test_model_limits),
		cmocka_unit_test(test_model_paths),
		cmocka_unit_test(test_model_summary_paths),
		cmocka_unit_test(test_html_safe_json),
		cmocka_unit_test(test_xml_text),
	};

	return cmocka_run_group_tests(tests, NULL, teardown_all);
}
