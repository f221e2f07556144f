// SPDX-License-Identifier: MIT
/*
 * The jvm preset on Debian's OpenJDK 17: Java programs compiled here, run as
 * `record --preset jvm -- java -XX:+ExtendedDTraceProbes ...` (or attached to
 * with -p). The java launcher dlopen()s libjvm.so after its entry point, so
 * the preset's probes are found late: a program waits until leanprofiler says
 * it records them (a file appears), then works. Checks, against what the
 * programs did and print:
 * - exact call counts, nesting, collections, the VM's start-up methods, a
 *   native method, a thread still inside a method at the end closed
 *   unterminated;
 * - exceptions thrown through C1-compiled code 20000 times under default
 *   tiered compilation: C1 inlines the thrower into its caller and, when the
 *   exception leaves, fires method__return for the caller only. Counts and
 *   nesting stay exact; the thrower's spans whose return never fired close
 *   with their caller, unterminated;
 * - calls from C2-compiled code (-Xbatch warm-up): exact counts, nested;
 * - the same throws with thrower() kept out of line: no span closed unwound;
 * - attached with -p to threads inside methods: their rows carry the methods'
 *   names (the return probe has them), no "(unknown)";
 * - lambda rows: no hidden class address, the same name run after run;
 * - gc spans against the JVM's own -Xlog:gc and -Xlog:safepoint logs: G1 one
 *   span per logged pause, in order, full= as logged; Parallel and Serial one
 *   span per VM operation, full= as requested;
 * - a JVM started without -XX:+ExtendedDTraceProbes: a one-line warning; with
 *   it in JDK_JAVA_OPTIONS, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS, or with
 *   -XX:+DTraceMethodProbes: none, methods recorded.
 * Needs root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-jvm-XXXXXX";

#include "itest.h"

#define RECORDING_MS 60000
#include "itest_record.h"

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define CALLS 5000
#define GCS 3
#define WAIT_MS 60000 /* for the JVM to map libjvm.so and leanprofiler to attach */
#define THROWS 20000
#define LAMBDA_CALLS 3000
#define METHOD_SPEC "recording spec 'hotspot:method__entry"

static const char *const probes_flag[] = { "-XX:+ExtendedDTraceProbes", NULL };

static const char main_java[] =
	"import java.io.File;\n"
	"public class Main {\n"
	"  static volatile boolean hanging;\n"
	"  static int work(int i) { return i * 31 + 7; }\n"
	"  static long loop(int n) { long s = 0; for (int i = 0; i < n; i++) s += work(i); return s; }\n"
	"  static void hang() {\n"
	"    synchronized (Main.class) {\n"
	"      hanging = true;\n"
	"      Main.class.notifyAll();\n"
	"      for (;;) { try { Main.class.wait(); } catch (InterruptedException e) { } }\n"
	"    }\n"
	"  }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    File go = new File(a[0]);\n"
	"    while (!go.exists()) Thread.sleep(5); /* until leanprofiler records libjvm.so */\n"
	"    System.out.println(loop(Integer.parseInt(a[1])));\n"
	"    for (int i = 0; i < Integer.parseInt(a[2]); i++) System.gc();\n"
	"    Thread t = new Thread(Main::hang, \"lp-hang\");\n"
	"    t.setDaemon(true); /* the JVM exits with it inside hang() */\n"
	"    t.start();\n"
	"    synchronized (Main.class) { while (!hanging) Main.class.wait(); }\n"
	"  }\n"
	"}\n";

struct span {
	int64_t ts, end; /* ns: the trace's microseconds have three decimals */
	int64_t tid;
	bool unterminated;
};

static int by_ts(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The complete events named name, by start. */
static size_t spans(json_object *trace, const char *name, struct span *out, size_t max)
{
	json_object *evs = get(trace, "traceEvents");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *args, *v;

		if (strcmp(json_object_get_string(get(e, "ph")), "X") ||
		    strcmp(json_object_get_string(get(e, "name")), name))
			continue;
		if (n == max)
			fail_msg("more than %zu %s spans", max, name);
		out[n].ts = llround(json_object_get_double(get(e, "ts")) * 1000);
		out[n].end = out[n].ts + llround(json_object_get_double(get(e, "dur")) * 1000);
		out[n].tid = json_object_get_int64(get(e, "tid"));
		out[n].unterminated = json_object_object_get_ex(e, "args", &args) &&
				      json_object_object_get_ex(args, "unterminated", &v) &&
				      json_object_get_boolean(v);
		n++;
	}
	qsort(out, n, sizeof(*out), by_ts);
	return n;
}

/* The last of the n spans (by start, not overlapping) that starts at or before ts, or NULL. */
static const struct span *last_before(const struct span *s, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &s[lo - 1] : NULL;
}

/* Writes dir/cls.java and compiles it into dir. */
static const char *javac(const char *name, const char *cls, const char *src)
{
	char *dir = fmt("%s/%s", tmpdir, name);
	char *argv[] = { JDK "/bin/javac", "-d", dir, fmt("%s/%s.java", dir, cls), NULL };
	struct run r;

	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(argv[3], src);
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("javac exited %d: %s", r.status, r.err);
	run_free(&r);
	return dir;
}

/*
 * Records `java flags... -cp dir cls go args...` into dir/out with the jvm
 * preset; lets the program go once the method probes are recorded. The
 * summary; leanprofiler's stderr in *err.
 */
static json_object *record_java(const char *dir, const char *const flags[], const char *cls,
				const char *const args[], char **err)
{
	char *out = fmt("%s/out", dir), *go = fmt("%s/go", dir);
	char *lp_out = fmt("%s/lp.out", dir), *lp_err = fmt("%s/lp.err", dir);
	char *argv[32] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "jvm",
			   "--", JDK "/bin/java" };
	struct io in = { .mode = IO_NULL }, o = { .mode = IO_FILE, .file = lp_out },
		  e = { .mode = IO_FILE, .file = lp_err };
	int n = 8, rc;
	pid_t lp;

	for (int i = 0; flags[i]; i++)
		argv[n++] = (char *)flags[i];
	argv[n++] = "-cp";
	argv[n++] = (char *)dir;
	argv[n++] = (char *)cls;
	argv[n++] = go;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	lp = spawn(argv, &in, &o, &e);
	if (!wait_text(lp_err, METHOD_SPEC, lp, WAIT_MS))
		fail_msg("libjvm.so's probes were not found: %s", slurp(lp_err, NULL));
	write_file(go, "");
	rc = wait_exit_within(lp, WAIT_MS);
	*err = slurp(lp_err, NULL);
	if (rc != 0)
		fail_msg("exit %d: %s", rc, *err);
	return load_json(fmt("%s/leanprofiler-summary.json", out));
}

static int64_t calls(json_object *sum, const char *name, const char *meta)
{
	json_object *rows = get(sum, "rows");
	int64_t n = 0;

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(json_object_get_string(get(r, "name")), name) &&
		    (!meta || !strcmp(json_object_get_string(get(r, "meta_text")), meta)))
			n += json_object_get_int64(get(r, "calls"));
	}
	return n;
}

static json_object *row(json_object *sum, const char *name);

static void test_methods_and_gc(void **state)
{
	char *out = fmt("%s/out", tmpdir), *go = fmt("%s/go", tmpdir);
	char *lp_out = fmt("%s/lp.out", tmpdir), *lp_err = fmt("%s/lp.err", tmpdir);
	char *javac[] = { JDK "/bin/javac", "-d", tmpdir, fmt("%s/Main.java", tmpdir), NULL };
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "jvm",
			 "--", JDK "/bin/java", "-XX:+ExtendedDTraceProbes", "-cp", tmpdir, "Main",
			 go, fmt("%d", CALLS), fmt("%d", GCS), NULL };
	static struct span work[CALLS + 1], loop[4], hang[4], gc[256], wait[64];
	size_t nwork, nloop, nhang, ngc, nwait, in = 0, inside_hang = 0;
	json_object *sum, *trace;
	struct run r;
	pid_t lp;
	int rc;

	(void)state;
	write_file(fmt("%s/Main.java", tmpdir), main_java);
	assert_int_equal(run(&r, javac), 0);
	if (r.status != 0)
		fail_msg("javac exited %d: %s", r.status, r.err);
	run_free(&r);

	lp = spawn_to(argv, lp_out, lp_err);
	/* Both specs are late: each is said once its probes are recorded. */
	if (!wait_text(lp_err, "recording spec 'hotspot:method__entry", lp, WAIT_MS) ||
	    !wait_text(lp_err, "recording spec 'hotspot:gc__begin", lp, WAIT_MS)) {
		/* Let the JVM finish; a signal to leanprofiler is passed on to it. */
		write_file(go, "");
		kill(lp, SIGINT);
		wait_exit(lp);
		fail_msg("libjvm.so's probes were not found: %s", slurp(lp_err, NULL));
	}
	write_file(go, "");
	rc = wait_exit(lp);
	if (rc != 0)
		fail_msg("exit %d: %s", rc, slurp(lp_err, NULL));
	/* No missing-probe error nor warning at the start or the end. */
	assert_null(strstr(slurp(lp_err, NULL), "no usable"));

	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	assert_int_equal(calls(sum, "Main.work", "signature=(I)I"), CALLS);
	assert_int_equal(calls(sum, "Main.loop", "signature=(I)J"), 1);
	assert_true(calls(sum, "gc", NULL) >= GCS);
	/*
	 * The JVM's start-up too: the launcher is paused while libjvm.so's probes
	 * are attached, before the VM runs its first Java code.
	 */
	assert_int_equal(calls(sum, "java/lang/String.<clinit>", "signature=()V"), 1);
	assert_int_equal(calls(sum, "java/lang/System.initPhase1", "signature=()V"), 1);
	/* Threads still inside methods at the end: closed, unterminated, not errors. */
	assert_true(json_object_get_int64(get(sum, "unterminated_spans")) >= 1);

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	nwork = spans(trace, "Main.work", work, CALLS + 1);
	nloop = spans(trace, "Main.loop", loop, 4);
	nhang = spans(trace, "Main.hang", hang, 4);
	ngc = spans(trace, "gc", gc, 256);
	assert_int_equal(nwork, CALLS);
	assert_int_equal(nloop, 1);
	assert_false(loop[0].unterminated);
	/* Every call inside the caller, on its thread. */
	for (size_t i = 0; i < nwork; i++) {
		assert_false(work[i].unterminated);
		in += work[i].tid == loop[0].tid && work[i].ts >= loop[0].ts &&
		      work[i].end <= loop[0].end;
	}
	assert_int_equal(in, CALLS);
	/* The collections come after the loop. */
	in = 0;
	for (size_t i = 0; i < ngc; i++)
		in += gc[i].ts > loop[0].end;
	assert_true(in >= GCS);
	/* lp-hang was inside hang() when the JVM exited. */
	assert_int_equal(nhang, 1);
	assert_true(hang[0].unterminated);
	assert_true(hang[0].tid != loop[0].tid);
	/* The JVM's own threads wait in methods too: the Reference Handler's, closed at exit. */
	assert_true(get_i(row(sum, "java/lang/ref/Reference.waitForReferencePendingList"),
			  "unterminated") >= 1);
	/* A native method is a span too: hang() waits in Object.wait(long), JDK 17's native. */
	assert_true(calls(sum, "java/lang/Object.wait", "signature=(J)V") >= 1);
	nwait = spans(trace, "java/lang/Object.wait", wait, 64);
	for (size_t i = 0; i < nwait; i++)
		inside_hang += wait[i].tid == hang[0].tid && wait[i].unterminated &&
			       wait[i].ts >= hang[0].ts;
	assert_true(inside_hang >= 1);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(sum);
	json_object_put(trace);
}

static json_object *row(json_object *sum, const char *name)
{
	json_object *rows = get(sum, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(get_s(r, "name"), name))
			return r;
	}
	fail_msg("no row %s", name);
	return NULL;
}

/*
 * outer() runs once, so it stays interpreted (an on-stack compilation needs
 * 60000 loop iterations): every exception is caught there. middle() is called
 * 20000 times: compiled by C1, which inlines thrower(); C2 later.
 */
static const char throw_java[] =
	"import java.io.*;\n"
	"public class Throw {\n"
	"  static final class Boom extends RuntimeException {\n"
	"    Boom() { super(null, null, false, false); }\n"
	"  }\n"
	"  static int middles, throwers, afters, caught;\n"
	"  static void thrower(int i) { throwers++; throw new Boom(); }\n"
	"  static void middle(int i) { middles++; thrower(i); }\n"
	"  static void after(int i) { afters++; }\n"
	"  static void outer(int n) {\n"
	"    for (int i = 0; i < n; i++) {\n"
	"      try { middle(i); } catch (Boom b) { caught++; }\n"
	"      after(i);\n"
	"    }\n"
	"  }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    File go = new File(a[0]);\n"
	"    while (!go.exists()) Thread.sleep(5);\n"
	"    outer(Integer.parseInt(a[1]));\n"
	"    try (PrintWriter w = new PrintWriter(a[2])) {\n"
	"      w.println(middles + \" \" + throwers + \" \" + afters + \" \" + caught);\n"
	"    }\n"
	"  }\n"
	"}\n";

static void test_exceptions_through_c1(void **state)
{
	const char *dir = javac("throw", "Throw", throw_java);
	const char *args[] = { fmt("%d", THROWS), fmt("%s/counts", dir), NULL };
	static struct span outer[4], middle[THROWS + 1], thrower[THROWS + 1], after[THROWS + 1];
	size_t nouter, nmiddle, nthrower, nafter, unterminated = 0;
	long middles = -1, throwers = -1, afters = -1, caught = -1;
	json_object *sum, *trace;
	char *err, *counts;

	(void)state;
	sum = record_java(dir, probes_flag, "Throw", args, &err);
	counts = slurp(args[1], NULL);
	assert_non_null(counts);
	assert_int_equal(sscanf(counts, "%ld %ld %ld %ld", &middles, &throwers, &afters, &caught),
			 4);
	assert_int_equal(caught, THROWS);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	/* Every call the program made is one span: none dropped, none merged. */
	assert_int_equal(calls(sum, "Throw.outer", NULL), 1);
	assert_int_equal(calls(sum, "Throw.middle", NULL), middles);
	assert_int_equal(calls(sum, "Throw.thrower", NULL), throwers);
	assert_int_equal(calls(sum, "Throw.after", NULL), afters);
	assert_int_equal(json_object_get_int64(get(sum, "too_deep_enters")), 0);

	trace = load_json(fmt("%s/out/leanprofiler-trace.json", dir));
	nouter = spans(trace, "Throw.outer", outer, 4);
	nmiddle = spans(trace, "Throw.middle", middle, THROWS + 1);
	nthrower = spans(trace, "Throw.thrower", thrower, THROWS + 1);
	nafter = spans(trace, "Throw.after", after, THROWS + 1);
	assert_int_equal(nouter, 1);
	assert_int_equal(nmiddle, THROWS);
	assert_int_equal(nthrower, THROWS);
	assert_int_equal(nafter, THROWS);
	/* middle's own return fires every time, compiled or not. */
	for (size_t i = 0; i < nmiddle; i++) {
		assert_false(middle[i].unterminated);
		assert_int_equal(middle[i].tid, outer[0].tid);
		assert_true(middle[i].ts >= outer[0].ts && middle[i].end <= outer[0].end);
		if (i)
			assert_true(middle[i].ts >= middle[i - 1].end);
	}
	/*
	 * Each thrower inside a middle. Those whose return never fired (C1 had
	 * inlined them) end with their middle, unterminated.
	 */
	for (size_t i = 0; i < nthrower; i++) {
		const struct span *m = last_before(middle, nmiddle, thrower[i].ts);

		assert_non_null(m);
		assert_int_equal(thrower[i].tid, m->tid);
		if (thrower[i].end > m->end)
			fail_msg("thrower span %zu [%lld, %lld] ends after its middle [%lld, %lld]",
				 i, (long long)thrower[i].ts, (long long)thrower[i].end,
				 (long long)m->ts, (long long)m->end);
		/* Closed by its middle's return (spans closing together end 1 ns apart). */
		if (thrower[i].unterminated) {
			assert_true(m->end - thrower[i].end <= 1);
			unterminated++;
		}
	}
	/* The case this test is about happened: C1-compiled frames threw. */
	if (unterminated == 0)
		fail_msg("no thrower span closed by its middle: C1 never inlined thrower()");
	assert_int_equal(get_i(row(sum, "Throw.thrower"), "unterminated"), unterminated);
	/* Each after directly inside outer: past the middle (and thrower) before it. */
	for (size_t i = 0; i < nafter; i++) {
		const struct span *m = last_before(middle, nmiddle, after[i].ts);
		const struct span *t = last_before(thrower, nthrower, after[i].ts);

		assert_false(after[i].unterminated);
		assert_int_equal(after[i].tid, outer[0].tid);
		assert_true(after[i].ts >= outer[0].ts && after[i].end <= outer[0].end);
		assert_true(m && m->end <= after[i].ts);
		assert_true(t && t->end <= after[i].ts);
	}
	/* No check_with_consumer(): speedscope takes over a minute on these 300k spans. */
	json_object_put(sum);
	json_object_put(trace);
}

/*
 * loop() and work() are compiled by C2 before the go file is waited for
 * (-Xbatch: each compilation finishes before the call that asked for it goes
 * on), so the last loop() runs C2's code. Under -XX:+ExtendedDTraceProbes C2
 * inlines nothing: each call is a call, and fires both probes.
 */
static const char hot_java[] =
	"import java.io.File;\n"
	"public class Hot {\n"
	"  static int work(int i) { return i * 31 + 7; }\n"
	"  static long loop(int n) { long s = 0; for (int i = 0; i < n; i++) s += work(i); return s; }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    long s = 0;\n"
	"    for (int i = 0; i < Integer.parseInt(a[1]); i++) s += loop(10);\n"
	"    System.out.println(\"warm \" + s);\n"
	"    File go = new File(a[0]);\n"
	"    while (!go.exists()) Thread.sleep(5);\n"
	"    System.out.println(loop(Integer.parseInt(a[2])));\n"
	"  }\n"
	"}\n";

#define WARM_CALLS 20000

/*
 * The level -XX:+PrintCompilation gives method's compilation on line (not an
 * on-stack one), or -1: "    243    7       4       Hot::loop (25 bytes)".
 */
static int compile_level(const char *line, const char *method)
{
	const char *m = strstr(line, method), *p = m;

	if (!m || strncmp(m + strlen(method), " (", 2))
		return -1;
	while (p > line && p[-1] == ' ')
		p--;
	if (p - line < 2 || p[-1] < '0' || p[-1] > '4' || p[-2] != ' ')
		return -1;
	return p[-1] - '0';
}

static void test_c2_compiled_calls(void **state)
{
	const char *dir = javac("hot", "Hot", hot_java);
	const char *flags[] = { "-XX:+ExtendedDTraceProbes", "-Xbatch", "-XX:+PrintCompilation",
				NULL };
	const char *args[] = { fmt("%d", WARM_CALLS), fmt("%d", CALLS), NULL };
	static struct span loop[WARM_CALLS + 2], work[WARM_CALLS * 10 + CALLS + 1];
	bool c2 = false, warm = false;
	size_t nloop, nwork, in = 0;
	json_object *sum, *trace;
	char *out, *save = NULL, *err;
	const struct span *last;

	(void)state;
	sum = record_java(dir, flags, "Hot", args, &err);
	/* C2 (level 4) had compiled loop() before the warm-up ended, and kept it. */
	out = slurp(fmt("%s/lp.out", dir), NULL);
	assert_non_null(out);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "warm ", 5))
			warm = true;
		if (compile_level(l, "Hot::loop") != 4)
			continue;
		if (strstr(l, "made not entrant"))
			fail_msg("C2's loop() was thrown away: %s", l);
		c2 |= !warm;
	}
	if (!warm || !c2)
		fail_msg("no C2 compilation of Hot::loop before the warm-up ended");
	/* Every call is a span, in the interpreter, C1's and C2's code alike. */
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	assert_int_equal(calls(sum, "Hot.loop", "signature=(I)J"), WARM_CALLS + 1);
	assert_int_equal(calls(sum, "Hot.work", "signature=(I)I"), WARM_CALLS * 10 + CALLS);
	trace = load_json(fmt("%s/out/leanprofiler-trace.json", dir));
	nloop = spans(trace, "Hot.loop", loop, WARM_CALLS + 2);
	nwork = spans(trace, "Hot.work", work, WARM_CALLS * 10 + CALLS + 1);
	assert_int_equal(nloop, WARM_CALLS + 1);
	last = &loop[nloop - 1];
	for (size_t i = 0; i < nwork; i++) {
		assert_false(work[i].unterminated);
		in += work[i].tid == last->tid && work[i].ts >= last->ts && work[i].end <= last->end;
	}
	/* The calls C2's loop() made: each inside it. */
	assert_int_equal(in, CALLS);
	json_object_put(sum);
	json_object_put(trace);
}

/* The same exceptions with thrower() never inlined: every return fires. */
static void test_exceptions_not_inlined(void **state)
{
	const char *dir = javac("throw-noinline", "Throw", throw_java);
	const char *args[] = { fmt("%d", THROWS), fmt("%s/counts", dir), NULL };
	const char *flags[] = { "-XX:+ExtendedDTraceProbes", "-XX:CompileCommand=quiet",
				"-XX:CompileCommand=dontinline,Throw::thrower", NULL };
	json_object *sum;
	char *err;

	(void)state;
	sum = record_java(dir, flags, "Throw", args, &err);
	assert_int_equal(calls(sum, "Throw.thrower", NULL), THROWS);
	assert_int_equal(get_i(row(sum, "Throw.thrower"), "unterminated"), 0);
	assert_int_equal(get_i(get(sum, "span_pairs"), "unwound"), 0);
	json_object_put(sum);
}

/*
 * Two threads sit inside methods (hold-a three holdA frames deep, hold-b in
 * holdB), each in waitGo(), when leanprofiler attaches; then they return.
 */
static const char hold_java[] =
	"import java.io.*;\n"
	"import java.util.concurrent.atomic.AtomicInteger;\n"
	"public class Hold {\n"
	"  static final AtomicInteger waiting = new AtomicInteger();\n"
	"  static volatile boolean go;\n"
	"  static void waitGo() throws Exception {\n"
	"    waiting.incrementAndGet();\n"
	"    while (!go) Thread.sleep(1);\n"
	"  }\n"
	"  static void holdA(int depth) throws Exception {\n"
	"    if (depth > 1) holdA(depth - 1); else waitGo();\n"
	"  }\n"
	"  static void holdB() throws Exception { waitGo(); }\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    Thread ta = new Thread(() -> { try { holdA(3); } catch (Exception e) { } }, \"hold-a\");\n"
	"    Thread tb = new Thread(() -> { try { holdB(); } catch (Exception e) { } }, \"hold-b\");\n"
	"    ta.start();\n"
	"    tb.start();\n"
	"    while (waiting.get() < 2) Thread.sleep(1);\n"
	"    try (PrintWriter w = new PrintWriter(a[0])) { w.println(\"inside\"); }\n"
	"    File f = new File(a[1]);\n"
	"    while (!f.exists()) Thread.sleep(1);\n"
	"    go = true;\n"
	"    ta.join();\n"
	"    tb.join();\n"
	"  }\n"
	"}\n";

static void test_attach_inside_methods(void **state)
{
	const char *dir = javac("hold", "Hold", hold_java);
	char *ready = fmt("%s/ready", dir), *go = fmt("%s/go", dir);
	char *argv[] = { JDK "/bin/java", "-XX:+ExtendedDTraceProbes", "-cp", (char *)dir, "Hold",
			 ready, go, NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_FILE, .file = fmt("%s/java.out", dir) };
	pid_t java = spawn(argv, &in, &out, &out);
	const char *lp_args[] = { "-p", fmt("%d", (int)java), "--preset", "jvm", NULL };
	json_object *sum, *rows;
	struct lp p;

	(void)state;
	if (!wait_text(ready, "inside", java, WAIT_MS))
		fail_msg("the threads never got inside waitGo(): %s", slurp(out.file, NULL));
	lp_start(&p, "hold-lp", lp_args);
	lp_wait_recording(&p);
	write_file(go, "");
	assert_int_equal(wait_exit_within(java, WAIT_MS), 0);
	lp_finish(&p, WAIT_MS);
	expect_status(&p, 0);

	sum = summary_of(p.dir);
	rows = get(sum, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++)
		if (!strcmp(get_s(json_object_array_get_idx(rows, i), "name"), "(unknown)"))
			fail_msg("a row of spans begun before the recording has no name");
	/* Each frame begun before the attach is one span, named, counted as such. */
	assert_int_equal(get_i(row(sum, "Hold.holdA"), "calls"), 3);
	assert_int_equal(get_i(row(sum, "Hold.holdA"), "started_before_recording"), 3);
	assert_int_equal(get_i(row(sum, "Hold.holdB"), "calls"), 1);
	assert_int_equal(get_i(row(sum, "Hold.holdB"), "started_before_recording"), 1);
	assert_int_equal(get_i(row(sum, "Hold.waitGo"), "calls"), 2);
	assert_int_equal(get_i(row(sum, "Hold.waitGo"), "started_before_recording"), 2);
	assert_int_equal(get_i(row(sum, "Hold.lambda$main$0"), "calls"), 1);
	/* Their signature is the entry's metadata: not known (null), the row says so. */
	assert_null(get(row(sum, "Hold.holdA"), "meta_text"));
	assert_null(get(row(sum, "Hold.waitGo"), "meta_text"));
	assert_true(get_i(sum, "started_before_recording") >= 6);
	json_object_put(sum);
}

static const char lam_java[] =
	"import java.io.File;\n"
	"import java.util.function.IntUnaryOperator;\n"
	"public class Lam {\n"
	"  static int n;\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    File go = new File(a[0]);\n"
	"    while (!go.exists()) Thread.sleep(5);\n"
	"    int calls = Integer.parseInt(a[1]);\n"
	"    Runnable r = () -> n++;\n"
	"    IntUnaryOperator f = x -> x + n;\n"
	"    for (int i = 0; i < calls; i++) r.run();\n"
	"    for (int i = 0; i < calls; i++) n = f.applyAsInt(i) & 0xffff;\n"
	"    System.out.println(n);\n"
	"  }\n"
	"}\n";

/* The name of the row of method method of a Lam lambda class; checks its calls. */
static char *lambda_row(json_object *sum, const char *method)
{
	json_object *rows = get(sum, "rows");
	char *found = NULL;

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);
		const char *name = get_s(r, "name"), *dot = strrchr(name, '.');

		if (strstr(name, "0x"))
			fail_msg("row name with an address: %s", name);
		if (strncmp(name, "Lam$$Lambda$", 12) || !dot || strcmp(dot + 1, method))
			continue;
		if (found)
			fail_msg("two rows of Lam's %s: %s and %s", method, found, name);
		found = strdup(name);
		assert_int_equal(get_i(r, "calls"), LAMBDA_CALLS);
	}
	if (!found)
		fail_msg("no row of a Lam lambda's %s", method);
	return found;
}

static void test_lambda_names(void **state)
{
	const char *args[] = { fmt("%d", LAMBDA_CALLS), NULL };
	const char *dir = javac("lambda", "Lam", lam_java);
	char *run_name[2], *op_name[2], *err;

	(void)state;
	for (int i = 0; i < 2; i++) {
		json_object *sum;
		char *d = fmt("%s/run%d", dir, i);

		assert_int_equal(mkdir(d, 0755), 0);
		/* The classes stay in dir: each run gets its own output and go file in d. */
		assert_int_equal(symlink(fmt("%s/Lam.class", dir), fmt("%s/Lam.class", d)), 0);
		sum = record_java(d, probes_flag, "Lam", args, &err);
		run_name[i] = lambda_row(sum, "run");
		op_name[i] = lambda_row(sum, "applyAsInt");
		assert_int_equal(calls(sum, "Lam.lambda$main$0", NULL), LAMBDA_CALLS);
		json_object_put(sum);
	}
	assert_string_equal(run_name[0], run_name[1]);
	assert_string_equal(op_name[0], op_name[1]);
}

/*
 * Allocates 512-byte arrays, keeping every eighth in a ring of 40000 (20 MB
 * live in a 64 MB heap: young collections, G1's concurrent cycles, Parallel's
 * full ones), and calls System.gc() in the first rounds.
 */
static const char gc_java[] =
	"import java.io.File;\n"
	"public class Gc {\n"
	"  static volatile Object sink;\n"
	"  public static void main(String[] a) throws Exception {\n"
	"    File go = new File(a[0]);\n"
	"    while (!go.exists()) Thread.sleep(5);\n"
	"    int rounds = Integer.parseInt(a[1]), gcs = Integer.parseInt(a[2]);\n"
	"    Object[] keep = new Object[40000];\n"
	"    int k = 0;\n"
	"    for (int r = 0; r < rounds; r++) {\n"
	"      for (int i = 0; i < 200000; i++) {\n"
	"        byte[] b = new byte[512];\n"
	"        sink = b;\n"
	"        if ((i & 7) == 0) { keep[k] = b; k = k + 1 == keep.length ? 0 : k + 1; }\n"
	"      }\n"
	"      if (r < gcs) System.gc();\n"
	"    }\n"
	"  }\n"
	"}\n";

#define GC_ROUNDS "30"
#define MAX_GCS 1024

struct gc_span {
	int64_t ts, end; /* CLOCK_MONOTONIC ns, as -Xlog's tn decoration */
	int64_t tid;
	bool full;
	int lines;	 /* log lines written inside it */
	bool sysgc;	 /* one of them says (System.gc()) */
};

static int gc_by_ts(const void *a, const void *b)
{
	const struct gc_span *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The gc spans of the trace, by start, on the trace's clock. */
static size_t gc_spans(json_object *trace, struct gc_span *out, size_t max)
{
	json_object *evs = get(trace, "traceEvents");
	int64_t base = json_object_get_int64(get(get(trace, "otherData"), "base_ns"));
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (strcmp(get_s(e, "ph"), "X") || strcmp(get_s(e, "name"), "gc"))
			continue;
		if (n == max)
			fail_msg("more than %zu gc spans", max);
		out[n] = (struct gc_span){ 0 };
		out[n].ts = base + llround(json_object_get_double(get(e, "ts")) * 1000);
		out[n].end = out[n].ts + llround(json_object_get_double(get(e, "dur")) * 1000);
		out[n].tid = json_object_get_int64(get(e, "tid"));
		out[n].full = !strcmp(get_s(get(e, "args"), "full"), "1");
		n++;
	}
	qsort(out, n, sizeof(*out), gc_by_ts);
	return n;
}

/* The name thread_list gives tid. */
static const char *thread_name(json_object *sum, int64_t tid)
{
	json_object *threads = get(sum, "thread_list");

	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *t = json_object_array_get_idx(threads, i);

		if (get_i(t, "tid") == tid)
			return get_s(t, "name");
	}
	fail_msg("tid %lld not in thread_list", (long long)tid);
	return NULL;
}

struct pause {
	int64_t at;  /* when the line was written: the pause's end */
	int64_t dur; /* ns, logged in ms with three decimals */
	char kind[16]; /* Young, Remark, Cleanup, Full */
	bool sysgc;
};

/*
 * The "Pause" lines of an -Xlog:gc:file=...:tn log, in order:
 * "[12345ns] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 12M->3M(64M) 4.451ms".
 */
static size_t pauses(const char *path, struct pause *out, size_t max)
{
	char *log = slurp(path, NULL), *save = NULL;
	size_t n = 0;

	assert_non_null(log);
	for (char *l = strtok_r(log, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long long at;
		int id, off = 0;
		char *ms = strrchr(l, ' ');

		if (sscanf(l, "[%lldns] GC(%d) Pause %n", &at, &id, &off) != 2 || !off)
			continue;
		if (n == max)
			fail_msg("more than %zu pauses in %s", max, path);
		assert_non_null(ms);
		out[n].at = at;
		out[n].dur = llround(strtod(ms + 1, NULL) * 1e6);
		assert_int_equal(sscanf(l + off, "%15s", out[n].kind), 1);
		out[n].sysgc = strstr(l, "(System.gc())") != NULL;
		n++;
	}
	return n;
}

/*
 * G1 (the default on 2 CPUs and 2 GB or more; named here, as the machine may
 * not be): one gc span per pause -Xlog:gc logs, in order, full=1 for each
 * Pause Full; each span inside the GC safepoint of -Xlog:safepoint. Where
 * gc__begin/end fire in HotSpot, told by the timestamps: a young collection
 * logs its pause inside the span; remark, cleanup and full collections time
 * their pause around it.
 */
static void test_gc_against_log(void **state)
{
	const char *dir = javac("g1", "Gc", gc_java);
	char *log = fmt("%s/gc.log", dir), *sp = fmt("%s/safepoint.log", dir);
	const char *flags[] = { "-XX:+ExtendedDTraceProbes", "-XX:+UseG1GC", "-Xmx64m",
				fmt("-Xlog:gc:file=%s:tn", log), fmt("-Xlog:safepoint:file=%s:tn", sp),
				NULL };
	const char *args[] = { GC_ROUNDS, fmt("%d", GCS), NULL };
	static struct gc_span s[MAX_GCS];
	static struct pause p[MAX_GCS];
	size_t ns, np, nsp = 0, young = 0, remark = 0, cleanup = 0, sysgc = 0;
	char *splog, *save = NULL, *err;
	json_object *sum, *trace;

	(void)state;
	sum = record_java(dir, flags, "Gc", args, &err);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	trace = load_json(fmt("%s/out/leanprofiler-trace.json", dir));
	ns = gc_spans(trace, s, MAX_GCS);
	np = pauses(log, p, MAX_GCS);
	if (ns != np)
		fail_msg("%zu gc spans, %zu pauses in %s", ns, np, log);
	for (size_t i = 0; i < ns; i++) {
		bool full = !strcmp(p[i].kind, "Full");

		if (s[i].full != full)
			fail_msg("gc span %zu full=%d, the log's pause %zu is %s", i, s[i].full, i,
				 p[i].kind);
		sysgc += full && p[i].sysgc;
		if (!strcmp(p[i].kind, "Young")) {
			young++;
			if (p[i].at < s[i].ts || p[i].at > s[i].end)
				fail_msg("young pause %zu logged at %lld, outside its span [%lld, %lld]",
					 i, (long long)p[i].at, (long long)s[i].ts,
					 (long long)s[i].end);
			continue;
		}
		remark += !strcmp(p[i].kind, "Remark");
		cleanup += !strcmp(p[i].kind, "Cleanup");
		/* Inside the logged pause: over before its line, no longer (500 ns: rounding). */
		assert_true(s[i].end <= p[i].at);
		if (s[i].end - s[i].ts > p[i].dur + 500)
			fail_msg("%s span %zu lasted %lld ns, its logged pause %lld ns", p[i].kind, i,
				 (long long)(s[i].end - s[i].ts), (long long)p[i].dur);
	}
	assert_int_equal(sysgc, GCS);
	/* All on the thread that runs VM operations. */
	for (size_t i = 0; i < ns; i++)
		assert_string_equal(thread_name(sum, s[i].tid), "VM Thread");
	/* The program made each kind happen. */
	assert_true(young > 0 && remark > 0 && cleanup > 0);

	/* Each span inside its safepoint: G1's are the VM operations named G1... */
	splog = slurp(sp, NULL);
	assert_non_null(splog);
	for (char *l = strtok_r(splog, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long long at, inside;
		char op[64];
		const char *a = strstr(l, "At safepoint: ");

		if (sscanf(l, "[%lldns] Safepoint \"%63[^\"]\"", &at, op) != 2 || strncmp(op, "G1", 2))
			continue;
		assert_non_null(a);
		assert_int_equal(sscanf(a, "At safepoint: %lld ns", &inside), 1);
		if (nsp >= ns)
			fail_msg("more G1 safepoints than gc spans (%zu)", ns);
		assert_true(s[nsp].end <= at);
		if (s[nsp].end - s[nsp].ts > inside)
			fail_msg("gc span %zu (%lld ns) longer than its safepoint %s (%lld ns)", nsp,
				 (long long)(s[nsp].end - s[nsp].ts), op, inside);
		nsp++;
	}
	assert_int_equal(nsp, ns);
	json_object_put(sum);
	json_object_put(trace);
}

/*
 * Parallel and Serial log each collection inside one VM operation, and its gc
 * span: a collection that turns into a full one is one span with two lines;
 * full= is what the operation was asked for (System.gc()), not what it did.
 * sysgc_lines: the pauses a System.gc() logs (Parallel: a young, then a full).
 */
static void gc_one_operation(const char *name, const char *collector, int sysgc_lines)
{
	const char *dir = javac(name, "Gc", gc_java);
	char *log = fmt("%s/gc.log", dir);
	const char *flags[] = { "-XX:+ExtendedDTraceProbes", collector, "-Xmx64m",
				fmt("-Xlog:gc:file=%s:tn", log), NULL };
	const char *args[] = { GC_ROUNDS, fmt("%d", GCS), NULL };
	static struct gc_span s[MAX_GCS];
	static struct pause p[MAX_GCS];
	size_t ns, np, sysgc = 0, escalated = 0;
	json_object *sum, *trace;
	char *err;

	sum = record_java(dir, flags, "Gc", args, &err);
	trace = load_json(fmt("%s/out/leanprofiler-trace.json", dir));
	ns = gc_spans(trace, s, MAX_GCS);
	np = pauses(log, p, MAX_GCS);
	for (size_t i = 0, j = 0; i < np; i++) {
		while (j < ns && s[j].end < p[i].at)
			j++;
		if (j == ns || s[j].ts > p[i].at)
			fail_msg("pause %zu (%s) logged at %lld outside every gc span", i, p[i].kind,
				 (long long)p[i].at);
		s[j].lines++;
		s[j].sysgc |= p[i].sysgc;
		escalated += !strcmp(p[i].kind, "Full") && !s[j].full;
	}
	for (size_t i = 0; i < ns; i++) {
		if (s[i].lines < 1 || s[i].lines > 2)
			fail_msg("gc span %zu holds %d pauses", i, s[i].lines);
		assert_int_equal(s[i].full, s[i].sysgc);
		if (s[i].sysgc) {
			assert_int_equal(s[i].lines, sysgc_lines);
			sysgc++;
		}
	}
	assert_int_equal(sysgc, GCS);
	/* The 20 MB kept fill the old generation: full collections no one asked for. */
	if (!escalated)
		fail_msg("no full collection inside a full=0 span in %zu pauses", np);
	json_object_put(sum);
	json_object_put(trace);
}

static void test_gc_parallel(void **state)
{
	(void)state;
	gc_one_operation("parallel", "-XX:+UseParallelGC", 2);
}

static void test_gc_serial(void **state)
{
	(void)state;
	gc_one_operation("serial", "-XX:+UseSerialGC", 1);
}

static void test_no_probes_flag(void **state)
{
	const char *args[] = { "10", NULL };
	const char *dir = javac("noflag", "Lam", lam_java);
	const char *l, *warning = NULL;
	json_object *sum;
	int lines = 0;
	char *err;

	(void)state;
	sum = record_java(dir, (const char *const[]){ NULL }, "Lam", args, &err);
	/* What the warning is about: the program ran, no Java method was recorded. */
	assert_int_equal(calls(sum, "Lam.main", NULL), 0);
	for (l = err; l && *l; l = strchr(l, '\n')) {
		l += *l == '\n';
		if (strstr(l, "ExtendedDTraceProbes") && strncmp(l, "leanprofiler: recording", 23)) {
			lines++;
			warning = l;
		}
	}
	if (lines != 1)
		fail_msg("%d lines name -XX:+ExtendedDTraceProbes, expected one warning:\n%s", lines,
			 err);
	assert_int_equal(strncmp(warning, "leanprofiler: warning: ", 23), 0);
	json_object_put(sum);
}

/* The lines of err that warn about -XX:+ExtendedDTraceProbes. */
static int flag_warnings(const char *err)
{
	int n = 0;

	for (const char *l = err; l && (l = strstr(l, "runs java without")); l++)
		n++;
	return n;
}

/*
 * The flag where the warning looks for it besides the command line: in the
 * launcher's environment, or as -XX:+DTraceMethodProbes (what the extended
 * flag turns on, of the method probes). Methods recorded, no warning.
 */
static void test_flag_elsewhere(void **state)
{
	const char *args[] = { "10", NULL };
	const char *dir = javac("flag-env", "Lam", lam_java);
	const char *methods_flag[] = { "-XX:+DTraceMethodProbes", NULL };
	/* Read by the java launcher, the VM at its start, the VM after the command line. */
	const char *vars[] = { "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS" };
	json_object *sum;
	char *err, *d;

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		d = fmt("%s/%s", dir, vars[i]);
		assert_int_equal(mkdir(d, 0755), 0);
		assert_int_equal(symlink(fmt("%s/Lam.class", dir), fmt("%s/Lam.class", d)), 0);
		assert_int_equal(setenv(vars[i], "-XX:+ExtendedDTraceProbes", 1), 0);
		sum = record_java(d, (const char *const[]){ NULL }, "Lam", args, &err);
		unsetenv(vars[i]);
		assert_int_equal(calls(sum, "Lam.lambda$main$0", NULL), 10);
		if (flag_warnings(err))
			fail_msg("warned with %s=-XX:+ExtendedDTraceProbes: %s", vars[i], err);
		json_object_put(sum);
	}

	d = fmt("%s/methods", dir);
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(symlink(fmt("%s/Lam.class", dir), fmt("%s/Lam.class", d)), 0);
	sum = record_java(d, methods_flag, "Lam", args, &err);
	assert_int_equal(calls(sum, "Lam.lambda$main$0", NULL), 10);
	if (flag_warnings(err))
		fail_msg("warned with -XX:+DTraceMethodProbes: %s", err);
	json_object_put(sum);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_methods_and_gc, stop_started),
		cmocka_unit_test_teardown(test_exceptions_through_c1, stop_started),
		cmocka_unit_test_teardown(test_exceptions_not_inlined, stop_started),
		cmocka_unit_test_teardown(test_c2_compiled_calls, stop_started),
		cmocka_unit_test_teardown(test_attach_inside_methods, stop_started),
		cmocka_unit_test_teardown(test_lambda_names, stop_started),
		cmocka_unit_test_teardown(test_gc_against_log, stop_started),
		cmocka_unit_test_teardown(test_gc_parallel, stop_started),
		cmocka_unit_test_teardown(test_gc_serial, stop_started),
		cmocka_unit_test_teardown(test_no_probes_flag, stop_started),
		cmocka_unit_test_teardown(test_flag_elsewhere, stop_started),
	};

	if (argc > 1)
		build = argv[1];
	if (getuid() != 0) {
		printf("SKIPPED: test_jvm needs root (BPF)\n");
		return 0;
	}
	if (access(JDK "/bin/javac", X_OK) || access(JDK "/bin/java", X_OK)) {
		printf("FAILED: needs OpenJDK 17 in %s (scripts/deps.sh test installs it)\n", JDK);
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
