// SPDX-License-Identifier: MIT
/*
 * The jvm preset on Debian's OpenJDK 17: a Java program compiled here calls a
 * method a known number of times from another and asks for collections, run as
 * `record --preset jvm -- java -XX:+ExtendedDTraceProbes ...`. The java launcher
 * dlopen()s libjvm.so after its entry point, so the preset's probes are found
 * late: the program waits until leanprofiler says it records them (a file
 * appears), then works. Checks the exact call count, the nesting, the
 * collections, and that a thread still inside a method at the end is closed
 * unterminated. Needs root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define CALLS 5000
#define GCS 3
#define WAIT_MS 60000 /* for the JVM to map libjvm.so and leanprofiler to attach */

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
	double ts, end;
	int64_t tid;
	bool unterminated;
};

/* The complete events named name. */
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
		out[n].ts = json_object_get_double(get(e, "ts"));
		out[n].end = out[n].ts + json_object_get_double(get(e, "dur"));
		out[n].tid = json_object_get_int64(get(e, "tid"));
		out[n].unterminated = json_object_object_get_ex(e, "args", &args) &&
				      json_object_object_get_ex(args, "unterminated", &v) &&
				      json_object_get_boolean(v);
		n++;
	}
	return n;
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

static void test_methods_and_gc(void **state)
{
	char *out = fmt("%s/out", tmpdir), *go = fmt("%s/go", tmpdir);
	char *lp_out = fmt("%s/lp.out", tmpdir), *lp_err = fmt("%s/lp.err", tmpdir);
	char *javac[] = { JDK "/bin/javac", "-d", tmpdir, fmt("%s/Main.java", tmpdir), NULL };
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "jvm",
			 "--", JDK "/bin/java", "-XX:+ExtendedDTraceProbes", "-cp", tmpdir, "Main",
			 go, fmt("%d", CALLS), fmt("%d", GCS), NULL };
	static struct span work[CALLS + 1], loop[4], hang[4], gc[256];
	size_t nwork, nloop, nhang, ngc, in = 0;
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
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(sum);
	json_object_put(trace);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods_and_gc),
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
