// SPDX-License-Identifier: MIT
/*
 * The Perfetto trace writer (user/core/pftrace.c) on synthetic spans, and its
 * reader (user/read/pftrace_read.c) on what it wrote. The packets are decoded
 * here with zlib and the wire primitives, field by field, to check what the
 * trace processor will see: the events of a thread in the order it ran them
 * whatever order the spans closed in, equal timestamps (a zero-length child, a
 * child ending with its parent) in nesting order, and an absolute time where a
 * span begins before its sequence's last packet. Bounded (lp_pftrace_bound):
 * a window's sequence starts at its first kept span and defines there every
 * text it uses; a budget counts at least the packets' bytes; following the
 * JSON trace's ring, the same spans.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "nest.h"
#include "pbw.h"
#include "pftrace.h"
#include "pftrace_read.h"
#include "tracering.h"
#include "unit.h"

/* One event as the file has it. */
struct ev {
	int type;      /* 1 BEGIN, 2 END */
	uint64_t ts;   /* absolute, rebuilt from the deltas */
	bool absolute; /* carried timestamp_clock_id 3 */
	char name[64]; /* BEGIN: its name (interned or not) */
};

static struct ev evs[512];
static size_t nevs;
static size_t nclears;    /* packets that cleared the sequence's state */
static size_t desc_bytes; /* of the packets of track descriptors, with their tag and length */

static char path[] = "/tmp/lp-test-pftrace-XXXXXX";
/* test_read_refuses' own: a file read once is never written again (outfile.h). */
static char path2[] = "/tmp/lp-test-pftrace2-XXXXXX";

static uint64_t field_u(const uint8_t *p, size_t len, uint32_t num, bool *has)
{
	struct pb_cur c = { p, p + len };
	struct pb_field f;
	uint64_t v = 0;

	*has = false;
	while (pb_next(&c, &f) == 1)
		if (f.num == num && f.wire == PB_VARINT)
			v = f.v, *has = true;
	return v;
}

static bool field_b(const uint8_t *p, size_t len, uint32_t num, struct pb_field *out)
{
	struct pb_cur c = { p, p + len };
	struct pb_field f;
	bool found = false;

	while (pb_next(&c, &f) == 1)
		if (f.num == num && f.wire == PB_LEN)
			*out = f, found = true;
	return found;
}

/* Every track event of the file, in file order (one thread: one sequence). */
static void decode(void)
{
	FILE *f = fopen(path, "rb");
	static uint8_t file[1 << 20], raw[1 << 22];
	size_t n = fread(file, 1, sizeof(file), f);
	struct pb_cur c = { file, file + n };
	struct pb_field pkt;
	char names[256][64] = { { 0 } };
	uint64_t clock = 0;

	fclose(f);
	nevs = nclears = desc_bytes = 0;
	while (pb_next(&c, &pkt) == 1) {
		struct pb_field comp = { 0 };
		uLongf rlen = sizeof(raw);
		struct pb_cur r;
		struct pb_field p;

		assert_true(field_b(pkt.data, pkt.len, PF_TP_COMPRESSED, &comp));
		assert_int_equal(uncompress(raw, &rlen, comp.data, comp.len), Z_OK);
		r = (struct pb_cur){ raw, raw + rlen };
		while (pb_next(&r, &p) == 1) {
			struct pb_field te, cs, id, e;
			bool has, abs_clock;
			uint64_t ts = field_u(p.data, p.len, PF_TP_TIMESTAMP, &has);

			if (field_b(p.data, p.len, PF_TP_TRACK_DESCRIPTOR, &te))
				desc_bytes += 1 + pb_varint_len(p.len) + p.len;
			/* What was interned before goes: the sequence stands on its own from here. */
			if (field_u(p.data, p.len, PF_TP_SEQ_FLAGS, &has) & PF_SEQ_CLEARED) {
				memset(names, 0, sizeof(names));
				nclears++;
			}
			/* A sequence's first packet has our own texts with its clock. */
			if (field_b(p.data, p.len, PF_TP_INTERNED, &id)) {
				struct pb_cur ic = { id.data, id.data + id.len };

				while (pb_next(&ic, &e) == 1) {
					struct pb_field t;
					uint64_t iid = field_u(e.data, e.len, PF_IE_IID, &has);

					if (e.num == PF_ID_NAMES && iid < 256 &&
					    field_b(e.data, e.len, PF_IE_TEXT, &t))
						memcpy(names[iid], t.data, t.len < 63 ? t.len : 63);
				}
			}
			if (field_b(p.data, p.len, PF_TP_CLOCK_SNAPSHOT, &cs)) {
				struct pb_field clk;

				assert_true(field_b(cs.data, cs.len, PF_CS_CLOCKS, &clk) || true);
				/* The first clock is ours: clock 64 at the snapshot's time. */
				{
					struct pb_cur cc = { cs.data, cs.data + cs.len };

					assert_int_equal(pb_next(&cc, &clk), 1);
				}
				assert_int_equal(field_u(clk.data, clk.len, PF_CLK_ID, &has),
						 LP_PFTRACE_CLOCK);
				clock = field_u(clk.data, clk.len, PF_CLK_TIMESTAMP, &has);
				continue;
			}
			if (!field_b(p.data, p.len, PF_TP_TRACK_EVENT, &te))
				continue;
			assert_true(nclears > 0);
			field_u(p.data, p.len, PF_TP_CLOCK_ID, &abs_clock);
			if (abs_clock) {
				evs[nevs].ts = ts;
			} else {
				clock += ts;
				evs[nevs].ts = clock;
			}
			evs[nevs].absolute = abs_clock;
			evs[nevs].type = (int)field_u(te.data, te.len, PF_TE_TYPE, &has);
			if (evs[nevs].type == PF_TYPE_BEGIN) {
				uint64_t iid = field_u(te.data, te.len, PF_TE_NAME_IID, &has);

				assert_true(has && iid < 256 && names[iid][0]);
				strcpy(evs[nevs].name, names[iid]);
			}
			assert_true(++nevs < ARRAY_SIZE(evs));
		}
	}
}

static void span(struct lp_pftrace *t, const char *name, uint32_t depth, uint64_t start,
		 uint64_t end)
{
	struct lp_pftrace_part p = { .pid = 10, .tid = 11, .depth = depth, .start_ns = start,
				     .end_ns = end, .name = name, .name_len = strlen(name) };

	lp_pftrace_span_part(t, &p);
}

static void expect(size_t i, int type, uint64_t ts, const char *name)
{
	if (evs[i].type != type || evs[i].ts != ts || (name && strcmp(evs[i].name, name)))
		fail_msg("event %zu: %s %s at %llu, want %s %s at %llu", i,
			 evs[i].type == 1 ? "BEGIN" : "END", evs[i].name,
			 (unsigned long long)evs[i].ts, type == 1 ? "BEGIN" : "END",
			 name ? name : "", (unsigned long long)ts);
}

/*
 * P [100, 200] holds a zero-length child A at 100 (its start), B [150, 200]
 * ending with it, and B's zero-length child C at 200. They close C, B... as
 * the nesting closes them: A, C, B, P. The file must say what ran.
 */
static void test_nesting_order_with_equal_times(void **state)
{
	struct lp_pftrace *t;
	struct lp_pftrace_stats st;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
	span(t, "A", 1, 100, 100);
	span(t, "C", 2, 200, 200);
	span(t, "B", 1, 150, 200);
	span(t, "P", 0, 100, 200);
	assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
	decode();
	assert_int_equal(nevs, 8);
	expect(0, 1, 100, "P");
	expect(1, 1, 100, "A");
	expect(2, 2, 100, NULL);
	expect(3, 1, 150, "B");
	expect(4, 1, 200, "C");
	expect(5, 2, 200, NULL); /* C */
	expect(6, 2, 200, NULL); /* B */
	expect(7, 2, 200, NULL); /* P */
	assert_int_equal(st.absolute, 0);
	for (size_t i = 0; i < nevs; i++)
		assert_false(evs[i].absolute);
}

/* A span rebuilt at attach (it began before what was written): its BEGIN is absolute. */
static void test_earlier_begin_is_absolute(void **state)
{
	struct lp_pftrace *t;
	struct lp_pftrace_stats st;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
	span(t, "X", 0, 1000, 1100);
	span(t, "Y", 0, 1200, 1300);
	span(t, "R", 0, 500, 2000); /* closed last, began first: started_before_recording */
	span(t, "Z", 0, 2500, 2600);
	assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
	decode();
	assert_int_equal(nevs, 8);
	expect(4, 1, 500, "R");
	assert_true(evs[4].absolute);
	expect(5, 2, 2000, NULL);
	assert_false(evs[5].absolute);
	expect(6, 1, 2500, "Z");
	assert_int_equal(st.absolute, 1);
}

/* Past LP_PFTRACE_HOLD_MAX held spans they go out; the parent's BEGIN then is absolute. */
static void test_hold_limit(void **state)
{
	struct lp_pftrace *t;
	struct lp_pftrace_stats st;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
	for (uint64_t i = 0; i < LP_PFTRACE_HOLD_MAX; i++)
		span(t, "child", 1, 1000 + 10 * i, 1005 + 10 * i);
	span(t, "parent", 0, 1000, 1000 + 10 * LP_PFTRACE_HOLD_MAX);
	assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
	assert_int_equal(st.spans, LP_PFTRACE_HOLD_MAX + 1);
	assert_int_equal(st.absolute, 1);
}

/*
 * --trace-last: three flushes of a thread (a top-level span and what it
 * encloses), A [100, 200], B [300, 400] with b1 ending at 320 and b2 at 390,
 * and A again [500, 600], off-CPU waits in b1 and b2; the window [340, 600].
 * The sequence starts at B (state cleared, its clock at 300) without b1 or its
 * wait, and names "A" there, though its first A was left out before.
 */
static void test_window_restarts_at_first_kept_flush(void **state)
{
	struct lp_pftrace *t;
	struct lp_pftrace_stats st;
	struct lp_tring_stats b;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
	assert_int_equal(lp_pftrace_bound(t, 260, 0, NULL), 0);
	span(t, "a1", 1, 110, 120);
	span(t, "A", 0, 100, 200);
	lp_pftrace_off_cpu(t, 10, 11, 2, 312, 314, 316);
	span(t, "b1", 1, 310, 320);
	lp_pftrace_off_cpu(t, 10, 11, 2, 360, 370, 380);
	span(t, "b2", 1, 350, 390);
	span(t, "B", 0, 300, 400);
	span(t, "A", 0, 500, 600);
	lp_pftrace_bound_end(t, 600, &b);
	assert_int_equal(b.spans, 3);
	assert_int_equal(b.spans_left_out, 3);
	assert_int_equal(b.inner, 2);
	assert_int_equal(b.inner_left_out, 2);
	assert_int_equal(b.from_ns, 340);
	assert_false(b.cut);
	assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
	assert_int_equal(st.spans, 3);
	assert_int_equal(st.off_cpu, 2);
	decode();
	assert_int_equal(nclears, 1);
	assert_int_equal(nevs, 10);
	expect(0, 1, 300, "B");
	expect(1, 1, 350, "b2");
	expect(2, 1, 360, "blocked");
	expect(3, 2, 369, NULL);
	expect(4, 1, 370, "runq");
	expect(5, 2, 380, NULL);
	expect(6, 2, 390, NULL); /* b2 */
	expect(7, 2, 400, NULL); /* B */
	expect(8, 1, 500, "A");
	expect(9, 2, 600, NULL);
	assert_int_equal(st.absolute, 0);
}

/* Top-level spans of n bytes' names (some repeated), each with a child, until t is full. */
static void fill_spans(struct lp_pftrace *t, int n)
{
	for (int i = 0; i < n; i++) {
		char name[40];

		snprintf(name, sizeof(name), "span-%d-%.*s", i % 7, i % 20, "xxxxxxxxxxxxxxxxxxxx");
		span(t, "child", 1, 1000 + 100 * (uint64_t)i + 10, 1000 + 100 * (uint64_t)i + 50);
		span(t, name, 0, 1000 + 100 * (uint64_t)i, 1000 + 100 * (uint64_t)i + 60);
	}
}

/*
 * --trace-max-size: the spans that fit, the first ones in the order they
 * closed (child_i then span_i); their packets (the file's before compression,
 * less the tracks' descriptors) take at most what the budget counted, within
 * the bound.
 */
static void test_budget_counts_every_packet_byte(void **state)
{
	struct lp_pftrace *t;
	struct lp_pftrace_stats st;
	struct lp_tring_stats b;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
	assert_int_equal(lp_pftrace_bound(t, 0, LP_TRACE_SIZE_MIN, NULL), 0);
	fill_spans(t, 1000);
	lp_pftrace_bound_end(t, 200000, &b);
	assert_true(b.full);
	assert_true(b.spans > 20 && b.spans < 2000);
	assert_int_equal(b.spans + b.spans_left_out, 2000);
	assert_true(b.bytes <= LP_TRACE_SIZE_MIN);
	assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
	assert_int_equal(st.spans, b.spans);
	decode();
	assert_int_equal(nevs, 2 * b.spans);
	for (size_t i = 0, k = 0; i < nevs; i++) {
		char want[40];
		size_t pair = k / 2;

		if (evs[i].type != 1)
			continue;
		/* Pre-order: span_i, then its child (a lone child last when its parent did not fit). */
		if (k % 2 == 0 && k + 1 < b.spans)
			snprintf(want, sizeof(want), "span-%zu-%.*s", pair % 7, (int)(pair % 20),
				 "xxxxxxxxxxxxxxxxxxxx");
		else
			strcpy(want, "child");
		assert_string_equal(evs[i].name, want);
		k++;
	}
	assert_true(st.raw_bytes - desc_bytes <= b.bytes);
	print_message("--trace-max-size 4K: %llu spans, %llu bytes of packets, %llu counted\n",
		      (unsigned long long)b.spans, (unsigned long long)(st.raw_bytes - desc_bytes),
		      (unsigned long long)b.bytes);
}

static int leader_emit(void *ctx, const char *a, size_t alen, const char *b, size_t blen)
{
	(void)ctx, (void)a, (void)alen, (void)b, (void)blen;
	return 0;
}

/*
 * --format json,perfetto: the Perfetto trace follows the JSON trace's ring
 * (here one whose events cost 150 bytes, a JSON span's): the same count of
 * spans kept, budget or window cut short by the leader's bound.
 */
static void test_follows_the_json_ring(void **state)
{
	for (int window = 0; window < 2; window++) {
		struct lp_tring_opts o = { .last_ns = window ? 1000000 : 0,
					   .max_bytes = 16 << 10, .overhead = 2,
					   .emit = leader_emit };
		struct lp_tring *json = lp_tring_new(&o);
		struct lp_tring_stats js, ps;
		struct lp_pftrace *t;
		struct lp_pftrace_stats st;
		char ev[148];

		(void)state;
		assert_non_null(json);
		memset(ev, 'j', sizeof(ev));
		assert_int_equal(lp_pftrace_open(&t, path, NULL, 0), 0);
		assert_int_equal(lp_pftrace_bound(t, o.last_ns, o.max_bytes, json), 0);
		for (int i = 0; i < 1000; i++) {
			uint64_t s = 1000 + 100 * (uint64_t)i;

			assert_int_equal(lp_tring_span(json, 10, 11, s, s + 60, ev, sizeof(ev)), 0);
			span(t, "x", 0, s, s + 60);
		}
		lp_tring_end(json, 200000, &js);
		lp_pftrace_bound_end(t, 200000, &ps);
		assert_true(window ? js.cut : js.full);
		assert_true(js.spans > 50 && js.spans < 1000);
		assert_int_equal(ps.spans, js.spans);
		assert_int_equal(ps.spans_left_out, js.spans_left_out);
		assert_int_equal(ps.from_ns, js.from_ns);
		assert_int_equal(ps.full_ns, js.full_ns);
		assert_int_equal(lp_pftrace_close(t, NULL, &st), 0);
		assert_int_equal(st.spans, js.spans);
		lp_tring_free(json);
	}
}

/* What the reader hands its sink. */
struct got {
	char other[256];
	char names[256];
	struct lp_tr_span spans[8];
	char texts[8][64];
	char metas[8][64];
	size_t n;
};

static int got_other(void *ctx, json_object *o)
{
	struct got *g = ctx;

	snprintf(g->other, sizeof(g->other), "%s", o ? json_object_to_json_string(o) : "(none)");
	return 0;
}

static int got_span(void *ctx, const struct lp_tr_span *s)
{
	struct got *g = ctx;

	assert_true(g->n < 8);
	g->spans[g->n] = *s;
	memcpy(g->texts[g->n], s->name, s->name_len);
	memcpy(g->metas[g->n], s->meta, s->meta_len);
	g->n++;
	return 0;
}

static int got_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
		    size_t len)
{
	struct got *g = ctx;
	size_t at = strlen(g->names);

	snprintf(g->names + at, sizeof(g->names) - at, "%s %u %u %.*s;", process ? "p" : "t", pid,
		 tid, (int)len, name);
	return 0;
}

/*
 * Written, read back: otherData, names, and the spans a thread's each after
 * those enclosing it, times from base_ns, metadata items, counters and flags.
 */
static void test_read_back(void **state)
{
	static const char meta[] = "\x01\x00k\x03\x00v\xc3\xa9"; /* k = "vé" */
	struct lp_pftrace *t;
	struct lp_pftrace_part p = { .pid = 10, .tid = 11, .depth = 1, .start_ns = 5100,
				     .end_ns = 5200, .name = "inner", .name_len = 5,
				     .meta = meta, .meta_len = sizeof(meta) - 1,
				     .has_counter = true, .counter = 7, .has_self_counter = true,
				     .self_counter = 3, .flags = LP_SPAN_UNCERTAIN };
	struct got g = { 0 };
	struct lp_tr_sink sink = { .other_data = got_other, .span = got_span,
				   .thread_name = got_name, .ctx = &g };
	struct lp_tr_stats st;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path, NULL, 5000), 0);
	lp_pftrace_span_part(t, &p);
	span(t, "outer", 0, 5000, 6000);
	lp_pftrace_name_text(t, true, 10, 10, "proc", 4);
	lp_pftrace_name_text(t, false, 10, 11, "thr\xff", 4);
	assert_int_equal(lp_pftrace_close(t, "{\"base_ns\":5000,\"x\":[1]}", NULL), 0);
	assert_true(lp_pftrace_is(path));
	assert_int_equal(lp_read_any_trace(path, &sink, &st), 0);
	assert_string_equal(g.other, "{ \"base_ns\": 5000, \"x\": [ 1 ] }");
	/* Names as the JSON trace has them: valid UTF-8 (0xff became U+FFFD). */
	assert_string_equal(g.names, "p 10 10 proc;t 10 11 thr\xef\xbf\xbd;");
	assert_int_equal(g.n, 2);
	assert_int_equal(st.spans, 2);
	assert_string_equal(g.texts[0], "outer");
	assert_int_equal(g.spans[0].start_ns, 0);
	assert_int_equal(g.spans[0].dur_ns, 1000);
	assert_false(g.spans[0].has_counter);
	assert_string_equal(g.texts[1], "inner");
	assert_int_equal(g.spans[1].pid, 10);
	assert_int_equal(g.spans[1].tid, 11);
	assert_int_equal(g.spans[1].start_ns, 100);
	assert_int_equal(g.spans[1].dur_ns, 100);
	assert_true(g.spans[1].has_counter);
	assert_int_equal(g.spans[1].counter, 7);
	assert_true(g.spans[1].has_self_counter);
	assert_int_equal(g.spans[1].self_counter, 3);
	assert_int_equal(g.spans[1].flags, LP_SPAN_UNCERTAIN);
	assert_int_equal(g.spans[1].meta_len, sizeof(meta) - 1);
	assert_memory_equal(g.metas[1], meta, sizeof(meta) - 1);
}

/* A file that is not a trace, or one cut short, is refused. */
static void test_read_refuses(void **state)
{
	struct lp_pftrace *t;
	struct lp_tr_sink sink = { 0 };
	FILE *f;
	long size;

	(void)state;
	assert_int_equal(lp_pftrace_open(&t, path2, NULL, 0), 0);
	span(t, "x", 0, 1, 2);
	assert_int_equal(lp_pftrace_close(t, NULL, NULL), 0);
	f = fopen(path2, "r+b");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path2, size - 3), 0);
	assert_int_equal(lp_pftrace_read(path2, &sink, NULL), -EBADMSG);
	f = fopen(path2, "wb");
	fputs("\x0a\x03\x08\x01", f); /* a packet whose length runs past the file */
	fclose(f);
	assert_int_equal(lp_pftrace_read(path2, &sink, NULL), -EBADMSG);
}

static int setup(void **state)
{
	int fd = mkstemp(path), fd2 = mkstemp(path2);

	(void)state;
	if (fd < 0 || fd2 < 0)
		return -1;
	close(fd);
	close(fd2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	unlink(path2);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting_order_with_equal_times),
		cmocka_unit_test(test_earlier_begin_is_absolute),
		cmocka_unit_test(test_hold_limit),
		cmocka_unit_test(test_window_restarts_at_first_kept_flush),
		cmocka_unit_test(test_budget_counts_every_packet_byte),
		cmocka_unit_test(test_follows_the_json_ring),
		cmocka_unit_test(test_read_back),
		cmocka_unit_test(test_read_refuses),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
