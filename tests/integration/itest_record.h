/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler record` as a process the integration tests start and watch:
 * its stdout to a file, its stderr read line by line (the "leanprofiler:
 * recording" line says it is attached), its exit waited for with a deadline.
 * Include after itest.h, with `build` (the build directory) and `tmpdir`
 * defined, and RECORDING_MS (how long attaching may take).
 */
#ifndef LP_ITEST_RECORD_H
#define LP_ITEST_RECORD_H

struct lp {
	pid_t pid;
	struct lines *err;
	const char *dir, *stdout_path;
	uint64_t t_launch, t_ready, t_done;
	int status;
	char recording_line[512];
};

/* Runs leanprofiler record -o tmpdir/NAME ARGS...; stdout to a file, stderr through a pipe. */
static ITEST_UNUSED void lp_start_io(struct lp *p, const char *name, const char *const args[],
				      struct io *in, struct io *out)
{
	struct io err = { .mode = IO_PIPE };
	char *argv[32];
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->dir = fmt("%s/%s", tmpdir, name);
	p->stdout_path = fmt("%s/%s.stdout", tmpdir, name);
	argv[n++] = fmt("%s/leanprofiler", build);
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = (char *)p->dir;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	p->t_launch = now_ns();
	p->pid = spawn(argv, in, out, &err);
	p->err = lines_new(err.fd);
}

static ITEST_UNUSED void lp_start(struct lp *p, const char *name, const char *const args[])
{
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_FILE };

	out.file = fmt("%s/%s.stdout", tmpdir, name);
	lp_start_io(p, name, args, &in, &out);
}

/* Waits for "leanprofiler: recording ..." on stderr; t_ready is when we read it. */
static ITEST_UNUSED void lp_wait_recording(struct lp *p)
{
	uint64_t deadline = now_ns() + RECORDING_MS * 1000000ULL;

	for (;;) {
		uint64_t t = now_ns();
		int r = t < deadline ? lines_read(p->err, p->recording_line,
						  sizeof(p->recording_line),
						  (int)((deadline - t) / 1000000ULL) + 1)
				     : -1;

		if (r != 1)
			fail_msg("no 'leanprofiler: recording' line within %d ms (%s); stderr:\n%s",
				 RECORDING_MS, r ? "timeout" : "EOF", p->err->all);
		if (!strncmp(p->recording_line, "leanprofiler: recording", 23))
			break;
	}
	p->t_ready = now_ns();
}

/* Waits for leanprofiler to exit and reads the rest of its stderr. */
static ITEST_UNUSED void lp_finish(struct lp *p, int timeout_ms)
{
	p->status = wait_exit_within(p->pid, timeout_ms);
	p->t_done = now_ns();
	lines_drain(p->err, 1000);
	close(p->err->fd);
}

static ITEST_UNUSED void expect_status(struct lp *p, int want)
{
	if (p->status != want)
		fail_msg("leanprofiler exited %d, expected %d; stderr:\n%s", p->status, want,
			 p->err->all);
}

#endif
