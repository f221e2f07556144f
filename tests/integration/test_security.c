// SPDX-License-Identifier: MIT
/*
 * Nobody gets in: `record` runs as root over programs it must not trust, and
 * an attacker tries each way in, as docs/threat-model.md lists them. Two
 * unprivileged users are made for it (and removed): lpsec-op runs the
 * profiler through sudo (SUDO_UID, SUDO_GID, SUDO_USER, as sudo sets them) and
 * owns the outputs; lpsec-evil is another user of the machine. A setuid-root
 * helper is built here. Real profiler, real BPF (root).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[] = "/tmp/lp-sec-XXXXXX";
#include "itest.h"

static const char *build = "build";

#define OP "lpsec-op"
#define EVIL "lpsec-evil"

static uid_t op_uid, evil_uid;
static gid_t op_gid, evil_gid;

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void make_users(void)
{
	struct passwd *pw;

	sh("userdel " OP " >/dev/null 2>&1; userdel " EVIL " >/dev/null 2>&1");
	assert_int_equal(sh("useradd --system --no-create-home --shell /usr/sbin/nologin " OP), 0);
	assert_int_equal(sh("useradd --system --no-create-home --shell /usr/sbin/nologin " EVIL),
			 0);
	pw = getpwnam(OP);
	assert_non_null(pw);
	op_uid = pw->pw_uid;
	op_gid = pw->pw_gid;
	pw = getpwnam(EVIL);
	assert_non_null(pw);
	evil_uid = pw->pw_uid;
	evil_gid = pw->pw_gid;
}

static int group_setup(void **state)
{
	(void)state;
	make_users();
	/* The users reach what is theirs in here; nothing here is theirs by default. */
	return chmod(tmpdir, 0755);
}

static int group_teardown(void **state)
{
	(void)state;
	sh("userdel " OP " >/dev/null 2>&1; userdel " EVIL " >/dev/null 2>&1");
	return 0;
}

/* A directory owned by uid:gid with mode. */
static char *dir_of(const char *name, uid_t uid, gid_t gid, mode_t mode)
{
	char *d = fmt("%s/%s", tmpdir, name);

	assert_int_equal(mkdir(d, mode), 0);
	assert_int_equal(chown(d, uid, gid), 0);
	assert_int_equal(chmod(d, mode), 0);
	return d;
}

/* record ... as lpsec-op through sudo: its command runs as lpsec-op, its outputs are its own. */
static void run_as_op(struct run *r, char *const argv[])
{
	setenv("SUDO_UID", fmt("%u", (unsigned)op_uid), 1);
	setenv("SUDO_GID", fmt("%u", (unsigned)op_gid), 1);
	setenv("SUDO_USER", OP, 1);
	assert_int_equal(run(r, argv), 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("SUDO_USER");
}

static bool file_has(const char *path, const char *text)
{
	char *s = slurp(path, NULL);
	bool has = s && memmem(s, strlen(s), text, strlen(text));

	free(s);
	return has;
}

/* Names in the trace equal to name. */
static int spans_named(const char *trace, const char *name)
{
	json_object *root = load_json(trace), *evs = get(root, "traceEvents");
	int n = 0;

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		n += !strcmp(json_object_get_string(get(e, "ph")), "X") &&
		     !strcmp(json_object_get_string(get(e, "name")), name);
	}
	json_object_put(root);
	return n;
}

/*
 * A profiled program names a span by an address of a setuid-root program its
 * parent exec'ed, which holds a root-only secret there. The profiler reads
 * every text in the process that passed it: the child maps nothing there.
 * And the setuid program, which names a span by its secret itself, left the
 * recording at its exec: nothing it holds is its user's to read.
 */
static void test_no_reading_other_programs(void **state)
{
	char *secretfile = fmt("%s/secret", tmpdir), *suid = fmt("%s/suidsecret", tmpdir);
	char *out = dir_of("thief-out", op_uid, op_gid, 0755), *addr = NULL, *line;
	char secret[40];
	struct run r;
	FILE *f;

	(void)state;
	snprintf(secret, sizeof(secret), "SECRET-%08x%08x", (unsigned)random(), (unsigned)getpid());
	f = fopen(secretfile, "w");
	assert_non_null(f);
	fprintf(f, "%s", secret);
	fclose(f);
	assert_int_equal(chmod(secretfile, 0600), 0);
	{
		char *argv[] = { "/usr/bin/cc", "-O2", "-no-pie", "-Iinclude", "-o", suid,
				 "tests/targets/suidsecret.c", NULL };

		assert_int_equal(run(&r, argv), 0);
		if (r.status)
			fail_msg("building the setuid helper: %s", r.err);
		run_free(&r);
	}
	assert_int_equal(chown(suid, 0, 0), 0);
	assert_int_equal(chmod(suid, 04755), 0);
	{
		char *argv[] = { "/usr/bin/nm", suid, NULL };

		assert_int_equal(run(&r, argv), 0);
		line = strstr(r.out, " secret\n");
		assert_non_null(line);
		while (line > r.out && line[-1] != '\n')
			line--;
		addr = fmt("0x%.16s", line);
		run_free(&r);
	}
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
				 fmt("%s/tests/targets/thief", build), suid, secretfile, addr, NULL };

		run_as_op(&r, argv);
	}
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_null(memmem(r.out, r.out_len, secret, strlen(secret)));
	assert_null(memmem(r.err, r.err_len, secret, strlen(secret)));
	assert_false(file_has(fmt("%s/leanprofiler-trace.json", out), secret));
	assert_false(file_has(fmt("%s/leanprofiler-summary.json", out), secret));
	/* The child's two spans by that address: nothing readable was there. */
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "(unreadable)"), 2);
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "thief.main"), 1);
	/* The setuid program left the recording, and the user is told. */
	assert_non_null(strstr(r.err, "which gains privileges"));
	assert_true(file_has(fmt("%s/leanprofiler-summary.json", out), "\"left_recording\""));
	run_free(&r);
}

/* An output path whose last component is a link another user planted is not followed. */
static void test_output_symlink_refused(void **state)
{
	char *victim = dir_of("victim", 0, 0, 0755);
	char *evil = dir_of("evil-dir", evil_uid, evil_gid, 0755);
	char *link = fmt("%s/prof", evil);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", link, "--",
			 fmt("%s/examples/nested", build), NULL };
	char *argv_dot[] = { fmt("%s/leanprofiler", build), "record", "-o", fmt("%s/.", link),
			     "--", fmt("%s/examples/nested", build), NULL };
	struct run r;

	(void)state;
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(lchown(link, evil_uid, evil_gid), 0);
	run_as_op(&r, argv);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "is a symbolic link"));
	run_free(&r);
	/* Through the link: a directory lpsec-op may not write, on a way another user controls. */
	run_as_op(&r, argv_dot);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "cannot write to output directory"));
	run_free(&r);
	assert_int_equal(access(fmt("%s/leanprofiler-summary.json", victim), F_OK), -1);
	assert_int_equal(access(fmt("%s/leanprofiler-trace.json", victim), F_OK), -1);
}

/* Directories others may write into, or another user's, are not used. */
static void test_output_dir_others_refused(void **state)
{
	char *shared = dir_of("shared", op_uid, op_gid, 0777);
	char *theirs = dir_of("theirs", evil_uid, evil_gid, 0755);
	char *lp = fmt("%s/leanprofiler", build), *nested = fmt("%s/examples/nested", build);
	struct run r;

	(void)state;
	{
		char *argv[] = { lp, "record", "-o", shared, "--", nested, NULL };

		run_as_op(&r, argv);
		assert_int_equal(r.status, 125);
		assert_non_null(strstr(r.err, "every user may write into it"));
		run_free(&r);
	}
	{
		char *argv[] = { lp, "record", "-o", theirs, "--", nested, NULL };

		run_as_op(&r, argv);
		assert_int_equal(r.status, 125);
		assert_non_null(strstr(r.err, "cannot write to output directory"));
		run_free(&r);
	}
	/* Its own, missing parents and all: made as lpsec-op, the outputs lpsec-op's. */
	{
		char *mine = dir_of("mine", op_uid, op_gid, 0755), *deep = fmt("%s/a/b/c", mine);
		char *argv[] = { lp, "record", "-o", deep, "--", nested, NULL };
		struct stat st;

		run_as_op(&r, argv);
		if (r.status)
			fail_msg("exit %d: %s", r.status, r.err);
		assert_int_equal(stat(fmt("%s/a", mine), &st), 0);
		assert_int_equal(st.st_uid, op_uid);
		assert_int_equal(stat(fmt("%s/leanprofiler-trace.json", deep), &st), 0);
		assert_int_equal(st.st_uid, op_uid);
		run_free(&r);
	}
}

/*
 * lpsec-evil swaps a link to a root-owned directory into the output path
 * (renameat2 RENAME_EXCHANGE in a loop) while lpsec-op records into it again
 * and again. Nothing may chown or write through the link.
 */
static void test_output_dir_race(void **state)
{
	char *target = dir_of("root-target", 0, 0, 0700);
	char *race = dir_of("race", evil_uid, evil_gid, 0777);
	char *out = fmt("%s/out", race), *link = fmt("%s/link", race);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "--summary-only", "-o", out,
			 "--", fmt("%s/examples/nested", build), NULL };
	struct stat st;
	int ok = 0;
	pid_t racer;

	(void)state;
	racer = fork();
	assert_true(racer >= 0);
	if (racer == 0) {
		/* Never outlives the test, even one that dies. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* lpsec-evil: whenever out is a directory, put the link there instead. */
		if (setgroups(0, NULL) || setresgid(evil_gid, evil_gid, evil_gid) ||
		    setresuid(evil_uid, evil_uid, evil_uid))
			_exit(1);
		for (long i = 0; i < 200000000L; i++) {
			if (symlink(target, link) && errno != EEXIST)
				_exit(2);
			if (renameat2(AT_FDCWD, out, AT_FDCWD, link, RENAME_EXCHANGE) == 0) {
				/* Let the other side use what it finds; then start again. */
				for (volatile int k = 0; k < 20000; k++)
					;
				unlink(out);
				rmdir(link);
				unlink(link);
			}
		}
		_exit(0);
	}
	/* lpsec-evil's process ends with the test, passed or failed (stop_started). */
	started_add(racer);
	for (int i = 0; i < 60; i++) {
		struct run r;

		run_as_op(&r, argv);
		ok += r.status == 0;
		/* Refused or written: never through the link. */
		if (r.status != 0 && !strstr(r.err, "cannot write"))
			fail_msg("try %d: exit %d: %s", i, r.status, r.err);
		run_free(&r);
		assert_int_equal(stat(target, &st), 0);
		if (st.st_uid != 0 || st.st_gid != 0)
			fail_msg("try %d: %s became %u:%u", i, target, st.st_uid, st.st_gid);
		assert_int_equal(access(fmt("%s/leanprofiler-summary.json", target), F_OK), -1);
	}
	print_message("race: %d of 60 recordings written, the rest refused\n", ok);
}

/*
 * What targets hand the profiler reaches the operator's terminal escaped:
 * a process name, a probe's argument spec from its notes, a file name, a
 * span name with a bidi override.
 */
static void test_no_escapes_to_terminal(void **state)
{
	char *lp = fmt("%s/leanprofiler", build), *out = dir_of("esc-out", 0, 0, 0755);
	char *copy = fmt("%s/evil\x1b[2J\xe2\x80\xae.bin", tmpdir);
	int pipefd[2];
	struct run r;
	pid_t quiet;

	(void)state;
	/* A process without markers, named to set the title and write the clipboard. */
	assert_int_equal(pipe(pipefd), 0);
	quiet = fork();
	assert_true(quiet >= 0);
	if (quiet == 0) {
		char c;

		close(pipefd[1]);
		prctl(PR_SET_NAME, "\x1b]0;pwned\x07\x1b]52");
		if (read(pipefd[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[0]);
	{
		char *argv[] = { lp, "record", "-o", out, "-p", fmt("%d", (int)quiet), NULL };

		/* /proc shows the new name once the child has set it. */
		for (int i = 0; i < 1000; i++) {
			char *comm = slurp(fmt("/proc/%d/comm", (int)quiet), NULL);
			bool named = comm && comm[0] == '\x1b';

			free(comm);
			if (named)
				break;
			wait_ms(2);
		}
		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 125);
		assert_non_null(strstr(r.err, "no leanprofiler markers in PID"));
		assert_null(memchr(r.err, '\x1b', r.err_len));
		assert_null(memchr(r.err, '\x07', r.err_len));
		assert_non_null(strstr(r.err, "\\x1b]0;pwned\\x07"));
		run_free(&r);
	}
	close(pipefd[1]);
	waitpid(quiet, NULL, 0);

	/* Notes whose argument specs are escape sequences, in a file named with one, -v too. */
	{
		char *argv[] = { "/bin/cp", fmt("%s/tests/targets/evilnote", build), copy, NULL };

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 0);
		run_free(&r);
	}
	{
		char *argv[] = { lp, "record", "-v", "-o", out, "--span", "evil:enter,evil:exit", "--",
				 copy, NULL };

		assert_int_equal(run(&r, argv), 0);
		assert_non_null(strstr(r.err, "skipping evil:enter"));
		assert_null(memchr(r.err, '\x1b', r.err_len));
		assert_null(memchr(r.err, '\x07', r.err_len));
		assert_null(memmem(r.err, r.err_len, "\xe2\x80\xae", 3));
		assert_non_null(strstr(r.err, "\\u202e"));
		assert_null(memchr(r.out, '\x1b', r.out_len));
		run_free(&r);
	}
	/* leanprofiler list shows them escaped too. */
	{
		char *argv[] = { lp, "list", copy, NULL };

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 0);
		assert_null(memchr(r.out, '\x1b', r.out_len));
		assert_null(memchr(r.err, '\x1b', r.err_len));
		assert_null(memmem(r.out, r.out_len, "\xe2\x80\xae", 3));
		run_free(&r);
	}
}

/* Whether this process has fd open without FD_CLOEXEC: a command it starts inherits it. */
static bool ours_inherited(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	return flags >= 0 && !(flags & FD_CLOEXEC);
}

/*
 * A launched command inherits what leanprofiler itself was given (like any
 * launcher), and nothing leanprofiler opened: not its outputs' temporary
 * files (the command could write into the summary), not its BPF objects.
 */
static void test_outputs_not_inherited(void **state)
{
	char *out = dir_of("fds-out", op_uid, op_gid, 0755), *save = NULL;
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/fds", build), NULL };
	struct run r;
	int n = 0;

	(void)state;
	run_as_op(&r, argv);
	if (r.status)
		fail_msg("exit %d: %s", r.status, r.err);
	/* Its lines "FD path"; the table's lines do not begin with a digit. */
	for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int fd;

		if (l[0] < '0' || l[0] > '9' || sscanf(l, "%d ", &fd) != 1)
			continue;
		n++;
		if (fd > 2 && (strstr(l, out) || !ours_inherited(fd)))
			fail_msg("the command inherited leanprofiler's fd %d (%s)", fd, l);
	}
	assert_true(n >= 3);
	run_free(&r);
}

/* Runs argv (run_usage()): its exit code, and its peak RSS (KiB) from wait4. */
static int run_measured(char *const argv[], long *maxrss_kib, struct run *r)
{
	struct rusage ru;

	assert_int_equal(run_usage(r, argv, &ru), 0);
	*maxrss_kib = ru.ru_maxrss;
	return r->status;
}

/*
 * A file whose .note.stapsdt says it is 3 GiB (a sparse file, a few KiB on
 * disk): reading it must not cost what it claims. `list` says so and stops;
 * `record` does not probe it.
 */
static void test_huge_note_section(void **state)
{
	char *copy = fmt("%s/hugenote", tmpdir), *text;
	char *lp = fmt("%s/leanprofiler", build), *out = dir_of("huge-out", 0, 0, 0755);
	const uint64_t huge = 3ULL << 30;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	size_t len;
	struct run r;
	long rss;
	int fd;

	(void)state;
	text = slurp(fmt("%s/examples/nested", build), &len);
	assert_non_null(text);
	eh = (Elf64_Ehdr *)text;
	sh = (Elf64_Shdr *)(text + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *name = text + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name;

		if (!strcmp(name, ".note.stapsdt")) {
			sh[i].sh_size = huge;
			fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, text, len), (ssize_t)len);
			/* The section's claimed bytes exist: zeros, not on disk. */
			assert_int_equal(ftruncate(fd, (off_t)(sh[i].sh_offset + huge)), 0);
			close(fd);
		}
	}
	free(text);
	{
		char *argv[] = { lp, "list", copy, NULL };

		assert_int_equal(run_measured(argv, &rss, &r), 125);
		assert_non_null(strstr(r.err, "probe notes exceed"));
		if (rss > 64 * 1024)
			fail_msg("list took %ld KiB", rss);
		run_free(&r);
	}
	{
		char *argv[] = { lp, "record", "-o", out, "--", copy, NULL };

		assert_int_equal(run_measured(argv, &rss, &r), 125);
		assert_non_null(strstr(r.err, "not probed: its probe notes exceed"));
		if (rss > 256 * 1024)
			fail_msg("record took %ld KiB", rss);
		run_free(&r);
	}
}

/*
 * A library with 3000 more marker sites than the header makes, under a low
 * descriptor limit: it is not probed (one warning), and a library loaded
 * after it still is, from its first span.
 */
static void test_too_many_sites(void **state)
{
	char *out = dir_of("many-out", 0, 0, 0755), *log = fmt("%s/many.log", tmpdir);
	char *argv[] = { "/usr/bin/prlimit", "--nofile=256:256", fmt("%s/leanprofiler", build),
			 "record", "-o", out, "--", fmt("%s/tests/targets/twolibs", build),
			 fmt("%s/tests/targets/libmanyprobes.so", build),
			 fmt("%s/tests/targets/libfama.so", build), log, NULL };
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_non_null(strstr(r.err, "libmanyprobes.so not probed: 3004 leanprofiler probe sites"));
	assert_null(strstr(r.err, "Too many open files"));
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "liba.work"), 2);
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "liba.leaf"), 2);
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "twolibs.main"), 1);
	assert_int_equal(spans_named(fmt("%s/leanprofiler-trace.json", out), "many.span"), 0);
	run_free(&r);
}

/* Copies build's file from to path (a file new to any recording: paused for). */
static void copy_file(const char *from, const char *path)
{
	char *argv[] = { "/bin/cp", fmt("%s/%s", build, from), (char *)path, NULL };
	struct run r;

	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	run_free(&r);
}

/*
 * A child of ours whose PID is want (free: its process was reaped), through
 * /proc/sys/kernel/ns_last_pid; it stops itself at once, and exits 0 when
 * continued. Another process may take the PID first: then again.
 */
static pid_t fork_at(pid_t want)
{
	for (int i = 0; i < 100; i++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		char *last = fmt("%d", (int)want - 1);
		pid_t pid;

		assert_true(fd >= 0);
		assert_int_equal(write(fd, last, strlen(last)), (ssize_t)strlen(last));
		close(fd);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (getpid() != want)
				_exit(1);
			raise(SIGSTOP);
			_exit(0);
		}
		if (pid == want)
			return pid;
		waitpid(pid, NULL, 0);
	}
	fail_msg("PID %d could not be handed out again", (int)want);
	return -1;
}

/* The state letter of /proc/PID/stat ('T': stopped), or 0. */
static char proc_state(pid_t pid)
{
	char *s = slurp(fmt("/proc/%d/stat", (int)pid), NULL), *p = s ? strrchr(s, ')') : NULL;
	char c = p && p[1] ? p[2] : 0;

	free(s);
	return c;
}

/*
 * A target paused for a library it dlopen()s exits during the pause (a
 * hostile user can stretch a pause to 72 ms with many files), and its PID
 * goes to another process (a root daemon's, for an attacker), stopped. The
 * profiler must not continue that one. Deterministic: the profiler is held
 * (SIGSTOP) until the PID is the other's, handed out again through
 * /proc/sys/kernel/ns_last_pid.
 */
static void test_reused_pid_not_continued(void **state)
{
	char *lib = fmt("%s/reuse-fresh.so", tmpdir), *perr = fmt("%s/reuse.stderr", tmpdir);
	char *targv[] = { fmt("%s/tests/targets/pausee", build), NULL };
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE }, err = { .mode = IO_NULL };
	char line[256];
	struct lines *tl;
	pid_t t, rec, v;
	int st;

	(void)state;
	copy_file("tests/targets/libfama.so", lib);
	t = spawn(targv, &in, &out, &err);
	tl = lines_new(out.fd);
	assert_int_equal(lines_read(tl, line, sizeof(line), 10000), 1);
	assert_non_null(strstr(line, "ready pid="));
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o",
				 dir_of("reuse-out", 0, 0, 0755), "-p", fmt("%d", (int)t), NULL };

		rec = spawn_to(argv, fmt("%s/reuse.stdout", tmpdir), perr);
		started_add(rec);
	}
	assert_true(wait_text(perr, "leanprofiler: recording PID", rec, 20000));
	/* The profiler holds still: the pause lasts as long as the test needs. */
	assert_int_equal(kill(rec, SIGSTOP), 0);
	assert_int_equal(waitpid(rec, &st, WUNTRACED), rec);
	assert_true(WIFSTOPPED(st));
	assert_true(dprintf(in.fd, "open %s\n", lib) > 0);
	assert_int_equal(waitpid(t, &st, WUNTRACED), t);
	if (!WIFSTOPPED(st))
		fail_msg("the target was not paused for the library (status 0x%x)", st);
	/* It dies during the pause, and its PID is another process's, stopped. */
	assert_int_equal(kill(t, SIGKILL), 0);
	assert_int_equal(waitpid(t, &st, 0), t);
	started_forget(t);
	v = fork_at(t);
	started_add(v);
	assert_int_equal(waitpid(v, &st, WUNTRACED), v);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(kill(rec, SIGCONT), 0);
	/* The target is gone: the recording ends; after that nothing can continue v. */
	st = wait_exit_within(rec, 20000);
	if (st != 0)
		fail_msg("leanprofiler exited %d: %s", st, slurp(perr, NULL));
	st = 0;
	if (waitpid(v, &st, WNOHANG | WCONTINUED) == v)
		fail_msg("PID %d, another process's by then, was continued by the profiler "
			 "(it %s)", (int)v, WIFCONTINUED(st) ? "runs" : "ran to its exit");
	assert_int_equal(proc_state(v), 'T');
	assert_non_null(strstr(slurp(perr, NULL), "ended while paused"));
	assert_int_equal(kill(v, SIGCONT), 0);
	assert_int_equal(wait_exit(v), 0);
	close(in.fd);
	close(out.fd);
}

/* Waits at most ms for our child pid to exit: its exit code, or -1 (it is still there). */
static int exit_within(pid_t pid, int ms)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int ready;

	assert_true(pfd >= 0);
	ready = poll(&p, 1, ms);
	close(pfd);
	return ready == 1 ? wait_exit(pid) : -1;
}

#define RELAY_RUNS 10

/*
 * sudo, runuser and su wait for their command with WUNTRACED, and stop
 * themselves when it stops, as our pause for a new library does: nobody but
 * the profiler can continue them then. Under --all-processes, the command
 * (twolibs, as lpsec-op) dlopen()s two libraries new to the recording, each
 * run: every run of each must finish, its spans recorded.
 */
static void test_relays_not_left_stopped(void **state)
{
	static const char *const relays[] = { "sudo", "runuser", "su" };
	char *prog = fmt("%s/tests/targets/twolibs", build);
	char *logs = dir_of("relay-logs", op_uid, op_gid, 0755);

	char *failed = "";

	(void)state;
	for (size_t k = 0; k < sizeof(relays) / sizeof(relays[0]); k++) {
		int hung = 0;

		char *out = dir_of(fmt("relay-%s", relays[k]), 0, 0, 0755);
		char *perr = fmt("%s/relay-%s.stderr", tmpdir, relays[k]);
		char *trace = fmt("%s/leanprofiler-trace.json", out);
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", out,
				 "--all-processes", prog, NULL };
		pid_t rec = spawn_to(argv, fmt("%s/relay.stdout", tmpdir), perr);
		int st;

		started_add(rec);
		assert_true(wait_text(perr, "leanprofiler: recording every process", rec, 20000));
		for (int i = 0; i < RELAY_RUNS; i++) {
			char *a = fmt("%s/relay-%s-%d-a.so", tmpdir, relays[k], i);
			char *b = fmt("%s/relay-%s-%d-b.so", tmpdir, relays[k], i);
			char *log = fmt("%s/%s-%d.log", logs, relays[k], i);
			char *sudo[] = { "/usr/bin/sudo", "-u", OP, prog, a, b, log, NULL };
			char *runuser[] = { "/usr/sbin/runuser", "-u", OP, "--", prog, a, b, log, NULL };
			char *su[] = { "/usr/bin/su", "-s", "/bin/sh", OP, "-c",
				       fmt("exec %s %s %s %s", prog, a, b, log), NULL };
			char **cmd = k == 0 ? sudo : k == 1 ? runuser : su;
			pid_t pid;

			copy_file("tests/targets/libfama.so", a);
			copy_file("tests/targets/libfama.so", b);
			pid = spawn_to(cmd, fmt("%s/relay-cmd.stdout", tmpdir),
				       fmt("%s/relay-cmd.stderr", tmpdir));
			started_add(pid);
			st = exit_within(pid, 5000);
			if (st < 0) {
				/* Left stopped: counted, ended, and the next run tried. */
				print_message("%s run %d of %d did not finish within 5 s (state %c)\n",
					      relays[k], i + 1, RELAY_RUNS, proc_state(pid));
				hung++;
				kill(pid, SIGKILL);
				wait_exit(pid);
				continue;
			}
			if (st != 0)
				fail_msg("%s run %d exited %d: %s", relays[k], i + 1, st,
					 slurp(fmt("%s/relay-cmd.stderr", tmpdir), NULL));
		}
		kill(rec, SIGINT);
		st = wait_exit_within(rec, 20000);
		if (st != 0)
			fail_msg("leanprofiler exited %d: %s", st, slurp(perr, NULL));
		if (hung) {
			failed = fmt("%s %s: %d of %d runs left stopped;", failed, relays[k], hung,
				     RELAY_RUNS);
			continue;
		}
		assert_int_equal(spans_named(trace, "twolibs.main"), RELAY_RUNS);
		assert_int_equal(spans_named(trace, "liba.work"), 2 * RELAY_RUNS);
		assert_int_equal(spans_named(trace, "liba.leaf"), 2 * RELAY_RUNS);
		print_message("%s: %d of %d runs finished, spans recorded\n", relays[k],
			      RELAY_RUNS, RELAY_RUNS);
	}
	if (*failed)
		fail_msg("relays the profiler left stopped:%s", failed);
}

/* N copies of libmany.so, DIR/m0.so ... DIR/m(N-1).so: N marked files new to a recording. */
static char *many_copies(const char *name, int n)
{
	char *dir = dir_of(name, 0, 0, 0755);

	for (int i = 0; i < n; i++)
		copy_file("tests/targets/libmany.so", fmt("%s/m%d.so", dir, i));
	return dir;
}

#define MANY_LIBS 24
#define MANY_BATCH "8"
#define MANY_SPANS 3

/*
 * A target maps many marked files at once (LD_PRELOAD of MANY_LIBS libraries,
 * a plugin host's start) under --all-processes: they are attached over
 * several batches (LEANPROFILER_BATCH_FILES of them each; signals and the
 * records are looked at in between), every gate of a batch opens with one
 * store, and the process, paused at its exec, goes on once all are attached:
 * each file's spans are recorded, none before its gate or unterminated. Then
 * Ctrl-C: the table comes before the probes are detached (an RCU grace
 * period each, ~0.1 s here: MANY_LIBS files, 4 probes each, took ~10 s to
 * detach before the table came).
 */
static void test_many_files_batched(void **state)
{
	char *dir = many_copies("batched", MANY_LIBS), *out = dir_of("batched-out", 0, 0, 0755);
	char *prog = fmt("%s/tests/targets/manylibs", build), *preload = "";
	char *perr = fmt("%s/batched.stderr", tmpdir), *pout = fmt("%s/batched.stdout", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", out,
			 "--all-processes", prog, NULL };
	char *targv[] = { prog, fmt("%s/batched.log", tmpdir), dir, fmt("%d", MANY_LIBS),
			  fmt("%d", MANY_SPANS), NULL };
	json_object *sum, *rows;
	uint64_t t0, waited;
	int found = 0, st;
	pid_t rec, t;

	(void)state;
	for (int i = 0; i < MANY_LIBS; i++)
		preload = fmt("%s%s/m%d.so ", preload, dir, i);
	setenv("LEANPROFILER_BATCH_FILES", MANY_BATCH, 1);
	rec = spawn_to(argv, pout, perr);
	unsetenv("LEANPROFILER_BATCH_FILES");
	started_add(rec);
	assert_true(wait_text(perr, "leanprofiler: recording every process", rec, 20000));
	setenv("LD_PRELOAD", preload, 1);
	t = spawn_to(targv, fmt("%s/batched-target.stdout", tmpdir),
		     fmt("%s/batched-target.stderr", tmpdir));
	unsetenv("LD_PRELOAD");
	started_add(t);
	st = exit_within(t, 30000);
	if (st != 0)
		fail_msg("manylibs %s (state %c): %s", st < 0 ? "did not finish within 30 s" :
			 fmt("exited %d", st), proc_state(t),
			 slurp(fmt("%s/batched-target.stderr", tmpdir), NULL));
	t0 = now_ns();
	assert_int_equal(kill(rec, SIGINT), 0);
	assert_true(wait_text(pout, "Summary:", rec, 60000));
	waited = (now_ns() - t0) / 1000000;
	print_message("the table %llu ms after SIGINT\n", (unsigned long long)waited);
	if (waited > 4000)
		fail_msg("the table came %llu ms after SIGINT (the probes detached first?)",
			 (unsigned long long)waited);
	st = wait_exit_within(rec, 120000);
	if (st != 0)
		fail_msg("leanprofiler exited %d: %s", st, slurp(perr, NULL));
	assert_non_null(strstr(slurp(perr, NULL), "left to the next batch"));
	sum = summary_of(out);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	assert_true(get_i(get(sum, "profiler"), "files_deferred") >= MANY_LIBS - 8);
	rows = get(sum, "rows");
	for (int i = 0; i < MANY_LIBS; i++) {
		char *meta = fmt("file=m%d.so", i);

		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			json_object *row = json_object_array_get_idx(rows, k);

			if (strcmp(get_s(row, "name"), "many.lib") || strcmp(get_s(row, "meta_text"), meta))
				continue;
			assert_int_equal(get_i(row, "calls"), MANY_SPANS);
			found++;
		}
	}
	assert_int_equal(found, MANY_LIBS);
	json_object_put(sum);
}

#define KILLED_LIBS 40

/*
 * leanprofiler is killed (SIGKILL) while a plugin host loads marked libraries
 * one every 10 ms under --all-processes. Its probes are torn down after its
 * death, one RCU grace period each, and until then the loader's probe still
 * runs at every load: it must stop the process no more (before: stopped at
 * nearly every load, continued by nobody but this test). At most the one
 * pause under way at the kill is left: nobody is there to end it.
 */
static void test_killed_profiler_stops_nothing(void **state)
{
	char *dir = many_copies("killed", KILLED_LIBS), *out = dir_of("killed-out", 0, 0, 0755);
	char *prog = fmt("%s/tests/targets/manylibs", build);
	char *perr = fmt("%s/killed.stderr", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--all-processes",
			 prog, NULL };
	char *targv[] = { prog, fmt("%s/killed.log", tmpdir), dir, fmt("%d", KILLED_LIBS), "1",
			  "10", NULL };
	struct io in = { .mode = IO_PIPE }, tout = { .mode = IO_PIPE }, terr = { .mode = IO_NULL };
	struct lines *tl;
	char line[256];
	int stops = 0, st, loaded = -1;
	pid_t rec, t;

	(void)state;
	rec = spawn_to(argv, fmt("%s/killed.stdout", tmpdir), perr);
	started_add(rec);
	assert_true(wait_text(perr, "leanprofiler: recording every process", rec, 20000));
	t = spawn(targv, &in, &tout, &terr);
	tl = lines_new(tout.fd);
	assert_true(dprintf(in.fd, "go\n") > 0);
	while (loaded < 4) {
		assert_int_equal(lines_read(tl, line, sizeof(line), 20000), 1);
		assert_int_equal(sscanf(line, "loaded %d", &loaded), 1);
	}
	assert_int_equal(kill(rec, SIGKILL), 0);
	/* Every stop from now on is seen here (its parent), and continued. */
	for (;;) {
		assert_int_equal(waitpid(t, &st, WUNTRACED), t);
		if (!WIFSTOPPED(st))
			break;
		stops++;
		assert_int_equal(kill(t, SIGCONT), 0);
	}
	started_forget(t);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(wait_exit_within(rec, 120000), 128 + SIGKILL);
	print_message("stopped %d times after the profiler was killed, at %d loads\n", stops,
		      KILLED_LIBS - 5);
	if (stops > 1)
		fail_msg("the target was stopped %d times after the profiler was killed", stops);
	close(in.fd);
	close(tout.fd);
}

/*
 * Between reading a mapping's line in /proc/PID/maps (its dev, ino) and
 * opening its /proc/PID/map_files entry, the target maps another file at the
 * same addresses: leanprofiler must not file the other file's probes under
 * the first one's name (that file would then count as examined, and its
 * spans go unrecorded in every process). libopenswap.so, preloaded into
 * leanprofiler, lets the target swap right there every time. Then the target
 * dlopen()s the first file for real: its spans are recorded.
 */
static void test_swapped_mapping_not_misfiled(void **state)
{
	char *a = fmt("%s/swap-a.so", tmpdir), *b = fmt("%s/swap-b.so", tmpdir);
	char *req = fmt("%s/swap.req", tmpdir), *ack = fmt("%s/swap.ack", tmpdir);
	char *out = dir_of("swap-out", 0, 0, 0755), *perr = fmt("%s/swap.stderr", tmpdir);
	char *targv[] = { fmt("%s/tests/targets/swapmap", build), a, b, req, ack,
			  fmt("%s/swap.log", tmpdir), "5", NULL };
	struct io in = { .mode = IO_PIPE }, tout = { .mode = IO_PIPE }, terr = { .mode = IO_NULL };
	struct lines *tl;
	char line[256];
	json_object *sum, *rows;
	int a_calls = -1, st;
	pid_t t, rec;

	(void)state;
	copy_file("tests/targets/libmany.so", a);
	copy_file("tests/targets/libmany.so", b);
	assert_int_equal(mkfifo(req, 0600), 0);
	assert_int_equal(mkfifo(ack, 0600), 0);
	t = spawn(targv, &in, &tout, &terr);
	tl = lines_new(tout.fd);
	assert_int_equal(lines_read(tl, line, sizeof(line), 10000), 1);
	assert_string_equal(line, "ready");
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", out, "-p",
				 fmt("%d", (int)t), NULL };

		setenv("LD_PRELOAD", fmt("%s/tests/targets/libopenswap.so", build), 1);
		setenv("LP_SWAP_MATCH", "/map_files/7e0000000000-", 1);
		setenv("LP_SWAP_REQ", req, 1);
		setenv("LP_SWAP_ACK", ack, 1);
		rec = spawn_to(argv, fmt("%s/swap.stdout", tmpdir), perr);
		unsetenv("LD_PRELOAD");
		unsetenv("LP_SWAP_MATCH");
		started_add(rec);
	}
	assert_true(wait_text(perr, "leanprofiler: recording PID", rec, 20000));
	assert_true(dprintf(in.fd, "go\n") > 0);
	assert_int_equal(lines_read(tl, line, sizeof(line), 20000), 1);
	assert_string_equal(line, "done");
	assert_int_equal(wait_exit_within(t, 20000), 0);
	st = wait_exit_within(rec, 60000);
	if (st != 0)
		fail_msg("leanprofiler exited %d: %s", st, slurp(perr, NULL));
	sum = summary_of(out);
	rows = get(sum, "rows");
	for (size_t k = 0; k < json_object_array_length(rows); k++) {
		json_object *row = json_object_array_get_idx(rows, k);

		if (!strcmp(get_s(row, "name"), "many.lib") &&
		    !strcmp(get_s(row, "meta_text"), "file=swap-a.so"))
			a_calls = (int)get_i(row, "calls");
	}
	if (a_calls != 5)
		fail_msg("swap-a.so's spans: %d recorded of 5 (its name was given to swap-b.so's "
			 "probes?): see %s", a_calls < 0 ? 0 : a_calls, perr);
	json_object_put(sum);
	close(in.fd);
	close(tout.fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_reading_other_programs),
		cmocka_unit_test(test_output_symlink_refused),
		cmocka_unit_test(test_output_dir_others_refused),
		cmocka_unit_test_teardown(test_output_dir_race, stop_started),
		cmocka_unit_test(test_no_escapes_to_terminal),
		cmocka_unit_test(test_outputs_not_inherited),
		cmocka_unit_test(test_huge_note_section),
		cmocka_unit_test(test_too_many_sites),
		cmocka_unit_test_teardown(test_reused_pid_not_continued, stop_started),
		cmocka_unit_test_teardown(test_relays_not_left_stopped, stop_started),
		cmocka_unit_test_teardown(test_many_files_batched, stop_started),
		cmocka_unit_test_teardown(test_killed_profiler_stops_nothing, stop_started),
		cmocka_unit_test_teardown(test_swapped_mapping_not_misfiled, stop_started),
	};

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_security"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
