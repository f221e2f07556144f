// SPDX-License-Identifier: MIT
/* Span-pair probes into enter/exit events (user/core/pairs.c): matching, keys, tracks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pairs.h"
#include "unit.h"

#define MAXEV 64

static struct strtab *st;
static struct lp_event evs[MAXEV];
static size_t nevs;
static uint32_t ended[MAXEV];
static size_t nended;
static struct lp_spec specs[3];

static int on_event(void *ctx, const struct lp_event *ev)
{
	(void)ctx;
	assert_true(nevs < MAXEV);
	evs[nevs++] = *ev;
	return 0;
}

static void on_track_end(void *ctx, uint32_t pid, uint32_t tid, uint64_t end_ns)
{
	(void)ctx, (void)pid, (void)end_ns;
	ended[nended++] = tid;
}

static void setup_specs_only(void)
{
	char err[128];

	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:q_start,q_done,name=query,meta=sql={arg0:str}", &specs[0],
				       err, sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("p:t_start,t_commit|t_abort,name=tx {arg0},key=arg0",
				       &specs[1], err, sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("p:m_in,m_out,name={arg0:str}", &specs[2], err,
				       sizeof(err)), 0);
}

static struct lp_pairs *setup(void)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };

	setup_specs_only();
	return lp_pairs_new(specs, 3, st, &sink);
}

static const char *text(uint32_t id)
{
	static char buf[256];
	size_t len;
	const char *s = strtab_str(st, id, &len);

	snprintf(buf, sizeof(buf), "%.*s", (int)len, s);
	return buf;
}

static void fire(struct lp_pairs *p, uint32_t spec, bool exit, uint64_t arg0, const char *str)
{
	static uint64_t ts = 100;
	struct lp_usdt_event ue = { .pid = 7, .tid = 8, .ts_ns = ts++, .spec = spec, .exit = exit,
				    .nargs = 1, .args = { arg0 } };

	if (str) {
		ue.nstr = 1;
		ue.str[0] = strtab_intern(st, str, strlen(str));
	}
	assert_int_equal(lp_pairs_event(p, &ue), 0);
}

static void check(size_t i, enum lp_event_type type, uint32_t tid, const char *name,
		  const char *meta)
{
	assert_true(i < nevs);
	assert_int_equal(evs[i].type, type);
	assert_int_equal(evs[i].pid, 7);
	assert_int_equal(evs[i].tid, tid);
	assert_string_equal(text(evs[i].name), name);
	if (meta)
		assert_string_equal(text(evs[i].meta), meta);
}

static void test_innermost(void **state)
{
	struct lp_pairs *p = setup();

	(void)state;
	fire(p, 0, false, 0, "select a, b");
	fire(p, 2, false, 0, "inner");
	fire(p, 2, false, 0, "inner2");
	fire(p, 0, true, 0, NULL); /* closes query: the inner ones close with it */
	fire(p, 2, true, 0, NULL); /* nothing open: an exit named (unknown) */
	assert_int_equal(nevs, 7);
	check(0, LP_EVENT_ENTER, 8, "query", "sql=select a\xef\xbc\x8c b");
	check(1, LP_EVENT_ENTER, 8, "inner", NULL);
	/* Given up innermost first, each 1 ns inside the one enclosing it. */
	check(3, LP_EVENT_EXIT, 8, "inner2", NULL);
	check(4, LP_EVENT_EXIT, 8, "inner", NULL);
	assert_true(evs[3].unterminated && evs[4].unterminated);
	assert_int_equal(evs[3].ts_ns + 2, evs[5].ts_ns);
	assert_int_equal(evs[4].ts_ns + 1, evs[5].ts_ns);
	check(5, LP_EVENT_EXIT, 8, "query", NULL);
	assert_false(evs[5].unterminated);
	check(6, LP_EVENT_EXIT, 8, "(unknown)", NULL);
	/* Closed with the query around them, as a statement closes a failed phase. */
	assert_int_equal(lp_pairs_stats(p)->enclosed, 2);
	lp_pairs_free(p);
	strtab_free(st);
}

static void test_keyed_tracks(void **state)
{
	struct lp_pairs *p = setup();

	(void)state;
	fire(p, 1, false, 5, NULL);  /* tx 5 on track 1 */
	fire(p, 0, false, 0, "q");   /* a query on the thread itself */
	fire(p, 1, false, 6, NULL);  /* tx 6 while 5 is open: track 2 */
	fire(p, 1, true, 5, NULL);   /* commit 5 */
	fire(p, 1, false, 7, NULL);  /* track 1 is free again */
	fire(p, 1, true, 9, NULL);   /* no tx 9: not recorded */
	fire(p, 0, true, 0, NULL);
	assert_int_equal(nevs, 6);
	check(0, LP_EVENT_ENTER, LP_TRACK_TID(1, 8), "tx 5", NULL);
	check(1, LP_EVENT_ENTER, 8, "query", "sql=q");
	check(2, LP_EVENT_ENTER, LP_TRACK_TID(2, 8), "tx 6", NULL);
	check(3, LP_EVENT_EXIT, LP_TRACK_TID(1, 8), "tx 5", NULL);
	check(4, LP_EVENT_ENTER, LP_TRACK_TID(1, 8), "tx 7", NULL);
	check(5, LP_EVENT_EXIT, 8, "query", NULL);
	assert_int_equal(lp_pairs_stats(p)->unmatched_keyed, 1);
	assert_true(LP_TRACK_IS(evs[2].tid));
	assert_int_equal(LP_TRACK_NO(evs[2].tid), 2);
	assert_int_equal(LP_TRACK_REAL(evs[2].tid), 8);
	/* The thread ends: its tracks end too, and nothing stays open. */
	lp_pairs_thread_end(p, 7, 8, 1000);
	assert_int_equal(nended, 2);
	assert_int_equal(ended[0], LP_TRACK_TID(1, 8));
	assert_int_equal(ended[1], LP_TRACK_TID(2, 8));
	fire(p, 1, true, 6, NULL);
	assert_int_equal(lp_pairs_stats(p)->unmatched_keyed, 2);
	lp_pairs_free(p);
	strtab_free(st);
}

/*
 * reentry=close: a query that failed never fired its exit; the next query's
 * entry closes it (and the phase open inside it) as given up, while a keyed
 * span on its track is left alone.
 */
static void test_reentry_close(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec rs[3];
	struct lp_pairs *p;
	char err[128];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:q_start,q_done,name=query,meta=sql={arg0:str},"
				       "reentry=close", &rs[0], err, sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("p:ph_start,ph_done,name=parse", &rs[1], err, sizeof(err)),
			 0);
	assert_int_equal(lp_spec_parse("p:t_start,t_commit|t_abort,name=tx {arg0},key=arg0", &rs[2],
				       err, sizeof(err)), 0);
	p = lp_pairs_new(rs, 3, st, &sink);
	assert_non_null(p);
	fire(p, 0, false, 0, "select 1/0"); /* nothing open: just the entry */
	fire(p, 2, false, 5, NULL);         /* tx 5 on track 1 */
	fire(p, 1, false, 0, NULL);         /* parse, then the query fails */
	fire(p, 0, false, 0, "rollback");   /* gives the failed query up first */
	fire(p, 1, false, 0, NULL);
	fire(p, 1, true, 0, NULL);
	fire(p, 2, true, 5, NULL);          /* the abort: tx 5 on its track */
	assert_int_equal(nevs, 9);
	check(0, LP_EVENT_ENTER, 8, "query", "sql=select 1/0");
	check(1, LP_EVENT_ENTER, LP_TRACK_TID(1, 8), "tx 5", NULL);
	check(2, LP_EVENT_ENTER, 8, "parse", NULL);
	/* The failed query's parse goes first, 1 ns inside it. */
	check(3, LP_EVENT_EXIT, 8, "parse", NULL);
	assert_true(evs[3].unterminated);
	assert_int_equal(evs[3].ts_ns + 1, evs[4].ts_ns);
	check(4, LP_EVENT_EXIT, 8, "query", NULL);
	assert_true(evs[4].unterminated);
	assert_int_equal(evs[4].ts_ns + 1, evs[5].ts_ns); /* closed as the next one starts */
	check(5, LP_EVENT_ENTER, 8, "query", "sql=rollback");
	assert_false(evs[5].unterminated);
	check(6, LP_EVENT_ENTER, 8, "parse", NULL);
	/* The failed query's parse went with it: this exit closes the new one. */
	check(7, LP_EVENT_EXIT, 8, "parse", NULL);
	assert_false(evs[7].unterminated);
	check(8, LP_EVENT_EXIT, LP_TRACK_TID(1, 8), "tx 5", NULL);
	assert_int_equal(lp_pairs_stats(p)->reentry_closed, 1);
	assert_int_equal(lp_pairs_stats(p)->unmatched_keyed, 0);
	fire(p, 0, true, 0, NULL);          /* rollback's own exit: a normal one */
	check(9, LP_EVENT_EXIT, 8, "query", NULL);
	assert_false(evs[9].unterminated);
	lp_pairs_free(p);
	strtab_free(st);
}

/*
 * Two specs making the same name, one opened inside the other: the outer
 * one's exit gives the inner one up first, by an exit of its own, so the
 * nesting builder (which closes the innermost span of an exit's name) closes
 * each span where it should, not the inner one in place of the outer.
 */
static void test_same_name_inside(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec rs[2];
	struct lp_pairs *p;
	char err[128];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:a_in,a_out,name=stmt", &rs[0], err, sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("p:b_in,b_out,name=stmt", &rs[1], err, sizeof(err)), 0);
	p = lp_pairs_new(rs, 2, st, &sink);
	assert_non_null(p);
	fire(p, 0, false, 0, NULL);
	fire(p, 1, false, 0, NULL);
	fire(p, 0, true, 0, NULL); /* a's exit: b, inside it, never got its own */
	assert_int_equal(nevs, 4);
	check(2, LP_EVENT_EXIT, 8, "stmt", NULL);
	assert_true(evs[2].unterminated);
	check(3, LP_EVENT_EXIT, 8, "stmt", NULL);
	assert_false(evs[3].unterminated);
	lp_pairs_free(p);
	strtab_free(st);
}

/*
 * Found by fuzz_decode: a tid above LP_TID_MAX reaches into the track number,
 * so its tracks were another thread's (track 1 of 0x10000078 is track 65 of
 * 0x78): two spans open on one track. No task has such a tid: skipped.
 */
static void test_tid_past_max(void **state)
{
	struct lp_pairs *p = setup();
	struct lp_usdt_event ue = { .pid = 7, .tid = 0x10000078, .ts_ns = 10, .spec = 1,
				    .nargs = 1, .args = { 5 } };

	(void)state;
	assert_int_equal(LP_TRACK_TID(1, 0x10000078u), LP_TRACK_TID(65, 0x78u));
	assert_int_equal(lp_pairs_event(p, &ue), 0);
	ue.spec = 0;
	assert_int_equal(lp_pairs_event(p, &ue), 0);
	ue.exit = true;
	assert_int_equal(lp_pairs_event(p, &ue), 0);
	assert_int_equal(nevs, 0);
	assert_int_equal(lp_pairs_stats(p)->bad_tid, 3);
	/* The highest real tid is fine. */
	ue = (struct lp_usdt_event){ .pid = 7, .tid = LP_TID_MAX, .ts_ns = 11, .spec = 1,
				     .nargs = 1, .args = { 5 } };
	assert_int_equal(lp_pairs_event(p, &ue), 0);
	assert_int_equal(nevs, 1);
	assert_int_equal(evs[0].tid, LP_TRACK_TID(1, LP_TID_MAX));
	assert_int_equal(LP_TRACK_REAL(evs[0].tid), LP_TID_MAX);
	assert_int_equal(LP_TRACK_NO(evs[0].tid), 1);
	lp_pairs_free(p);
	strtab_free(st);
}

static size_t depth_enters, depth_exits;

static int count_event(void *ctx, const struct lp_event *ev)
{
	(void)ctx;
	if (ev->type == LP_EVENT_ENTER)
		depth_enters++;
	else
		depth_exits++;
	return 0;
}

/* Unkeyed spans open on a thread are bounded: deeper entries and their exits are skipped, counted. */
static void test_open_limit(void **state)
{
	struct lp_pairs_sink sink = { .event = count_event };
	struct lp_pairs *p;

	(void)state;
	setup_specs_only();
	p = lp_pairs_new(specs, 3, st, &sink);
	assert_non_null(p);
	depth_enters = depth_exits = 0;
	for (int i = 0; i < LP_PAIRS_MAX_OPEN + 10; i++)
		fire(p, 2, false, 0, "deep");
	assert_int_equal(depth_enters, LP_PAIRS_MAX_OPEN);
	assert_int_equal(lp_pairs_stats(p)->too_deep, 10);
	/* A keyed span still gets its track. */
	fire(p, 1, false, 42, NULL);
	assert_int_equal(depth_enters, LP_PAIRS_MAX_OPEN + 1);
	/* The 10 skipped ones' exits are skipped, then each exit closes one. */
	for (int i = 0; i < LP_PAIRS_MAX_OPEN + 10; i++)
		fire(p, 2, true, 0, NULL);
	assert_int_equal(depth_exits, LP_PAIRS_MAX_OPEN);
	fire(p, 2, false, 0, "again");
	assert_int_equal(depth_enters, LP_PAIRS_MAX_OPEN + 2);
	assert_int_equal(lp_pairs_stats(p)->too_deep, 10);
	lp_pairs_free(p);
	strtab_free(st);
}

static void test_bad_spec_index(void **state)
{
	struct lp_pairs *p = setup();

	(void)state;
	fire(p, 3, false, 0, NULL);
	assert_int_equal(nevs, 0);
	assert_int_equal(lp_pairs_stats(p)->bad_spec, 1);
	lp_pairs_free(p);
	strtab_free(st);
}

/* A probe with two arguments and a string, of role exit / abort. */
static void fire2(struct lp_pairs *p, uint32_t spec, int role, uint64_t a0, uint64_t a1,
		  const char *str)
{
	static uint64_t ts = 5000;
	struct lp_usdt_event ue = { .pid = 7, .tid = 8, .ts_ns = ts++, .spec = spec,
				    .exit = role != LP_USDT_ROLE_ENTRY,
				    .abort = role == LP_USDT_ROLE_ABORT, .nargs = 2,
				    .args = { a0, a1 } };

	if (str) {
		ue.nstr = 1;
		ue.str[0] = strtab_intern(st, str, strlen(str));
	}
	assert_int_equal(lp_pairs_event(p, &ue), 0);
}

/*
 * match=name (a JVM's method__return): an exception skipped the returns of
 * the frames it unwound; the next return names its own frame, which closes,
 * and the skipped ones with it, unterminated. A return naming no open frame
 * (one entered before the recording) forgets what is open on the thread: the
 * nesting builder closes them inside the span it rebuilds.
 */
static void test_match_name(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec ms[1];
	struct lp_pairs *p;
	char err[128];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:m_in,m_out,name={arg0:str},match=name", &ms[0], err,
				       sizeof(err)), 0);
	p = lp_pairs_new(ms, 1, st, &sink);
	assert_non_null(p);
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "outer");
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "middle");
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "thrower");
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "middle"); /* thrower's return never fired */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "after");
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "after");
	assert_int_equal(nevs, 7);
	check(3, LP_EVENT_EXIT, 8, "thrower", NULL);
	assert_true(evs[3].unterminated);
	check(4, LP_EVENT_EXIT, 8, "middle", NULL);
	assert_false(evs[4].unterminated);
	assert_true(evs[3].ts_ns < evs[4].ts_ns);
	check(5, LP_EVENT_ENTER, 8, "after", NULL);
	check(6, LP_EVENT_EXIT, 8, "after", NULL); /* inside outer, not inside thrower */
	assert_false(evs[6].unterminated);
	assert_int_equal(lp_pairs_stats(p)->unwound, 1);

	/* Recursion: the innermost frame of the name closes. */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "rec");
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "rec");
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "rec");
	assert_int_equal(nevs, 10);
	check(9, LP_EVENT_EXIT, 8, "rec", NULL);
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "rec");
	check(10, LP_EVENT_EXIT, 8, "rec", NULL);

	/* A frame from before the recording returns: named, and nothing stays open here. */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, "lost");
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "main");
	assert_int_equal(nevs, 13);
	check(12, LP_EVENT_EXIT, 8, "main", NULL);
	assert_false(evs[12].unterminated);
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, "outer"); /* forgotten with the rest */
	check(13, LP_EVENT_EXIT, 8, "outer", NULL);
	assert_int_equal(lp_pairs_stats(p)->unwound, 1);
	lp_pairs_free(p);
	strtab_free(st);
}

/* abort=: the open span of the spec and what opened inside it are given up at the probe. */
static void test_abort(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec as[2];
	struct lp_pairs *p;
	char err[128];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:q_start,q_done,name=query,abort=failed", &as[0], err,
				       sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("p:ph_start,ph_done,name=plan", &as[1], err, sizeof(err)), 0);
	p = lp_pairs_new(as, 2, st, &sink);
	assert_non_null(p);
	fire2(p, 0, LP_USDT_ROLE_ABORT, 0, 0, NULL); /* nothing open: nothing happens */
	assert_int_equal(nevs, 0);
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, NULL);
	fire2(p, 1, LP_USDT_ROLE_ENTRY, 0, 0, NULL);
	fire2(p, 0, LP_USDT_ROLE_ABORT, 0, 0, NULL);
	assert_int_equal(nevs, 4);
	check(2, LP_EVENT_EXIT, 8, "plan", NULL);
	check(3, LP_EVENT_EXIT, 8, "query", NULL);
	assert_true(evs[2].unterminated && evs[3].unterminated);
	assert_int_equal(evs[2].ts_ns + 1, evs[3].ts_ns);
	assert_int_equal(lp_pairs_stats(p)->aborted, 1);
	assert_int_equal(lp_pairs_stats(p)->enclosed, 1); /* the plan, given up with its query */
	/* The query's own exit, if it came now, closes nothing of ours. */
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, NULL);
	check(4, LP_EVENT_EXIT, 8, "query", NULL); /* the builder finds none open */
	lp_pairs_free(p);
	strtab_free(st);
}

/*
 * meta= with an exit argument: the entry's metadata shows "?" for it, the
 * exit renders it again with its own value; args= goes out as the detail.
 */
static void test_exit_arguments(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec es[2];
	struct lp_pairs *p;
	char err[160];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("p:imp,imp_done,name=import,meta=module={arg0:str}\\, "
				       "found={exit.arg1},args=n={arg1}",
				       &es[0], err, sizeof(err)), 0);
	assert_int_equal(es[0].desc.nargs[LP_USDT_ROLE_EXIT], 2);
	assert_int_equal(lp_spec_parse("p:k,kd,name=k,meta=r={exit.arg0:x},key=arg1", &es[1], err,
				       sizeof(err)), 0);
	p = lp_pairs_new(es, 2, st, &sink);
	assert_non_null(p);
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 42, "json");
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 43, "missing");
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, NULL);
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 1, NULL);
	assert_int_equal(nevs, 4);
	check(0, LP_EVENT_ENTER, 8, "import", "module=json, found=?");
	assert_string_equal(text(evs[0].detail), "n=42");
	check(2, LP_EVENT_EXIT, 8, "import", "module=missing, found=0");
	assert_true(evs[2].set_meta);
	assert_string_equal(text(evs[2].detail), "n=43");
	check(3, LP_EVENT_EXIT, 8, "import", "module=json, found=1");
	assert_string_equal(text(evs[3].detail), "n=42");
	/* Keyed: the exit of the matching key renders it. */
	fire2(p, 1, LP_USDT_ROLE_ENTRY, 0, 9, NULL);
	fire2(p, 1, LP_USDT_ROLE_EXIT, 255, 9, NULL);
	check(4, LP_EVENT_ENTER, LP_TRACK_TID(1, 8), "k", "r=?");
	check(5, LP_EVENT_EXIT, LP_TRACK_TID(1, 8), "k", "r=0xff");
	/* An open span given up without its exit keeps the "?". */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 44, "gone");
	lp_pairs_thread_end(p, 7, 8, 9999);
	check(6, LP_EVENT_ENTER, 8, "import", "module=gone, found=?");
	lp_pairs_free(p);
	strtab_free(st);
}

/*
 * A PostgreSQL statement in both protocols: statement__status(sql) at each of
 * Parse, Bind and Execute (one span: reentry=continue), statement__status(NULL)
 * when the backend goes idle (the exit: a predicate on arg0); a pipelined
 * statement with other text closes the open one; probes whose predicate does
 * not hold are skipped.
 */
static void test_predicate_and_continue(void **state)
{
	struct lp_pairs_sink sink = { .event = on_event, .track_end = on_track_end };
	static struct lp_spec cs[2];
	struct lp_pairs *p;
	char err[200];

	(void)state;
	nevs = nended = 0;
	st = strtab_new();
	assert_int_equal(lp_spec_parse("pg:status[arg0!=0],status[arg0==0],name=statement,"
				       "meta=sql={arg0:str},reentry=continue",
				       &cs[0], err, sizeof(err)), 0);
	assert_int_equal(lp_spec_parse("pg:parse_start,parse_done,name=parse", &cs[1], err,
				       sizeof(err)), 0);
	p = lp_pairs_new(cs, 2, st, &sink);
	assert_non_null(p);
	/* Both attachments of the probe fire: the record of the other role is skipped. */
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0x100, 0, NULL);   /* Parse: not NULL, no exit */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0x100, 0, "select 1");
	fire2(p, 1, LP_USDT_ROLE_ENTRY, 0, 0, NULL);
	fire2(p, 1, LP_USDT_ROLE_EXIT, 0, 0, NULL);
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0x200, 0, "select 1"); /* Bind */
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0x200, 0, NULL);
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0x300, 0, "select 1"); /* Execute */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0x400, 0, "select 2"); /* pipelined: another text */
	fire2(p, 0, LP_USDT_ROLE_ENTRY, 0, 0, NULL);           /* idle: not an entry */
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, NULL);            /* idle: the exit */
	assert_int_equal(nevs, 6);
	check(0, LP_EVENT_ENTER, 8, "statement", "sql=select 1");
	check(1, LP_EVENT_ENTER, 8, "parse", NULL);
	check(2, LP_EVENT_EXIT, 8, "parse", NULL);
	check(3, LP_EVENT_EXIT, 8, "statement", NULL);
	assert_false(evs[3].unterminated);
	assert_int_equal(evs[3].ts_ns + 1, evs[4].ts_ns);
	check(4, LP_EVENT_ENTER, 8, "statement", "sql=select 2");
	check(5, LP_EVENT_EXIT, 8, "statement", NULL);
	assert_int_equal(lp_pairs_stats(p)->continued, 2);
	assert_int_equal(lp_pairs_stats(p)->filtered, 3);
	/* Idle again with nothing open (a connection's start): no exit at all. */
	fire2(p, 0, LP_USDT_ROLE_EXIT, 0, 0, NULL);
	assert_int_equal(nevs, 6);
	assert_int_equal(lp_pairs_stats(p)->filtered, 4);
	lp_pairs_free(p);
	strtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_innermost),
		cmocka_unit_test(test_keyed_tracks),
		cmocka_unit_test(test_reentry_close),
		cmocka_unit_test(test_same_name_inside),
		cmocka_unit_test(test_tid_past_max),
		cmocka_unit_test(test_bad_spec_index),
		cmocka_unit_test(test_open_limit),
		cmocka_unit_test(test_match_name),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_exit_arguments),
		cmocka_unit_test(test_predicate_and_continue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
