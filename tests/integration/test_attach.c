// SPDX-License-Identifier: MIT
/*
 * Integration tests of attaching to running processes: `record -p PID`,
 * `record --all-processes BINARY`, and launch mode following forks and execs.
 * Real profiler, real BPF, and tests/targets/svc, a service driven line by line
 * through its stdin/stdout. Needs root (CAP_BPF + CAP_PERFMON): skipped otherwise.
 *
 * No sleeps: every step waits for a line a process prints (svc's answers,
 * leanprofiler's "leanprofiler: recording" on stderr) or for a process to exit,
 * with poll() and a deadline; a missed deadline fails the test.
 *
 * How a recording is judged (judge()): svc, its children and `second` log every
 * marker with CLOCK_MONOTONIC readings just before and after it and whether
 * LP_ACTIVE() (the marker's semaphore) was set before and after. A marker
 *   - definitely FIRED if both readings were set, it began after its process was
 *     attached and it ended before the recording could have ended. Processes
 *     already running are attached once the test has read leanprofiler's
 *     "recording" line; processes forked or started later from their first
 *     instruction; an exec'ed program or a dlopen'ed library from its first
 *     marker too (the process is paused until they are attached): its first
 *     recorded span must be the one its first marker began;
 *   - definitely did NOT fire if both readings were 0 (no probe call was made), or
 *     it began after leanprofiler had exited;
 *   - is GRAY otherwise (during attach or detach), and may have fired or not.
 * Then a span must appear if one of its markers fired: as a complete span when
 * both did (kernel timestamps inside the target's brackets); as
 * "started_before_recording" when only its exit did (starting at the attach
 * time; without metadata, which only enter markers carry); as "unterminated"
 * when only its enter did (closed at the recording's end, or at its thread's
 * exit). A span with gray markers may appear in any form consistent with them.
 * Every recorded span must be one the target logged, at most once, nested as
 * the target nested it; nothing else may appear. While a process is recorded,
 * its markers must see LP_ACTIVE() set.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
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
#include <sys/types.h>
#include <unistd.h>
#include <cmocka.h>

#define ACK_MS 20000       /* an answer from svc */
#define RECORDING_MS 20000 /* leanprofiler's "recording" line */
#define EXIT_MS 20000      /* a process's exit once it should end */
/*
 * Spans still open at the end are closed at recording.end_ns, each nested one
 * 1 ns before its parent (so it ends inside it): at most this much earlier.
 */
#define STAGGER_NS 16

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-attach-XXXXXX";

#include "itest.h"
#include "itest_record.h"

/* --- svc: the service to attach to ------------------------------------------------ */

struct svc {
	pid_t pid;
	int in;
	struct lines *out;
	uintptr_t sem, libsem; /* addresses of its lp__semaphore and libmarked.so's */
	const char *log;
	char reply[256];
};

static void svc_hello(struct svc *s)
{
	char line[256];
	void *sem = NULL, *libsem = NULL;
	int pid = 0;

	if (lines_read(s->out, line, sizeof(line), ACK_MS) != 1)
		fail_msg("svc did not start; it printed: %s", s->out->all);
	/* %p reads "(nil)" as no match: libsem stays NULL. */
	assert_true(sscanf(line, "pid=%d sem=%p libsem=%p", &pid, &sem, &libsem) >= 2);
	s->pid = pid;
	s->sem = (uintptr_t)sem;
	s->libsem = (uintptr_t)libsem;
}

/* Starts build/tests/targets/BINARY logging to tmpdir/LOG.log. */
static void svc_start(struct svc *s, const char *binary, const char *log)
{
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE }, err = { .mode = IO_INHERIT };
	char *argv[] = { fmt("%s/tests/targets/%s", build, binary), NULL, NULL };

	memset(s, 0, sizeof(*s));
	s->log = fmt("%s/%s.log", tmpdir, log);
	argv[1] = (char *)s->log;
	unlink(s->log);
	spawn(argv, &in, &out, &err);
	s->in = in.fd;
	s->out = lines_new(out.fd);
	svc_hello(s);
}

/* Sends one command and returns svc's one-line answer. */
static const char *svc_cmd(struct svc *s, const char *cmd)
{
	char *line = fmt("%s\n", cmd);
	int r;

	assert_int_equal(write(s->in, line, strlen(line)), (ssize_t)strlen(line));
	free(line);
	r = lines_read(s->out, s->reply, sizeof(s->reply), ACK_MS);
	if (r != 1)
		fail_msg("svc (PID %d) gave no answer to '%s' (%s)", (int)s->pid, cmd,
			 r ? "timeout" : "EOF");
	return s->reply;
}

static void svc_expect(struct svc *s, const char *cmd, const char *want)
{
	const char *got = svc_cmd(s, cmd);

	if (strncmp(got, want, strlen(want)))
		fail_msg("svc '%s' answered '%s', expected '%s...'", cmd, got, want);
}

static void svc_quit(struct svc *s)
{
	svc_expect(s, "quit", "bye");
	assert_int_equal(wait_exit_within(s->pid, EXIT_MS), 0);
	close(s->in);
}

/* The value of the semaphore at addr in pid, read through /proc/PID/mem. */
static unsigned read_sem(pid_t pid, uintptr_t addr)
{
	char *p = fmt("/proc/%d/mem", (int)pid);
	int fd = open(p, O_RDONLY);
	unsigned short v = 0xffff;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), (off_t)addr), (ssize_t)sizeof(v));
	close(fd);
	free(p);
	return v;
}

/* --- leanprofiler ----------------------------------------------------------------- */

static void lp_stop(struct lp *p, int sig, uint64_t *t_sig)
{
	*t_sig = now_ns();
	assert_int_equal(kill(p->pid, sig), 0);
	lp_finish(p, EXIT_MS);
}

/* --- the summary ---------------------------------------------------------------------- */

/* The summary's "processes" entry of pid, or NULL. */
static json_object *find_process(json_object *sum, pid_t pid)
{
	json_object *procs = get(sum, "processes");

	assert_true(json_object_is_type(procs, json_type_array));
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *e = json_object_array_get_idx(procs, i);

		if (get_i(e, "pid") == pid)
			return e;
	}
	return NULL;
}

/* pid is listed, with this parent, origin (one of "a|b") and comm (NULL: any). */
static void expect_process(json_object *sum, pid_t pid, pid_t ppid, const char *origins,
			   const char *comm)
{
	json_object *e = find_process(sum, pid);
	const char *origin;
	char *alts;
	bool ok = false;

	if (!e)
		fail_msg("PID %d missing from processes: %s", (int)pid,
			 json_object_to_json_string(get(sum, "processes")));
	assert_int_equal(get_i(e, "ppid"), ppid);
	origin = get_s(e, "origin");
	alts = fmt("|%s|", origins);
	ok = strstr(alts, fmt("|%s|", origin)) != NULL;
	if (!ok)
		fail_msg("PID %d has origin '%s', expected %s", (int)pid, origin, origins);
	if (comm)
		assert_string_equal(get_s(e, "comm"), comm);
}

static void expect_recording(json_object *sum, const char *reason, uint64_t start_lo,
			     uint64_t start_hi, uint64_t end_lo, uint64_t end_hi)
{
	json_object *rec = get(sum, "recording");
	uint64_t start = (uint64_t)get_i(rec, "start_ns"), end = (uint64_t)get_i(rec, "end_ns");

	assert_string_equal(get_s(rec, "end_reason"), reason);
	if (start < start_lo || start > start_hi)
		fail_msg("recording.start_ns %lu outside [%lu, %lu]", start, start_lo, start_hi);
	if (end < end_lo || end > end_hi)
		fail_msg("recording.end_ns %lu outside [%lu, %lu]", end, end_lo, end_hi);
}

/* --- what the targets logged, what the trace holds ----------------------------------- */

struct lspan { /* one span as a target logged it */
	int pid, tid, id, depth, parent; /* parent: index, -1 at top level */
	uint64_t t[4];                   /* before/after enter, before/after exit */
	int a[4];                        /* LP_ACTIVE() at the same four moments */
	bool has_exit;
	char name[64], meta[64];
	int match; /* index of the recorded span, -1 */
};

struct lthread {
	int pid, tid;
	char comm[32];
	uint64_t died; /* T line: about to exit with spans open; 0 if not */
	int stack[16], depth;
};

struct logs {
	struct lspan *s;
	size_t n, cap;
	struct lthread th[256];
	size_t nth;
};

static struct lthread *thread_of(struct logs *lg, int pid, int tid)
{
	for (size_t i = 0; i < lg->nth; i++)
		if (lg->th[i].tid == tid && lg->th[i].pid == pid)
			return &lg->th[i];
	assert_true(lg->nth < 256);
	memset(&lg->th[lg->nth], 0, sizeof(lg->th[0]));
	lg->th[lg->nth].pid = pid;
	lg->th[lg->nth].tid = tid;
	return &lg->th[lg->nth++];
}

static void read_log(struct logs *lg, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f)
		fail_msg("cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		int pid, tid, id, parent, depth, used = 0, a0, a1;
		unsigned long t0, t1;
		struct lthread *th;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'N') {
			char comm[32];

			assert_int_equal(sscanf(line, "N %d %d %31s", &pid, &tid, comm), 3);
			th = thread_of(lg, pid, tid);
			snprintf(th->comm, sizeof(th->comm), "%s", comm);
		} else if (line[0] == 'T') {
			assert_int_equal(sscanf(line, "T %d %d %lu", &pid, &tid, &t0), 3);
			thread_of(lg, pid, tid)->died = t0;
		} else if (line[0] == 'E') {
			struct lspan *s;
			char *tab;

			assert_int_equal(sscanf(line, "E %d %d %d %d %d %lu %lu %d %d %n", &pid, &tid,
						&id, &parent, &depth, &t0, &t1, &a0, &a1, &used),
					 9);
			if (lg->n == lg->cap) {
				lg->cap = lg->cap ? 2 * lg->cap : 4096;
				lg->s = realloc(lg->s, lg->cap * sizeof(*lg->s));
				assert_non_null(lg->s);
			}
			s = &lg->s[lg->n];
			memset(s, 0, sizeof(*s));
			th = thread_of(lg, pid, tid);
			s->pid = pid, s->tid = tid, s->id = id, s->depth = depth, s->match = -1;
			s->t[0] = t0, s->t[1] = t1, s->a[0] = a0, s->a[1] = a1;
			/* The log's own nesting must agree with the stack we keep. */
			assert_int_equal(depth, th->depth);
			s->parent = th->depth ? th->stack[th->depth - 1] : -1;
			assert_int_equal(parent, s->parent < 0 ? -1 : lg->s[s->parent].id);
			tab = strchr(line + used, '\t');
			assert_non_null(tab);
			*tab = '\0';
			snprintf(s->name, sizeof(s->name), "%s", line + used);
			snprintf(s->meta, sizeof(s->meta), "%s", tab + 1);
			assert_true(th->depth < 16);
			th->stack[th->depth++] = (int)lg->n++;
		} else if (line[0] == 'X') {
			struct lspan *s;

			assert_int_equal(sscanf(line, "X %d %d %d %lu %lu %d %d", &pid, &tid, &id, &t0,
						&t1, &a0, &a1),
					 7);
			th = thread_of(lg, pid, tid);
			assert_true(th->depth > 0);
			s = &lg->s[th->stack[--th->depth]];
			assert_int_equal(s->id, id);
			s->has_exit = true;
			s->t[2] = t0, s->t[3] = t1, s->a[2] = a0, s->a[3] = a1;
		} else {
			fail_msg("bad line in %s: %s", path, line);
		}
	}
	fclose(f);
}

struct rspan { /* one span of the trace */
	int pid, tid, depth;
	uint64_t start, end;
	bool sbr, unterm, uncertain;
	char name[64], meta[64];
};

struct rname {
	bool process;
	int pid, tid;
	char name[32];
};

struct trace {
	struct rspan *s;
	size_t n;
	struct rname names[256];
	size_t nnames;
	size_t sbr, unterm; /* spans so marked */
};

static bool reserved(const char *k)
{
	return !strcmp(k, "counter") || !strcmp(k, "self_counter") ||
	       !strcmp(k, "unterminated") || !strcmp(k, "uncertain") ||
	       !strcmp(k, "started_before_recording");
}

static uint64_t ts_ns(json_object *v, uint64_t base)
{
	return base + (uint64_t)llround(json_object_get_double(v) * 1000.0);
}

static bool flag(json_object *args, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(args, key, &v))
		return false;
	if (!json_object_is_type(v, json_type_boolean) || !json_object_get_boolean(v))
		fail_msg("args.%s is %s, expected true or absent", key, json_object_to_json_string(v));
	return true;
}

static int cmp_trace_order(const void *a, const void *b)
{
	const struct rspan *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the parent first */
}

static void read_trace(struct trace *tr, const char *p)
{
	json_object *root = load_json(p), *events = get(root, "traceEvents");
	uint64_t base = (uint64_t)get_i(get(root, "otherData"), "base_ns");
	size_t cap = json_object_array_length(events);

	memset(tr, 0, sizeof(*tr));
	tr->s = calloc(cap + 1, sizeof(*tr->s));
	for (size_t i = 0; i < cap; i++) {
		json_object *e = json_object_array_get_idx(events, i);
		const char *ph = get_s(e, "ph");
		struct rspan *sp = &tr->s[tr->n];
		json_object *args = get(e, "args");
		size_t m = 0;

		if (!strcmp(ph, "M")) {
			const char *what = get_s(e, "name");
			struct rname *nm;

			if (strcmp(what, "process_name") && strcmp(what, "thread_name"))
				continue;
			assert_true(tr->nnames < 256);
			nm = &tr->names[tr->nnames++];
			nm->process = !strcmp(what, "process_name");
			nm->pid = (int)get_i(e, "pid");
			nm->tid = (int)get_i(e, "tid");
			snprintf(nm->name, sizeof(nm->name), "%s", get_s(args, "name"));
			continue;
		}
		if (strcmp(ph, "X"))
			continue;
		sp->pid = (int)get_i(e, "pid");
		sp->tid = (int)get_i(e, "tid");
		sp->start = ts_ns(get(e, "ts"), base);
		sp->end = sp->start + (uint64_t)llround(json_object_get_double(get(e, "dur")) * 1000.0);
		snprintf(sp->name, sizeof(sp->name), "%s", get_s(e, "name"));
		sp->sbr = flag(args, "started_before_recording");
		sp->unterm = flag(args, "unterminated");
		sp->uncertain = flag(args, "uncertain");
		tr->sbr += sp->sbr;
		tr->unterm += sp->unterm;
		json_object_object_foreach(args, k, v) {
			if (reserved(k))
				continue;
			m += (size_t)snprintf(sp->meta + m, sizeof(sp->meta) - m, "%s%s=%s",
					      m ? ", " : "", k, json_object_get_string(v));
		}
		tr->n++;
	}
	json_object_put(root);
	qsort(tr->s, tr->n, sizeof(*tr->s), cmp_trace_order);
	/* Depth from the nesting of intervals, per thread; a child never outlives its parent. */
	for (size_t i = 0, d = 0; i < tr->n; i++) {
		static uint64_t ends[64];
		struct rspan *s = &tr->s[i];

		if (i == 0 || s->tid != tr->s[i - 1].tid)
			d = 0;
		while (d > 0 && ends[d - 1] <= s->start)
			d--;
		if (d > 0 && s->end > ends[d - 1])
			fail_msg("tid %d: %s [%lu, %lu] outlives its parent (ends %lu)", s->tid, s->name,
				 s->start, s->end, ends[d - 1]);
		assert_true(d < 64);
		s->depth = (int)d;
		ends[d++] = s->end;
	}
}

static const char *trace_name(struct trace *tr, bool process, int pid, int tid)
{
	for (size_t i = 0; i < tr->nnames; i++)
		if (tr->names[i].process == process && tr->names[i].pid == pid &&
		    (process || tr->names[i].tid == tid))
			return tr->names[i].name;
	return NULL;
}

/* --- the judge ------------------------------------------------------------------------ */

struct window {
	/* Processes already running when leanprofiler started were attached in [lo, hi]. */
	uint64_t attach_lo, attach_hi;
	pid_t initial[4];
	/* The recording was still on at stop_lo and over (leanprofiler gone) at stop_hi. */
	uint64_t stop_lo, stop_hi;
	uint64_t end_ns; /* the summary's recording.end_ns */
	/*
	 * Newly exec'ed programs (prefix NULL), libraries dlopen'ed during the recording
	 * (the prefix of their span names): attached while their process is paused, so
	 * recorded from their first marker on.
	 */
	struct {
		pid_t pid;
		const char *prefix;
	} late[4];
	/* A process SIGKILLed at killed_at: its threads died then. */
	pid_t killed;
	uint64_t killed_at;
	/* A thread that exited mid-span: gone (from /proc) by `gone`. */
	int dead_tid;
	uint64_t gone;
};

enum state { FIRED, NOT, GRAY, NONE };
static const char *const state_names[] = { "fired", "did not fire", "gray", "none (no exit)" };

static bool in(pid_t pid, const pid_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] && set[i] == pid)
			return true;
	return false;
}

/* The late entry that applies to a span of pid named name, or -1. */
static int late_of(const struct window *w, int pid, const char *name)
{
	for (int i = 0; i < 4; i++)
		if (w->late[i].pid && w->late[i].pid == pid &&
		    (!w->late[i].prefix ||
		     !strncmp(name, w->late[i].prefix, strlen(w->late[i].prefix))))
			return i;
	return -1;
}

static enum state marker_state(const struct lspan *l, int k, uint64_t ready,
			       const struct window *w)
{
	uint64_t tb = l->t[2 * k], ta = l->t[2 * k + 1];
	int ab = l->a[2 * k], aa = l->a[2 * k + 1];

	if (k == 1 && !l->has_exit)
		return NONE;
	if (tb >= w->stop_hi || (!ab && !aa))
		return NOT;
	if (ab && aa && tb >= ready && ta <= w->stop_lo)
		return FIRED;
	return GRAY;
}

struct verdict {
	size_t normal, sbr, unterm;
};

static void describe(char *buf, size_t size, const struct lspan *l)
{
	snprintf(buf, size,
		 "pid %d tid %d #%d %s [%s] enter [%lu, %lu] active %d%d, exit [%lu, %lu] active "
		 "%d%d%s",
		 l->pid, l->tid, l->id, l->name, l->meta, l->t[0], l->t[1], l->a[0], l->a[1], l->t[2],
		 l->t[3], l->a[2], l->a[3], l->has_exit ? "" : " (never exited)");
}

static bool within(uint64_t x, uint64_t lo, uint64_t hi)
{
	return x >= lo && x <= hi;
}

/* A process, or a late program or library in it: recorded from when on. */
struct group {
	int pid, late;
	uint64_t ready, attach; /* attach: start of its started_before_recording spans */
	uint64_t first_marker, first_marker_end; /* the first enter's clock readings */
};

/* What judge() compares, and the groups of the logged spans. */
struct judging {
	struct trace *tr;
	struct logs *lg;
	const struct window *w;
	struct group g[32];
	size_t n;
};

/* The group of a span of pid named name: its index, or jd->n if it has none yet. */
static size_t group_of(const struct judging *jd, int pid, const char *name)
{
	size_t p;

	for (p = 0; p < jd->n; p++)
		if (jd->g[p].pid == pid && jd->g[p].late == late_of(jd->w, pid, name))
			break;
	return p;
}

/* One group per process, and per late program or library in it, as the logs show them. */
static void group_logs(struct judging *jd)
{
	for (size_t i = 0; i < jd->lg->n; i++) {
		const struct lspan *l = &jd->lg->s[i];
		struct group *g;

		if (group_of(jd, l->pid, l->name) < jd->n)
			continue;
		assert_true(jd->n < 32);
		g = &jd->g[jd->n++];
		g->pid = l->pid;
		g->late = late_of(jd->w, l->pid, l->name);
		g->ready = in(l->pid, jd->w->initial, 4) ? jd->w->attach_hi : 0;
		g->attach = 0;
		g->first_marker = l->t[0];
		g->first_marker_end = l->t[1];
	}
}

/* A late starter in messages: the prefix of its library's spans, or "(exec'ed)". */
static const char *late_label(const struct window *w, int late)
{
	return w->late[late].prefix ? w->late[late].prefix : "(exec'ed)";
}

/*
 * A late starter is held to "no gap" from its first recorded span on: that span
 * is the one its first marker began, and the group is ready from there.
 */
static void check_late_start(const struct judging *jd, struct group *g)
{
	const struct trace *tr = jd->tr;
	const char *label = late_label(jd->w, g->late);
	uint64_t first = UINT64_MAX;

	for (size_t k = 0; k < tr->n; k++) {
		const struct rspan *s = &tr->s[k];

		if (s->pid == g->pid && late_of(jd->w, s->pid, s->name) == g->late && s->start < first)
			first = s->start;
	}
	if (first == UINT64_MAX)
		fail_msg("nothing of PID %d %s was recorded", g->pid, label);
	/* The first span recorded is the one the first marker began: none is missing. */
	if (first < g->first_marker || first > g->first_marker_end)
		fail_msg("PID %d %s: recording began %.3f ms after the first marker, which "
			 "returned after %.3f ms",
			 g->pid, label, (double)(first - g->first_marker) / 1e6,
			 (double)(g->first_marker_end - g->first_marker) / 1e6);
	print_message("PID %d %s: recorded from %.2f ms after its first marker\n", g->pid, label,
		      first > g->first_marker ? (double)(first - g->first_marker) / 1e6 : 0.0);
	if (first > g->ready)
		g->ready = first;
}

/* The logged span that the recorded span g is, by its thread, name, meta and times; or -1. */
static int logged_as(const struct logs *lg, const struct rspan *g)
{
	for (size_t i = 0; i < lg->n; i++) {
		const struct lspan *l = &lg->s[i];

		/* An exit marker carries no metadata: a span rebuilt from it has none. */
		if (l->tid != g->tid || l->pid != g->pid || strcmp(l->name, g->name) ||
		    (strcmp(l->meta, g->meta) && !(g->sbr && !*g->meta)))
			continue;
		if (g->sbr ? l->has_exit && within(g->end, l->t[2], l->t[3])
		    : g->unterm ? within(g->start, l->t[0], l->t[1])
				: within(g->start, l->t[0], l->t[1]) && l->has_exit &&
					  within(g->end, l->t[2], l->t[3]))
			return (int)i;
	}
	return -1;
}

/* Fails on a recorded span the target did not log, showing its nearest logged span. */
static void fail_not_logged(const struct logs *lg, const struct rspan *g)
{
	/* The nearest logged span of that thread and name, to show what differs. */
	const struct lspan *best = NULL;
	char a[512];

	for (size_t i = 0; i < lg->n; i++) {
		const struct lspan *l = &lg->s[i];

		if (l->tid == g->tid && !strcmp(l->name, g->name) &&
		    (!best || llabs((long long)(l->t[0] - g->start)) <
				      llabs((long long)(best->t[0] - g->start))))
			best = l;
	}
	if (best)
		describe(a, sizeof(a), best);
	fail_msg("recorded span not done by the target: pid %d tid %d %s [%s] [%lu, "
		 "%lu]%s%s; nearest logged: %s",
		 g->pid, g->tid, g->name, g->meta, g->start, g->end,
		 g->sbr ? " started_before_recording" : "", g->unterm ? " unterminated" : "",
		 best ? a : "none");
}

/*
 * All spans open at a group's attach start at its attach time; for a process
 * already running, within the attach.
 */
static void check_attach_start(const struct judging *jd, struct group *p, const struct rspan *g)
{
	const struct window *w = jd->w;

	if (!p->attach)
		p->attach = g->start;
	if (g->start != p->attach)
		fail_msg("PID %d: started_before_recording spans start at %lu and at %lu", g->pid,
			 p->attach, g->start);
	if (in(g->pid, w->initial, 4) && p->late < 0 &&
	    !within(g->start, w->attach_lo, w->attach_hi))
		fail_msg("PID %d: started_before_recording span %s starts at %lu, not "
			 "within the attach [%lu, %lu]",
			 g->pid, g->name, g->start, w->attach_lo, w->attach_hi);
}

/* Every recorded span is a span the target logged, recorded once: the log notes which. */
static void match_recorded(struct judging *jd)
{
	char a[512];

	for (size_t k = 0; k < jd->tr->n; k++) {
		struct rspan *g = &jd->tr->s[k];
		int hit;

		if (g->uncertain)
			fail_msg("span %s of tid %d is uncertain (events lost)", g->name, g->tid);
		if (g->sbr && g->unterm)
			fail_msg("span %s of tid %d [%lu, %lu] is both started_before_recording and "
				 "unterminated: no marker of it could have been recorded",
				 g->name, g->tid, g->start, g->end);
		hit = logged_as(jd->lg, g);
		if (hit < 0)
			fail_not_logged(jd->lg, g);
		if (jd->lg->s[hit].match >= 0) {
			describe(a, sizeof(a), &jd->lg->s[hit]);
			fail_msg("span recorded twice: %s", a);
		}
		jd->lg->s[hit].match = (int)k;
		if (g->sbr)
			check_attach_start(jd, &jd->g[group_of(jd, g->pid, g->name)], g);
	}
}

/* While a process is recorded, its markers see the semaphore set (a: the span described). */
static void check_active(const struct window *w, const struct group *p, const struct lspan *l,
			 const char *a)
{
	for (int k = 0; k < (l->has_exit ? 2 : 1); k++)
		if (l->t[2 * k] >= p->ready && l->t[2 * k + 1] <= w->stop_lo &&
		    (!l->a[2 * k] || !l->a[2 * k + 1]))
			fail_msg("LP_ACTIVE() was 0 at the %s of a span during the recording: %s",
				 k ? "exit" : "enter", a);
}

/*
 * An unterminated span is closed at its thread's exit, at its process's kill, or
 * else at the recording's end.
 */
static void check_unterminated_end(const struct judging *jd, const struct lspan *l,
				   const struct rspan *g, const char *a)
{
	const struct window *w = jd->w;
	struct lthread *th = thread_of(jd->lg, l->pid, l->tid);

	if (th->died && l->tid == w->dead_tid) {
		if (!within(g->end, th->died, w->gone) || g->end >= w->end_ns)
			fail_msg("span of a thread that exited is closed at %lu, not at "
				 "its exit in [%lu, %lu] (recording end %lu): %s",
				 g->end, th->died, w->gone, w->end_ns, a);
	} else if (l->pid == w->killed) {
		if (!within(g->end, w->killed_at, w->end_ns))
			fail_msg("span of a killed process closed at %lu, not in [%lu, "
				 "%lu]: %s",
				 g->end, w->killed_at, w->end_ns, a);
	} else if (!within(g->end, w->end_ns - STAGGER_NS, w->end_ns)) {
		fail_msg("unterminated span closed at %lu, not at the recording's end "
			 "%lu: %s",
			 g->end, w->end_ns, a);
	}
}

/* A recorded span's depth: the recorded ones among its logged ancestors. */
static int recorded_depth(const struct logs *lg, const struct lspan *l)
{
	int depth = 0;

	for (int up = l->parent; up >= 0; up = lg->s[up].parent)
		depth += lg->s[up].match >= 0;
	return depth;
}

/* A logged span whose marker fired is there, in the form its markers allow; v counts it. */
static void check_logged(const struct judging *jd, const struct lspan *l, struct verdict *v)
{
	const struct rspan *g = l->match >= 0 ? &jd->tr->s[l->match] : NULL;
	const struct group *p = &jd->g[group_of(jd, l->pid, l->name)];
	enum state e = marker_state(l, 0, p->ready, jd->w), x = marker_state(l, 1, p->ready, jd->w);
	bool normal_ok, sbr_ok, unterm_ok, ok;
	char a[512], b[256];
	int depth;

	describe(a, sizeof(a), l);
	check_active(jd->w, p, l, a);
	normal_ok = e != NOT && e != NONE && (x == FIRED || x == GRAY);
	sbr_ok = (e == NOT || e == GRAY) && (x == FIRED || x == GRAY);
	unterm_ok = (e == FIRED || e == GRAY) && x != FIRED;
	if (!g) {
		if (e == FIRED || x == FIRED)
			fail_msg("span lost: enter %s, exit %s: %s", state_names[e],
				 state_names[x], a);
		return;
	}
	snprintf(b, sizeof(b), "[%lu, %lu]%s%s", g->start, g->end,
		 g->sbr ? " started_before_recording" : "", g->unterm ? " unterminated" : "");
	ok = g->sbr ? sbr_ok : g->unterm ? unterm_ok : normal_ok;
	if (!ok)
		fail_msg("span recorded as %s, but its enter %s and its exit %s: %s", b,
			 state_names[e], state_names[x], a);
	if (g->unterm)
		check_unterminated_end(jd, l, g, a);
	/* Nested under the recorded ones among its logged ancestors. */
	depth = recorded_depth(jd->lg, l);
	if (g->depth != depth)
		fail_msg("span recorded at depth %d, expected %d: %s", g->depth, depth, a);
	if (g->sbr)
		v->sbr++;
	else if (g->unterm)
		v->unterm++;
	else
		v->normal++;
}

/* Each process and thread is named by its comm. */
static void check_names(const struct judging *jd)
{
	struct trace *tr = jd->tr;

	for (size_t k = 0; k < tr->n; k++) {
		const struct rspan *g = &tr->s[k];
		const char *want = thread_of(jd->lg, g->pid, g->tid)->comm;
		const char *pname = thread_of(jd->lg, g->pid, g->pid)->comm;
		const char *got = trace_name(tr, false, g->pid, g->tid);
		const char *pgot = trace_name(tr, true, g->pid, 0);

		if (!got || strcmp(got, want))
			fail_msg("thread %d is named %s in the trace, its comm is %s", g->tid,
				 got ? got : "(nothing)", want);
		if (*pname && (!pgot || strcmp(pgot, pname)))
			fail_msg("process %d is named %s in the trace, its comm is %s", g->pid,
				 pgot ? pgot : "(nothing)", pname);
	}
}

/*
 * Checks the trace against the logs as the file's header explains; returns the
 * counts of complete, started-before-recording and unterminated spans matched.
 */
static struct verdict judge(struct trace *tr, struct logs *lg, const struct window *w)
{
	struct judging jd = { .tr = tr, .lg = lg, .w = w };
	struct verdict v = { 0 };

	group_logs(&jd);
	for (size_t p = 0; p < jd.n; p++)
		if (jd.g[p].late >= 0)
			check_late_start(&jd, &jd.g[p]);
	match_recorded(&jd);
	for (size_t i = 0; i < lg->n; i++)
		check_logged(&jd, &lg->s[i], &v);
	check_names(&jd);
	print_message("judged %zu logged spans: %zu recorded complete, %zu started before "
		      "recording, %zu unterminated\n",
		      lg->n, v.normal, v.sbr, v.unterm);
	return v;
}

/* Trace and summary agree on the counts; nothing was lost. */
static void check_summary_counts(json_object *sum, struct trace *tr)
{
	assert_int_equal(get_i(sum, "events"), (int64_t)tr->n);
	assert_int_equal(get_i(sum, "started_before_recording"), (int64_t)tr->sbr);
	assert_int_equal(get_i(sum, "unterminated_spans"), (int64_t)tr->unterm);
	assert_int_equal(get_i(get(sum, "lost_events"), "total"), 0);
}

/* Recorded spans of pid named name: complete ones (and all of them). */
static size_t count_spans(struct trace *tr, int pid, const char *name, size_t *all)
{
	size_t n = 0, m = 0;

	for (size_t i = 0; i < tr->n; i++) {
		if (tr->s[i].pid != pid || strcmp(tr->s[i].name, name))
			continue;
		m++;
		n += !tr->s[i].sbr && !tr->s[i].unterm;
	}
	if (all)
		*all = m;
	return n;
}

static bool trace_has_pid(struct trace *tr, int pid)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr->s[i].pid == pid)
			return true;
	return false;
}

/* The recording's window as the summary gives it, bounded by what the test saw. */
static void window_from(struct window *w, json_object *sum, struct lp *p, uint64_t stop_lo)
{
	w->attach_lo = p->t_launch;
	w->attach_hi = p->t_ready ? p->t_ready : p->t_launch;
	w->stop_lo = stop_lo;
	w->stop_hi = p->t_done;
	w->end_ns = (uint64_t)get_i(get(sum, "recording"), "end_ns");
}

static void load_all(struct lp *p, const char *const logs[], struct logs *lg, struct trace *tr)
{
	memset(lg, 0, sizeof(*lg));
	for (int i = 0; logs[i]; i++)
		read_log(lg, logs[i]);
	read_trace(tr, fmt("%s/leanprofiler-trace.json", p->dir));
}

static const char *pid_arg(pid_t pid)
{
	return fmt("%d", (int)pid);
}

/* --- /proc figures of a process, to bound what leanprofiler reports ------------------ */

struct usage {
	uint64_t cpu_ns, vol, invol;
};

static struct usage proc_usage(pid_t pid)
{
	struct usage u = { 0 };
	char *stat = slurp(fmt("/proc/%d/stat", (int)pid), NULL);
	unsigned long ut, st;
	DIR *d;
	struct dirent *de;

	assert_non_null(stat);
	/* Fields 14 and 15 (utime, stime, clock ticks) follow the comm's ')'. */
	assert_int_equal(sscanf(strrchr(stat, ')') + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st),
			 2);
	u.cpu_ns = (ut + st) * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
	free(stat);
	d = opendir(fmt("/proc/%d/task", (int)pid));
	assert_non_null(d);
	while ((de = readdir(d))) {
		char *status, *v;

		if (de->d_name[0] == '.')
			continue;
		status = slurp(fmt("/proc/%d/task/%s/status", (int)pid, de->d_name), NULL);
		if (!status)
			continue; /* the thread is gone */
		if ((v = strstr(status, "\nvoluntary_ctxt_switches:")))
			u.vol += strtoull(v + 25, NULL, 10);
		if ((v = strstr(status, "\nnonvoluntary_ctxt_switches:")))
			u.invol += strtoull(v + 28, NULL, 10);
		free(status);
	}
	closedir(d);
	return u;
}

static uint64_t proc_hwm_kib(pid_t pid)
{
	char *status = slurp(fmt("/proc/%d/status", (int)pid), NULL), *v;
	uint64_t kib;

	assert_non_null(status);
	v = strstr(status, "\nVmHWM:");
	assert_non_null(v);
	kib = strtoull(v + 7, NULL, 10);
	free(status);
	return kib;
}

/* --- the tests ------------------------------------------------------------------------ */

/*
 * Attach to a busy multi-threaded service mid-span, record until SIGINT: every span
 * of the window is there exactly, those open at attach as started_before_recording,
 * those open at the end as unterminated; resources are the window's; detaching
 * leaves the service running with its semaphore back at 0.
 */
static void test_attach_mid_span(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	struct verdict v;
	struct usage u0, u1, u2, u3;
	json_object *sum, *res;
	uint64_t t_sig, tick = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK), cpu, hwm;
	size_t all;

	(void)state;
	svc_start(&s, "svc", "mid");
	/* Lifetime CPU and memory the window must not count: 300 ms, 32 MiB. */
	svc_expect(&s, "burn 300", "ok");
	svc_expect(&s, "touch 32", "ok");
	svc_expect(&s, "workers 3", "ok");
	u0 = proc_usage(s.pid);
	lp_start(&p, "mid", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	u1 = proc_usage(s.pid);
	svc_expect(&s, "wait-active", "active");
	assert_int_not_equal(read_sem(s.pid, s.sem), 0);
	svc_expect(&s, "wait-outer 2", "ok");
	svc_expect(&s, "spans 20", "ok");
	u2 = proc_usage(s.pid);
	lp_stop(&p, SIGINT, &t_sig);
	u3 = proc_usage(s.pid);
	hwm = proc_hwm_kib(s.pid);
	expect_status(&p, 0);
	/* Detached: the service still runs, its semaphore back to 0. */
	svc_expect(&s, "wait-inactive", "inactive");
	assert_int_equal(read_sem(s.pid, s.sem), 0);
	svc_expect(&s, "ping", "pong");
	svc_quit(&s);

	sum = summary_of(p.dir);
	assert_string_equal(get_s(sum, "mode"), "attach");
	assert_int_equal(json_object_array_length(get(sum, "processes")), 1);
	expect_process(sum, s.pid, getpid(), "attached", "svc");
	expect_recording(sum, "signal", p.t_launch, p.t_ready, t_sig, p.t_done);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = s.pid;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	v = judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	/* Workers are always inside worker.outer: some were open at attach and at the end. */
	assert_true(v.sbr >= 1);
	assert_true(v.unterm >= 1);
	assert_int_equal(count_spans(&tr, s.pid, "main.span", &all), 20);
	assert_int_equal(all, 20);
	/* Every worker completed at least one whole outer span inside the window. */
	assert_true(count_spans(&tr, s.pid, "worker.outer", NULL) >= 3);

	/* Resources: the attached process's, over the window only. */
	res = get(sum, "resources");
	assert_true(json_object_get_boolean(get(res, "available")));
	assert_true(strlen(get_s(res, "scope")) > 0);
	cpu = (uint64_t)get_i(res, "user_cpu_ns") + (uint64_t)get_i(res, "system_cpu_ns");
	if (cpu + 2 * tick < u2.cpu_ns - u1.cpu_ns || cpu > u3.cpu_ns - u0.cpu_ns + 2 * tick)
		fail_msg("CPU %lu ns: not between %lu (inside the window) and %lu (around it); "
			 "the process's lifetime is %lu",
			 cpu, u2.cpu_ns - u1.cpu_ns, u3.cpu_ns - u0.cpu_ns, u3.cpu_ns);
	if ((uint64_t)get_i(res, "voluntary_context_switches") < u2.vol - u1.vol ||
	    (uint64_t)get_i(res, "voluntary_context_switches") > u3.vol - u0.vol)
		fail_msg("voluntary context switches %ld: not between %lu and %lu",
			 (long)get_i(res, "voluntary_context_switches"), u2.vol - u1.vol,
			 u3.vol - u0.vol);
	assert_true((uint64_t)get_i(res, "involuntary_context_switches") <= u3.invol - u0.invol);
	/* Peak RSS is the process's own high-water mark: at least the 32 MiB it touched. */
	if (get_i(res, "peak_rss_kib") < 32 * 1024 || (uint64_t)get_i(res, "peak_rss_kib") > hwm)
		fail_msg("peak RSS %ld KiB: not between the 32 MiB touched and VmHWM %lu KiB",
			 (long)get_i(res, "peak_rss_kib"), hwm);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/* --duration ends the recording by itself; leanprofiler exits 0 and detaches. */
static void test_attach_duration(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum, *rec;
	uint64_t len;

	(void)state;
	svc_start(&s, "svc", "duration");
	svc_expect(&s, "workers 2", "ok");
	lp_start(&p, "duration", (const char *[]){ "-p", pid_arg(s.pid), "--duration", "1", NULL });
	lp_wait_recording(&p);
	svc_expect(&s, "wait-active", "active");
	lp_finish(&p, EXIT_MS);
	expect_status(&p, 0);
	svc_expect(&s, "wait-inactive", "inactive");
	assert_int_equal(read_sem(s.pid, s.sem), 0);
	svc_quit(&s);

	sum = summary_of(p.dir);
	rec = get(sum, "recording");
	assert_string_equal(get_s(rec, "end_reason"), "duration");
	len = (uint64_t)get_i(rec, "end_ns") - (uint64_t)get_i(rec, "start_ns");
	if (len < 1000000000ULL || len > 1250000000ULL)
		fail_msg("--duration 1 recorded for %lu ns", len);
	expect_recording(sum, "duration", p.t_launch, p.t_ready, p.t_launch + 1000000000ULL,
			 p.t_done);
	/* Whatever fired before the end it reports must be there. */
	window_from(&w, sum, &p, (uint64_t)get_i(rec, "end_ns"));
	w.initial[0] = s.pid;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	assert_true(count_spans(&tr, s.pid, "worker.inner", NULL) >= 100);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/*
 * A thread started after attaching is recorded from its first span; a thread that
 * exits mid-span has its open spans closed at its exit, before the recording ends.
 */
static void test_attach_new_threads(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig, gone = 0;
	int new_tid = 0, dying_tid = 0;
	size_t all, n;

	(void)state;
	svc_start(&s, "svc", "threads");
	svc_expect(&s, "workers 1", "ok");
	lp_start(&p, "threads", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	assert_int_equal(sscanf(svc_cmd(&s, "thread"), "ok tid=%d", &new_tid), 1);
	svc_expect(&s, "wait-outer 2", "ok");
	assert_int_equal(sscanf(svc_cmd(&s, "dying"), "ok tid=%d gone=%lu", &dying_tid, &gone), 2);
	svc_expect(&s, "spans 5", "ok"); /* the recording goes on after the thread's exit */
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);
	svc_quit(&s);

	sum = summary_of(p.dir);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = s.pid;
	w.dead_tid = dying_tid;
	w.gone = gone;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	/* The new thread: two whole outer spans at least, from its very first span. */
	n = 0;
	for (size_t i = 0; i < tr.n; i++)
		if (tr.s[i].tid == new_tid) {
			assert_false(tr.s[i].sbr);
			n++;
		}
	assert_true(n >= 2 * 21);
	for (size_t i = 0; i < lg.n; i++)
		if (lg.s[i].tid == new_tid && lg.s[i].id == 0)
			assert_true(lg.s[i].match >= 0);
	/* The dying thread: both spans, unterminated (the judge checked when they end). */
	assert_int_equal(count_spans(&tr, s.pid, "dying.outer", &all), 0);
	assert_int_equal(all, 1);
	assert_int_equal(count_spans(&tr, s.pid, "dying.inner", &all), 0);
	assert_int_equal(all, 1);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/*
 * -p follows a fork (every span of the child) and an exec of another marked program;
 * the recording ends when the target exits.
 */
static void test_attach_fork_and_exec(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig;
	int child = 0, execd = 0, st = -1;
	size_t all;

	(void)state;
	svc_start(&s, "svc", "fork");
	lp_start(&p, "fork", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	svc_expect(&s, "spans 5", "ok"); /* the parent's markers have fired before it forks */
	assert_int_equal(sscanf(svc_cmd(&s, "fork 20"), "ok pid=%d status=%d", &child, &st), 2);
	assert_int_equal(st, 0);
	assert_int_equal(sscanf(svc_cmd(&s, "exec 200"), "ok pid=%d status=%d", &execd, &st), 2);
	assert_int_equal(st, 0);
	t_sig = now_ns(); /* every marker has run; svc exits after this */
	svc_quit(&s);
	lp_finish(&p, EXIT_MS);
	expect_status(&p, 0);

	sum = summary_of(p.dir);
	assert_string_equal(get_s(sum, "mode"), "attach");
	expect_recording(sum, "targets exited", p.t_launch, p.t_ready, t_sig, p.t_done);
	expect_process(sum, s.pid, getpid(), "attached", "svc");
	expect_process(sum, child, s.pid, "forked", "svc");
	expect_process(sum, execd, s.pid, "forked", NULL);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = s.pid;
	w.late[0].pid = execd;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	assert_int_equal(count_spans(&tr, child, "fork.child", &all), 20);
	assert_int_equal(all, 20);
	assert_int_equal(count_spans(&tr, child, "fork.leaf", &all), 20);
	assert_int_equal(all, 20);
	/* 200 steps of ~0.6 ms, the first 50 ms may be missed. */
	assert_true(count_spans(&tr, execd, "second.step", NULL) >= 100);
	assert_string_equal(trace_name(&tr, true, execd, 0), "second");
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/* Markers in a shared library the process had linked when it was attached. */
static void test_attach_linked_library(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig;
	size_t all;

	(void)state;
	svc_start(&s, "svc-linked", "linked");
	assert_true(s.libsem != 0);
	lp_start(&p, "linked", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	assert_int_not_equal(read_sem(s.pid, s.libsem), 0);
	svc_expect(&s, "lib 30", "ok probed=1");
	svc_expect(&s, "spans 5", "ok");
	lp_stop(&p, SIGTERM, &t_sig); /* like Ctrl-C */
	expect_status(&p, 0);
	svc_expect(&s, "wait-inactive", "inactive");
	assert_int_equal(read_sem(s.pid, s.libsem), 0);
	svc_quit(&s);

	sum = summary_of(p.dir);
	expect_recording(sum, "signal", p.t_launch, p.t_ready, t_sig, p.t_done);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = s.pid;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	assert_int_equal(count_spans(&tr, s.pid, "lib.span", &all), 30);
	assert_int_equal(all, 30);
	assert_int_equal(count_spans(&tr, s.pid, "lib.leaf", &all), 30);
	assert_int_equal(count_spans(&tr, s.pid, "main.span", &all), 5);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/* A library dlopen'ed after attaching is probed, and its spans recorded. */
static void test_attach_dlopen(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig;
	size_t all;

	(void)state;
	svc_start(&s, "svc", "dlopen");
	lp_start(&p, "dlopen", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	svc_expect(&s, "dlopen 3000", "ok probed=1"); /* ~0.1 s of library spans */
	svc_expect(&s, "spans 5", "ok");
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);
	svc_expect(&s, "wait-inactive", "inactive");
	svc_quit(&s);

	sum = summary_of(p.dir);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = s.pid;
	w.late[0].pid = s.pid;
	w.late[0].prefix = "lib.";
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	/* All from the first marker on (the judge saw to that: the process waited for the attach). */
	assert_true(count_spans(&tr, s.pid, "lib.span", &all) >= 1500);
	assert_int_equal(count_spans(&tr, s.pid, "main.span", &all), 5);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/*
 * The target is SIGKILLed mid-recording (its workers parked inside spans): the
 * recording ends by itself with what was recorded, files written, exit 0.
 */
static void test_attach_target_killed(void **state)
{
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_kill;
	struct verdict v;

	(void)state;
	svc_start(&s, "svc", "killed");
	svc_expect(&s, "workers 3", "ok");
	lp_start(&p, "killed", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	svc_expect(&s, "wait-outer 1", "ok");
	svc_expect(&s, "freeze", "ok");
	t_kill = now_ns();
	assert_int_equal(kill(s.pid, SIGKILL), 0);
	assert_int_equal(wait_exit_within(s.pid, EXIT_MS), 128 + SIGKILL);
	lp_finish(&p, EXIT_MS);
	expect_status(&p, 0);

	sum = summary_of(p.dir);
	expect_recording(sum, "targets exited", p.t_launch, p.t_ready, t_kill, p.t_done);
	window_from(&w, sum, &p, t_kill);
	w.initial[0] = s.pid;
	w.killed = s.pid;
	w.killed_at = t_kill;
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	v = judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	/* Each parked worker: its outer and inner span, closed at the kill. */
	assert_int_equal(v.unterm, 6);
	assert_true(v.normal >= 3);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/* leanprofiler SIGKILLed: the target keeps running, its semaphores back to 0. */
static void test_profiler_killed(void **state)
{
	struct svc s;
	struct lp p;

	(void)state;
	svc_start(&s, "svc-linked", "lpkilled");
	svc_expect(&s, "workers 2", "ok");
	lp_start(&p, "lpkilled", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	svc_expect(&s, "wait-active", "active");
	assert_int_not_equal(read_sem(s.pid, s.sem), 0);
	assert_int_not_equal(read_sem(s.pid, s.libsem), 0);
	svc_expect(&s, "wait-outer 1", "ok");
	assert_int_equal(kill(p.pid, SIGKILL), 0);
	lp_finish(&p, EXIT_MS);
	assert_int_equal(p.status, 128 + SIGKILL);
	svc_expect(&s, "ping", "pong");
	svc_expect(&s, "wait-inactive", "inactive");
	assert_int_equal(read_sem(s.pid, s.sem), 0);
	assert_int_equal(read_sem(s.pid, s.libsem), 0);
	svc_expect(&s, "wait-outer 1", "ok"); /* its workers still run */
	svc_quit(&s);
}

/*
 * --all-processes BINARY: a process of BINARY already running and one started
 * after the recording began are both recorded; a process of another binary is not.
 */
static void test_all_processes(void **state)
{
	struct svc a, b, c;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig;
	size_t all;

	(void)state;
	svc_start(&a, "svc", "all-a");
	svc_start(&c, "svc-linked", "all-c"); /* another binary: a bystander */
	lp_start(&p, "all",
		 (const char *[]){ "--all-processes", fmt("%s/tests/targets/svc", build), NULL });
	lp_wait_recording(&p);
	svc_expect(&a, "wait-active", "active");
	svc_expect(&a, "spans 30", "ok");
	svc_start(&b, "svc", "all-b");
	svc_expect(&b, "wait-active", "active");
	svc_expect(&b, "spans 30", "ok");
	svc_expect(&c, "spans 30", "ok");
	assert_int_equal(read_sem(c.pid, c.sem), 0);
	svc_quit(&b);
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);
	svc_expect(&a, "wait-inactive", "inactive");
	svc_quit(&a);
	svc_quit(&c);

	sum = summary_of(p.dir);
	assert_string_equal(get_s(sum, "mode"), "all-processes");
	expect_process(sum, a.pid, getpid(), "attached|found", "svc");
	expect_process(sum, b.pid, getpid(), "found", "svc");
	assert_null(find_process(sum, c.pid));
	expect_recording(sum, "signal", p.t_launch, p.t_ready, t_sig, p.t_done);
	window_from(&w, sum, &p, t_sig);
	w.initial[0] = a.pid;
	load_all(&p, (const char *[]){ a.log, b.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	assert_int_equal(count_spans(&tr, a.pid, "main.span", &all), 30);
	assert_int_equal(all, 30);
	assert_int_equal(count_spans(&tr, b.pid, "main.span", &all), 30);
	assert_int_equal(all, 30);
	assert_false(trace_has_pid(&tr, c.pid));
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

/* -p of a PID that does not exist: exit 125, one line on stderr, nothing on stdout. */
static void test_attach_no_such_pid(void **state)
{
	struct lp p;
	pid_t gone = fork();
	char *out, *nl;

	(void)state;
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone); /* reaped: the PID is free */
	lp_start(&p, "nopid", (const char *[]){ "-p", pid_arg(gone), NULL });
	lp_finish(&p, EXIT_MS);
	expect_status(&p, 125);
	nl = strchr(p.err->all, '\n');
	if (!nl || nl[1] != '\0' || !strstr(p.err->all, pid_arg(gone)))
		fail_msg("expected one line naming PID %d on stderr, got:\n%s", (int)gone,
			 p.err->all);
	out = slurp(p.stdout_path, NULL);
	assert_string_equal(out, "");
	free(out);
}

/* --- bystanders: processes of the same binary not recorded ----------------------- */

/* n bytes at addr in pid, read through /proc/PID/mem. */
static void read_mem(pid_t pid, uintptr_t addr, void *buf, size_t n)
{
	char *p = fmt("/proc/%d/mem", (int)pid);
	int fd = open(p, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)addr), (ssize_t)n);
	close(fd);
	free(p);
}

/* svc's own probe sites: span_enter's and span_exit's, then their forked child's. */
static void svc_sites(struct svc *s, uintptr_t site[4])
{
	void *a[4] = { NULL };

	assert_int_equal(sscanf(svc_cmd(s, "sites"), "sites enter=%p exit=%p enter_forked=%p "
						     "exit_forked=%p",
				&a[0], &a[1], &a[2], &a[3]),
			 4);
	for (int i = 0; i < 4; i++)
		site[i] = (uintptr_t)a[i];
}

/*
 * Whether any of pid's probe sites holds something else than the nop the
 * header put there: the kernel writes a breakpoint (int3) into a process's
 * memory at each site a link covers for it, and rewrites a hit nop5 into a call.
 */
static bool sites_written(pid_t pid, const uintptr_t site[4])
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	unsigned char b[5];

	for (int i = 0; i < 2; i++) {
		read_mem(pid, site[i], b, sizeof(b));
		if (memcmp(b, nop5, sizeof(b)))
			return true;
	}
	for (int i = 2; i < 4; i++) {
		read_mem(pid, site[i], b, 1);
		if (b[0] != 0x90)
			return true;
	}
	return false;
}

/* Whether pid has the pages the kernel maps once it handled a uprobe hit there. */
static bool has_uprobe_pages(pid_t pid)
{
	char *maps = slurp(fmt("/proc/%d/maps", (int)pid), NULL);
	bool has = strstr(maps, "[uprobes") != NULL;

	free(maps);
	return has;
}

/* How many markers the log at path says pid ran with LP_ACTIVE() set (before or after). */
static int active_markers(const char *path, pid_t pid)
{
	char *log = slurp(path, NULL), *line = log, *next;
	int n = 0;

	for (; line && *line; line = next) {
		int lpid = 0, a1 = 0, a2 = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if ((line[0] == 'E' &&
		     sscanf(line, "E %d %*d %*d %*d %*d %*u %*u %d %d", &lpid, &a1, &a2) == 3) ||
		    (line[0] == 'X' && sscanf(line, "X %d %*d %*d %*u %*u %d %d", &lpid, &a1, &a2) == 3))
			n += lpid == pid && (a1 || a2);
	}
	free(log);
	return n;
}

/*
 * One of two processes of one binary recorded with -p: probes are linked to
 * it alone. The other, a bystander, takes none of them: its semaphore stays 0
 * (its markers call nothing), its sites keep their nops (no breakpoint is
 * written into its memory), the kernel never handles a uprobe hit in it (no
 * [uprobes] page), and neither it nor the child it forks is recorded or
 * paused. The target's own sites do get breakpoints (the checks can fail).
 */
static void test_bystander_untouched(void **state)
{
	struct svc a, b;
	struct lp p;
	uintptr_t sa[4], sb[4];
	json_object *sum;
	struct logs lg;
	struct trace tr;
	uint64_t t_sig;
	int child = 0, st = -1;

	(void)state;
	svc_start(&a, "svc", "target");
	svc_start(&b, "svc", "bystander");
	svc_sites(&a, sa);
	svc_sites(&b, sb);
	assert_false(sites_written(a.pid, sa));
	lp_start(&p, "bystander", (const char *[]){ "-p", pid_arg(a.pid), NULL });
	lp_wait_recording(&p);
	svc_expect(&a, "wait-active", "active");
	svc_expect(&a, "spans 20", "ok");
	svc_expect(&b, "spans 20", "ok");
	assert_int_equal(sscanf(svc_cmd(&b, "fork 5"), "ok pid=%d status=%d", &child, &st), 2);
	assert_int_equal(st, 0);
	assert_true(read_sem(a.pid, a.sem) > 0);
	assert_true(sites_written(a.pid, sa));
	assert_int_equal(read_sem(b.pid, b.sem), 0);
	assert_false(sites_written(b.pid, sb));
	assert_false(has_uprobe_pages(b.pid));
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);

	sum = summary_of(p.dir);
	assert_true(json_object_get_boolean(json_object_object_get(
		json_object_object_get(sum, "profiler"), "pid_filtered")));
	assert_non_null(find_process(sum, a.pid));
	assert_null(find_process(sum, b.pid));
	assert_null(find_process(sum, child));
	assert_int_equal(get_i(json_object_object_get(sum, "profiler"), "processes_paused"), 0);
	load_all(&p, (const char *[]){ a.log, NULL }, &lg, &tr);
	assert_int_equal(count_spans(&tr, a.pid, "main.span", NULL), 20);
	assert_false(trace_has_pid(&tr, b.pid));
	assert_false(trace_has_pid(&tr, child));
	/* Its markers, its child's too, saw LP_ACTIVE() 0 all along: 20 + 5 spans, 2 markers each. */
	assert_int_equal(active_markers(b.log, b.pid), 0);
	assert_int_equal(active_markers(b.log, child), 0);
	json_object_put(sum);
	svc_quit(&a);
	svc_quit(&b);
}

/*
 * The same with pid filtering off (LEANPROFILER_PID_FILTER=0, as on a kernel
 * without it): links for every process, so the bystander's semaphore rises and
 * its sites get breakpoints; it is still not recorded (the kernel half keeps
 * only targets' events).
 */
static void test_bystander_file_wide(void **state)
{
	struct svc a, b;
	struct lp p;
	uintptr_t sb[4];
	json_object *sum;
	uint64_t t_sig;

	(void)state;
	svc_start(&a, "svc", "target-fw");
	svc_start(&b, "svc", "bystander-fw");
	svc_sites(&b, sb);
	setenv("LEANPROFILER_PID_FILTER", "0", 1);
	lp_start(&p, "bystander-fw", (const char *[]){ "-p", pid_arg(a.pid), NULL });
	unsetenv("LEANPROFILER_PID_FILTER");
	lp_wait_recording(&p);
	svc_expect(&a, "wait-active", "active");
	svc_expect(&b, "wait-active", "active");
	svc_expect(&b, "spans 20", "ok");
	assert_true(read_sem(b.pid, b.sem) > 0);
	assert_true(sites_written(b.pid, sb));
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);
	sum = summary_of(p.dir);
	assert_false(json_object_get_boolean(json_object_object_get(
		json_object_object_get(sum, "profiler"), "pid_filtered")));
	assert_null(find_process(sum, b.pid));
	json_object_put(sum);
	svc_quit(&a);
	svc_quit(&b);
}

/*
 * Forks of a -p target, each child running its first span right after fork():
 * every child is paused at its fork until its own links are made, so each
 * child's first span is recorded, and the profiler says so (processes paused).
 */
static void test_attach_forks_paused(void **state)
{
	enum { FORKS = 40 };
	struct svc s;
	struct lp p;
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_sig;
	int child[FORKS], st = -1;

	(void)state;
	svc_start(&s, "svc", "forks");
	lp_start(&p, "forks", (const char *[]){ "-p", pid_arg(s.pid), NULL });
	lp_wait_recording(&p);
	for (int i = 0; i < FORKS; i++) {
		assert_int_equal(sscanf(svc_cmd(&s, "fork 1"), "ok pid=%d status=%d", &child[i], &st),
				 2);
		assert_int_equal(st, 0);
	}
	lp_stop(&p, SIGINT, &t_sig);
	expect_status(&p, 0);
	sum = summary_of(p.dir);
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	for (int i = 0; i < FORKS; i++) {
		size_t all = 0;

		expect_process(sum, child[i], s.pid, "forked", "svc");
		if (count_spans(&tr, child[i], "fork.child", &all) != 1 || all != 1)
			fail_msg("child %d of %d (PID %d): its one fork.child span is not recorded "
				 "once",
				 i + 1, FORKS, child[i]);
	}
	/* This machine's kernel (6.18) links each process by itself: each child was paused. */
	assert_true(json_object_get_boolean(json_object_object_get(
		json_object_object_get(sum, "profiler"), "pid_filtered")));
	assert_true(get_i(json_object_object_get(sum, "profiler"), "processes_paused") >= FORKS);
	json_object_put(sum);
	svc_quit(&s);
}

/* Launch mode follows the command's forks, its dlopen() and an exec of another marked program. */
static void test_launch_follows_fork_and_exec(void **state)
{
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE };
	struct svc s;
	struct lp p;
	struct window w = { 0 };
	struct logs lg;
	struct trace tr;
	json_object *sum;
	uint64_t t_bye;
	int child = 0, execd = 0, st = -1;
	size_t all;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.log = fmt("%s/launch.log", tmpdir);
	unlink(s.log);
	lp_start_io(&p, "launch",
		    (const char *[]){ "--", fmt("%s/tests/targets/svc", build), s.log, NULL }, &in,
		    &out);
	s.in = in.fd;
	s.out = lines_new(out.fd);
	svc_hello(&s);
	svc_expect(&s, "spans 10", "ok");
	svc_expect(&s, "dlopen 3000", "ok probed=1");
	assert_int_equal(sscanf(svc_cmd(&s, "fork 20"), "ok pid=%d status=%d", &child, &st), 2);
	assert_int_equal(st, 0);
	assert_int_equal(sscanf(svc_cmd(&s, "exec 200"), "ok pid=%d status=%d", &execd, &st), 2);
	assert_int_equal(st, 0);
	t_bye = now_ns(); /* every marker has run; svc exits after this */
	svc_expect(&s, "quit", "bye");
	lines_drain(s.out, EXIT_MS); /* the table follows on the same stdout */
	lp_finish(&p, EXIT_MS);
	expect_status(&p, 0);

	sum = summary_of(p.dir);
	assert_string_equal(get_s(sum, "mode"), "launch");
	expect_process(sum, s.pid, p.pid, "launched", "svc");
	expect_process(sum, child, s.pid, "forked", "svc");
	expect_process(sum, execd, s.pid, "forked", NULL);
	expect_recording(sum, "command exited", p.t_launch, t_bye, t_bye, p.t_done);
	window_from(&w, sum, &p, t_bye);
	w.late[0].pid = execd;
	w.late[1].pid = s.pid;
	w.late[1].prefix = "lib.";
	load_all(&p, (const char *[]){ s.log, NULL }, &lg, &tr);
	judge(&tr, &lg, &w);
	check_summary_counts(sum, &tr);
	/* Probed before its first instruction: only late starters have spans open at attach. */
	for (size_t i = 0; i < tr.n; i++)
		if (tr.s[i].sbr && tr.s[i].pid != execd && strncmp(tr.s[i].name, "lib.", 4))
			fail_msg("%s of PID %d started before recording", tr.s[i].name, tr.s[i].pid);
	assert_int_equal(count_spans(&tr, s.pid, "main.span", &all), 10);
	assert_true(count_spans(&tr, s.pid, "lib.span", &all) >= 1500);
	assert_int_equal(count_spans(&tr, child, "fork.child", &all), 20);
	assert_int_equal(all, 20);
	assert_true(count_spans(&tr, execd, "second.step", NULL) >= 100);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", p.dir));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_attach_mid_span, stop_started),
		cmocka_unit_test_teardown(test_attach_duration, stop_started),
		cmocka_unit_test_teardown(test_attach_new_threads, stop_started),
		cmocka_unit_test_teardown(test_attach_fork_and_exec, stop_started),
		cmocka_unit_test_teardown(test_attach_linked_library, stop_started),
		cmocka_unit_test_teardown(test_attach_dlopen, stop_started),
		cmocka_unit_test_teardown(test_attach_target_killed, stop_started),
		cmocka_unit_test_teardown(test_profiler_killed, stop_started),
		cmocka_unit_test_teardown(test_all_processes, stop_started),
		cmocka_unit_test_teardown(test_attach_no_such_pid, stop_started),
		cmocka_unit_test_teardown(test_launch_follows_fork_and_exec, stop_started),
		cmocka_unit_test_teardown(test_bystander_untouched, stop_started),
		cmocka_unit_test_teardown(test_bystander_file_wide, stop_started),
		cmocka_unit_test_teardown(test_attach_forks_paused, stop_started),
	};

	if (argc > 1)
		build = argv[1];
	/* Under `sudo make check` the targets would run as the invoking user: not here. */
	if (!itest_as_root("test_attach"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	/* Our children's output pipes must not kill us when a child is gone. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
