/* SPDX-License-Identifier: MIT */
/*
 * Helpers the integration tests share: reading files, running a command with
 * its output captured, formatting paths, reading JSON. Include after cmocka.h
 * and after defining `tmpdir`, the directory where captured output goes.
 */
#ifndef LP_ITEST_H
#define LP_ITEST_H

#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
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
	if (vasprintf(&b, f, ap) < 0)
		b = NULL;
	va_end(ap);
	return b;
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

/* Starts argv with stdout and stderr going to the files out and err; its PID (not waited for). */
static ITEST_UNUSED pid_t spawn_to(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		/* The command gets 0, 1 and 2, nothing more of ours. */
		if (o > 2)
			close(o);
		if (e > 2)
			close(e);
		execv(argv[0], argv);
		_exit(99);
	}
	return pid;
}

/* Runs argv with stdout and stderr captured to files (no pipe deadlocks). 0 or -1. */
static ITEST_UNUSED int run(struct run *r, char *const argv[])
{
	char *outp = fmt("%s/stdout", tmpdir), *errp = fmt("%s/stderr", tmpdir);
	pid_t pid = spawn_to(argv, outp, errp);
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp(outp, &r->out_len);
	r->err = slurp(errp, &r->err_len);
	return r->out && r->err ? 0 : -1;
}

static ITEST_UNUSED void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static ITEST_UNUSED json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key \"%s\"", key);
	return v;
}

static ITEST_UNUSED json_object *load_json(const char *p)
{
	char *text = slurp(p, NULL);
	json_object *o;

	assert_non_null(text);
	o = json_tokener_parse(text);
	free(text);
	assert_non_null(o);
	return o;
}

/*
 * The start of a suite that records: as root (BPF), and every command runs as
 * root unless a test says whose it is (under `sudo make check` the profiler
 * would run it as the invoking user, who cannot write the test's files).
 * False, with a SKIPPED line naming the suite, when not root.
 */
static ITEST_UNUSED bool itest_as_root(const char *suite)
{
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("SUDO_USER");
	if (geteuid() != 0) {
		printf("SKIPPED: %s needs root (BPF); run sudo make check\n", suite);
		return false;
	}
	return true;
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
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Waits until the file holds text: false when the process pid exited first
 * (it is then reaped) or timeout_ms passed.
 */
static ITEST_UNUSED bool wait_text(const char *path, const char *text, pid_t pid, int timeout_ms)
{
	for (int i = 0; i < timeout_ms / 10; i++) {
		char *s = slurp(path, NULL);
		bool found = s && strstr(s, text);

		free(s);
		if (found)
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		wait_ms(10);
	}
	return false;
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

#endif
