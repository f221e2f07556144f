// SPDX-License-Identifier: MIT
/*
 * The pictures of real recordings (docs/reading.md "Pictures"): the
 * profiler records examples/nested, tests/targets/pictures (names and metadata
 * that try to break out of an SVG text, of the page's JSON script element, into
 * the page's objects) and a million spans of examples/span_cost; then, as a
 * reader would:
 *
 * - report --svg: both files parse as XML (xmllint) and render (rsvg-convert)
 *   to pictures that are not blank (tests/integration/png-stats.py);
 * - report --html: the page is opened in headless Chromium, driven through the
 *   DevTools protocol over a pipe (--remote-debugging-pipe), which reports
 *   every request the page makes, every console message and exception, and
 *   every alert() dialog. The page must load with no request but its own
 *   file, no console error, no dialog; it says itself when it has drawn
 *   (<html data-lp-ready="1">, waited for, never slept for); the names must
 *   be in the DOM as text; hovering a span shows its name, metadata, duration
 *   and counter; the wheel zooms, a drag pans, a header click sorts; the
 *   screenshot is not blank; the hostile names show as text and run nothing;
 *   the million-span page stays within the size bound and draws.
 *
 * Needs root (BPF, to record); skipped otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-pictures-XXXXXX";

#include "itest.h"

#define CHROMIUM "/usr/bin/chromium"
#define PYTHON "/usr/bin/python3.11" /* scripts/deps.sh test installs it */
/* docs/formats.md: a 10M-span recording's page stays under it. */
#define PAGE_BOUND (20 * 1000 * 1000)
#define BIG_SPANS 1000000
#define WAIT_MS 90000 /* the longest wait for the browser (a loaded CI machine) */
#define TINY 20000    /* tests/targets/pictures: its tiny spans per thread */

static char *lp_bin;

/* ---- recording ---- */

/* record -o DIR OPTS... -- CMD...: DIR, or the test fails. */
static char *record_argv(const char *name, char *const opts[], char *const cmd[])
{
	char *dir = fmt("%s/%s", tmpdir, name);
	char *argv[16];
	int n = 0;
	struct run r;

	argv[n++] = lp_bin;
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = dir;
	for (int i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record %s: exit %d\n%s%s", name, r.status, r.out, r.err);
	run_free(&r);
	return dir;
}

/* The same with OPTS one string, split at spaces. */
static char *record(const char *name, const char *opts, char *const cmd[])
{
	char *argv[12];
	int n = 0;

	if (opts) {
		argv[n++] = strtok(strdup(opts), " ");
		while ((argv[n] = strtok(NULL, " ")))
			n++;
	}
	argv[n] = NULL;
	return record_argv(name, argv, cmd);
}

static struct {
	char *nested, *hostile, *big, *sonly, *offcpu, *gc;
} rec;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	lp_bin = fmt("%s/leanprofiler", build);
	rec.nested = record("nested", NULL, (char *[]){ fmt("%s/examples/nested", build), NULL });
	rec.hostile = record("hostile", NULL,
			     (char *[]){ fmt("%s/tests/targets/pictures", build), NULL });
	rec.sonly = record("sonly", "--summary-only",
			   (char *[]){ fmt("%s/examples/nested", build), NULL });
	rec.offcpu = record("offcpu", "--off-cpu",
			    (char *[]){ fmt("%s/examples/nested", build), NULL });
	/* Its counter under another name: the pictures' words follow it, as the table's. */
	rec.gc = record_argv("gc", (char *[]){ "--counter-name", "GC cycles", NULL },
			     (char *[]){ fmt("%s/examples/nested", build), NULL });
	/* One thread, a million spans: a buffer the consumer cannot fall behind. */
	rec.big = record("big", "--buffer-size 256M",
			 (char *[]){ fmt("%s/examples/span_cost", build), fmt("%d", BIG_SPANS), NULL });
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("LP_KEEP"))
		system(fmt("rm -rf '%s'", tmpdir));
	return 0;
}

/* leanprofiler report ARGS...: its run. */
static struct run report(const char *a, const char *b, const char *c, const char *d)
{
	char *argv[] = { lp_bin, "report", (char *)a, (char *)b, (char *)c, (char *)d, NULL };
	struct run r;

	assert_int_equal(run(&r, argv), 0);
	return r;
}

static void report_ok(const char *a, const char *b, const char *c, const char *d)
{
	struct run r = report(a, b, c, d);

	if (r.status != 0)
		fail_msg("report %s %s %s %s: exit %d\n%s%s", a, b, c, d ? d : "", r.status, r.out,
			 r.err);
	run_free(&r);
}

/* A command that must succeed: its stdout. */
static char *must(char *const argv[])
{
	struct run r;
	char *out;

	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("%s %s: exit %d\n%s%s", argv[0], argv[1], r.status, r.out, r.err);
	out = strdup(r.out);
	run_free(&r);
	return out;
}

/* The picture is not blank: many colours, and no single one covers nearly all of it. */
static void not_blank(const char *png, int min_colours)
{
	char *out = must((char *[]){ PYTHON, "tests/integration/png-stats.py", (char *)png, NULL });
	int w = 0, h = 0, colours = 0;
	double bg = 1;

	if (sscanf(out, "%dx%d colours=%d background=%lf", &w, &h, &colours, &bg) != 4)
		fail_msg("png-stats: %s", out);
	if (w < 200 || h < 100 || colours < min_colours || bg > 0.97)
		fail_msg("%s looks blank: %s", png, out);
	free(out);
}

/* ---- SVG ---- */

static void svg_checks(const char *dir, bool timeline)
{
	const char *names[] = { "timeline", "rows" };

	for (int i = timeline ? 0 : 1; i < 2; i++) {
		char *svg = fmt("%s/%s.svg", dir, names[i]), *png = fmt("%s/%s.png", dir, names[i]);

		free(must((char *[]){ "/usr/bin/xmllint", "--noout", svg, NULL }));
		free(must((char *[]){ "/usr/bin/rsvg-convert", "-o", png, svg, NULL }));
		not_blank(png, 20);
	}
}

static void test_svg_nested(void **state)
{
	char *dir = fmt("%s/svg-nested", tmpdir), *tl, *rows;

	(void)state;
	report_ok("--svg", dir, rec.nested, NULL);
	svg_checks(dir, true);
	tl = slurp(fmt("%s/timeline.svg", dir), NULL);
	rows = slurp(fmt("%s/rows.svg", dir), NULL);
	assert_non_null(tl);
	assert_non_null(rows);
	/* One root span, three of each child: seven rectangles with a tooltip each. */
	assert_non_null(strstr(tl, "<title>example.nested-spans&#10;"));
	for (const char *p = tl, *name = "<title>input.load [phase=input, activity=load]&#10;";
	     name; name = name[7] == 'i' ? "<title>model.forward [phase=forward, module=encoder]&#10;" : NULL) {
		int n = 0;

		for (p = tl; (p = strstr(p, name)); p++)
			n++;
		assert_int_equal(n, 3);
	}
	/* A span's counter, named as the table's header names it. */
	assert_non_null(strstr(tl, " ms, 2 Lean heartbeats</title>"));
	assert_null(strstr(tl, "counter"));
	assert_non_null(strstr(tl, " ms</text>")); /* the time axis */
	assert_non_null(strstr(tl, "class=\"legend\""));
	assert_non_null(strstr(rows, ">model.forward [phase=forward, module=encoder]</text>"));
	assert_non_null(strstr(rows, ">total "));
	assert_non_null(strstr(rows, ">self "));
	/* The summary's file as PATH gives the same pictures. */
	report_ok("--svg", fmt("%s/svg-by-file", tmpdir), fmt("%s/leanprofiler-summary.json", rec.nested),
		  NULL);
	assert_string_equal(slurp(fmt("%s/svg-by-file/rows.svg", tmpdir), NULL), rows);
	free(tl);
	free(rows);
}

static void test_svg_hostile(void **state)
{
	char *dir = fmt("%s/svg-hostile", tmpdir);

	(void)state;
	report_ok("--svg", dir, fmt("%s/leanprofiler-trace.json", rec.hostile), NULL);
	svg_checks(dir, true);
	for (int i = 0; i < 2; i++) {
		char *svg = slurp(fmt("%s/%s.svg", dir, i ? "rows" : "timeline"), NULL);

		assert_non_null(svg);
		assert_null(strstr(svg, "<script"));
		assert_null(strstr(svg, "<img"));
		/* No marker passed a counter: nothing names one. */
		assert_null(strstr(svg, "Lean"));
		assert_null(strstr(svg, "heartbeats"));
		assert_null(strstr(svg, "counter"));
		for (const char *p = svg; *p; p++)
			if ((unsigned char)*p < 0x20 && *p != '\n')
				fail_msg("a control character 0x%02x in the SVG", *p);
		free(svg);
	}
	/* The hostile spans are rows of their own: their labels, escaped. */
	{
		char *rows = slurp(fmt("%s/rows.svg", dir), NULL);

		assert_non_null(strstr(rows, "<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; "
					    "[__proto__=polluted, constructor=yes, &lt;b&gt;=&amp;amp;]&#10;"));
		assert_non_null(strstr(rows, "line\\u2028sep\\u2029end"));
		assert_non_null(strstr(rows, ">ctl[31mred [bell=]"));
		assert_non_null(strstr(rows, "quote&quot;apos&#39;amp&amp;lt"));
		free(rows);
	}
}

static void test_svg_summary_only(void **state)
{
	char *dir = fmt("%s/svg-sonly", tmpdir);
	struct stat st;

	(void)state;
	report_ok("--svg", dir, rec.sonly, NULL);
	svg_checks(dir, false);
	assert_int_equal(stat(fmt("%s/timeline.svg", dir), &st), -1);
}

/* --counter-name: the tooltips name the counter by it. */
static void test_svg_counter_name(void **state)
{
	char *dir = fmt("%s/svg-gc", tmpdir), *tl;

	(void)state;
	report_ok("--svg", dir, rec.gc, NULL);
	svg_checks(dir, true);
	tl = slurp(fmt("%s/timeline.svg", dir), NULL);
	assert_non_null(tl);
	assert_non_null(strstr(tl, "<title>model.forward [phase=forward, module=encoder]&#10;"));
	assert_non_null(strstr(tl, " ms, 2 GC cycles</title>"));
	assert_null(strstr(tl, "Lean"));
	assert_null(strstr(tl, "heartbeats"));
	free(tl);
}

static void test_errors(void **state)
{
	struct run r;

	(void)state;
	/* Without --svg or --html, report prints the table (test_report checks it). */
	r = report(rec.nested, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Lean profile: 7 events"));
	run_free(&r);
	r = report("--svg", fmt("%s/x", tmpdir), fmt("%s/nothing-here", tmpdir), NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "cannot read the recording"));
	run_free(&r);
	/* A directory without a summary. */
	r = report("--html", fmt("%s/x.html", tmpdir), tmpdir, NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "cannot read the summary"));
	run_free(&r);
}


/* The lines of leanprofiler's stderr that are errors, not warnings. */
static size_t count_errors(const char *err)
{
	size_t n = 0;

	for (const char *l = err; l && *l; l = strchr(l, '\n')) {
		l += *l == '\n';
		if (!strncmp(l, "leanprofiler: ", 14) && strncmp(l, "leanprofiler: warning: ", 23))
			n++;
	}
	return n;
}

/* leanprofiler report ARGS... run in dir (its working directory). */
static struct run report_in(const char *dir, char *const args[])
{
	char *argv[16] = { "/usr/bin/env", "-C", (char *)dir, realpath(lp_bin, NULL), "report" };
	size_t n = 5;
	struct run r;

	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	return r;
}

/* A copy of the nested recording in tmpdir/name: its summary's bytes in *sum. */
static char *copy_nested(const char *name, char **sum, char **trace)
{
	char *dir = fmt("%s/%s", tmpdir, name);

	assert_int_equal(system(fmt("cp -r '%s' '%s'", rec.nested, dir)), 0);
	*sum = slurp(fmt("%s/leanprofiler-summary.json", dir), NULL);
	*trace = slurp(fmt("%s/leanprofiler-trace.json", dir), NULL);
	assert_non_null(*sum);
	assert_non_null(*trace);
	return dir;
}

/* The lines of text (each ends with '\n'). */
static size_t lines_in(const char *text)
{
	size_t n = 0;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

/*
 * Issue: in a recording's directory `report --html leanprofiler-summary.json`
 * (the page's FILE forgotten) wrote the page over the summary it read, exit 0.
 * Every output that is one of the files read is refused, one line, exit 125,
 * and nothing is written: not the page, not a temporary file, not the other SVG.
 */
static void test_output_is_input(void **state)
{
	char *sum, *trace, *dir = copy_nested("over", &sum, &trace);
	char *listing = fmt("leanprofiler-summary.json\nleanprofiler-trace.json\n");
	struct {
		char *args[4];
		const char *says;
	} cases[] = {
		{ { "--html", "leanprofiler-summary.json", NULL },
		  "cannot write leanprofiler-summary.json: it is ./leanprofiler-summary.json, which "
		  "this command reads: nothing written; give the output another name\n" },
		{ { "--html", "leanprofiler-trace.json", ".", NULL },
		  "cannot write leanprofiler-trace.json: it is ./leanprofiler-trace.json, which "
		  "this command reads" },
		{ { "--html", "./leanprofiler-summary.json", "leanprofiler-trace.json", NULL },
		  "which this command reads" },
		/* A link to it: what it leads to is what was meant. */
		{ { "--html", "link.html", NULL }, "cannot write link.html: it is "
						   "./leanprofiler-summary.json, which" },
		/* rows.svg is the summary under another name: timeline.svg is not written either. */
		{ { "--svg", "svg", NULL }, "cannot write svg/rows.svg: it is "
					    "./leanprofiler-summary.json, which" },
	};

	(void)state;
	assert_int_equal(symlink("leanprofiler-summary.json", fmt("%s/link.html", dir)), 0);
	assert_int_equal(mkdir(fmt("%s/svg", dir), 0755), 0);
	assert_int_equal(link(fmt("%s/leanprofiler-summary.json", dir), fmt("%s/svg/rows.svg", dir)),
			 0);
	listing = fmt("leanprofiler-summary.json\nleanprofiler-trace.json\nlink.html\nsvg\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = report_in(dir, cases[i].args);

		if (r.status != 125 || !strstr(r.err, cases[i].says) || r.out_len)
			fail_msg("case %zu (%s %s): exit %d, stdout: %s, stderr: %s", i,
				 cases[i].args[0], cases[i].args[1], r.status, r.out, r.err);
		/* One line of error (the trace's own warnings aside). */
		assert_int_equal(count_errors(r.err), 1);
		run_free(&r);
		assert_string_equal(slurp(fmt("%s/leanprofiler-summary.json", dir), NULL), sum);
		assert_string_equal(slurp(fmt("%s/leanprofiler-trace.json", dir), NULL), trace);
		assert_string_equal(dir_entries(dir), listing);
		assert_string_equal(dir_entries(fmt("%s/svg", dir)), "rows.svg\n");
	}
	/* The same page under another name is written, its size in KB (a 26 KB page was "0.0 MB"). */
	{
		struct run r = report_in(dir, (char *[]){ "--html", "page.html", NULL });
		struct stat st;

		assert_int_equal(r.status, 0);
		assert_int_equal(stat(fmt("%s/page.html", dir), &st), 0);
		assert_true(st.st_size > 1000 && st.st_size < 999950);
		if (!strstr(r.out, fmt("Page: page.html (%.1f KB)\n", (double)st.st_size / 1000)))
			fail_msg("stdout: %s", r.out);
		run_free(&r);
	}
}

/*
 * Issue: `report --html r1` (the page's FILE forgotten: r1 is the page, the
 * recording defaults to '.') said only "cannot read the summary
 * ./leanprofiler-summary.json": now what to type instead. A summary that is not
 * JSON: json-c's text in one line, without its "\n".
 */
static void test_output_error_says_what_to_do(void **state)
{
	char *empty = fmt("%s/empty-cwd", tmpdir), *bad = fmt("%s/bad", tmpdir);
	char *rel = fmt("../%s", strrchr(rec.nested, '/') + 1);
	struct run r;

	(void)state;
	assert_int_equal(mkdir(empty, 0755), 0);
	r = report_in(empty, (char *[]){ "--html", rel, NULL });
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, fmt("leanprofiler: no recording in the current directory (no "
				       "./leanprofiler-summary.json): --html takes the page's FILE, "
				       "then the recording's PATH; to draw %s: 'leanprofiler report "
				       "--html page.html %s'\n", rel, rel));
	run_free(&r);
	r = report_in(empty, (char *[]){ "--html", "r1", NULL });
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, "leanprofiler: no recording in the current directory (no "
				   "./leanprofiler-summary.json): --html FILE took 'r1' as the "
				   "page's FILE; give the recording after it: 'leanprofiler report "
				   "--html page.html PATH'\n");
	run_free(&r);
	r = report_in(empty, (char *[]){ "--svg", rel, NULL });
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, fmt("--svg takes the DIR to write into, then the "
					  "recording's PATH; to draw %s: 'leanprofiler report "
					  "--svg pictures %s'\n", rel, rel)));
	run_free(&r);
	assert_string_equal(dir_entries(empty), "");
	/* A recording in '.', and the one meant given as the page. */
	r = report_in(rec.nested, (char *[]){ "--html", rel, NULL });
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, fmt("leanprofiler: cannot write the page %s: it is a directory; "
				       "--html takes the page's FILE, then the recording's PATH, e.g. "
				       "'leanprofiler report --html page.html %s'\n", rel, rel));
	run_free(&r);

	/* Not JSON, and cut short: one line each, no literal "\n". */
	assert_int_equal(mkdir(bad, 0755), 0);
	write_file(fmt("%s/leanprofiler-summary.json", bad), "this is not JSON\n");
	r = report("--html", fmt("%s/page.html", tmpdir), bad, NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(lines_in(r.err), 1);
	assert_null(strstr(r.err, "\\n"));
	assert_non_null(strstr(r.err, fmt("cannot read the summary %s/leanprofiler-summary.json: "
					  "not JSON (", bad)));
	run_free(&r);
	write_file(fmt("%s/leanprofiler-summary.json", bad), "{\"schema\": \"leanprofiler-summ");
	r = report("--svg", fmt("%s/svg-bad", tmpdir), bad, NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(lines_in(r.err), 1);
	assert_non_null(strstr(r.err, "not JSON (it ends early: a truncated file?)\n"));
	run_free(&r);
}

/* ---- the browser, through the DevTools protocol over a pipe ---- */

struct cdp {
	pid_t pid;
	int to, from; /* our ends: chromium reads fd 3, writes fd 4 */
	int next_id;
	char *buf;
	size_t len, cap;
	char *session;
	char *page_url;
	/* What the page did. */
	int errors, dialogs;
	bool closed; /* its pipe: the browser exited */
	char *requests_other; /* URLs other than the page's own */
	char log[4096];
};

static long now_ms(void)
{
	return (long)(now_ns() / 1000000ULL);
}

static void note(struct cdp *c, const char *what, const char *text)
{
	size_t n = strlen(c->log);

	snprintf(c->log + n, sizeof(c->log) - n, "%s: %.300s\n", what, text);
}

/* The browser a test started, ended by the test's teardown whatever happened. */
static struct cdp *live;
static int browsers;

static void cdp_stop(struct cdp *c);

static int stop_browser(void **state)
{
	(void)state;
	if (live)
		cdp_stop(live);
	return 0;
}

static void cdp_start(struct cdp *c)
{
	int to[2], from[2];
	/* A profile of its own: a browser still closing holds its predecessor's lock. */
	char *profile = fmt("%s/chromium-profile-%d", tmpdir, ++browsers);

	memset(c, 0, sizeof(*c));
	assert_int_equal(pipe2(to, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		/* Its own process group: if it must be ended, its helpers go with it. */
		int in = fcntl(to[0], F_DUPFD, 10), out = fcntl(from[1], F_DUPFD, 10);
		int log = open(fmt("%s/chromium.log", tmpdir), O_WRONLY | O_CREAT | O_APPEND, 0644);

		setpgid(0, 0);
		dup2(in, 3);
		dup2(out, 4);
		dup2(log, 1);
		dup2(log, 2);
		execl(CHROMIUM, CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
		      fmt("--user-data-dir=%s", profile), "--remote-debugging-pipe", "--no-first-run",
		      "--no-default-browser-check", "--disable-extensions",
		      "--disable-background-networking", "--disable-component-update", "--disable-sync",
		      "--hide-scrollbars", "--mute-audio", "--window-size=1280,900", "about:blank",
		      (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->to = to[1];
	c->from = from[0];
	live = c;
}

/* The next message, or NULL when none came within ms. */
static json_object *cdp_read(struct cdp *c, int ms)
{
	long deadline = now_ms() + ms;

	for (;;) {
		char *end = c->len ? memchr(c->buf, '\0', c->len) : NULL;
		struct pollfd p = { c->from, POLLIN, 0 };
		long left;
		ssize_t n;

		if (end) {
			json_object *o = json_tokener_parse(c->buf);
			size_t used = (size_t)(end - c->buf) + 1;

			memmove(c->buf, end + 1, c->len - used);
			c->len -= used;
			if (!o)
				fail_msg("the browser sent a message that is not JSON");
			return o;
		}
		left = deadline - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 1 << 20;
			c->buf = realloc(c->buf, c->cap);
			assert_non_null(c->buf);
		}
		n = read(c->from, c->buf + c->len, c->cap - c->len);
		if (n <= 0) {
			c->closed = true;
			return NULL;
		}
		c->len += (size_t)n;
	}
}

static int cdp_send(struct cdp *c, const char *method, const char *params, bool in_session)
{
	int id = ++c->next_id;
	char *msg = fmt("{\"id\":%d,\"method\":\"%s\",\"params\":%s%s%s%s}", id, method,
			params ? params : "{}", in_session ? ",\"sessionId\":\"" : "",
			in_session ? c->session : "", in_session ? "\"" : "");
	size_t len = strlen(msg) + 1, off = 0;

	while (off < len) {
		ssize_t n = write(c->to, msg + off, len - off);

		assert_true(n > 0);
		off += (size_t)n;
	}
	free(msg);
	return id;
}

static const char *str_at(json_object *o, const char *path)
{
	char *p = strdup(path), *save = NULL;
	json_object *v = o;

	for (char *k = strtok_r(p, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(v, k, &v))
			v = NULL;
	free(p);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* What the page did: every event is looked at, whatever call is waited for. */
static void cdp_event(struct cdp *c, json_object *m)
{
	const char *method = str_at(m, "method");

	if (!method)
		return;
	if (!strcmp(method, "Network.requestWillBeSent")) {
		const char *url = str_at(m, "params.request.url");

		if (url && strcmp(url, c->page_url ? c->page_url : "")) {
			c->requests_other = c->requests_other ? c->requests_other : strdup(url);
			note(c, "request", url);
		}
	} else if (!strcmp(method, "Runtime.exceptionThrown")) {
		c->errors++;
		note(c, "exception", json_object_to_json_string(m));
	} else if (!strcmp(method, "Runtime.consoleAPICalled")) {
		const char *type = str_at(m, "params.type");

		if (type && (!strcmp(type, "error") || !strcmp(type, "assert"))) {
			c->errors++;
			note(c, "console", json_object_to_json_string(m));
		}
	} else if (!strcmp(method, "Log.entryAdded")) {
		const char *level = str_at(m, "params.entry.level");

		/* CSP violations and failed loads come here. */
		if (level && !strcmp(level, "error")) {
			c->errors++;
			note(c, "log", str_at(m, "params.entry.text") ? str_at(m, "params.entry.text") : "");
		}
	} else if (!strcmp(method, "Page.javascriptDialogOpening")) {
		c->dialogs++;
		note(c, "dialog", str_at(m, "params.message") ? str_at(m, "params.message") : "");
		cdp_send(c, "Page.handleJavaScriptDialog", "{\"accept\":true}", true);
	}
}

/* Sends a command and waits for its answer (events meanwhile are looked at); its result. */
static json_object *cdp_call(struct cdp *c, const char *method, const char *params, bool in_session)
{
	int id = cdp_send(c, method, params, in_session);
	long deadline = now_ms() + WAIT_MS;

	while (now_ms() < deadline) {
		json_object *m = cdp_read(c, (int)(deadline - now_ms())), *v, *res;

		if (!m && c->closed)
			fail_msg("%s: the browser exited; its log:\n%s", method,
				 slurp(fmt("%s/chromium.log", tmpdir), NULL));
		if (!m)
			break;
		if (json_object_object_get_ex(m, "id", &v) && json_object_get_int(v) == id) {
			if (json_object_object_get_ex(m, "error", &v))
				fail_msg("%s: %s", method, json_object_to_json_string(v));
			res = json_object_get(json_object_object_get(m, "result"));
			json_object_put(m);
			return res;
		}
		cdp_event(c, m);
		json_object_put(m);
	}
	fail_msg("%s: no answer from the browser in %d ms", method, WAIT_MS);
	return NULL;
}

/* Evaluates a JavaScript expression in the page; its value as JSON text (caller frees). */
static char *cdp_eval(struct cdp *c, const char *expr)
{
	json_object *p = json_object_new_object(), *res, *v = NULL;
	char *out;

	json_object_object_add(p, "expression", json_object_new_string(expr));
	json_object_object_add(p, "returnByValue", json_object_new_boolean(1));
	res = cdp_call(c, "Runtime.evaluate", json_object_to_json_string(p), true);
	json_object_put(p);
	if (json_object_object_get_ex(res, "exceptionDetails", &v))
		fail_msg("%s: %s", expr, json_object_to_json_string(v));
	json_object_object_get_ex(json_object_object_get(res, "result"), "value", &v);
	out = strdup(v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "undefined");
	json_object_put(res);
	return out;
}

/*
 * Waits until expr evaluates to want. Between two checks it waits for the
 * browser's next message (an event), at most 20 ms: the condition is what is
 * waited for, never a fixed time.
 */
static void cdp_wait(struct cdp *c, const char *expr, const char *want)
{
	long deadline = now_ms() + WAIT_MS;
	char *got = NULL;

	while (now_ms() < deadline) {
		json_object *m;

		free(got);
		got = cdp_eval(c, expr);
		if (!strcmp(got, want)) {
			free(got);
			return;
		}
		if ((m = cdp_read(c, 20))) {
			cdp_event(c, m);
			json_object_put(m);
		}
	}
	fail_msg("waited %d ms for %s == %s, last %s\n%s", WAIT_MS, expr, want, got, c->log);
}

/* Opens the page in a new tab, with every domain that reports what it does enabled. */
static void cdp_open(struct cdp *c, const char *html)
{
	char path[PATH_MAX];
	json_object *res;
	char *params;

	assert_non_null(realpath(html, path));
	c->page_url = fmt("file://%s", path);
	res = cdp_call(c, "Target.createTarget", "{\"url\":\"about:blank\"}", false);
	params = fmt("{\"targetId\":\"%s\",\"flatten\":true}", str_at(res, "targetId"));
	json_object_put(res);
	res = cdp_call(c, "Target.attachToTarget", params, false);
	c->session = strdup(str_at(res, "sessionId"));
	json_object_put(res);
	for (const char *const *d = (const char *const[]){ "Page", "Runtime", "Log", "Network", NULL };
	     *d; d++)
		json_object_put(cdp_call(c, fmt("%s.enable", *d), NULL, true));
	json_object_put(cdp_call(c, "Emulation.setDeviceMetricsOverride",
				 "{\"width\":1280,\"height\":900,\"deviceScaleFactor\":1,\"mobile\":false}",
				 true));
	json_object_put(cdp_call(c, "Page.navigate", fmt("{\"url\":\"%s\"}", c->page_url), true));
	/* The page says when it has drawn; an error it caught says so too. */
	cdp_wait(c, "document.readyState === 'complete' && document.documentElement.dataset.lpReady",
		 "\"1\"");
}

static void cdp_stop(struct cdp *c)
{
	long deadline;
	int st;

	if (!c->closed)
		cdp_send(c, "Browser.close", NULL, false);
	deadline = now_ms() + 30000;
	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (now_ms() > deadline) {
			/* It did not close: end it and its helpers, its own process group. */
			kill(-c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			break;
		}
		/* Its pipe closes as it exits: wait on that, not on a clock. */
		json_object_put(cdp_read(c, 100));
		if (c->closed && waitpid(c->pid, &st, 0) == c->pid)
			break;
	}
	close(c->to);
	close(c->from);
	free(c->buf);
	live = NULL;
}

/* Nothing but the page's own file requested, no console error or exception, no dialog. */
static void clean_page(struct cdp *c)
{
	if (c->requests_other)
		fail_msg("the page requested %s\n%s", c->requests_other, c->log);
	if (c->errors)
		fail_msg("%d console errors or exceptions:\n%s", c->errors, c->log);
	if (c->dialogs)
		fail_msg("a dialog opened (a script of the data ran):\n%s", c->log);
}

static double eval_num(struct cdp *c, const char *expr)
{
	char *s = cdp_eval(c, expr);
	double v = strtod(s, NULL);

	free(s);
	return v;
}

static void screenshot(struct cdp *c, const char *png)
{
	json_object *res = cdp_call(c, "Page.captureScreenshot", "{\"format\":\"png\"}", true);
	const char *b64 = str_at(res, "data");
	char *cmd;

	assert_non_null(b64);
	write_file(fmt("%s.b64", png), b64);
	cmd = fmt("base64 -d '%s.b64' > '%s'", png, png);
	assert_int_equal(system(cmd), 0);
	json_object_put(res);
	not_blank(png, 50);
}

/* The pointer at the middle of the element found by a selector expression. */
static void mouse(struct cdp *c, const char *type, const char *elem_expr, double dx, int buttons)
{
	char *box = cdp_eval(c, fmt("(e => { e.scrollIntoView({ block: 'center' }); "
				    "const r = e.getBoundingClientRect(); "
				    "return [r.left + r.width / 2, r.top + r.height / 2]; })(%s)",
				    elem_expr));
	double x = 0, y = 0;

	assert_int_equal(sscanf(box, "[%lf,%lf]", &x, &y), 2);
	free(box);
	json_object_put(cdp_call(c, "Input.dispatchMouseEvent",
				 fmt("{\"type\":\"%s\",\"x\":%.1f,\"y\":%.1f,\"button\":\"%s\","
				     "\"buttons\":%d,\"clickCount\":%d,\"deltaX\":0,\"deltaY\":%s}",
				     type, x + dx, y, buttons || !strcmp(type, "mouseReleased") ? "left" : "none",
				     buttons, strcmp(type, "mouseMoved") ? 1 : 0,
				     strcmp(type, "mouseWheel") ? "0" : "-600"),
				 true));
}

/* The widest rectangle of the first lane's row at depth (rows: 18 px under a 24 px axis). */
static const char *widest_at_depth(int depth)
{
	return fmt("Array.from(document.querySelectorAll('#lp-timeline rect.lp-hit'))"
		   ".filter(r => Math.round(+r.getAttribute('y')) === %d)"
		   ".sort((a, b) => b.getAttribute('width') - a.getAttribute('width'))[0]",
		   24 + 18 * depth + 1);
}

/* The text the page shows: its header and sections, not its scripts. */
#define SHOWN "Array.from(document.querySelectorAll('header, section')).map(e => e.textContent).join('\\n')"

/*
 * The page's words for the counter, as the table's: the header's first
 * words, the rows' columns (column NULL: no marker passed a counter, so no
 * counter column, and nothing on the page says Lean, heartbeats or HB).
 */
static void counter_words(struct cdp *c, const char *profile, const char *column,
			  const char *name)
{
	char *heads = cdp_eval(c, "Array.from(document.querySelectorAll('#lp-rows th'))"
				  ".map(t => t.textContent).join('|')");
	char *want = fmt("\"Name|Metadata|Self|Total|Calls|Mean|P95|%s%s\"", column ? column : "",
			 column ? "|%" : "%");
	char *fact = cdp_eval(c, "document.querySelector('.lp-facts li').textContent");
	char *s;

	if (strcmp(heads, want))
		fail_msg("the rows' header is %s, not %s", heads, want);
	if (strncmp(fact + 1, profile, strlen(profile)))
		fail_msg("the header says %s, not %s...", fact, profile);
	/* The counter's total closes the header's first line only when there is one. */
	s = cdp_eval(c, fmt("/, [0-9]+ %s$/.test(document.querySelector('.lp-facts li').textContent)",
			    name ? name : "[A-Za-z]+"));
	assert_string_equal(s, name ? "true" : "false");
	free(s);
	/* Every row has a cell per column. */
	s = cdp_eval(c, "Array.from(document.querySelectorAll('#lp-rows tbody tr'))"
			".every(r => r.cells.length === document.querySelectorAll('#lp-rows th').length)");
	assert_string_equal(s, "true");
	free(s);
	if (!column) {
		s = cdp_eval(c, "/Lean|heartbeat|\\bHB\\b/.test(" SHOWN ")");
		if (strcmp(s, "false"))
			fail_msg("the page names a counter: %s", fact);
		free(s);
	}
	free(heads);
	free(fact);
}

static void test_html_nested(void **state)
{
	char *page = fmt("%s/nested.html", tmpdir), *s;
	struct cdp c;
	double w0, w1;

	(void)state;
	report_ok("--html", page, rec.nested, NULL);
	cdp_start(&c);
	cdp_open(&c, page);
	/* The names, drawn: in the table, the timeline, the bars and the flame graph. */
	for (const char *const *sel = (const char *const[]){ "#lp-rows", "#lp-timeline", "#lp-bars",
							       "#lp-flame", NULL };
	     *sel; sel++)
		for (const char *const *n = (const char *const[]){ "example.nested-spans", "input.load",
								 "model.forward", NULL };
		     *n; n++) {
			s = cdp_eval(&c, fmt("document.querySelector('%s').textContent.includes('%s')",
					     *sel, *n));
			if (strcmp(s, "true"))
				fail_msg("%s is not in %s", *n, *sel);
			free(s);
		}
	assert_int_equal(eval_num(&c, "document.querySelectorAll('#lp-timeline rect.lp-hit').length"), 7);
	/* Its markers pass Lean's heartbeats: the table's header and its "Self HB" column. */
	counter_words(&c, "Lean profile: 7 events, ", "Self HB", "Lean heartbeats");
	s = cdp_eval(&c, "document.querySelector('#lp-timeline').textContent.includes(' ms')");
	assert_string_equal(s, "true"); /* the axis */
	free(s);
	/*
	 * Hover: the widest child, with its metadata, duration and counter. It is
	 * a model.forward (5 ms of work) unless the machine stretched an
	 * input.load (2.4 ms) past it: either shows its own metadata.
	 */
	mouse(&c, "mouseMoved", widest_at_depth(1), 0, 0);
	cdp_wait(&c, "!document.getElementById('lp-tip').hidden", "true");
	s = cdp_eval(&c, "document.getElementById('lp-tip').textContent");
	if (!(strstr(s, "model.forward") && strstr(s, "phase: forward") &&
	      strstr(s, "module: encoder")) &&
	    !(strstr(s, "input.load") && strstr(s, "phase: input") && strstr(s, "activity: load")))
		fail_msg("hover shows %s", s);
	if (!strstr(s, "duration ") || !strstr(s, "Lean heartbeats: 2"))
		fail_msg("hover shows %s", s);
	free(s);
	/* The wheel zooms in around the pointer; a drag pans. */
	w0 = eval_num(&c, "(v => v[1] - v[0])(document.getElementById('lp-timeline').dataset.view.split(',').map(Number))");
	mouse(&c, "mouseWheel", "document.getElementById('lp-timeline')", 0, 0);
	cdp_wait(&c, fmt("(v => v[1] - v[0] < %.0f)(document.getElementById('lp-timeline').dataset.view.split(',').map(Number))", w0 * 0.9),
		 "true");
	w1 = eval_num(&c, "+document.getElementById('lp-timeline').dataset.view.split(',')[0]");
	mouse(&c, "mousePressed", "document.getElementById('lp-timeline')", 0, 1);
	mouse(&c, "mouseMoved", "document.getElementById('lp-timeline')", 200, 1);
	mouse(&c, "mouseReleased", "document.getElementById('lp-timeline')", 200, 0);
	cdp_wait(&c, fmt("+document.getElementById('lp-timeline').dataset.view.split(',')[0] < %.0f", w1),
		 "true");
	/* A header sorts the table. */
	mouse(&c, "mousePressed", "Array.from(document.querySelectorAll('#lp-rows th button')).find(b => b.textContent === 'Calls')", 0, 1);
	mouse(&c, "mouseReleased", "Array.from(document.querySelectorAll('#lp-rows th button')).find(b => b.textContent === 'Calls')", 0, 0);
	cdp_wait(&c, "document.getElementById('lp-rows').dataset.sort", "\"Calls:desc\"");
	/* A click on a flame graph frame zooms into it. */
	mouse(&c, "mousePressed", "Array.from(document.querySelectorAll('#lp-flame g')).find(g => g.textContent.startsWith('input.load'))", 0, 1);
	mouse(&c, "mouseReleased", "Array.from(document.querySelectorAll('#lp-flame g')).find(g => g.textContent.startsWith('input.load'))", 0, 0);
	cdp_wait(&c, "document.getElementById('lp-flame').dataset.focus !== '0'", "true");
	json_object_put(cdp_call(&c, "Runtime.evaluate", "{\"expression\":\"window.scrollTo(0, 0)\"}", true));
	screenshot(&c, fmt("%s/nested.png", tmpdir));
	clean_page(&c);
	cdp_stop(&c);
}

/* --counter-name 'GC cycles': its first word heads the header, the rest names the column. */
static void test_html_counter_name(void **state)
{
	char *page = fmt("%s/gc.html", tmpdir), *s;
	struct cdp c;

	(void)state;
	report_ok("--html", page, rec.gc, NULL);
	cdp_start(&c);
	cdp_open(&c, page);
	counter_words(&c, "GC profile: 7 events, ", "Self cycles", "GC cycles");
	s = cdp_eval(&c, "/Lean|heartbeat|\\bHB\\b/.test(" SHOWN ")");
	assert_string_equal(s, "false");
	free(s);
	mouse(&c, "mouseMoved", widest_at_depth(1), 0, 0);
	cdp_wait(&c, "!document.getElementById('lp-tip').hidden", "true");
	s = cdp_eval(&c, "document.getElementById('lp-tip').textContent");
	if (!strstr(s, "GC cycles: 2") || strstr(s, "Lean"))
		fail_msg("hover shows %s", s);
	free(s);
	clean_page(&c);
	cdp_stop(&c);
}

/*
 * --off-cpu: the rows table gains CPU %, Runq and Blocked (the nested
 * example's spans sleep: mostly blocked), and the trace's waits, drawn
 * inside the spans for viewers like Perfetto, are not spans on the page.
 */
static void test_html_off_cpu(void **state)
{
	char *page = fmt("%s/offcpu.html", tmpdir), *s;
	struct cdp c;

	(void)state;
	report_ok("--html", page, rec.offcpu, NULL);
	cdp_start(&c);
	cdp_open(&c, page);
	s = cdp_eval(&c, "Array.from(document.querySelectorAll('#lp-rows th')).map(t => t.textContent).join('|')");
	if (!strstr(s, "|CPU %|Runq|Blocked"))
		fail_msg("the rows' header is %s", s);
	free(s);
	/* model.forward sleeps 4 ms a call: on a CPU for a small share of it. */
	s = cdp_eval(&c, "(r => r && [r.cells[9].textContent, r.cells[11].textContent])"
			 "(Array.from(document.querySelectorAll('#lp-rows tbody tr'))"
			 ".find(r => r.cells[0].textContent.includes('model.forward')))");
	{
		json_object *o = json_tokener_parse(s);
		double cpu;

		if (!o || json_object_array_length(o) != 2)
			fail_msg("the model.forward row shows %s", s);
		cpu = atof(json_object_get_string(json_object_array_get_idx(o, 0)));
		if (!(cpu >= 0 && cpu < 50) ||
		    !strstr(json_object_get_string(json_object_array_get_idx(o, 1)), " ms"))
			fail_msg("the model.forward row shows %s", s);
		json_object_put(o);
	}
	free(s);
	assert_int_equal(eval_num(&c, "document.querySelectorAll('#lp-timeline rect.lp-hit').length"), 7);
	clean_page(&c);
	cdp_stop(&c);
}

static void test_html_hostile(void **state)
{
	char *page = fmt("%s/hostile.html", tmpdir), *html, *s;
	struct cdp c;

	(void)state;
	report_ok("--html", page, rec.hostile, NULL);
	html = slurp(page, NULL);
	assert_non_null(html);
	/* In the file: the data cannot end its element; U+2028 and U+2029 never appear raw. */
	assert_null(strstr(html, "</script><script>alert"));
	assert_null(strstr(html, "\xe2\x80\xa8"));
	assert_null(strstr(html, "\xe2\x80\xa9"));
	assert_non_null(strstr(html, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
	free(html);
	cdp_start(&c);
	cdp_open(&c, page);
	/* Shown as text, in the table and in the timeline's hover; nothing ran. */
	s = cdp_eval(&c, "document.getElementById('lp-rows').textContent.includes('</script><script>alert(1)</script>')");
	assert_string_equal(s, "true");
	free(s);
	s = cdp_eval(&c, "document.getElementById('lp-rows').textContent.includes('__proto__=polluted')");
	assert_string_equal(s, "true");
	free(s);
	s = cdp_eval(&c, "(t => t.includes('line\\\\u2028sep\\\\u2029end') && t.includes('ctl[31mred') && "
			 "t.includes('<img src=x onerror=alert(2)>') && "
			 "!/[\\u0000-\\u0008\\u001b\\u2028\\u2029]/.test(t))(" SHOWN ")");
	assert_string_equal(s, "true");
	free(s);
	s = cdp_eval(&c, "[document.documentElement.hasAttribute('data-pwned'), "
			 "document.querySelectorAll('script').length, document.querySelectorAll('img').length, "
			 "({}).polluted === undefined && Object.prototype.toString === Object.prototype.toString"
			 " && typeof ({}).constructor === 'function']");
	assert_string_equal(s, "[false,2,0,true]");
	free(s);
	/* Its markers pass no counter: "Profile:", no counter column, no counter in a hover. */
	counter_words(&c, "Profile: ", NULL, NULL);
	mouse(&c, "mouseMoved", widest_at_depth(1), 0, 0);
	cdp_wait(&c, "!document.getElementById('lp-tip').hidden", "true");
	s = cdp_eval(&c, "(t => t.includes('thread ') && !/Lean|heartbeat|\\bHB\\b/.test(t))"
			 "(document.getElementById('lp-tip').textContent)");
	if (strcmp(s, "true"))
		fail_msg("hover shows %s", cdp_eval(&c, "document.getElementById('lp-tip').textContent"));
	free(s);
	/* Merged blocks of the tiny spans are drawn, and both threads have a lane. */
	assert_true(eval_num(&c, "document.querySelectorAll('#lp-timeline rect.lp-hit').length") > 4);
	s = cdp_eval(&c, "document.getElementById('lp-timeline').textContent.includes('pictures.main') && "
			 "document.getElementById('lp-timeline').textContent.includes('pictures.worker')");
	assert_string_equal(s, "true");
	free(s);
	screenshot(&c, fmt("%s/hostile.png", tmpdir));
	clean_page(&c);
	cdp_stop(&c);
}

static void test_html_big(void **state)
{
	char *page = fmt("%s/big.html", tmpdir), *s;
	struct stat st;
	struct cdp c;
	long t0;

	(void)state;
	report_ok("--html", page, rec.big, NULL);
	assert_int_equal(stat(page, &st), 0);
	if (st.st_size > PAGE_BOUND)
		fail_msg("the page of %d spans is %lld bytes, over %d", BIG_SPANS,
			 (long long)st.st_size, PAGE_BOUND);
	cdp_start(&c);
	t0 = now_ms();
	cdp_open(&c, page);
	print_message("%d spans: page %.1f MB, drawn %ld ms after the browser was asked\n",
		      BIG_SPANS, (double)st.st_size / 1e6, now_ms() - t0);
	s = cdp_eval(&c, "document.getElementById('lp-rows').textContent.includes('cost.span')");
	assert_string_equal(s, "true");
	free(s);
	assert_true(eval_num(&c, "document.querySelectorAll('#lp-timeline rect.lp-hit').length") > 0);
	/* Zoomed far in, a finer level is drawn. */
	for (int i = 0; i < 6; i++)
		mouse(&c, "mouseWheel", "document.getElementById('lp-timeline')", 0, 0);
	cdp_wait(&c, "+document.getElementById('lp-timeline').dataset.level > 0", "true");
	clean_page(&c);
	cdp_stop(&c);
}

/* A summary-only recording's summary as written before it carried call paths. */
static char *without_paths(void)
{
	char *dir = fmt("%s/nopaths", tmpdir);
	json_object *sum = load_json(fmt("%s/leanprofiler-summary.json", rec.sonly));

	json_object_object_del(sum, "paths");
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(fmt("%s/leanprofiler-summary.json", dir), json_object_to_json_string(sum));
	json_object_put(sum);
	return dir;
}

static void test_html_summary_only(void **state)
{
	char *page = fmt("%s/sonly.html", tmpdir), *paths = fmt("%s/paths.html", tmpdir), *s;
	struct cdp c;

	(void)state;
	report_ok("--html", page, without_paths(), NULL);
	report_ok("--html", paths, fmt("%s/leanprofiler-summary.json", rec.sonly), NULL);
	/* A summary without call paths (written before they existed): no flame graph. */
	cdp_start(&c);
	cdp_open(&c, page);
	s = cdp_eval(&c, "document.getElementById('lp-timeline-section').textContent.includes('no trace') && "
			 "document.getElementById('lp-rows').textContent.includes('model.forward') && "
			 "document.getElementById('lp-flame-section').textContent.includes('No call tree')");
	assert_string_equal(s, "true");
	free(s);
	clean_page(&c);
	cdp_stop(&c);
	/* record's own call paths: a flame graph without a trace. */
	cdp_start(&c);
	cdp_open(&c, paths);
	s = cdp_eval(&c, "(f => f.textContent.includes(\"the summary's paths\") && "
			 "['example.nested-spans', 'model.forward', 'input.load'].every(n => "
			 "document.getElementById('lp-flame').textContent.includes(n)))"
			 "(document.getElementById('lp-flame-section'))");
	assert_string_equal(s, "true");
	free(s);
	assert_int_equal(eval_num(&c, "+document.getElementById('lp-flame').dataset.frames"), 4);
	clean_page(&c);
	cdp_stop(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg_nested),
		cmocka_unit_test(test_svg_hostile),
		cmocka_unit_test(test_svg_summary_only),
		cmocka_unit_test(test_svg_counter_name),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_output_is_input),
		cmocka_unit_test(test_output_error_says_what_to_do),
		cmocka_unit_test_teardown(test_html_nested, stop_browser),
		cmocka_unit_test_teardown(test_html_counter_name, stop_browser),
		cmocka_unit_test_teardown(test_html_off_cpu, stop_browser),
		cmocka_unit_test_teardown(test_html_hostile, stop_browser),
		cmocka_unit_test_teardown(test_html_big, stop_browser),
		cmocka_unit_test_teardown(test_html_summary_only, stop_browser),
	};

	if (argc > 1)
		build = argv[1];
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	if (!itest_as_root("test_pictures"))
		return 0;
	return cmocka_run_group_tests(tests, setup, teardown);
}
