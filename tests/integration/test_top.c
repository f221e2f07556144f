// SPDX-License-Identifier: MIT
/*
 * `leanprofiler top` in a real terminal: tmux (a server of the test's own,
 * -L) runs it on tests/targets/rates, whose spans come at known rates and are
 * logged with their end times; the test presses keys (send-keys) and reads
 * the screen (capture-pane) until what it waits for is there. The counts of
 * an interval are checked against the target's log of that window, the keys
 * against the screen, and the terminal's settings (stty -a) after top against
 * those before it, however it ended. Batch mode (stdout a file) and hostile
 * names go without a terminal. Needs root (BPF) and tmux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-top-XXXXXX";

#include "itest.h"

/* How long top may take to attach and show its first interval, and to end. */
#define SHOW_MS 20000
#define END_MS 20000

struct term {
	char sock[64];
	const char *dir; /* its files: the script, stty before and after, the target's log */
	bool up;
};

static int nterms;
/*
 * The terminal up now, ended by the teardown when a test failed (its struct
 * term was on the failed test's stack): its socket, and pidfds of its tmux
 * server and of the pane's process, killed by them if kill-server leaves
 * them (a pane whose SIGHUP is ignored outlives its server's end).
 */
static struct {
	char sock[64];
	int server, pane;
	bool up;
} live = { .server = -1, .pane = -1 };

/* tmux on the test's own server; its stdout (NULL when it failed). */
static char *tmux(struct term *t, const char *const args[])
{
	char *argv[24];
	struct run r;
	int n = 0;

	argv[n++] = "/usr/bin/tmux";
	argv[n++] = "-L";
	argv[n++] = t->sock;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	if (r.status) {
		free(r.out);
		r.out = NULL;
	}
	free(r.err);
	return r.out;
}

/*
 * A terminal cols x 30 running top with args, between two `stty -a`; then
 * "top exited STATUS" (the second stty written) and a cat that keeps the
 * pane (ended with the server).
 */
static void term_start(struct term *t, int cols, const char *name, const char *args)
{
	char *script;

	snprintf(t->sock, sizeof(t->sock), "lp-top-%d-%d", (int)getpid(), nterms++);
	t->dir = fmt("%s/%s", tmpdir, name);
	assert_int_equal(mkdir(t->dir, 0755), 0);
	script = fmt("%s/run.sh", t->dir);
	write_file(script, fmt("export LANG=C.UTF-8\n"
			       "stty -a > %s/before\n"
			       "%s/leanprofiler top %s\n"
			       "status=$?\n"
			       "stty -a > %s/after\n"
			       "echo \"top exited $status\"\n"
			       "exec cat\n",
			       t->dir, build, args, t->dir));
	{
		const char *a[] = { "-f", "/dev/null", "new-session", "-d", "-s", "top", "-x",
				    fmt("%d", cols), "-y", "30", fmt("bash %s", script), NULL };
		char *out = tmux(t, a);

		assert_non_null(out);
		free(out);
	}
	t->up = true;
	snprintf(live.sock, sizeof(live.sock), "%s", t->sock);
	live.up = true;
	{
		const char *a[] = { "display-message", "-p", "-t", "top", "#{pid} #{pane_pid}", NULL };
		char *out = tmux(t, a);
		int server = 0, pane = 0;

		assert_non_null(out);
		assert_int_equal(sscanf(out, "%d %d", &server, &pane), 2);
		free(out);
		live.server = (int)syscall(SYS_pidfd_open, server, 0);
		live.pane = (int)syscall(SYS_pidfd_open, pane, 0);
	}
}

static void kill_by_fd(int *fd)
{
	if (*fd >= 0) {
		syscall(SYS_pidfd_send_signal, *fd, SIGKILL, NULL, 0);
		close(*fd);
	}
	*fd = -1;
}

/* Ends the terminal up now (t: the test's, NULL from the teardown). */
static void term_end(struct term *t)
{
	const char *a[] = { "kill-server", NULL };
	struct term now = { 0 };

	if (live.up) {
		snprintf(now.sock, sizeof(now.sock), "%s", live.sock);
		free(tmux(&now, a));
	}
	kill_by_fd(&live.pane);
	kill_by_fd(&live.server);
	live.up = false;
	if (t)
		t->up = false;
}

/* After each test: its terminal (and what runs in it) and its processes gone. */
static int end_test(void **state)
{
	term_end(NULL);
	return stop_started(state);
}

static char *screen(struct term *t)
{
	const char *a[] = { "capture-pane", "-p", "-t", "top", NULL };
	char *s = tmux(t, a);

	assert_non_null(s);
	return s;
}

static void keys(struct term *t, const char *k)
{
	const char *a[] = { "send-keys", "-t", "top", k, NULL };

	free(tmux(t, a));
}

/* The screen once it shows every text of want (NULL-ended), within ms. */
static char *wait_screen(struct term *t, int ms, const char *const want[])
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ULL;
	char *s = NULL;

	for (;;) {
		bool all = true;

		free(s);
		s = screen(t);
		for (int i = 0; want[i] && all; i++)
			all = strstr(s, want[i]) != NULL;
		if (all)
			return s;
		if (now_ns() > deadline)
			fail_msg("the screen did not show \"%s\"... within %d ms:\n%s", want[0], ms, s);
		wait_ms(50);
	}
}

#define WAIT_FOR(t, ms, ...) wait_screen(t, ms, (const char *const[]){ __VA_ARGS__, NULL })

/* The terminal's settings after top are those before it. */
static void same_stty(struct term *t)
{
	char *before = slurp(fmt("%s/before", t->dir), NULL);
	char *after = slurp(fmt("%s/after", t->dir), NULL);

	assert_non_null(before);
	assert_non_null(after);
	if (strcmp(before, after))
		fail_msg("stty -a before top:\n%s\nafter:\n%s", before, after);
	free(before);
	free(after);
}

/* The line of text that starts with prefix (a copy), or NULL. */
static char *line_of(const char *text, const char *prefix)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n')) {
		l += *l == '\n';
		if (!strncmp(l, prefix, strlen(prefix)))
			return strndup(l, strcspn(l, "\n"));
	}
	return NULL;
}

/* The Calls of the row whose line starts with prefix: the third figure after its name cell. */
static long calls_of(const char *text, const char *prefix, int name_cols)
{
	char *l = line_of(text, prefix);
	const char *p;
	long calls = -1;
	int cols = 0;

	if (!l)
		fail_msg("no row %s in:\n%s", prefix, text);
	/* Past name_cols code points (a "…" is 3 bytes, 1 column). */
	for (p = l; *p; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && cols++ == name_cols)
			break;
	}
	/* Self and Total are a number and a unit each. */
	if (sscanf(p, "%*s %*s %*s %*s %ld", &calls) != 1)
		fail_msg("no Calls in row '%s'", l);
	free(l);
	return calls;
}

struct window {
	double from, to; /* seconds of the recording */
};

static struct window window_of(const char *text)
{
	char *l = line_of(text, "Last interval: ");
	struct window w;

	if (!l || sscanf(l, "Last interval: %lf s to %lf s", &w.from, &w.to) != 2)
		fail_msg("no interval in:\n%s", text);
	free(l);
	return w;
}

/* Spans named name in the target's log that ended in w (start_ns: the recording's start). */
static long logged(const char *log, const char *name, uint64_t start_ns, struct window w)
{
	uint64_t from = start_ns + (uint64_t)(w.from * 1e9 + 0.5);
	uint64_t to = start_ns + (uint64_t)(w.to * 1e9 + 0.5);
	char *text = slurp(log, NULL), *save = NULL;
	long n = 0;

	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char nm[64];
		unsigned long long ts;

		if (sscanf(l, "%63s %llu", nm, &ts) == 2 && !strcmp(nm, name) && ts >= from &&
		    ts < to)
			n++;
	}
	free(text);
	return n;
}

/*
 * A shown count against the log: the log's time is read right after the
 * exit marker, and the window is shown to the millisecond, so a span within
 * a millisecond of a bound may fall on either side of it.
 */
static void expect_count(long shown, long log, const char *what, struct window w)
{
	if (labs(shown - log) > 1)
		fail_msg("%s: top showed %ld calls for %.3f-%.3f s, the target logged %ld", what,
			 shown, w.from, w.to, log);
}

static const char *rates(void)
{
	return fmt("%s/tests/targets/rates", build);
}

static uint64_t summary_start(const char *dir)
{
	json_object *sum = summary_of(dir);
	uint64_t start = (uint64_t)get_i(get(sum, "recording"), "start_ns");

	json_object_put(sum);
	return start;
}

/* The row lines of a table: from the line after "Name" to the blank line. */
static bool row_before(const char *text, const char *first, const char *second)
{
	const char *a = strstr(text, first), *b = strstr(text, second);

	assert_non_null(a);
	assert_non_null(b);
	return a < b;
}

static void test_live_counts_and_keys(void **state)
{
	struct term t = { 0 };
	char *s, *l;
	struct window w;
	long slow, fast;
	uint64_t start;
	const char *log;

	(void)state;
	term_start(&t, 100, "live", fmt("-o %s/live/rec -- %s %s/live/rates.log 0", tmpdir,
					  rates(), tmpdir));
	log = fmt("%s/rates.log", t.dir);
	/* The second interval: the first may have begun before the target's first span. */
	s = WAIT_FOR(&t, SHOW_MS, "Last interval: 1.000 s to ", "rates.fast [");
	w = window_of(s);
	slow = calls_of(s, "rates.slow", 40);
	fast = calls_of(s, "rates.fast [", 40);
	/* By self time (the default), the slow spans first: 300 ms a second against 100 ms. */
	assert_true(row_before(s, "\nrates.slow", "\nrates.fast ["));
	free(s);

	/* s: sort by total, then by calls: the 100 fast spans a second first. */
	keys(&t, "s");
	free(WAIT_FOR(&t, 5000, "sorted by total"));
	keys(&t, "s");
	s = WAIT_FOR(&t, 5000, "sorted by calls", "rates.slow");
	assert_true(row_before(s, "\nrates.fast [", "\nrates.slow"));
	free(s);

	/* /: only the names with "fast"; cleared by an empty filter. */
	keys(&t, "/");
	keys(&t, "fast");
	keys(&t, "Enter");
	s = WAIT_FOR(&t, 5000, "names with \"fast\"", "rates.fast [");
	assert_null(strstr(s, "rates.slow"));
	free(s);
	keys(&t, "/");
	for (int i = 0; i < 4; i++)
		keys(&t, "BSpace");
	keys(&t, "Enter");
	s = WAIT_FOR(&t, 5000, "rates.slow", "rates.fast [");
	assert_null(strstr(s, "names with"));
	free(s);

	/* p: the interval shown stays for longer than two intervals; p again, it moves on. */
	keys(&t, "p");
	s = WAIT_FOR(&t, 5000, "PAUSED");
	l = line_of(s, "Last interval: ");
	assert_non_null(l);
	free(s);
	for (uint64_t until = now_ns() + 2500000000ULL; now_ns() < until; wait_ms(100)) {
		char *now = screen(&t), *nl = line_of(now, "Last interval: ");

		if (!nl || strcmp(nl, l))
			fail_msg("paused, the screen changed from '%s' to:\n%s", l, now);
		free(nl);
		free(now);
	}
	keys(&t, "p");
	for (uint64_t until = now_ns() + 5000000000ULL;; wait_ms(50)) {
		char *now = screen(&t), *nl = line_of(now, "Last interval: ");
		bool moved = nl && strcmp(nl, l) && !strstr(now, "PAUSED");

		free(nl);
		free(now);
		if (moved)
			break;
		if (now_ns() > until)
			fail_msg("resumed, the interval '%s' stayed", l);
	}
	free(l);

	/* a: the whole recording. */
	keys(&t, "a");
	free(WAIT_FOR(&t, 5000, "Whole recording: ", "rates.fast ["));

	/* q: the command gets SIGINT (as from Ctrl-C), dies of it, top ends with its status. */
	keys(&t, "q");
	free(WAIT_FOR(&t, END_MS, "top exited 130"));
	same_stty(&t);
	term_end(&t);

	start = summary_start(fmt("%s/rec", t.dir));
	expect_count(slow, logged(log, "rates.slow", start, w), "rates.slow", w);
	expect_count(fast, logged(log, "rates.fast", start, w), "rates.fast", w);
	/* The target's rates: 5 and 100 a second. */
	assert_in_range(slow, 4, 6);
	assert_in_range(fast, 80, 120);
}

/* rates LOG 0 started by the test; its PID. */
static pid_t start_rates(const char *name)
{
	const char *out = fmt("%s/%s.out", tmpdir, name);
	char *argv[] = { (char *)rates(), fmt("%s/%s.log", tmpdir, name), "0", NULL };
	struct io in = { .mode = IO_NULL }, o = { .mode = IO_FILE, .file = out },
		  e = { .mode = IO_NULL };
	pid_t pid = spawn(argv, &in, &o, &e);

	assert_true(wait_text(out, "ready", pid, 10000));
	return pid;
}

/* top -p on a running target, ended by keys (Ctrl-C) or by SIGTERM to top. */
static void attached_ends(const char *name, bool sigterm)
{
	struct term t = { 0 };
	pid_t target = start_rates(name);

	term_start(&t, 100, name, fmt("-p %d", (int)target));
	free(WAIT_FOR(&t, SHOW_MS, "rates.slow", "Last interval: 0.000 s to 1.000 s"));
	if (sigterm) {
		const char *a[] = { "display-message", "-p", "-t", "top", "#{pane_pid}", NULL };
		char *sh = tmux(&t, a), *kids;
		long top;

		assert_non_null(sh);
		kids = slurp(fmt("/proc/%ld/task/%ld/children", atol(sh), atol(sh)), NULL);
		assert_non_null(kids);
		top = atol(kids);
		assert_true(top > 0);
		assert_int_equal(kill((pid_t)top, SIGTERM), 0);
		free(sh);
		free(kids);
	} else {
		keys(&t, "C-c");
	}
	/* The final table, record's, on the terminal given back. */
	free(WAIT_FOR(&t, END_MS, "top exited 0", "Profile: "));
	same_stty(&t);
	term_end(&t);
	/* The target ran on, unharmed. */
	assert_int_equal(kill(target, 0), 0);
	kill(target, SIGKILL);
	wait_exit(target);
}

static void test_ctrl_c(void **state)
{
	(void)state;
	attached_ends("ctrlc", false);
}

static void test_sigterm(void **state)
{
	(void)state;
	attached_ends("sigterm", true);
}

static void test_target_exits(void **state)
{
	struct term t = { 0 };
	char *s;

	(void)state;
	term_start(&t, 100, "exits", fmt("-- %s %s/exits/rates.log 2", rates(), tmpdir));
	s = WAIT_FOR(&t, SHOW_MS + END_MS, "top exited 0");
	/* record's table of the whole recording: 2 s of 5 and 100 a second. */
	assert_non_null(strstr(s, "Profile: "));
	assert_non_null(line_of(s, "rates.slow "));
	free(s);
	same_stty(&t);
	term_end(&t);
}

/* Code points of a line: the columns it takes (ASCII and "…" here). */
static int line_cols(const char *l, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)l[i] & 0xc0) != 0x80;
	return n;
}

static void test_narrow_terminal(void **state)
{
	struct term t = { 0 };
	char *s, *row;
	int lines = 0;

	(void)state;
	term_start(&t, 40, "narrow", fmt("-- %s %s/narrow/rates.log 0", rates(), tmpdir));
	s = WAIT_FOR(&t, SHOW_MS, "rates.fast", "Last interval: 0.000 s");
	for (const char *l = s; *l; lines++) {
		size_t len = strcspn(l, "\n");

		if (line_cols(l, len) > 40)
			fail_msg("a line wider than the terminal: '%.*s'", (int)len, l);
		l += len + (l[len] == '\n');
	}
	/* Cut, never wrapped: each line of the header starts one of the screen's. */
	assert_non_null(strstr(s, "Last interval: 0.000 s to 1.000 s of t"));
	assert_non_null(strstr(s, "\nSpans/s "));
	assert_non_null(strstr(s, "\nq quit "));
	assert_int_equal(lines, 30);
	/* The name cut short, with its ellipsis, before Self, Total and Calls. */
	row = line_of(s, "rates.fast");
	assert_non_null(row);
	assert_non_null(strstr(row, "\xe2\x80\xa6"));
	assert_true(strstr(row, "\xe2\x80\xa6") < strstr(row, " ms"));
	free(row);
	free(s);
	keys(&t, "q");
	free(WAIT_FOR(&t, END_MS, "top exited 130"));
	same_stty(&t);
	term_end(&t);
}

/* The tables of batch output: each from its "Last interval:" line. */
static int tables(const char *out, const char *at[], int max)
{
	int n = 0;

	for (const char *p = strstr(out, "Last interval: "); p && n < max;
	     p = strstr(p + 1, "\nLast interval: "))
		at[n++] = p + (*p == '\n');
	return n;
}

static void test_batch(void **state)
{
	const char *dir = fmt("%s/batch", tmpdir), *log = fmt("%s/batch.log", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "top", "--interval", "0.5", "-o",
			 (char *)dir, "--", (char *)rates(), (char *)log, "2", NULL };
	const char *at[32];
	struct run r;
	long sum_slow = 0, sum_fast = 0;
	uint64_t start;
	json_object *sum, *rows;
	int n;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status)
		fail_msg("top exited %d:\n%s", r.status, r.err);
	start = summary_start(dir);
	n = tables(r.out, at, 32);
	/* 2 s of the target, every 0.5 s, and the interval the end cut short. */
	assert_in_range(n, 4, 6);
	for (int i = 0; i < n; i++) {
		/* The last one ends where record's table of the whole recording begins. */
		const char *end = i + 1 < n ? at[i + 1] : strstr(at[i], "\nProfile: ");
		char *table;

		assert_non_null(end);
		table = strndup(at[i], (size_t)(end - at[i]));
		struct window w = window_of(table);

		if (i)
			assert_true(w.from == window_of(at[i - 1]).to); /* one after the other */
		if (strstr(table, "\nrates.slow")) {
			long c = calls_of(table, "rates.slow", 40);

			expect_count(c, logged(log, "rates.slow", start, w), "rates.slow", w);
			sum_slow += c;
		}
		if (strstr(table, "\nrates.fast [")) {
			long c = calls_of(table, "rates.fast [", 40);

			expect_count(c, logged(log, "rates.fast", start, w), "rates.fast", w);
			sum_fast += c;
		}
		free(table);
	}
	/* Every span in exactly one interval: they add up to the recording's rows. */
	sum = summary_of(dir);
	rows = get(sum, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *name = get_s(row, "name");

		if (!strcmp(name, "rates.slow"))
			assert_int_equal(get_i(row, "calls"), sum_slow);
		else if (!strcmp(name, "rates.fast"))
			assert_int_equal(get_i(row, "calls"), sum_fast);
	}
	json_object_put(sum);
	/* Then record's table of the whole recording, and where its files are. */
	assert_non_null(strstr(r.out, "\nProfile: "));
	assert_non_null(strstr(r.out, fmt("Summary: %s/leanprofiler-summary.json\n", dir)));
	run_free(&r);
}

/* The name cells (the first 40 columns) of the table rows in text, one per line. */
static char *name_cells(const char *text, const char *from)
{
	char *cells = fmt("");
	bool in = false;

	for (const char *l = strstr(text, from); l && *l;) {
		size_t len = strcspn(l, "\n");

		if (!len)
			in = false;
		else if (!strncmp(l, "Name ", 5))
			in = true;
		else if (in) {
			size_t b = 0;

			for (int cols = 0; b < len && cols < 40; cols++)
				do
					b++;
				while (b < len && ((unsigned char)l[b] & 0xc0) == 0x80);
			cells = fmt("%s%.*s\n", cells, (int)b, l);
		}
		l += len + (l[len] == '\n');
	}
	return cells;
}

static void test_hostile_names(void **state)
{
	char *hostile = fmt("%s/tests/targets/hostile", build);
	char *rec[] = { fmt("%s/leanprofiler", build), "record", "--rows", "all", "-o",
			fmt("%s/hostile", tmpdir), "--", hostile, NULL };
	char *top[] = { fmt("%s/leanprofiler", build), "top", "--rows", "all", "--", hostile,
			NULL };
	struct run r, t;
	char *want, *got;

	(void)state;
	assert_int_equal(run(&r, rec), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(run(&t, top), 0);
	assert_int_equal(t.status, 0);
	/* The interval's rows (the target ends within the first), named as record names them. */
	want = name_cells(r.out, "\nName ");
	got = name_cells(t.out, "Last interval: ");
	/* The same rows: each of record's in top's tables, and none other. */
	for (int k = 0; k < 2; k++) {
		const char *a = k ? got : want, *b = k ? want : got;

		for (const char *l = a; *l; l = strchr(l, '\n') + 1) {
			char *line = strndup(l, strcspn(l, "\n") + 1);

			if (!strstr(fmt("\n%s", b), fmt("\n%s", line)))
				fail_msg("'%s' is in %s's table, not in %s's:\nrecord:\n%s\ntop:\n%s",
					 line, k ? "top" : "record", k ? "record" : "top", want, got);
			free(line);
		}
	}
	assert_true(strlen(want) > 0);
	run_free(&r);
	run_free(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_batch, end_test),
		cmocka_unit_test_teardown(test_hostile_names, end_test),
		cmocka_unit_test_teardown(test_live_counts_and_keys, end_test),
		cmocka_unit_test_teardown(test_ctrl_c, end_test),
		cmocka_unit_test_teardown(test_sigterm, end_test),
		cmocka_unit_test_teardown(test_target_exits, end_test),
		cmocka_unit_test_teardown(test_narrow_terminal, end_test),
	};

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_top"))
		return 0;
	if (access("/usr/bin/tmux", X_OK)) {
		printf("SKIPPED: test_top needs tmux (scripts/deps.sh test installs it)\n");
		return 0;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, stop_started_remove_tmpdir);
}
