// SPDX-License-Identifier: MIT
/* Ring-buffer records (bpf/wire.h) built in memory and decoded (user/core/decode.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/wire.h"
#include "decode.h"
#include "unit.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define PID 4242
#define TID 4243

struct fx {
	struct strtab *st;
	struct lp_decoder *d;
	struct lp_event ev[64];
	size_t nev;
	int event_ret;
	/* file_text */
	int reads;
	uint64_t read_dev, read_ino, read_off;
	size_t read_size;
	const char *read_text; /* NULL: fail with -ENOENT */
	/* site_text (answers with read_text too) */
	int site_reads;
	uint32_t site_file;
	uint64_t site_at, site_addr;
	/* libs */
	int libs, libs_paused;
	uint32_t libs_pid;
	uint64_t libs_ts, libs_start;
	int stops, stop_sig;
	uint32_t stop_pid;
	uint64_t stop_ts, stop_start;
	/* the record being built: 8-byte aligned like the ring buffer's */
	uint64_t rec[(LP_REC_MAX_SIZE + 64) / 8];
};

static int on_event(void *ctx, const struct lp_event *ev)
{
	struct fx *fx = ctx;

	assert_true(fx->nev < sizeof(fx->ev) / sizeof(fx->ev[0]));
	fx->ev[fx->nev++] = *ev;
	return fx->event_ret;
}

static long on_file_text(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf,
			 size_t size)
{
	struct fx *fx = ctx;
	size_t n;

	fx->reads++;
	fx->read_dev = dev;
	fx->read_ino = ino;
	fx->read_off = off;
	fx->read_size = size;
	if (!fx->read_text)
		return -ENOENT;
	n = strlen(fx->read_text);
	if (n > size - 1)
		n = size - 1;
	memcpy(buf, fx->read_text, n);
	buf[n] = '\0';
	return (long)n;
}

static long on_site_text(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
			 size_t size)
{
	struct fx *fx = ctx;

	fx->site_reads++;
	fx->site_file = file;
	fx->site_at = site;
	fx->site_addr = addr;
	fx->read_size = size;
	if (!fx->read_text)
		return -ENOENT;
	snprintf(buf, size, "%s", fx->read_text);
	return (long)strlen(buf);
}

static int on_libs(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns)
{
	struct fx *fx = ctx;

	fx->libs_ts = ts_ns;
	fx->libs_start = start_ns;
	fx->libs++;
	fx->libs_paused += paused;
	fx->libs_pid = pid;
	return 0;
}

static int on_self_stop(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns)
{
	struct fx *fx = ctx;

	fx->stops++;
	fx->stop_pid = pid;
	fx->stop_sig = sig;
	fx->stop_ts = ts_ns;
	fx->stop_start = start_ns;
	return 0;
}

static int setup_common(void **state, bool with_libs)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct lp_decode_sink sink = { .event = on_event, .ctx = NULL };

	if (!fx)
		return -1;
	sink.ctx = fx;
	if (with_libs) {
		sink.libs = on_libs;
		sink.self_stop = on_self_stop;
		sink.file_text = on_file_text;
		sink.site_text = on_site_text;
	}
	fx->st = strtab_new();
	fx->d = fx->st ? lp_decoder_new(fx->st, &sink) : NULL;
	if (!fx->d) {
		strtab_free(fx->st);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return setup_common(state, false);
}

static int setup_libs(void **state)
{
	return setup_common(state, true);
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	lp_decoder_free(fx->d);
	strtab_free(fx->st);
	free(fx);
	return 0;
}

static const struct lp_decode_stats *dstats(struct fx *fx)
{
	return lp_decoder_stats(fx->d);
}

static const char *text_of(struct fx *fx, uint32_t id, size_t *len)
{
	return strtab_str(fx->st, id, len);
}

static void assert_text(struct fx *fx, uint32_t id, const char *want)
{
	size_t len;
	const char *s = text_of(fx, id, &len);

	assert_int_equal(len, strlen(want));
	assert_memory_equal(s, want, len);
}

/* LP_REC_STRING: the text of a literal at addr. */
static void send_string(struct fx *fx, uint32_t pid, uint64_t addr, uint16_t flags, int16_t len,
			const char *text, size_t text_len)
{
	struct lp_rec_string *r = (struct lp_rec_string *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_STRING;
	r->h.flags = flags;
	r->h.pid = pid;
	r->h.tid = pid;
	r->addr = addr;
	r->len = len;
	memcpy(r + 1, text, text_len);
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r) + text_len), 0);
}

static void send_literal(struct fx *fx, uint32_t pid, uint64_t addr, bool meta, const char *text)
{
	send_string(fx, pid, addr, meta ? LP_STR_META : 0, (int16_t)strlen(text), text,
		    strlen(text));
}

struct evspec {
	uint16_t type, flags;
	uint32_t pid, tid, seq;
	uint64_t ts, counter, name, meta;
	int16_t name_len, meta_len;
	uint16_t abi;
	const char *text; /* inline bytes after the record */
	size_t text_len;
};

static int send_event_ret(struct fx *fx, const struct evspec *e)
{
	struct lp_rec_event *r = (struct lp_rec_event *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = e->type;
	r->h.flags = e->flags | (uint16_t)((e->abi ? e->abi : 1) << LP_EV_ABI_SHIFT);
	r->h.pid = e->pid ? e->pid : PID;
	r->h.tid = e->tid ? e->tid : TID;
	r->h.seq = e->seq;
	r->ts_ns = e->ts;
	r->counter = e->counter;
	r->name = e->name;
	r->meta = e->meta;
	r->pad = 3; /* ignored */
	r->name_len = e->name_len;
	r->meta_len = e->meta_len;
	assert_true(e->text_len <= LP_NAME_BUF + LP_META_BUF);
	if (e->text_len)
		memcpy(r + 1, e->text, e->text_len);
	return lp_decode(fx->d, r, sizeof(*r) + e->text_len);
}

static void send_event(struct fx *fx, const struct evspec *e)
{
	assert_int_equal(send_event_ret(fx, e), 0);
}

/* An enter whose name and metadata are literals sent before. */
static void test_literal_strings(void **state)
{
	struct fx *fx = *state;

	send_literal(fx, PID, 0x1000, false, "lean.elab");
	send_literal(fx, PID, 0x2000, true, "file=Main.lean, decl=foo");
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_META_LITERAL,
					 .seq = 0, .ts = 111, .name = 0x1000, .meta = 0x2000 });
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .seq = 1, .ts = 222, .name = 0x1000 });
	assert_int_equal(fx->nev, 2);
	assert_int_equal(fx->ev[0].type, LP_EVENT_ENTER);
	assert_int_equal(fx->ev[0].pid, PID);
	assert_int_equal(fx->ev[0].tid, TID);
	assert_int_equal(fx->ev[0].ts_ns, 111);
	assert_text(fx, fx->ev[0].name, "lean.elab");
	assert_text(fx, fx->ev[0].meta, "file=Main.lean, decl=foo");
	assert_int_equal(fx->ev[1].type, LP_EVENT_EXIT);
	assert_int_equal(fx->ev[1].name, fx->ev[0].name);
	assert_int_equal(fx->ev[1].meta, 0);
	assert_int_equal(fx->ev[1].ts_ns, 222);
	assert_int_equal(fx->ev[0].lost_before, 0);
	assert_int_equal(fx->ev[1].lost_before, 0);
	assert_int_equal(dstats(fx)->records, 4);
	assert_int_equal(dstats(fx)->malformed, 0);
	assert_int_equal(dstats(fx)->unknown_literal, 0);
	assert_int_equal(dstats(fx)->abi_mismatch, 0);

	/* The same address in another process is another literal. */
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .pid = PID + 1, .tid = PID + 1, .name = 0x1000 });
	assert_int_equal(fx->nev, 3);
	assert_text(fx, fx->ev[2].name, "(unknown)");
	assert_int_equal(dstats(fx)->unknown_literal, 1);

	/* A literal sent again (after an exec, LRU eviction): the new text wins. */
	send_literal(fx, PID, 0x1000, false, "lean.elab2");
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .seq = 2, .name = 0x1000 });
	assert_text(fx, fx->ev[3].name, "lean.elab2");
}

static void test_unknown_literal(void **state)
{
	struct fx *fx = *state;

	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_META_LITERAL,
					 .name = 0xdead, .meta = 0xbeef });
	assert_int_equal(fx->nev, 1);
	assert_text(fx, fx->ev[0].name, "(unknown)");
	assert_text(fx, fx->ev[0].meta, "(unknown)");
	assert_int_equal(dstats(fx)->unknown_literal, 2);
}

/* Runtime strings: name then metadata right after the record. */
static void test_inline_name_and_meta(void **state)
{
	struct fx *fx = *state;
	const char text[] = "hello" "a=1, b=2";

	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE |
						  LP_EV_HAS_COUNTER,
					 .ts = 5, .counter = 777, .name = 0x5000, .meta = 0x6000,
					 .name_len = 5, .meta_len = 8, .text = text,
					 .text_len = sizeof(text) - 1 });
	assert_int_equal(fx->nev, 1);
	assert_text(fx, fx->ev[0].name, "hello");
	assert_text(fx, fx->ev[0].meta, "a=1, b=2");
	assert_true(fx->ev[0].has_counter);
	assert_int_equal(fx->ev[0].counter, 777);

	/* literal name, inline meta: the meta starts right after the record */
	send_literal(fx, PID, 0x1000, false, "lit");
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_META_INLINE,
					 .seq = 1, .name = 0x1000, .meta = 0x6000, .meta_len = 3,
					 .text = "x=y", .text_len = 3 });
	assert_text(fx, fx->ev[1].name, "lit");
	assert_text(fx, fx->ev[1].meta, "x=y");
	assert_false(fx->ev[1].has_counter);

	/* an empty inline name is the empty string */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = 2,
					 .name = 0x5000, .name_len = 0 });
	assert_int_equal(fx->ev[2].name, 0);
	assert_int_equal(dstats(fx)->truncated, 0);
	assert_int_equal(dstats(fx)->unreadable, 0);
}

/*
 * --off-cpu (LP_EV_SCHED): the thread's snapshot right after the record, the
 * inline texts after it; a record too short for it is malformed.
 */
static void test_sched_snapshot(void **state)
{
	struct fx *fx = *state;
	struct lp_sched_snap snap = { .cpu_ns = 1000, .runq_ns = 200, .blocked_ns = 30,
				      .nvcsw = 4, .nivcsw = UINT64_MAX, .steal_ns = 7 };
	char text[sizeof(snap) + 5];

	memcpy(text, &snap, sizeof(snap));
	memcpy(text + sizeof(snap), "hello", 5);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_SCHED | LP_EV_NAME_INLINE | LP_EV_NO_META,
					 .name = 0x5000, .name_len = 5, .text = text,
					 .text_len = sizeof(text) });
	assert_int_equal(fx->nev, 1);
	assert_true(fx->ev[0].has_sched);
	assert_int_equal(fx->ev[0].sched.cpu_ns, 1000);
	assert_int_equal(fx->ev[0].sched.runq_ns, 200);
	assert_int_equal(fx->ev[0].sched.blocked_ns, 30);
	assert_int_equal(fx->ev[0].sched.vcsw, 4);
	assert_int_equal(fx->ev[0].sched.ivcsw, UINT64_MAX);
	assert_int_equal(fx->ev[0].sched.steal_ns, 7);
	assert_text(fx, fx->ev[0].name, "hello");
	/* Without the flag, the same bytes are the name's: no snapshot. */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = 1,
					 .name = 0x5000, .name_len = 5, .text = "hello",
					 .text_len = 5 });
	assert_false(fx->ev[1].has_sched);
	assert_text(fx, fx->ev[1].name, "hello");
	/* The flag, and fewer bytes than a snapshot. */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT, .flags = LP_EV_SCHED, .seq = 2,
					 .text = text, .text_len = sizeof(snap) - 1 });
	assert_int_equal(fx->nev, 2);
	assert_int_equal(dstats(fx)->malformed, 1);
}

/* name_len LP_NAME_MAX+1: cut, and the meta still starts after the name's bytes. */
static void test_truncated_ascii_name(void **state)
{
	struct fx *fx = *state;
	char text[LP_NAME_MAX + 1 + 3];
	char want[LP_NAME_MAX + 4];

	memset(text, 'n', LP_NAME_MAX + 1);
	memcpy(text + LP_NAME_MAX + 1, "k=v", 3);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE,
					 .name = 0x5000, .meta = 0x6000, .name_len = LP_NAME_MAX + 1,
					 .meta_len = 3, .text = text, .text_len = sizeof(text) });
	assert_int_equal(fx->nev, 1);
	memset(want, 'n', LP_NAME_MAX);
	memcpy(want + LP_NAME_MAX, ELLIPSIS, 4);
	assert_text(fx, fx->ev[0].name, want);
	assert_text(fx, fx->ev[0].meta, "k=v");
	assert_int_equal(dstats(fx)->truncated, 1);

	/* exactly LP_NAME_MAX is not cut */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = 1,
					 .name = 0x5000, .name_len = LP_NAME_MAX, .text = text,
					 .text_len = LP_NAME_MAX });
	want[LP_NAME_MAX] = '\0';
	assert_text(fx, fx->ev[1].name, want);
	assert_int_equal(dstats(fx)->truncated, 1);
}

/* Truncated metadata: LP_META_MAX+1 means cut. */
static void test_truncated_meta(void **state)
{
	struct fx *fx = *state;
	char text[3 + LP_META_MAX + 1];
	size_t len;
	const char *s;

	memcpy(text, "abc", 3);
	memset(text + 3, 'm', LP_META_MAX + 1);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE,
					 .name = 0x5000, .meta = 0x6000, .name_len = 3,
					 .meta_len = LP_META_MAX + 1, .text = text,
					 .text_len = sizeof(text) });
	assert_text(fx, fx->ev[0].name, "abc");
	s = text_of(fx, fx->ev[0].meta, &len);
	assert_int_equal(len, LP_META_MAX + 3);
	assert_memory_equal(s + LP_META_MAX, ELLIPSIS, 3);
	assert_int_equal(dstats(fx)->truncated, 1);
}

/*
 * A cut that falls inside a multi-byte character drops the whole character:
 * what is kept before the "…" is at most LP_NAME_MAX bytes of valid UTF-8.
 */
static void check_truncated_utf8(struct fx *fx, const char *prefix, const char *unit, size_t nunits,
				 size_t want_units)
{
	char text[LP_NAME_MAX + 1];
	size_t pl = strlen(prefix), ul = strlen(unit), len;
	char want[LP_NAME_MAX + 4];
	const char *s;

	assert_int_equal(pl + ul * nunits, LP_NAME_MAX + 1);
	memcpy(text, prefix, pl);
	for (size_t i = 0; i < nunits; i++)
		memcpy(text + pl + i * ul, unit, ul);
	memcpy(want, prefix, pl);
	for (size_t i = 0; i < want_units; i++)
		memcpy(want + pl + i * ul, unit, ul);
	memcpy(want + pl + want_units * ul, ELLIPSIS, 4);

	fx->nev = 0;
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
					 .name = 0x5000, .name_len = LP_NAME_MAX + 1, .text = text,
					 .text_len = sizeof(text) });
	assert_int_equal(fx->nev, 1);
	s = text_of(fx, fx->ev[0].name, &len);
	assert_true(len >= 3);
	assert_memory_equal(s + len - 3, ELLIPSIS, 3);
	assert_true(len - 3 <= LP_NAME_MAX);
	assert_true(ut_valid_utf8(s, len));
	assert_text(fx, fx->ev[0].name, want);
}

static void test_truncated_name_never_splits_utf8(void **state)
{
	struct fx *fx = *state;

	/* "a" + 128 × é (2 bytes): byte 256 is the lead byte of the 128th é */
	check_truncated_utf8(fx, "a", "\xc3\xa9", 128, 127);
	/* "ab" + 85 × € (3 bytes): the 85th € straddles the limit */
	check_truncated_utf8(fx, "ab", "\xe2\x82\xac", 85, 84);
	/* "a" + 64 × 😀 (4 bytes): the 64th starts at byte 253 */
	check_truncated_utf8(fx, "a", "\xf0\x9f\x98\x80", 64, 63);
	/* 128 × é + "x": the cut falls between characters; nothing extra dropped */
	{
		char text[LP_NAME_MAX + 1], want[LP_NAME_MAX + 4];

		for (int i = 0; i < 128; i++)
			memcpy(text + 2 * i, "\xc3\xa9", 2);
		text[256] = 'x';
		memcpy(want, text, 256);
		memcpy(want + 256, ELLIPSIS, 4);
		fx->nev = 0;
		send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
						 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
						 .name = 0x5000, .name_len = LP_NAME_MAX + 1,
						 .text = text, .text_len = sizeof(text) });
		assert_text(fx, fx->ev[0].name, want);
	}
}

static void test_unreadable_and_null(void **state)
{
	struct fx *fx = *state;

	/* a failed read: -EFAULT */
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE,
					 .name = 0x5000, .meta = 0x6000, .name_len = -EFAULT,
					 .meta_len = 3, .text = "k=v", .text_len = 3 });
	assert_int_equal(fx->nev, 1);
	assert_text(fx, fx->ev[0].name, "(unreadable)");
	/* nothing was copied for the name: the meta starts at the first byte */
	assert_text(fx, fx->ev[0].meta, "k=v");
	assert_int_equal(dstats(fx)->unreadable, 1);

	/* unreadable meta */
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE, .seq = 1,
					 .name = 0x5000, .meta = 0x6000, .name_len = 2,
					 .meta_len = -EFAULT, .text = "nm", .text_len = 2 });
	assert_text(fx, fx->ev[1].name, "nm");
	assert_text(fx, fx->ev[1].meta, "(unreadable)");
	assert_int_equal(dstats(fx)->unreadable, 2);

	/* NULL name: the marker passed a null pointer */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = 2,
					 .name = 0, .name_len = -EFAULT });
	assert_text(fx, fx->ev[2].name, "(null)");

	/* a literal the kernel could not read (it faults pages in: nothing holds it) */
	send_string(fx, PID, 0x7000, 0, -EFAULT, "", 0);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META, .seq = 3,
					 .name = 0x7000 });
	assert_text(fx, fx->ev[3].name, "(unreadable)");
	assert_int_equal(dstats(fx)->unknown_literal, 0);
	assert_int_equal(dstats(fx)->truncated, 0);
}

/* A name_len larger than the bytes present reads only what is there. */
static void test_length_beyond_record(void **state)
{
	struct fx *fx = *state;
	size_t len;

	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_META_INLINE,
					 .name = 0x5000, .meta = 0x6000, .name_len = 200,
					 .meta_len = 300, .text = "abcd", .text_len = 4 });
	assert_int_equal(fx->nev, 1);
	text_of(fx, fx->ev[0].name, &len);
	assert_true(len <= 4);
	text_of(fx, fx->ev[0].meta, &len);
	assert_int_equal(len, 0);
}

static void test_malformed_records(void **state)
{
	struct fx *fx = *state;
	uint64_t buf[(LP_REC_MAX_SIZE + 64) / 8];
	struct lp_rec_hdr *h = (struct lp_rec_hdr *)buf;

	memset(buf, 0, sizeof(buf));
	/* shorter than a header */
	assert_int_equal(lp_decode(fx->d, buf, 0), 0);
	assert_int_equal(lp_decode(fx->d, buf, sizeof(*h) - 1), 0);
	/* unknown types */
	h->type = 0;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(struct lp_rec_event)), 0);
	h->type = 99;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(struct lp_rec_event)), 0);
	/* known types, cut short */
	h->type = LP_REC_ENTER;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(struct lp_rec_event) - 1), 0);
	h->type = LP_REC_EXIT;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(*h)), 0);
	h->type = LP_REC_STRING;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(struct lp_rec_string) - 1), 0);
	h->type = LP_REC_THREAD;
	assert_int_equal(lp_decode(fx->d, buf, sizeof(struct lp_rec_thread) - 1), 0);
	assert_int_equal(dstats(fx)->malformed, 8);
	assert_int_equal(dstats(fx)->records, 8);
	assert_int_equal(fx->nev, 0);

	/* the decoder still works */
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .name = 1,
					 .name_len = 1, .text = "x", .text_len = 1 });
	assert_int_equal(fx->nev, 1);
	assert_int_equal(dstats(fx)->malformed, 8);
}

static void test_seq_gaps(void **state)
{
	struct fx *fx = *state;
	static const uint32_t seqs[] = { 0, 1, 2, 5, 6, 10 };
	static const uint32_t want[] = { 0, 0, 0, 2, 0, 3 };

	for (size_t i = 0; i < 6; i++)
		send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
						 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
						 .seq = seqs[i], .name = 1, .name_len = 1,
						 .text = "x", .text_len = 1 });
	/* another thread: its own sequence; its first event came after 3 lost ones */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .tid = 77,
					 .seq = 3, .name = 1, .name_len = 1, .text = "x",
					 .text_len = 1 });
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .tid = 77,
					 .seq = 4, .name = 1, .name_len = 1, .text = "x",
					 .text_len = 1 });
	/* the same tid in another process is another thread */
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .pid = 9,
					 .tid = TID, .seq = 0, .name = 1, .name_len = 1, .text = "x",
					 .text_len = 1 });
	assert_int_equal(fx->nev, 9);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(fx->ev[i].lost_before, want[i]);
	assert_int_equal(fx->ev[6].lost_before, 3);
	assert_int_equal(fx->ev[7].lost_before, 0);
	assert_int_equal(fx->ev[8].lost_before, 0);
	assert_int_equal(fx->ev[8].pid, 9);
}

/* The 32-bit sequence wraps after 2^32 marker hits: no loss at the wrap. */
static void test_seq_wraparound(void **state)
{
	struct fx *fx = *state;
	static const uint32_t seqs[] = { 0xfffffffcu, 0xfffffffdu, 0xfffffffeu, 0xffffffffu, 0, 1 };

	for (size_t i = 0; i < 6; i++)
		send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
						 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
						 .seq = seqs[i], .name = 1, .name_len = 1,
						 .text = "x", .text_len = 1 });
	assert_int_equal(fx->nev, 6);
	for (size_t i = 1; i < 6; i++)
		assert_int_equal(fx->ev[i].lost_before, 0);
}

/*
 * Threads that fill the thread table to the size where the next insertion
 * grows it (a power of two: half its capacity), their events interleaved.
 */
static void test_many_threads_interleaved(void **state)
{
	struct fx *fx = *state;

	for (uint32_t round = 0; round < 4; round++) {
		for (uint32_t i = 0; i < 256; i++) {
			/* Odd rounds: 0, then 255 down: a cache miss first, then hits. */
			uint32_t t = round % 2 ? (256 - i) % 256 : i;

			fx->nev = 0;
			send_event(fx, &(struct evspec){ .type = round % 2 ? LP_REC_EXIT : LP_REC_ENTER,
							 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
							 .tid = 1000 + t, .seq = round, .name = 1,
							 .name_len = 1, .text = "x", .text_len = 1 });
			assert_int_equal(fx->nev, 1);
			assert_int_equal(fx->ev[0].tid, 1000 + t);
			assert_int_equal(fx->ev[0].lost_before, 0);
		}
	}
}

static void send_exit_task(struct fx *fx, uint32_t pid, uint32_t tid)
{
	struct lp_rec_task *r = (struct lp_rec_task *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_TASK;
	r->h.pid = pid;
	r->h.tid = tid;
	r->what = LP_TASK_EXIT;
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r)), 0);
}

static uint32_t lost_before(struct fx *fx, uint32_t seq)
{
	fx->nev = 0;
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = seq,
					 .name = 1, .name_len = 1, .text = "x", .text_len = 1 });
	assert_int_equal(fx->nev, 1);
	return fx->ev[0].lost_before;
}

/*
 * A thread exits, a new one gets its id and counts from 0: nothing is lost,
 * whether its first record or the old one's exit record arrived or not.
 */
static void test_thread_id_reused(void **state)
{
	struct fx *fx = *state;

	for (uint32_t seq = 0; seq < 5; seq++)
		assert_int_equal(lost_before(fx, seq), 0);
	send_exit_task(fx, PID, TID);
	assert_int_equal(lost_before(fx, 0), 0);
	assert_int_equal(lost_before(fx, 1), 0);
	/* Its exit record lost: the next thread's seq 0 still begins a count. */
	assert_int_equal(lost_before(fx, 0), 0);
	assert_int_equal(lost_before(fx, 1), 0);
	/* Exit record, then the new thread's first record lost: that one loss only. */
	send_exit_task(fx, PID, TID);
	assert_int_equal(lost_before(fx, 1), 1);
	assert_int_equal(lost_before(fx, 2), 0);
	/* Another thread's exit changes nothing here. */
	send_exit_task(fx, PID, TID + 1);
	assert_int_equal(lost_before(fx, 4), 1);
}

/*
 * The thread map grew when it was half full, even to find a thread it had:
 * the cache in front of it must not keep pointers into the old entries (a use
 * after free, which ASan sees, and a seq read from freed memory).
 */
static void test_thread_cache_survives_growth(void **state)
{
	struct fx *fx = *state;
	static const uint32_t tids[] = { 1, 32 };

	/* 32 threads: half of the map's first 64 entries; the last one is cached. */
	for (uint32_t tid = 1; tid <= 32; tid++)
		send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
						 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
						 .tid = tid, .seq = 0, .name = 1, .name_len = 1,
						 .text = "x", .text_len = 1 });
	/* 1 is not cached: the map grows. Then 32, cached before that. */
	for (size_t i = 0; i < ARRAY_SIZE(tids); i++)
		send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
						 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META,
						 .tid = tids[i], .seq = 1, .name = 1, .name_len = 1,
						 .text = "x", .text_len = 1 });
	assert_int_equal(fx->nev, 34);
	for (size_t i = 0; i < fx->nev; i++)
		assert_int_equal(fx->ev[i].lost_before, 0);
}

static void test_thread_record(void **state)
{
	struct fx *fx = *state;
	struct lp_rec_thread *r = (struct lp_rec_thread *)fx->rec;
	uint32_t comm = 99, pcomm = 99;

	assert_false(lp_decoder_thread_name(fx->d, PID, TID, &comm, &pcomm));
	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_THREAD;
	r->h.pid = PID;
	r->h.tid = TID;
	strcpy(r->comm, "worker-1");
	/* a full 16-byte name without NUL */
	memcpy(r->pcomm, "lean-elaborator!", LP_COMM_LEN);
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r)), 0);
	assert_true(lp_decoder_thread_name(fx->d, PID, TID, &comm, &pcomm));
	assert_text(fx, comm, "worker-1");
	assert_text(fx, pcomm, "lean-elaborator!");
	assert_false(lp_decoder_thread_name(fx->d, PID, TID + 1, &comm, &pcomm));
	assert_false(lp_decoder_thread_name(fx->d, PID + 1, TID, &comm, &pcomm));
	assert_int_equal(fx->nev, 0);
	assert_int_equal(dstats(fx)->malformed, 0);
}

/*
 * The kernel sends a literal again when its process has a new image (exec, a
 * library unloaded): the same address then names the new text, in that
 * process only.
 */
static void test_literal_new_image(void **state)
{
	struct fx *fx = *state;

	send_literal(fx, PID, 0x8000, false, "liba.work");
	send_literal(fx, PID + 1, 0x8000, false, "other.proc");
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .name = 0x8000 });
	assert_text(fx, fx->ev[0].name, "liba.work");
	send_literal(fx, PID, 0x8000, false, "libb.work");
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META, .seq = 1,
					 .name = 0x8000 });
	assert_text(fx, fx->ev[1].name, "libb.work");
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .pid = PID + 1, .tid = PID + 1, .name = 0x8000 });
	assert_text(fx, fx->ev[2].name, "other.proc");
	assert_int_equal(dstats(fx)->unknown_literal, 0);
}

/* A string record saying where in a file the text is. */
static void send_in_file(struct fx *fx, uint64_t addr, bool meta, uint64_t off)
{
	struct lp_rec_string *r = (struct lp_rec_string *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_STRING;
	r->h.flags = LP_STR_IN_FILE | (meta ? LP_STR_META : 0);
	r->h.pid = PID;
	r->h.tid = TID;
	r->addr = addr;
	r->len = -EFAULT;
	r->file_dev = 0x800001;
	r->file_ino = 4242;
	r->file_off = off;
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r)), 0);
}

/*
 * A text the kernel could not read (a page not touched yet) but said to lie
 * in a file is read from that file through the sink, with the limits the
 * kernel's reads have; failing that, it is unreadable.
 */
static void test_text_in_file(void **state)
{
	struct fx *fx = *state;
	char big[LP_META_MAX + 100], want[LP_NAME_MAX + 4];

	fx->read_text = "from.file";
	send_in_file(fx, 0x8000, false, 0x1230);
	assert_int_equal(fx->reads, 1);
	assert_int_equal(fx->read_dev, 0x800001);
	assert_int_equal(fx->read_ino, 4242);
	assert_int_equal(fx->read_off, 0x1230);
	assert_int_equal(fx->read_size, LP_NAME_MAX + 2);
	fx->read_text = "k=v";
	send_in_file(fx, 0x9000, true, 0x1240);
	assert_int_equal(fx->read_size, LP_META_MAX + 2);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_META_LITERAL,
					 .name = 0x8000, .meta = 0x9000 });
	assert_text(fx, fx->ev[0].name, "from.file");
	assert_text(fx, fx->ev[0].meta, "k=v");
	assert_int_equal(dstats(fx)->from_file, 2);

	/* too long: cut like the kernel's reads */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fx->read_text = big;
	send_in_file(fx, 0xa000, false, 0x2000);
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META, .seq = 1,
					 .name = 0xa000 });
	memset(want, 'z', LP_NAME_MAX);
	memcpy(want + LP_NAME_MAX, ELLIPSIS, 4);
	assert_text(fx, fx->ev[1].name, want);
	assert_int_equal(dstats(fx)->truncated, 1);

	/* the file cannot be read: unreadable */
	fx->read_text = NULL;
	send_in_file(fx, 0xb000, false, 0x3000);
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META, .seq = 2,
					 .name = 0xb000 });
	assert_text(fx, fx->ev[2].name, "(unreadable)");
	assert_int_equal(dstats(fx)->unreadable, 1);

	/* unreadable and not said to be in a file: the sink is not asked */
	int before = fx->reads;

	send_string(fx, PID, 0xc000, 0, -EFAULT, "", 0);
	assert_int_equal(fx->reads, before);
}

/* A string record saying which marker site ran when its text could not be looked up. */
static void send_at_site(struct fx *fx, uint64_t addr, bool meta, uint16_t file, uint64_t site)
{
	struct lp_rec_string *r = (struct lp_rec_string *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_STRING;
	r->h.flags = LP_STR_AT_SITE | (meta ? LP_STR_META : 0);
	r->h.pid = PID;
	r->h.tid = TID;
	r->addr = addr;
	r->len = -EFAULT;
	r->file = file;
	r->file_off = site;
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r)), 0);
}

/*
 * A text the kernel could neither read nor look up (another thread held the
 * address space's lock) is asked of the file of the marker whose site ran,
 * with the limits of the kernel's reads; failing that, it is unreadable.
 */
static void test_text_at_site(void **state)
{
	struct fx *fx = *state;

	fx->read_text = "at.site";
	send_at_site(fx, 0x7f0000012040, false, 3, 0x7f0000011f0f);
	assert_int_equal(fx->site_reads, 1);
	assert_int_equal(fx->reads, 0);
	assert_int_equal(fx->site_file, 3);
	assert_int_equal(fx->site_at, 0x7f0000011f0f);
	assert_int_equal(fx->site_addr, 0x7f0000012040);
	assert_int_equal(fx->read_size, LP_NAME_MAX + 2);
	fx->read_text = "k=site";
	send_at_site(fx, 0x7f0000012050, true, 3, 0x7f0000011f0f);
	assert_int_equal(fx->read_size, LP_META_MAX + 2);
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_META_LITERAL,
					 .name = 0x7f0000012040, .meta = 0x7f0000012050 });
	assert_text(fx, fx->ev[0].name, "at.site");
	assert_text(fx, fx->ev[0].meta, "k=site");
	assert_int_equal(dstats(fx)->from_file, 2);
	assert_int_equal(dstats(fx)->unreadable, 0);

	/* not in that file's segments: unreadable */
	fx->read_text = NULL;
	send_at_site(fx, 0x1000, false, 3, 0x7f0000011f0f);
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META, .seq = 1,
					 .name = 0x1000 });
	assert_text(fx, fx->ev[1].name, "(unreadable)");
	assert_int_equal(dstats(fx)->unreadable, 1);
	assert_int_equal(dstats(fx)->unknown_literal, 0);
}

/* A LP_REC_LIBS record reaches the sink, saying whether the process waits for it. */
static void test_libs_paused(void **state)
{
	struct fx *fx = *state;
	struct lp_rec_libs r = { .h = { .type = LP_REC_LIBS, .pid = PID, .tid = TID },
				 .ts_ns = 12345, .start_ns = 678 };

	assert_int_equal(lp_decode(fx->d, &r, sizeof(r)), 0);
	assert_int_equal(fx->libs, 1);
	assert_int_equal(fx->libs_paused, 0);
	assert_int_equal(fx->libs_pid, PID);
	assert_int_equal(fx->libs_ts, 12345);
	assert_int_equal(fx->libs_start, 678);
	r.h.flags = LP_LIBS_PAUSED | LP_LIBS_EXEC;
	r.h.pid = PID + 7;
	assert_int_equal(lp_decode(fx->d, &r, sizeof(r)), 0);
	assert_int_equal(fx->libs, 2);
	assert_int_equal(fx->libs_paused, 1);
	assert_int_equal(fx->libs_pid, PID + 7);
	/* too short: skipped, never a pause nobody ends */
	assert_int_equal(lp_decode(fx->d, &r, sizeof(r) - 1), 0);
	assert_int_equal(fx->libs, 2);
	assert_int_equal(dstats(fx)->malformed, 1);
}

/* A process that stopped itself (a relay, maybe) reaches the sink with its signal and start. */
static void test_self_stop(void **state)
{
	struct fx *fx = *state;
	struct lp_rec_self_stop r = { .h = { .type = LP_REC_SELF_STOP, .flags = 19, .pid = PID,
					     .tid = TID },
				      .ts_ns = 500, .start_ns = 400 };

	assert_int_equal(lp_decode(fx->d, &r, sizeof(r)), 0);
	assert_int_equal(fx->stops, 1);
	assert_int_equal(fx->stop_pid, PID);
	assert_int_equal(fx->stop_sig, 19);
	assert_int_equal(fx->stop_ts, 500);
	assert_int_equal(fx->stop_start, 400);
	assert_int_equal(lp_decode(fx->d, &r, sizeof(r) - 1), 0);
	assert_int_equal(fx->stops, 1);
	assert_int_equal(dstats(fx)->malformed, 1);
}

/* A truncated literal string record. */
static void test_truncated_literal(void **state)
{
	struct fx *fx = *state;
	char text[LP_NAME_MAX + 1], want[LP_NAME_MAX + 4];

	memset(text, 'L', sizeof(text));
	send_string(fx, PID, 0x1000, 0, LP_NAME_MAX + 1, text, sizeof(text));
	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
					 .name = 0x1000 });
	memset(want, 'L', LP_NAME_MAX);
	memcpy(want + LP_NAME_MAX, ELLIPSIS, 4);
	assert_text(fx, fx->ev[0].name, want);
	assert_int_equal(dstats(fx)->truncated, 1);
}

static void test_abi_mismatch_counted(void **state)
{
	struct fx *fx = *state;

	send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .abi = 2,
					 .name = 1, .name_len = 1, .text = "x", .text_len = 1 });
	assert_int_equal(fx->nev, 1);
	assert_int_equal(dstats(fx)->abi_mismatch, 1);
	send_event(fx, &(struct evspec){ .type = LP_REC_EXIT,
					 .flags = LP_EV_NAME_INLINE | LP_EV_NO_META, .seq = 1,
					 .name = 1, .name_len = 1, .text = "x", .text_len = 1 });
	assert_int_equal(dstats(fx)->abi_mismatch, 1);
}

static void test_sink_error_propagates(void **state)
{
	struct fx *fx = *state;

	fx->event_ret = -ENOMEM;
	assert_int_equal(send_event_ret(fx, &(struct evspec){ .type = LP_REC_ENTER,
							      .flags = LP_EV_NAME_INLINE |
								       LP_EV_NO_META,
							      .name = 1, .name_len = 1,
							      .text = "x", .text_len = 1 }),
			 -ENOMEM);
}

/* Many literals and threads: the maps grow and still find every entry. */
static void test_many_literals(void **state)
{
	struct fx *fx = *state;
	char name[32];

	for (uint32_t i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "span.%u", i);
		send_literal(fx, PID, 0x100000 + 16ULL * i, false, name);
	}
	for (uint32_t i = 0; i < 1000; i += 37) {
		fx->nev = 0;
		send_event(fx, &(struct evspec){ .type = LP_REC_ENTER,
						 .flags = LP_EV_NAME_LITERAL | LP_EV_NO_META,
						 .tid = 1 + i, .name = 0x100000 + 16ULL * i });
		snprintf(name, sizeof(name), "span.%u", i);
		assert_text(fx, fx->ev[0].name, name);
		assert_int_equal(fx->ev[0].lost_before, 0);
	}
	assert_int_equal(dstats(fx)->unknown_literal, 0);
}

/* LP_REC_USDT: a span-pair probe's record, its arguments and string slots. */
static struct lp_usdt_event usdt_seen[8];
static size_t nusdt;

static int on_usdt(void *ctx, const struct lp_usdt_event *ue)
{
	(void)ctx;
	assert_true(nusdt < 8);
	usdt_seen[nusdt++] = *ue;
	return 0;
}

/* A record with nstr slots of these lengths, text after them; its size. */
static size_t usdt_rec(uint64_t *buf, uint16_t flags, uint32_t seq, uint8_t nargs, uint8_t nstr,
		       const int16_t *lens, const char *text, size_t text_len)
{
	struct lp_rec_usdt *r = (struct lp_rec_usdt *)buf;

	memset(r, 0, sizeof(*r));
	r->h.type = LP_REC_USDT;
	r->h.flags = flags;
	r->h.pid = PID;
	r->h.tid = TID;
	r->h.seq = seq;
	r->ts_ns = 1000 + seq;
	r->spec = 3;
	r->file = 1;
	r->nargs = nargs;
	r->nstr = nstr;
	for (size_t i = 0; i < LP_USDT_ARGS; i++)
		r->args[i] = 100 + i;
	for (size_t i = 0; i < nstr && i < LP_USDT_STR_SLOTS; i++)
		r->str_len[i] = lens[i];
	memcpy(r + 1, text, text_len);
	return sizeof(*r) + text_len;
}

/* A span-pair string argument said to lie in a file (LP_STR_USDT), for slot of record seq. */
static void send_usdt_in_file(struct fx *fx, uint32_t seq, uint16_t slot, uint16_t max)
{
	struct lp_rec_string *r = (struct lp_rec_string *)fx->rec;

	memset(fx->rec, 0, sizeof(fx->rec));
	r->h.type = LP_REC_STRING;
	r->h.flags = LP_STR_USDT | LP_STR_IN_FILE;
	r->h.pid = PID;
	r->h.tid = TID;
	r->h.seq = seq;
	r->addr = 0x5000;
	r->len = -EFAULT;
	r->usdt_slot = slot;
	r->usdt_max = max;
	r->file_dev = 0x800001;
	r->file_ino = 77;
	r->file_off = 0x400000;
	assert_int_equal(lp_decode(fx->d, r, sizeof(*r)), 0);
}

/*
 * A --span string argument in a page not touched yet: read from the file for
 * its slot of the probe record that follows, at most the bytes the kernel
 * would have read; a slot whose string record is not the record's (another
 * seq, or none) is unreadable. Literals are not touched.
 */
static void test_usdt_str_in_file(void **state)
{
	struct fx *fx = *state;
	struct lp_decode_sink sink = { .usdt = on_usdt, .file_text = on_file_text, .ctx = fx };
	static uint64_t buf[(sizeof(struct lp_rec_usdt) + 2048) / 8];
	const char *s;
	size_t len, n;

	lp_decoder_free(fx->d);
	fx->d = lp_decoder_new(fx->st, &sink);
	assert_non_null(fx->d);
	nusdt = 0;
	fx->read_text = "get";
	send_usdt_in_file(fx, 7, 1, LP_USDT_STR_MAX + 1);
	assert_int_equal(fx->reads, 1);
	assert_int_equal(fx->read_off, 0x400000);
	assert_int_equal(fx->read_size, LP_USDT_STR_MAX + 2);
	n = usdt_rec(buf, 0, 7, 2, 2, (const int16_t[]){ 2, LP_USDT_STR_IN_FILE }, "ab", 2);
	assert_int_equal(lp_decode(fx->d, buf, n), 0);
	assert_int_equal(nusdt, 1);
	s = strtab_str(fx->st, usdt_seen[0].str[0], &len);
	assert_int_equal(len, 2);
	assert_memory_equal(s, "ab", 2);
	s = strtab_str(fx->st, usdt_seen[0].str[1], &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "get", 3);
	assert_int_equal(dstats(fx)->from_file, 1);
	assert_int_equal(dstats(fx)->unreadable, 0);

	/* str/argN of 2 bytes: no more than 2 read */
	send_usdt_in_file(fx, 8, 0, 2);
	assert_int_equal(fx->read_size, 3);
	n = usdt_rec(buf, 0, 8, 2, 1, (const int16_t[]){ LP_USDT_STR_IN_FILE }, "", 0);
	assert_int_equal(lp_decode(fx->d, buf, n), 0);
	s = strtab_str(fx->st, usdt_seen[1].str[0], &len);
	assert_int_equal(len, 2);
	assert_memory_equal(s, "ge", 2);

	/* its string record lost (the one there is of seq 8): unreadable */
	n = usdt_rec(buf, 0, 9, 2, 1, (const int16_t[]){ LP_USDT_STR_IN_FILE }, "", 0);
	assert_int_equal(lp_decode(fx->d, buf, n), 0);
	s = strtab_str(fx->st, usdt_seen[2].str[0], &len);
	assert_int_equal(len, 12);
	assert_memory_equal(s, "(unreadable)", 12);
	assert_int_equal(dstats(fx)->unreadable, 1);

	/* the file cannot give it: unreadable, not from the file; a bad slot is ignored */
	fx->read_text = NULL;
	send_usdt_in_file(fx, 10, 0, LP_USDT_STR_MAX + 1);
	send_usdt_in_file(fx, 10, LP_USDT_STR_SLOTS, LP_USDT_STR_MAX + 1);
	n = usdt_rec(buf, 0, 10, 2, 1, (const int16_t[]){ LP_USDT_STR_IN_FILE }, "", 0);
	assert_int_equal(lp_decode(fx->d, buf, n), 0);
	s = strtab_str(fx->st, usdt_seen[3].str[0], &len);
	assert_memory_equal(s, "(unreadable)", 12);
	assert_int_equal(dstats(fx)->from_file, 2);
	assert_int_equal(dstats(fx)->unreadable, 2);
	assert_int_equal(dstats(fx)->unknown_literal, 0);
}

static void test_usdt_records(void **state)
{
	struct lp_decode_sink sink = { .usdt = on_usdt };
	struct strtab *st = strtab_new();
	struct lp_decoder *d = st ? lp_decoder_new(st, &sink) : NULL;
	static uint64_t buf[(sizeof(struct lp_rec_usdt) + 2048) / 8];
	static char big[LP_USDT_STR_MAX + 1];
	const char *s;
	size_t len, n;

	(void)state;
	assert_non_null(d);
	nusdt = 0;
	assert_int_equal(lp_decoder_file_since(d, 1, 77), 0);

	/* Good: two strings, one unreadable, an exit after it. */
	n = usdt_rec(buf, 0, 1, 2, 3, (const int16_t[]){ 6, -EFAULT, 3 }, "select" "abc", 9);
	assert_int_equal(lp_decode(d, buf, n), 0);
	assert_int_equal(nusdt, 1);
	assert_int_equal(usdt_seen[0].pid, PID);
	assert_int_equal(usdt_seen[0].tid, TID);
	assert_int_equal(usdt_seen[0].spec, 3);
	assert_false(usdt_seen[0].exit);
	assert_int_equal(usdt_seen[0].ts_ns, 1001);
	assert_int_equal(usdt_seen[0].file_since_ns, 77);
	assert_int_equal(usdt_seen[0].nargs, 2);
	assert_int_equal(usdt_seen[0].args[1], 101);
	assert_int_equal(usdt_seen[0].nstr, 3);
	s = strtab_str(st, usdt_seen[0].str[0], &len);
	assert_int_equal(len, 6);
	assert_memory_equal(s, "select", 6);
	s = strtab_str(st, usdt_seen[0].str[1], &len);
	assert_int_equal(len, 12);
	assert_memory_equal(s, "(unreadable)", 12);
	s = strtab_str(st, usdt_seen[0].str[2], &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "abc", 3);
	assert_int_equal(lp_decoder_stats(d)->unreadable, 1);
	n = usdt_rec(buf, LP_USDT_EXIT, 2, 0, 0, NULL, "", 0);
	assert_int_equal(lp_decode(d, buf, n), 0);
	assert_int_equal(nusdt, 2);
	assert_true(usdt_seen[1].exit);
	assert_int_equal(usdt_seen[1].lost_before, 0);
	assert_int_equal(lp_decoder_stats(d)->enters, 1);
	assert_int_equal(lp_decoder_stats(d)->exits, 1);

	/* Cut by the kernel (LP_USDT_STR_MAX + 1 bytes): cut here, marked, counted. */
	memset(big, 'x', sizeof(big));
	n = usdt_rec(buf, 0, 3, 1, 1, (const int16_t[]){ LP_USDT_STR_MAX + 1 }, big, sizeof(big));
	assert_int_equal(lp_decode(d, buf, n), 0);
	s = strtab_str(st, usdt_seen[2].str[0], &len);
	assert_int_equal(len, LP_USDT_STR_MAX + 3);
	assert_memory_equal(s + LP_USDT_STR_MAX, "\xe2\x80\xa6", 3);
	assert_int_equal(lp_decoder_stats(d)->truncated, 1);

	/*
	 * Lying: more arguments and slots than there are, a length past the
	 * record's end, a NUL inside: clamped to what is there, never read past.
	 */
	n = usdt_rec(buf, 0, 4, 200, 9, (const int16_t[]){ 4, 30000, 9, 9 }, "abcdef\0gh", 9);
	assert_int_equal(lp_decode(d, buf, n), 0);
	assert_int_equal(nusdt, 4);
	assert_int_equal(usdt_seen[3].nargs, LP_USDT_ARGS);
	assert_int_equal(usdt_seen[3].nstr, LP_USDT_STR_SLOTS);
	s = strtab_str(st, usdt_seen[3].str[0], &len);
	assert_int_equal(len, 4);
	assert_memory_equal(s, "abcd", 4);
	s = strtab_str(st, usdt_seen[3].str[1], &len); /* "ef" then the NUL */
	assert_int_equal(len, 2);
	assert_memory_equal(s, "ef", 2);
	s = strtab_str(st, usdt_seen[3].str[2], &len); /* nothing left */
	assert_int_equal(len, 0);

	/* Truncated: shorter than its fixed part. */
	n = usdt_rec(buf, 0, 5, 1, 0, NULL, "", 0);
	assert_int_equal(lp_decode(d, buf, sizeof(struct lp_rec_usdt) - 1), 0);
	assert_int_equal(lp_decode(d, buf, sizeof(struct lp_rec_hdr)), 0);
	assert_int_equal(nusdt, 4);
	assert_int_equal(lp_decoder_stats(d)->malformed, 2);

	/* A gap in the thread's sequence: the next record says what was lost. */
	n = usdt_rec(buf, LP_USDT_EXIT, 9, 0, 0, NULL, "", 0);
	assert_int_equal(lp_decode(d, buf, n), 0);
	assert_int_equal(nusdt, 5);
	assert_int_equal(usdt_seen[4].lost_before, 4);

	/* --off-cpu: the snapshot comes first, the string slots after it. */
	{
		struct lp_sched_snap snap = { 11, 22, 33, 44, 55, 66 };
		char text[sizeof(snap) + 3];

		memcpy(text, &snap, sizeof(snap));
		memcpy(text + sizeof(snap), "sql", 3);
		n = usdt_rec(buf, LP_USDT_SCHED, 10, 1, 1, (const int16_t[]){ 3 }, text,
			     sizeof(text));
		assert_int_equal(lp_decode(d, buf, n), 0);
		assert_int_equal(nusdt, 6);
		assert_true(usdt_seen[5].has_sched);
		assert_int_equal(usdt_seen[5].sched.cpu_ns, 11);
		assert_int_equal(usdt_seen[5].sched.ivcsw, 55);
		assert_int_equal(usdt_seen[5].sched.steal_ns, 66);
		s = strtab_str(st, usdt_seen[5].str[0], &len);
		assert_int_equal(len, 3);
		assert_memory_equal(s, "sql", 3);
		/* The flag without the snapshot's bytes: malformed, not read past. */
		assert_int_equal(lp_decode(d, buf, sizeof(struct lp_rec_usdt) + sizeof(snap) - 1), 0);
		assert_int_equal(nusdt, 6);
		assert_int_equal(lp_decoder_stats(d)->malformed, 3);
	}
	lp_decoder_free(d);
	strtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_literal_strings),
		T(test_unknown_literal),
		T(test_inline_name_and_meta),
		T(test_truncated_ascii_name),
		T(test_truncated_meta),
		T(test_truncated_name_never_splits_utf8),
		T(test_unreadable_and_null),
		T(test_length_beyond_record),
		T(test_malformed_records),
		T(test_seq_gaps),
		T(test_seq_wraparound),
		T(test_many_threads_interleaved),
		T(test_thread_id_reused),
		T(test_thread_cache_survives_growth),
		T(test_thread_record),
		cmocka_unit_test_setup_teardown(test_literal_new_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libs_paused, setup_libs, teardown),
		cmocka_unit_test_setup_teardown(test_self_stop, setup_libs, teardown),
		cmocka_unit_test_setup_teardown(test_text_in_file, setup_libs, teardown),
		cmocka_unit_test_setup_teardown(test_text_at_site, setup_libs, teardown),
		cmocka_unit_test(test_usdt_records),
		cmocka_unit_test_setup_teardown(test_usdt_str_in_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sched_snapshot, setup, teardown),
		T(test_truncated_literal),
		T(test_abi_mismatch_counted),
		T(test_sink_error_propagates),
		T(test_many_literals),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
