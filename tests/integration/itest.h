/* SPDX-License-Identifier: MIT */
/*
 * Helpers the integration tests share: formatting, the clock, reading files,
 * starting processes (with their output captured, or through pipes read line
 * by line with a deadline) and ending those a test leaves behind, waiting for
 * them, reading JSON, reading a trace's spans, listing a directory. Include
 * after cmocka.h and after defining `tmpdir`, the directory where captured
 * output goes.
 */
#ifndef LP_ITEST_H
#define LP_ITEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITEST_UNUSED __attribute__((unused))

struct run {
	int status; /* exit code, or 128 + signal */
	char *out, *err;
	size_t out_len, err_len;
};

/* A formatted string; never freed: tests are short and keep many alive at once. */
static ITEST_UNUSED char *fmt(const char *f, ...)
{
	char *b = NULL;
	va_list ap;

	va_start(ap, f);
	assert_true(vasprintf(&b, f, ap) >= 0);
	va_end(ap);
	return b;
}

/* CLOCK_MONOTONIC in ns: the clock of the targets' logs and of leanprofiler's timestamps. */
static ITEST_UNUSED uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static ITEST_UNUSED char *slurp_fd(int fd, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return NULL;
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

/* The file's bytes, NUL-terminated (lenp: their count, may be NULL); NULL if unreadable. */
static ITEST_UNUSED char *slurp(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY);
	char *s;

	if (fd < 0)
		return NULL;
	s = slurp_fd(fd, lenp);
	close(fd);
	return s;
}

/* A wait status as a number: the exit code, or 128 + the signal. */
static ITEST_UNUSED int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- processes a test started ---- */

/*
 * Started by spawn() and not yet reaped: stop_started(), a cmocka teardown,
 * kills (SIGKILL) and reaps them, newest first, so that a failed assertion
 * never leaves one running. A test that forks by itself adds its child with
 * started_add().
 */
static pid_t itest_started[64];
static int itest_nstarted;

static ITEST_UNUSED void started_add(pid_t pid)
{
	assert_true(itest_nstarted < 64);
	itest_started[itest_nstarted++] = pid;
}

static ITEST_UNUSED void started_forget(pid_t pid)
{
	for (int i = 0; i < itest_nstarted; i++)
		if (itest_started[i] == pid)
			itest_started[i] = itest_started[--itest_nstarted];
}

static ITEST_UNUSED int stop_started(void **state)
{
	(void)state;
	while (itest_nstarted > 0) {
		pid_t pid = itest_started[--itest_nstarted];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return 0;
}

/* Where a started process's stdin, stdout or stderr goes. */
enum io_mode { IO_INHERIT, IO_PIPE, IO_NULL, IO_FILE };

struct io {
	enum io_mode mode;
	const char *file; /* IO_FILE */
	int fd;           /* IO_PIPE: our end, once started */
};

/* In the child: io on fd target (child_end: its end of the pipe). */
static ITEST_UNUSED void child_io(struct io *io, int target, int child_end)
{
	int fd = -1;

	if (io->mode == IO_INHERIT)
		return;
	if (io->mode == IO_PIPE)
		fd = child_end;
	else if (io->mode == IO_NULL)
		fd = open("/dev/null", O_RDWR);
	else
		fd = open(io->file, target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, target) < 0)
		_exit(99);
	/* The command gets 0, 1 and 2, nothing more of ours (pipes are O_CLOEXEC). */
	if (io->mode != IO_PIPE && fd > 2)
		close(fd);
}

/* Starts argv with the given stdin, stdout, stderr; tied: it dies (SIGKILL) if we do. */
static ITEST_UNUSED pid_t start_io(char *const argv[], struct io *in, struct io *out,
				   struct io *err, bool tied)
{
	struct io *ios[3] = { in, out, err };
	int p[3][2];
	pid_t pid;

	for (int i = 0; i < 3; i++)
		if (ios[i]->mode == IO_PIPE)
			assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (tied)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_io(in, 0, in->mode == IO_PIPE ? p[0][0] : -1);
		child_io(out, 1, out->mode == IO_PIPE ? p[1][1] : -1);
		child_io(err, 2, err->mode == IO_PIPE ? p[2][1] : -1);
		execv(argv[0], argv);
		_exit(99);
	}
	for (int i = 0; i < 3; i++) {
		if (ios[i]->mode != IO_PIPE)
			continue;
		ios[i]->fd = i == 0 ? p[i][1] : p[i][0];
		close(i == 0 ? p[i][0] : p[i][1]);
	}
	return pid;
}

/* Starts argv with the given stdin, stdout, stderr; it dies with us, stop_started() ends it. */
static ITEST_UNUSED pid_t spawn(char *const argv[], struct io *in, struct io *out, struct io *err)
{
	pid_t pid = start_io(argv, in, out, err, true);

	started_add(pid);
	return pid;
}

/* Starts argv with stdout and stderr going to the files out and err; its PID (not waited for). */
static ITEST_UNUSED pid_t spawn_to(char *const argv[], const char *out, const char *err)
{
	struct io i = { .mode = IO_INHERIT }, o = { .mode = IO_FILE, .file = out },
		  e = { .mode = IO_FILE, .file = err };

	return start_io(argv, &i, &o, &e, false);
}

/*
 * Runs argv with stdout and stderr captured to files (no pipe deadlocks); ru
 * (may be NULL): what the command used, from wait4(). 0 or -1.
 */
static ITEST_UNUSED int run_usage(struct run *r, char *const argv[], struct rusage *ru)
{
	char *outp = fmt("%s/stdout", tmpdir), *errp = fmt("%s/stderr", tmpdir);
	pid_t pid = spawn_to(argv, outp, errp);
	int st;

	if (wait4(pid, &st, 0, ru) != pid)
		return -1;
	r->status = exit_code(st);
	r->out = slurp(outp, &r->out_len);
	r->err = slurp(errp, &r->err_len);
	return r->out && r->err ? 0 : -1;
}

/* Runs argv with stdout and stderr captured to files (no pipe deadlocks). 0 or -1. */
static ITEST_UNUSED int run(struct run *r, char *const argv[])
{
	return run_usage(r, argv, NULL);
}

static ITEST_UNUSED void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* The pause between two checks of a condition (never a wait for something to happen). */
static ITEST_UNUSED void wait_ms(int ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&d, NULL);
}

/* Waits for pid to end; its exit code, or 128 + signal. */
static ITEST_UNUSED int wait_exit(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	started_forget(pid);
	return exit_code(st);
}

/* Waits at most timeout_ms for pid (our child) to exit: its exit code, or 128 + signal. */
static ITEST_UNUSED int wait_exit_within(pid_t pid, int timeout_ms)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), st;
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	assert_true(pfd >= 0);
	if (poll(&p, 1, timeout_ms) != 1)
		fail_msg("PID %d did not exit within %d ms", (int)pid, timeout_ms);
	close(pfd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	started_forget(pid);
	return exit_code(st);
}

/*
 * Waits until the file holds text: false when the process pid exited first
 * (it is then reaped, and no longer one stop_started() ends) or timeout_ms passed.
 */
static ITEST_UNUSED bool wait_text(const char *path, const char *text, pid_t pid, int timeout_ms)
{
	for (int i = 0; i < timeout_ms / 10; i++) {
		char *s = slurp(path, NULL);
		bool found = s && strstr(s, text);

		free(s);
		if (found)
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			started_forget(pid);
			return false;
		}
		wait_ms(10);
	}
	return false;
}

/* ---- lines from a pipe, read with a deadline ---- */

struct lines {
	int fd;
	bool eof;
	size_t len;
	char buf[1 << 16];
	char *all; /* everything read so far, for messages */
	size_t all_len;
};

static ITEST_UNUSED struct lines *lines_new(int fd)
{
	struct lines *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	l->fd = fd;
	l->all = calloc(1, 1);
	return l;
}

/* One line without its '\n': 1, or 0 at EOF, or -1 after timeout_ms. */
static ITEST_UNUSED int lines_read(struct lines *l, char *out, size_t size, int timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		uint64_t t = now_ns();
		ssize_t n;

		if (nl) {
			size_t k = (size_t)(nl - l->buf);

			snprintf(out, size, "%.*s", (int)k, l->buf);
			memmove(l->buf, nl + 1, l->len - k - 1);
			l->len -= k + 1;
			return 1;
		}
		if (l->eof)
			return 0;
		if (l->len == sizeof(l->buf))
			fail_msg("a line longer than %zu bytes: %.80s...", sizeof(l->buf), l->buf);
		if (t >= deadline || poll(&p, 1, (int)((deadline - t) / 1000000ULL) + 1) == 0)
			return -1;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n >= 0);
		if (n == 0)
			l->eof = true;
		l->all = realloc(l->all, l->all_len + (size_t)n + 1);
		memcpy(l->all + l->all_len, l->buf + l->len, (size_t)n);
		l->all_len += (size_t)n;
		l->all[l->all_len] = '\0';
		l->len += (size_t)n;
	}
}

/* Reads to EOF (at most timeout_ms). */
static ITEST_UNUSED void lines_drain(struct lines *l, int timeout_ms)
{
	char line[4096];
	int r;

	while ((r = lines_read(l, line, sizeof(line), timeout_ms)) == 1)
		;
	if (r < 0)
		fail_msg("no EOF within %d ms; read so far:\n%s", timeout_ms, l->all);
}

/* ---- JSON ---- */

static ITEST_UNUSED json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key \"%s\" in %.1000s", key, json_object_to_json_string(o));
	return v;
}

/* The member key, which must be an integer. */
static ITEST_UNUSED int64_t get_i(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	if (!json_object_is_type(v, json_type_int))
		fail_msg("%s is not an integer: %s", key, json_object_to_json_string(v));
	return json_object_get_int64(v);
}

/* The member key, which must be a string. */
static ITEST_UNUSED const char *get_s(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	if (!json_object_is_type(v, json_type_string))
		fail_msg("%s is not a string: %s", key, json_object_to_json_string(v));
	return json_object_get_string(v);
}

static ITEST_UNUSED json_object *load_json(const char *p)
{
	char *text = slurp(p, NULL);
	json_object *o;

	if (!text)
		fail_msg("cannot read %s", p);
	o = json_tokener_parse(text);
	free(text);
	if (!o)
		fail_msg("%s is not JSON", p);
	return o;
}

/* The summary a recording into dir wrote. */
static ITEST_UNUSED json_object *summary_of(const char *dir)
{
	return load_json(fmt("%s/leanprofiler-summary.json", dir));
}

/* ---- a trace's spans, against those its target logged ---- */

/* One span as its target logged it (t), or as the trace shows it (pid, start, end). */
struct itest_span {
	int pid, tid, depth;
	uint64_t t[4];       /* logged: before/after the enter, before/after the exit */
	uint64_t start, end; /* recorded: CLOCK_MONOTONIC ns */
	long long counter;   /* the counter delta; -1: no counter */
	char *name, *meta;   /* meta: "key=value, ..." */
};

/* A trace's "ts" or "dur" (µs with 3 decimals) in ns. */
static ITEST_UNUSED uint64_t trace_us_ns(json_object *v)
{
	return (uint64_t)llround(json_object_get_double(v) * 1000.0);
}

/* By thread, then start; of two that start together the parent (the longer) first. */
static ITEST_UNUSED int span_trace_order(const void *a, const void *b)
{
	const struct itest_span *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* The args the profiler adds to a span's (docs/formats.md), not the target's metadata. */
static ITEST_UNUSED bool profiler_arg(const char *k)
{
	return !strcmp(k, "counter") || !strcmp(k, "self_counter") ||
	       !strcmp(k, "unterminated") || !strcmp(k, "uncertain");
}

/*
 * The spans ("X" events) of the trace at path in span_trace_order, each with
 * its depth from the nesting of its thread's intervals and its args but the
 * profiler's as meta; their count.
 */
static ITEST_UNUSED size_t read_trace_spans(const char *path, struct itest_span **out)
{
	json_object *trace = load_json(path), *events = get(trace, "traceEvents");
	uint64_t base = (uint64_t)get_i(get(trace, "otherData"), "base_ns");
	size_t n = 0, len = json_object_array_length(events);
	struct itest_span *s = calloc(len + 1, sizeof(*s));
	uint64_t ends[64];

	assert_non_null(s);
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(events, i), *c;
		struct itest_span *sp = &s[n];

		if (strcmp(get_s(e, "ph"), "X"))
			continue;
		sp->pid = (int)get_i(e, "pid");
		sp->tid = (int)get_i(e, "tid");
		sp->start = base + trace_us_ns(get(e, "ts"));
		sp->end = sp->start + trace_us_ns(get(e, "dur"));
		sp->name = strdup(get_s(e, "name"));
		sp->meta = fmt("");
		sp->counter = json_object_object_get_ex(get(e, "args"), "counter", &c)
				      ? json_object_get_int64(c)
				      : -1;
		json_object_object_foreach(get(e, "args"), k, v) {
			if (!profiler_arg(k))
				sp->meta = fmt("%s%s%s=%s", sp->meta, *sp->meta ? ", " : "", k,
					       json_object_get_string(v));
		}
		n++;
	}
	json_object_put(trace);
	qsort(s, n, sizeof(*s), span_trace_order);
	for (size_t i = 0, d = 0; i < n; i++) {
		if (i == 0 || s[i].tid != s[i - 1].tid)
			d = 0;
		while (d > 0 && ends[d - 1] <= s[i].start)
			d--;
		assert_true(d < 64);
		s[i].depth = (int)d;
		ends[d++] = s[i].end;
	}
	*out = s;
	return n;
}

/* Each thread's spans together, in their order (a target's log has them in pre-order). */
static ITEST_UNUSED void spans_by_tid(struct itest_span *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct itest_span x = s[i];
		size_t j = i;

		for (; j > 0 && s[j - 1].tid > x.tid; j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
}

/* ---- a suite's start, and what every suite checks ---- */

/*
 * The start of a suite that records: as root (BPF), and every command runs as
 * root unless a test says whose it is (under `sudo make check` the profiler
 * would run it as the invoking user, who cannot write the test's files).
 * False, with a SKIPPED line naming the suite, when not root.
 */
static ITEST_UNUSED bool itest_as_root(const char *suite)
{
	/*
	 * The profiler and its commands get our dispositions: a shell that
	 * started the suite in the background (no job control) ignores SIGINT,
	 * and a command that inherits that ignore never ends on the Ctrl-C the
	 * profiler passes on, as a user's command would.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("SUDO_USER");
	if (geteuid() != 0) {
		printf("SKIPPED: %s needs root (BPF); run sudo make check\n", suite);
		return false;
	}
	return true;
}

/* A suite's group teardown: ends what its tests started and removes tmpdir. */
static ITEST_UNUSED int stop_started_remove_tmpdir(void **state)
{
	char *argv[] = { "/bin/rm", "-rf", tmpdir, NULL };
	struct run r;

	stop_started(state);
	if (run(&r, argv) == 0)
		run_free(&r);
	return 0;
}

/* The independent consumer: speedscope's Trace Event importer (tests/consumer). */
static ITEST_UNUSED void check_with_consumer(const char *trace)
{
	struct run r;
	char *argv[] = { "tests/consumer/check-trace", (char *)trace, NULL };

	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("speedscope rejected %s (exit %d):\n%s%s", trace, r.status, r.out, r.err);
	run_free(&r);
}

static ITEST_UNUSED void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * Whether stderr text err has a line of leanprofiler's that is not a warning:
 * one that says what failed (every exit 125 must come with one).
 */
static ITEST_UNUSED bool says_error(const char *err)
{
	for (const char *l = err; l && *l; l = strchr(l, '\n')) {
		l += *l == '\n';
		if (!strncmp(l, "leanprofiler: ", 14) && strncmp(l, "leanprofiler: warning: ", 23))
			return true;
	}
	return false;
}

/* The entries of dir but . and .., sorted, one per line ("" when empty). */
static ITEST_UNUSED char *dir_entries(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	char *list = fmt("");

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			list = fmt("%s%s\n", list, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return list;
}

#endif
