// SPDX-License-Identifier: MIT
/*
 * Every process and every library, exactly: the process family of
 * tests/targets/family.c (forks before and after its first marker, execs of a
 * second marked program, vfork, posix_spawn, dlopen before and after fork,
 * dlclose and dlopen again, a library only a child loads, a thread in a child,
 * processes that live a few ms, an executable without markers linked with a
 * marked library) recorded in each mode:
 *   launch   record -- family LOG SCENARIO
 *   attach   record -p PID, on a family that waits for the recording to begin
 *   all      record --all-processes BINARY, with one process of BINARY found
 *            running and one started after the recording began
 *   later    the same with only the process started later: nothing of it was
 *            attached before it ran
 * Real profiler, real BPF (root). Every marker the family ran is in its log
 * (famlog.h); the recording must hold exactly those spans, with their exact
 * names and metadata, each in the process that ran it: nothing missing,
 * nothing extra, nothing unreadable, unterminated or started before the
 * recording, and nothing on stderr but leanprofiler's "recording" line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[PATH_MAX];
#include "itest.h"

static const char *build = "build";

enum mode { LAUNCH, ATTACH, ALL, LATER };
static const char *const mode_names[] = { "launch", "attach", "all-processes", "all-later" };

struct fcase {
	enum mode mode;
	const char *program; /* family, or famlinked (its argument is a count, not a scenario) */
	const char *scenario;
	char name[64];
};

static char *prog_path(const char *prog)
{
	return fmt("%s/tests/targets/%s", build, prog);
}

/* ---------------------------------------------------------------------------------- */
/* The truth: the spans the family logged, as "pid name<TAB>meta" -> count. */

struct tally {
	char **keys;
	int *counts;
	size_t n, cap;
};

static void tally_add(struct tally *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->keys[i], key) == 0) {
			t->counts[i]++;
			return;
		}
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 32;
		t->keys = realloc(t->keys, t->cap * sizeof(*t->keys));
		t->counts = realloc(t->counts, t->cap * sizeof(*t->counts));
		assert_non_null(t->keys);
		assert_non_null(t->counts);
	}
	t->keys[t->n] = strdup(key);
	t->counts[t->n++] = 1;
}

static int tally_get(const struct tally *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->keys[i], key) == 0)
			return t->counts[i];
	return 0;
}

static void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->counts);
}

#define MAX_OPEN 512

struct open_span {
	int pid, tid;
	char name[128], meta[128];
};

/* Completed spans of the log: an E and its X on the same thread. */
static void read_truth(const char *log, struct tally *t, size_t *processes)
{
	char *text = slurp(log, NULL), *save = NULL;
	struct open_span open[MAX_OPEN];
	size_t nopen = 0;
	int pids[512];
	size_t npids = 0;

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct open_span s = { 0 };
		char kind;
		int off = 0;
		bool seen = false;

		assert_int_equal(sscanf(line, "%c %d %d %n", &kind, &s.pid, &s.tid, &off), 3);
		for (size_t i = 0; i < npids; i++)
			seen |= pids[i] == s.pid;
		if (!seen && npids < 512)
			pids[npids++] = s.pid;
		if (kind == 'E') {
			char *tab = strchr(line + off, '\t');

			assert_non_null(tab);
			snprintf(s.name, sizeof(s.name), "%.*s", (int)(tab - (line + off)), line + off);
			snprintf(s.meta, sizeof(s.meta), "%s", tab + 1);
			assert_true(nopen < MAX_OPEN);
			open[nopen++] = s;
			continue;
		}
		assert_int_equal(kind, 'X');
		/* The innermost open span of that thread: the family nests properly. */
		for (size_t i = nopen; i-- > 0;) {
			if (open[i].pid != s.pid || open[i].tid != s.tid)
				continue;
			if (strcmp(open[i].name, line + off) != 0)
				fail_msg("log: exit of %s while %s is open (pid %d)", line + off,
					 open[i].name, s.pid);
			tally_add(t, fmt("%d %s\t%s", s.pid, open[i].name, open[i].meta));
			memmove(&open[i], &open[i + 1], (nopen - i - 1) * sizeof(open[0]));
			nopen--;
			break;
		}
	}
	/* Spans a process left open (fork-in-span's children never leave theirs): none here. */
	assert_int_equal(nopen, 0);
	*processes = npids;
	free(text);
}

/* The trace's spans, their metadata rebuilt from args in order ("k=v, k2=v2"). */
static void read_trace(const char *path, struct tally *t)
{
	json_object *root = load_json(path), *evs = get(root, "traceEvents");

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *args;
		char meta[256] = "";
		size_t len = 0;

		if (strcmp(json_object_get_string(get(e, "ph")), "X") != 0)
			continue;
		args = get(e, "args");
		json_object_object_foreach(args, k, v)
		{
			if (!strcmp(k, "counter") || !strcmp(k, "self_counter"))
				continue;
			/* The recording's own flags must never be set here: judged below. */
			len += (size_t)snprintf(meta + len, sizeof(meta) - len, "%s%s=%s",
						len ? ", " : "", k, json_object_get_string(v));
			assert_true(len < sizeof(meta));
		}
		tally_add(t, fmt("%d %s\t%s", json_object_get_int(get(e, "pid")),
				 json_object_get_string(get(e, "name")), meta));
	}
	json_object_put(root);
}

/* The two tallies are equal; else every difference is listed. */
static void compare(const struct tally *want, const struct tally *got, const char *what)
{
	char *diff = fmt("%s", "");

	for (size_t i = 0; i < want->n; i++)
		if (tally_get(got, want->keys[i]) != want->counts[i])
			diff = fmt("%s\n  logged %d, recorded %d: %s", diff, want->counts[i],
				   tally_get(got, want->keys[i]), want->keys[i]);
	for (size_t i = 0; i < got->n; i++)
		if (!tally_get(want, got->keys[i]))
			diff = fmt("%s\n  logged 0, recorded %d: %s", diff, got->counts[i],
				   got->keys[i]);
	if (*diff)
		fail_msg("%s: the recording differs from the family's log:%s", what, diff);
}

/* ---------------------------------------------------------------------------------- */
/* Running the family and the profiler. */

struct proc {
	pid_t pid;
	int in; /* its stdin (-w: "go") */
	FILE *out;
};

/*
 * Starts PROGRAM [-w] LOG ARG with pipes on stdin and stdout. With tty, in a
 * session of its own whose controlling terminal that is: a shell's job.
 */
static struct proc start_family_on(const struct fcase *c, const char *log, bool wait,
				   const char *tty)
{
	int in[2], out[2];
	struct proc p;

	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	p.pid = fork();
	assert_true(p.pid >= 0);
	if (p.pid == 0) {
		char *prog = prog_path(c->program);
		char *argv[] = { prog, wait ? "-w" : (char *)log, wait ? (char *)log : (char *)c->scenario,
				 wait ? (char *)c->scenario : NULL, NULL };

		if (tty && (setsid() < 0 || open(tty, O_RDWR) < 0))
			_exit(98);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(prog, argv);
		_exit(99);
	}
	close(in[0]);
	close(out[1]);
	p.in = in[1];
	p.out = fdopen(out[0], "r");
	assert_non_null(p.out);
	if (wait) {
		char line[64];

		assert_non_null(fgets(line, sizeof(line), p.out));
		assert_true(strncmp(line, "ready pid=", 10) == 0);
	}
	return p;
}

static struct proc start_family(const struct fcase *c, const char *log, bool wait)
{
	return start_family_on(c, log, wait, NULL);
}

static void go(struct proc *p)
{
	assert_int_equal(write(p->in, "go\n", 3), 3);
}

static void finish(struct proc *p)
{
	close(p->in);
	fclose(p->out);
	assert_int_equal(wait_exit(p->pid), 0);
}

/* The profiler's stderr: nothing but its own "recording ..." line. */
static void check_stderr(const char *path)
{
	char *text = slurp(path, NULL), *save = NULL;

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "leanprofiler: recording ", 24) != 0)
			fail_msg("unexpected on stderr: %s", line);
	free(text);
}

static uint64_t num(json_object *o, const char *key)
{
	return (uint64_t)json_object_get_int64(get(o, key));
}

static void run_case(void **state)
{
	const struct fcase *c = *state;
	char *log = fmt("%s/%s.log", tmpdir, c->name), *out = fmt("%s/%s.out", tmpdir, c->name);
	char *perr = fmt("%s/%s.stderr", tmpdir, c->name), *pout = fmt("%s/%s.stdout", tmpdir, c->name);
	char *lp = fmt("%s/leanprofiler", build);
	struct tally want = { 0 }, got = { 0 };
	json_object *sum;
	size_t processes;
	pid_t rec;

	unlink(log);
	if (c->mode == LAUNCH) {
		char *argv[] = { lp, "record", "-o", out, "--", prog_path(c->program), log,
				 (char *)c->scenario, NULL };

		rec = spawn_to(argv, pout, perr);
		assert_int_equal(wait_exit(rec), 0);
	} else if (c->mode == ATTACH) {
		struct proc p = start_family(c, log, true);
		char *pid = fmt("%d", (int)p.pid);
		char *argv[] = { lp, "record", "-o", out, "-p", pid, NULL };

		rec = spawn_to(argv, pout, perr);
		assert_true(wait_text(perr, "leanprofiler: recording PID", rec, 20000));
		go(&p);
		finish(&p);
		/* It ends by itself once the process and its children are gone. */
		assert_int_equal(wait_exit(rec), 0);
	} else {
		struct proc before = { .pid = -1 }, after;
		char *argv[] = { lp, "record", "-o", out, "--all-processes", prog_path(c->program),
				 NULL };

		if (c->mode == ALL)
			before = start_family(c, log, true);
		rec = spawn_to(argv, pout, perr);
		assert_true(wait_text(perr, "leanprofiler: recording every process", rec, 20000));
		if (c->mode == ALL)
			go(&before);
		after = start_family(c, log, false);
		if (c->mode == ALL)
			finish(&before);
		finish(&after);
		kill(rec, SIGINT);
		assert_int_equal(wait_exit(rec), 0);
	}
	check_stderr(perr);

	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(num(get(sum, "input"), "unreadable_strings"), 0);
	assert_int_equal(num(get(sum, "input"), "malformed_records"), 0);
	/* Every literal's text arrived, in every process of every mode: none "(unknown)". */
	assert_int_equal(num(get(sum, "input"), "unknown_literals"), 0);
	assert_int_equal(num(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(num(sum, "unterminated_spans"), 0);
	assert_int_equal(num(sum, "started_before_recording"), 0);
	assert_int_equal(num(sum, "uncertain_spans"), 0);
	assert_int_equal(num(sum, "unmatched_exits"), 0);
	json_object_put(sum);

	read_truth(log, &want, &processes);
	assert_true(want.n > 0);
	read_trace(fmt("%s/leanprofiler-trace.json", out), &got);
	compare(&want, &got, c->name);
	tally_free(&want);
	tally_free(&got);
}

/*
 * A job of an interactive shell: a session with a terminal, in another process
 * group than its parent's. A stop would show in its parent's waitpid(WUNTRACED)
 * (the shell reports the job stopped and takes the terminal): such a process
 * is never paused for a library it dlopen()s. The library is attached while it
 * runs on (the family waits for that), and leanprofiler says that spans may be
 * missing.
 */
static void test_job_control_not_paused(void **state)
{
	struct fcase c = { .mode = ATTACH, .program = "family", .scenario = "dlopen-wait" };
	char *log = fmt("%s/job.log", tmpdir), *out = fmt("%s/job.out", tmpdir);
	char *perr = fmt("%s/job.stderr", tmpdir), *pout = fmt("%s/job.stdout", tmpdir);
	int master = posix_openpt(O_RDWR | O_NOCTTY), st;
	struct proc fam;
	pid_t rec;

	(void)state;
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	unlink(log);
	fam = start_family_on(&c, log, true, ptsname(master));
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "-p",
				 fmt("%d", (int)fam.pid), NULL };

		rec = spawn_to(argv, pout, perr);
	}
	assert_true(wait_text(perr, "leanprofiler: recording PID", rec, 20000));
	go(&fam);
	/* Like the shell: any stop of the job would be reported here. */
	assert_int_equal(waitpid(fam.pid, &st, WUNTRACED), fam.pid);
	assert_false(WIFSTOPPED(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(wait_exit(rec), 0);
	assert_non_null(strstr(slurp(perr, NULL), "attached while a process that maps them ran on"));
	close(fam.in);
	fclose(fam.out);
	close(master);
}

#define PAUSES 10

/*
 * A pause is a stop and a continue the target can see: its SIGCONT handler
 * runs once per pause, and a read() blocked in the thread that runs it, with
 * no SA_RESTART, returns EINTR (docs/recording.md says so, with these
 * numbers). pausee dlopen()s PAUSES libraries new to the recording, one
 * pause each.
 */
static void test_sigcont_handler_sees_pauses(void **state)
{
	char *perr = fmt("%s/conts.stderr", tmpdir), *out = fmt("%s/conts.out", tmpdir);
	char *targv[] = { prog_path("pausee"), NULL };
	struct io in = { .mode = IO_PIPE }, o = { .mode = IO_PIPE }, e = { .mode = IO_INHERIT };
	struct lines *tl;
	char line[256];
	int conts = -1, eintr = -1;
	pid_t t, rec;

	(void)state;
	t = spawn(targv, &in, &o, &e);
	tl = lines_new(o.fd);
	assert_int_equal(lines_read(tl, line, sizeof(line), 10000), 1);
	assert_non_null(strstr(line, "ready pid="));
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "-p",
				 fmt("%d", (int)t), NULL };

		rec = spawn_to(argv, fmt("%s/conts.stdout", tmpdir), perr);
		started_add(rec);
	}
	assert_true(wait_text(perr, "leanprofiler: recording PID", rec, 20000));
	for (int i = 0; i < PAUSES; i++) {
		char *lib = fmt("%s/conts-%d.so", tmpdir, i);
		char *cp[] = { "/bin/cp", prog_path("libfama.so"), lib, NULL };
		struct run r = { 0 };

		assert_int_equal(run(&r, cp), 0);
		assert_int_equal(r.status, 0);
		run_free(&r);
		assert_true(dprintf(in.fd, "open %s\n", lib) > 0);
		assert_int_equal(lines_read(tl, line, sizeof(line), 10000), 1);
		assert_string_equal(line, "opened");
	}
	close(in.fd);
	assert_int_equal(lines_read(tl, line, sizeof(line), 10000), 1);
	assert_int_equal(sscanf(line, "conts=%d eintr=%d", &conts, &eintr), 2);
	assert_int_equal(wait_exit(t), 0);
	assert_int_equal(wait_exit_within(rec, 20000), 0);
	print_message("%d pauses: the SIGCONT handler ran %d times, read() returned EINTR %d "
		      "times\n", PAUSES, conts, eintr);
	assert_int_equal(conts, PAUSES);
	assert_int_equal(eintr, PAUSES);
	json_object_put(summary_of(out));
	close(o.fd);
}

/* ---------------------------------------------------------------------------------- */

static const char *const scenarios[] = {
	"fork-before", "fork-after", "fork-in-span", "exec",	    "exec-self",
	"vfork",       "spawn",	     "dlopen-fork",  "fork-dlopen", "child-dlopen",
	"dlclose",     "thread-child", "short",	     "linked",	    "exec-thread",
	"dlopen-burst",
};

#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))
#define NCASES (4 * (NSCEN + 1) + 2)

int main(int argc, char **argv)
{
	static struct fcase cases[NCASES];
	static struct CMUnitTest tests[NCASES];
	size_t n = 0;

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_follow"))
		return 0;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lp-follow-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	/* The family runs as root here; its log and outputs live in one fresh directory. */
	for (int m = LAUNCH; m <= LATER; m++) {
		for (size_t i = 0; i <= NSCEN; i++) {
			struct fcase *c = &cases[n];

			c->mode = (enum mode)m;
			/* The last case of a mode: famlinked itself, the unmarked executable. */
			c->program = i < NSCEN ? "family" : "famlinked";
			c->scenario = i < NSCEN ? scenarios[i] : "3";
			snprintf(c->name, sizeof(c->name), "%s-%s", mode_names[m],
				 i < NSCEN ? scenarios[i] : "famlinked");
			tests[n] = (struct CMUnitTest){ .name = c->name, .test_func = run_case,
							.initial_state = c };
			n++;
		}
	}
	tests[n++] = (struct CMUnitTest){ .name = "job-control-not-paused",
					  .test_func = test_job_control_not_paused };
	tests[n++] = (struct CMUnitTest){ .name = "sigcont-handler-sees-pauses",
					  .test_func = test_sigcont_handler_sees_pauses,
					  .teardown_func = stop_started };
	/* One case, or a few, run again and again when chasing a race. */
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	return _cmocka_run_group_tests("follow", tests, n, NULL, NULL);
}
