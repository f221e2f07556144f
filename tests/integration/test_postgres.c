// SPDX-License-Identifier: MIT
/*
 * The postgresql preset on Debian's PostgreSQL 15: a throwaway cluster in a
 * temporary directory (as user postgres, else nobody), listening only on a
 * unix socket there, with pg_stat_statements loaded, recorded with
 * --all-processes while clients run as PostgreSQL's users run them:
 *  - psql -f (the simple protocol): plain statements, one that fails, a
 *    transaction that commits, one that rolls back, one that fails inside, a
 *    sort. One `statement` span per statement with its SQL, its phases inside,
 *    the transactions on keyed tracks around them.
 *  - a libpq program (tests/targets/pgclient.c): PQexecParams, PQprepare and
 *    PQexecPrepared, failures followed by the client's idle, ROLLBACK after a
 *    failure and a healthy one, a pipeline. The same, over the extended protocol.
 *  - pgbench -M extended and -M prepared: one statement span per statement
 *    pgbench ran, as many as its transactions times the script's statements.
 * Each time the rows, grouped by normalized statement, are compared with what
 * pg_stat_statements counted on the same workload (its `query` and `calls`).
 * A lock wait: one session holds a table lock while another's statement waits
 * for it, the wait one `lock wait` span inside that statement, covering the
 * time the test saw it wait, with the lock's fields. Also: a probe libbpf
 * cannot decode is skipped with a warning. Needs root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-pg-XXXXXX";

#include "itest.h"

#define PGBIN "/usr/lib/postgresql/15/bin"
#define PSQL "/usr/bin/psql"
#define PGBENCH "/usr/bin/pgbench"
#define DB "lpwork" /* the workloads' database: pg_stat_statements' rows are filtered by it */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TRACK_BIT 0x40000000 /* user/core/pairs.h LP_TRACK_BIT */
#define TRACK_REAL(t) ((t) & 0x3fffff)
#define WAIT_MS 30000 /* for the server to accept, and the recording to start */
#define IDLE_MS 300   /* the client's pause after a failed statement */
#define PGBENCH_TX 60 /* pgbench's transactions: 7 statements each (its tpcb-like script) */

static uid_t pg_uid = 65534;
static gid_t pg_gid = 65534;
static pid_t postmaster = -1;

/* The workload, one statement a line, as psql -f sends them. */
static const char *const workload[] = {
	"select 'lp first';",
	"select 1/0;", /* fails while planning: never fires query__done */
	"select 'after the error';",
	"begin;",
	"select count(*) from pg_class;",
	"select 'inside commit';",
	"commit;",
	"begin;",
	"select 'inside rollback';",
	"rollback;",
	"begin;",
	"select * from no_such_table;", /* fails inside a transaction: aborts it */
	"rollback;",
	"select g from generate_series(1, 20000) g order by g desc limit 3;",
};
#define NQUERIES (sizeof(workload) / sizeof(workload[0]))

/* Runs argv as the cluster's owner with output to log; its PID (not waited for). */
static pid_t spawn_as_owner(char *const argv[], const char *log)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || setgroups(0, NULL) || setgid(pg_gid) || setuid(pg_uid))
			_exit(98);
		dup2(fd, 1);
		dup2(fd, 2);
		if (chdir(tmpdir))
			_exit(98);
		execv(argv[0], argv);
		_exit(99);
	}
	return pid;
}

/* True once the server accepts a connection on its socket. */
static bool accepts(const char *sock)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * True once the server takes sessions: its socket accepts connections while
 * it is still starting up ("the database system is starting up").
 */
static bool ready(const char *sock)
{
	char *argv[] = { PGBIN "/pg_isready", "-q", "-h", (char *)sock, "-U", "lp", "-d", "postgres",
			 NULL };
	struct run r;
	bool ok = run(&r, argv) == 0 && r.status == 0;

	run_free(&r);
	return ok;
}

/* Runs argv (a client, as root over the socket), which must succeed; -1 if not. */
static int setup_run(char *const argv[])
{
	struct run r;

	if (run(&r, argv) || r.status != 0) {
		printf("FAILED: %s exited %d:\n%s%s\n", argv[0], r.status, r.out ? r.out : "",
		       r.err ? r.err : "");
		return -1;
	}
	run_free(&r);
	return 0;
}

/* pg_stat_statements in the postgres database; DB for the workloads, with pgbench's tables. */
static int prepare_databases(void)
{
	char *sock = fmt("%s/sock", tmpdir);
	char *ext[] = { PSQL, "-X", "-q", "-h", sock, "-U", "lp", "-d", "postgres", "-c",
			"create extension pg_stat_statements", "-c", "create database " DB, NULL };
	char *init[] = { PGBENCH, "-i", "-q", "-s", "1", "-h", sock, "-U", "lp", DB, NULL };

	return setup_run(ext) || setup_run(init) ? -1 : 0;
}

/* The cluster: initdb, then postgres itself, on a socket in tmpdir only. */
static int start_cluster(void **state)
{
	char *data = fmt("%s/data", tmpdir), *sock = fmt("%s/sock", tmpdir);
	char *initdb[] = { PGBIN "/initdb", "-D", data, "-U", "lp", "-A", "trust", "--no-sync",
			   NULL };
	char *postgres[] = { PGBIN "/postgres", "-D", data, "-c", "listen_addresses=", "-k", sock,
			     "-c", "fsync=off", "-c", "autovacuum=off", "-c",
			     "shared_preload_libraries=pg_stat_statements", NULL };
	struct passwd *pw = getpwnam("postgres");
	pid_t pid;
	int rc;

	(void)state;
	if (pw) {
		pg_uid = pw->pw_uid;
		pg_gid = pw->pw_gid;
	}
	if (chown(tmpdir, pg_uid, pg_gid) || mkdir(sock, 0700) || chown(sock, pg_uid, pg_gid)) {
		printf("FAILED: cannot prepare %s: %s\n", tmpdir, strerror(errno));
		return -1;
	}
	pid = spawn_as_owner(initdb, fmt("%s/initdb.log", tmpdir));
	rc = wait_exit(pid);
	if (rc != 0) {
		char *log = slurp(fmt("%s/initdb.log", tmpdir), NULL);

		printf("FAILED: initdb exited %d:\n%s\n", rc, log ? log : "");
		return -1;
	}
	postmaster = spawn_as_owner(postgres, fmt("%s/postgres.log", tmpdir));
	for (int i = 0; i < WAIT_MS / 10; i++) {
		if (accepts(fmt("%s/.s.PGSQL.5432", sock)) && ready(sock))
			return prepare_databases();
		if (waitpid(postmaster, NULL, WNOHANG) == postmaster) {
			char *log = slurp(fmt("%s/postgres.log", tmpdir), NULL);

			postmaster = -1;
			printf("FAILED: postgres exited:\n%s\n", log ? log : "");
			return -1;
		}
		wait_ms(10);
	}
	printf("FAILED: postgres does not accept connections on %s\n", sock);
	return -1;
}

static int stop_cluster(void **state)
{
	(void)state;
	if (postmaster > 0) {
		kill(postmaster, SIGINT); /* fast shutdown, as pg_ctl stop -m fast */
		wait_exit(postmaster);
		postmaster = -1;
	}
	{
		/* The cluster is some 40 MB: nothing of it is kept. */
		char *rm[] = { "/bin/rm", "-rf", tmpdir, NULL };
		pid_t pid = fork();

		if (pid == 0) {
			execv(rm[0], rm);
			_exit(99);
		}
		if (pid > 0)
			wait_exit(pid);
	}
	return 0;
}

struct span {
	double ts, end; /* microseconds after the trace's base_ns */
	int64_t pid, tid;
	bool unterminated, before; /* before: began before the recording */
	const char *query;	   /* metadata: the normalized statement */
	const char *sql;	   /* detail: the statement as sent */
	json_object *args;
};

static struct span span_of(json_object *e)
{
	struct span s = { 0 };
	json_object *args, *v, *d;

	s.ts = json_object_get_double(get(e, "ts"));
	s.end = s.ts + json_object_get_double(get(e, "dur"));
	s.pid = json_object_get_int64(get(e, "pid"));
	s.tid = json_object_get_int64(get(e, "tid"));
	if (json_object_object_get_ex(e, "args", &args)) {
		s.args = args;
		s.unterminated = json_object_object_get_ex(args, "unterminated", &v) &&
				 json_object_get_boolean(v);
		s.before = json_object_object_get_ex(args, "started_before_recording", &v) &&
			   json_object_get_boolean(v);
		if (json_object_object_get_ex(args, "query", &v))
			s.query = json_object_get_string(v);
		if (json_object_object_get_ex(args, "detail", &d) &&
		    json_object_object_get_ex(d, "sql", &v))
			s.sql = json_object_get_string(v);
	}
	return s;
}

/* The complete events named name, in order of start (allocated; *n: how many). */
static struct span *spans(json_object *trace, const char *name, size_t *n)
{
	json_object *evs = get(trace, "traceEvents");
	size_t len = json_object_array_length(evs), k = 0;
	struct span *out = calloc(len + 1, sizeof(*out));

	assert_non_null(out);
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (strcmp(json_object_get_string(get(e, "ph")), "X") ||
		    strcmp(json_object_get_string(get(e, "name")), name))
			continue;
		out[k++] = span_of(e);
	}
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && out[j].ts < out[j - 1].ts; j--) {
			struct span t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	*n = k;
	return out;
}

/* The spans of one backend (process pid), moved to the front: how many. */
static size_t of_pid(struct span *s, size_t n, int64_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].pid == pid)
			s[k++] = s[i];
	return k;
}

/* Microseconds in the trace: a nanosecond apart or less is the same moment. */
#define EPS 0.002
static bool inside(const struct span *in, const struct span *out)
{
	return in->tid == out->tid && in->ts >= out->ts - EPS && in->end <= out->end + EPS;
}

/* How many of the spans ph lie inside s; *unterminated: how many of those are. */
static size_t count_in(const struct span *s, const struct span *ph, size_t nph,
		       size_t *unterminated)
{
	size_t k = 0, u = 0;

	for (size_t i = 0; i < nph; i++)
		if (inside(&ph[i], s)) {
			k++;
			u += ph[i].unterminated;
		}
	if (unterminated)
		*unterminated = u;
	return k;
}

/* The metadata's commas are shown as U+FF0C (so that they do not split it): back to ','. */
static char *plain(const char *s)
{
	char *out = strdup(s ? s : ""), *w = out;

	assert_non_null(out);
	for (const char *r = out; *r;) {
		if (!strncmp(r, "\xef\xbc\x8c", 3)) {
			*w++ = ',';
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return out;
}

/* The transaction span that begins inside statement a and ends inside statement b. */
static const struct span *tx_between(const struct span *tx, size_t ntx, const struct span *a,
				     const struct span *b)
{
	for (size_t i = 0; i < ntx; i++)
		if (tx[i].ts >= a->ts && tx[i].ts <= a->end && tx[i].end >= b->ts &&
		    tx[i].end <= b->end + EPS)
			return &tx[i];
	fail_msg("no transaction from '%s' to '%s'", a->sql, b->sql);
	return NULL;
}

/* Starts `record --preset postgresql --all-processes` into out; its PID once it records. */
static pid_t start_recording(const char *out)
{
	char *lp_err = fmt("%s.err", out), *lp_out = fmt("%s.out", out);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", (char *)out, "--preset",
			 "postgresql", "--all-processes", PGBIN "/postgres", NULL };
	pid_t lp = spawn_to(argv, lp_out, lp_err);

	if (!wait_text(lp_err, "Ctrl-C to stop", lp, WAIT_MS)) {
		kill(lp, SIGKILL);
		fail_msg("the recording did not start: %s", slurp(lp_err, NULL));
	}
	return lp;
}

static void stop_recording(pid_t lp, const char *out)
{
	json_object *sum;

	kill(lp, SIGINT);
	assert_int_equal(wait_exit(lp), 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	json_object_put(sum);
}

/* psql -c on the postgres database, as root over the socket; it must succeed. */
static void psql_ok(const char *sql, struct run *r)
{
	char *psql[] = { PSQL, "-X", "-q", "-At", "-R", "\x1e", "-F", "\x1f", "-h",
			 fmt("%s/sock", tmpdir), "-U", "lp", "-d", "postgres", "-c", (char *)sql,
			 NULL };

	assert_int_equal(run(r, psql), 0);
	if (r->status != 0)
		fail_msg("psql -c '%s': exit %d: %s", sql, r->status, r->err);
}

static void pgss_reset(void)
{
	struct run r;

	psql_ok("select pg_stat_statements_reset()", &r);
	run_free(&r);
}

/* The summary's calls of the statement row whose query is q (-1: none). */
static long statement_calls(json_object *sum, const char *q)
{
	json_object *rows = get(sum, "rows");
	long calls = -1;

	for (size_t j = 0; j < json_object_array_length(rows); j++) {
		json_object *row = json_object_array_get_idx(rows, j), *meta, *v;
		char *text;

		if (strcmp(get_s(row, "name"), "statement") ||
		    !json_object_object_get_ex(row, "meta", &meta) || !meta ||
		    !json_object_object_get_ex(meta, "query", &v))
			continue;
		text = plain(json_object_get_string(v));
		if (!strcmp(text, q)) {
			assert_int_equal(calls, -1); /* one row per normalized statement */
			calls = get_i(row, "calls");
		}
		free(text);
	}
	return calls;
}

/*
 * The statements that ran: their spans with an execute inside that was not
 * given up, the way pg_stat_statements counts a call (at the end of its
 * execution). Compared, grouped by the normalized text the preset puts in the
 * metadata, with pg_stat_statements' rows of DB: the same texts, the same counts.
 * Also the summary's rows: one per text, whose calls are at least those.
 * uncounted: texts pg_stat_statements has but counts only once (NULL: none).
 */
static void check_pgss(json_object *trace, json_object *sum, const char *what,
		       const char *const *uncounted)
{
	struct run r;
	size_t nst, nex, nrows = 0, matched = 0;
	struct span *st = spans(trace, "statement", &nst), *ex = spans(trace, "execute", &nex);
	struct {
		char *query;
		long calls, spans;
	} rows[64];

	psql_ok("select s.query, s.calls from pg_stat_statements s join pg_database d on "
		"d.oid = s.dbid where d.datname = '" DB "'",
		&r);
	for (char *rec = r.out, *next; rec && *rec; rec = next) {
		char *sep = strchr(rec, '\x1f');

		next = strchr(rec, '\x1e');
		if (next)
			*next++ = '\0';
		assert_non_null(sep);
		*sep = '\0';
		assert_true(nrows < 64);
		rows[nrows].query = strdup(rec);
		rows[nrows].calls = strtol(sep + 1, NULL, 10);
		rows[nrows].spans = 0;
		nrows++;
	}
	run_free(&r);
	assert_true(nrows > 0);
	for (size_t i = 0; i < nst; i++) {
		bool executed = false, found = false;
		char *q;

		for (size_t k = 0; k < nex && !executed; k++)
			executed = inside(&ex[k], &st[i]) && !ex[k].unterminated;
		if (!executed)
			continue;
		q = plain(st[i].query);
		for (size_t k = 0; k < nrows && !found; k++)
			if (!strcmp(rows[k].query, q)) {
				rows[k].spans++;
				found = true;
			}
		if (!found)
			fail_msg("%s: statement [query=%s] (sent as '%s') ran, pg_stat_statements has no "
				 "such query",
				 what, q, st[i].sql);
		free(q);
	}
	for (size_t k = 0; k < nrows; k++) {
		long calls;
		bool once = false;

		for (const char *const *u = uncounted; u && *u && !once; u++)
			once = !strcmp(*u, rows[k].query);
		if (once && rows[k].calls == 1)
			rows[k].calls = rows[k].spans;
		if (rows[k].spans != rows[k].calls)
			fail_msg("%s: pg_stat_statements: '%s' %ld calls, the trace %ld statements",
				 what, rows[k].query, rows[k].calls, rows[k].spans);
		calls = statement_calls(sum, rows[k].query);
		if (calls < rows[k].calls)
			fail_msg("%s: the summary's row for '%s' has %ld calls, pg_stat_statements %ld",
				 what, rows[k].query, calls, rows[k].calls);
		matched++;
		free(rows[k].query);
	}
	assert_int_equal(matched, nrows);
	free(st);
	free(ex);
}

/* Every phase span of backend pid lies inside one of its statement spans. */
static void check_phases_nested(json_object *trace, int64_t pid)
{
	static const char *const phases[] = { "parse", "analyze and rewrite", "plan", "execute" };
	size_t nst, nph;
	struct span *st = spans(trace, "statement", &nst), *ph;

	nst = of_pid(st, nst, pid);
	for (size_t k = 0; k < ARRAY_SIZE(phases); k++) {
		ph = spans(trace, phases[k], &nph);
		nph = of_pid(ph, nph, pid);
		for (size_t i = 0; i < nph; i++) {
			bool in = false;

			for (size_t j = 0; j < nst && !in; j++)
				in = inside(&ph[i], &st[j]);
			if (!in)
				fail_msg("a %s span of PID %lld at %.3f us is in no statement",
					 phases[k], (long long)pid, ph[i].ts);
		}
		free(ph);
	}
	free(st);
}

/*
 * A backend that connected during the recording cannot have a statement that
 * began before it: its first idle report (at connection start) closes nothing.
 */
static void check_none_before(json_object *trace)
{
	size_t n, before = 0;
	struct span *st = spans(trace, "statement", &n);

	for (size_t i = 0; i < n; i++)
		before += st[i].before;
	free(st);
	if (before)
		fail_msg("%zu statement spans 'began before the recording' in backends started during "
			 "it",
			 before);
}

/*
 * The psql script TEXT, written to SQL, run with psql -f while a recording
 * writes OUT: psql goes on past a failed statement and exits 0, and its stderr
 * has each of ERRORS (NULL-terminated). The recording's summary and trace are
 * loaded into *sum and *trace (the caller puts them).
 */
static void record_script(const char *out, const char *sql, const char *text,
			  const char *const errors[], json_object **sum, json_object **trace)
{
	char *psql[] = { PSQL, "-X", "-q", "-h", fmt("%s/sock", tmpdir), "-U", "lp", "-d",
			 DB, "-f", (char *)sql, NULL };
	struct run r;
	pid_t lp;

	write_file(sql, text);
	chmod(sql, 0644);
	pgss_reset();
	lp = start_recording(out);
	assert_int_equal(run(&r, psql), 0);
	stop_recording(lp, out);
	assert_int_equal(r.status, 0);
	for (size_t i = 0; errors[i]; i++)
		if (!strstr(r.err, errors[i]))
			fail_msg("psql's stderr has no '%s': %s", errors[i], r.err);
	run_free(&r);
	*sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	*trace = load_json(fmt("%s/leanprofiler-trace.json", out));
}

static void test_workload(void **state)
{
	/* Two statements fail; psql goes on with the next line. */
	static const char *const errors[] = { "ERROR:  division by zero",
					      "relation \"no_such_table\" does not exist", NULL };
	char *out = fmt("%s/out", tmpdir);
	struct span *q, *tx, *ph;
	size_t nq, ntx, nph, mine = 0;
	json_object *sum, *trace;
	char *text = NULL;
	int64_t backend = -1;

	(void)state;
	for (size_t i = 0; i < NQUERIES; i++) {
		char *t = fmt("%s%s\n", text ? text : "", workload[i]);

		free(text);
		text = t;
	}
	record_script(out, fmt("%s/workload.sql", tmpdir), text, errors, &sum, &trace);
	q = spans(trace, "statement", &nq);
	tx = spans(trace, "transaction", &ntx);
	/* Only psql's backend ran statements: exactly the workload's, in its order. */
	for (size_t i = 0; i < nq && backend < 0; i++)
		if (!q[i].before)
			backend = q[i].pid;
	nq = of_pid(q, nq, backend);
	if (nq && q[0].before)
		memmove(q, q + 1, --nq * sizeof(*q)); /* checked by check_none_before below */
	assert_int_equal(nq, NQUERIES);
	for (size_t i = 0; i < nq; i++) {
		char *sent = plain(q[i].sql);

		assert_int_equal(q[i].tid, backend);
		assert_string_equal(sent, workload[i]);
		free(sent);
		/* Each one ends before the next begins, the failed ones too. */
		if (i > 0)
			assert_true(q[i].ts >= q[i - 1].end - EPS);
		/* ROLLBACK after the failure, and the healthy one: whole, not cut by their abort. */
		if (i == 9 || i == 12)
			assert_false(q[i].unterminated);
	}
	/* Grouped by normalized statement: the four 'select <string>' are one row. */
	assert_string_equal(q[0].query, "select $1");
	assert_string_equal(q[2].query, "select $1");
	{
		char *sort = plain(q[13].query);

		assert_string_equal(sort, "select g from generate_series($1, $2) g order by g desc "
					  "limit $3");
		free(sort);
	}
	/* Transactions: on keyed tracks of the backend's thread. */
	for (size_t i = 0; i < ntx; i++) {
		if (tx[i].pid != backend)
			continue; /* another process's (a background worker's) */
		assert_true(tx[i].tid & TRACK_BIT);
		assert_int_equal(TRACK_REAL(tx[i].tid), backend);
		assert_false(tx[i].unterminated);
		tx[mine++] = tx[i];
	}
	ntx = mine;
	/* One per statement outside BEGIN, one per BEGIN block (and psql's connection's). */
	assert_true(mine >= 4 + 3);
	for (size_t i = 0; i < ntx; i++)
		tx[i].tid = backend; /* compared with the statements by time */
	{
		/* BEGIN .. COMMIT holds its statements; so does BEGIN .. ROLLBACK. */
		const struct span *c = tx_between(tx, ntx, &q[3], &q[6]);
		const struct span *rb = tx_between(tx, ntx, &q[7], &q[9]);
		/* A failure inside a transaction aborts it there, not at the ROLLBACK. */
		const struct span *ab = tx_between(tx, ntx, &q[10], &q[11]);

		assert_true(inside(&q[4], c) && inside(&q[5], c));
		assert_true(inside(&q[8], rb));
		assert_true(ab->end < q[12].ts);
		/* A statement outside BEGIN is a transaction of its own, inside its statement. */
		assert_non_null(tx_between(tx, ntx, &q[13], &q[13]));
	}
	/* The sort: parse, analyze and rewrite, plan, execute, once each, in order, inside. */
	{
		const char *phases[] = { "parse", "analyze and rewrite", "plan", "execute" };
		double prev = 0;

		for (size_t k = 0; k < 4; k++) {
			size_t in = 0;

			ph = spans(trace, phases[k], &nph);
			for (size_t i = 0; i < nph; i++) {
				if (!inside(&ph[i], &q[13]))
					continue;
				assert_false(ph[i].unterminated);
				assert_true(ph[i].ts >= prev);
				prev = ph[i].end;
				in++;
			}
			free(ph);
			if (in != 1)
				fail_msg("%zu %s spans in the sort's statement", in, phases[k]);
		}
	}
	{
		size_t u;

		/* The failed ones: the phase the failure interrupted is given up, nothing after it. */
		ph = spans(trace, "plan", &nph);
		assert_int_equal(count_in(&q[1], ph, nph, &u), 1); /* 1/0 is folded while planning */
		assert_int_equal(u, 1);
		free(ph);
		ph = spans(trace, "analyze and rewrite", &nph);
		assert_int_equal(count_in(&q[11], ph, nph, &u), 1); /* names are resolved there */
		assert_int_equal(u, 1);
		free(ph);
		ph = spans(trace, "execute", &nph);
		assert_int_equal(count_in(&q[1], ph, nph, NULL), 0);
		assert_int_equal(count_in(&q[11], ph, nph, NULL), 0);
		/* ROLLBACK after the failure ran, and so did the healthy one. */
		assert_int_equal(count_in(&q[12], ph, nph, &u), 1);
		assert_int_equal(u, 0);
		assert_int_equal(count_in(&q[9], ph, nph, &u), 1);
		assert_int_equal(u, 0);
		free(ph);
	}
	check_phases_nested(trace, backend);
	check_pgss(trace, sum, "psql -f", NULL);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	check_none_before(trace);
	json_object_put(sum);
	json_object_put(trace);
	free(q);
	free(tx);
	free(text);
}

/* ---- the extended protocol: a libpq program ---- */

struct client {
	pid_t pid;
	int in;
	struct lines *out;
};

static void client_start(struct client *c)
{
	char *argv[] = { fmt("%s/tests/targets/pgclient", build),
			 fmt("host=%s/sock user=lp dbname=" DB, tmpdir), NULL };
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE },
		  err = { .mode = IO_FILE, .file = fmt("%s/pgclient.err", tmpdir) };

	c->pid = spawn(argv, &in, &out, &err);
	c->in = in.fd;
	c->out = lines_new(out.fd);
}

/* Sends one command; its answer must begin with want. CLOCK_MONOTONIC when it came. */
static uint64_t ask(struct client *c, const char *cmd, const char *want, char *answer,
		    size_t size)
{
	char line[4096];
	size_t len = strlen(cmd);

	assert_int_equal(write(c->in, cmd, len), (ssize_t)len);
	assert_int_equal(write(c->in, "\n", 1), 1);
	if (lines_read(c->out, line, sizeof(line), WAIT_MS) != 1)
		fail_msg("pgclient gave no answer to '%s': %s", cmd, slurp(fmt("%s/pgclient.err", tmpdir), NULL));
	if (strncmp(line, want, strlen(want)))
		fail_msg("pgclient: '%s' answered '%s', expected '%s...'", cmd, line, want);
	if (answer)
		snprintf(answer, size, "%s", line);
	return now_ns();
}

/* What the program sends, the statement each command is (as sent), and its phases. */
#define NPARAMS 6
#define NEXEC 4 /* PostgreSQL plans a prepared statement's first 5 executions anew */

static void test_extended_protocol(void **state)
{
	char *out = fmt("%s/ext", tmpdir), pidline[4096];
	struct client c;
	struct span *st, *pa, *an, *pl, *ex, *tx;
	size_t nst, npa, nan, npl, nex, ntx, k = 0, u;
	uint64_t failed_at[2], base_ns;
	int64_t backend;
	json_object *trace, *sum;
	pid_t lp;

	(void)state;
	pgss_reset();
	lp = start_recording(out);
	client_start(&c);
	ask(&c, "pid", "pid=", pidline, sizeof(pidline));
	backend = strtoll(pidline + 4, NULL, 10);
	for (int i = 0; i < NPARAMS; i++)
		ask(&c, fmt("params\tselect $1::int + 1\t%d", i), fmt("ok %d", i + 1), NULL, 0);
	ask(&c, "prepare\tlp_count\tselect count(*) from pg_class where oid > $1::int", "ok", NULL, 0);
	for (int i = 0; i < NEXEC; i++)
		ask(&c, fmt("exec\tlp_count\t%d", i), "ok ", NULL, 0);
	/* A failure, then the client idles: the statement must not hold the idle. */
	failed_at[0] = ask(&c, "params\tselect 1/$1::int\t0", "error 22012", NULL, 0);
	wait_ms(IDLE_MS);
	failed_at[1] = ask(&c, "simple\tselect 1/0", "error 22012", NULL, 0);
	wait_ms(IDLE_MS);
	/* A failure inside a transaction, ROLLBACK; then a healthy one. */
	ask(&c, "simple\tbegin", "ok", NULL, 0);
	ask(&c, "params\tselect * from lp_no_such_table where a = $1\t1", "error 42P01", NULL, 0);
	ask(&c, "simple\trollback", "ok", NULL, 0);
	ask(&c, "params\tbegin", "ok", NULL, 0);
	ask(&c, "params\tselect $1::int\t7", "ok 7", NULL, 0);
	ask(&c, "params\trollback", "ok", NULL, 0);
	/* Three statements in one pipeline, one Sync: three spans. */
	ask(&c, "pipeline\tselect $1::int + 10\t1\tselect $1::text || 'x'\ta\tselect $1::int * 3\t2",
	    "ok ok ok", NULL, 0);
	close(c.in);
	lines_drain(c.out, WAIT_MS);
	assert_int_equal(wait_exit(c.pid), 0);
	stop_recording(lp, out);

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	base_ns = (uint64_t)json_object_get_int64(get(get(trace, "otherData"), "base_ns"));
	st = spans(trace, "statement", &nst);
	pa = spans(trace, "parse", &npa);
	an = spans(trace, "analyze and rewrite", &nan);
	pl = spans(trace, "plan", &npl);
	ex = spans(trace, "execute", &nex);
	tx = spans(trace, "transaction", &ntx);
	nst = of_pid(st, nst, backend);
	if (nst && st[0].before)
		memmove(st, st + 1, --nst * sizeof(*st)); /* checked by check_none_before below */
	{
		/* Each command is one statement, as sent, with its phases inside. */
		static const struct {
			const char *sql;
			int n, parse, plan, exec; /* exec -1: given up; plan -1: given up */
		} want[] = {
			{ "select $1::int + 1", NPARAMS, 1, 1, 1 },
			{ "select count(*) from pg_class where oid > $1::int", 1, 1, 0, 0 },
			{ "select count(*) from pg_class where oid > $1::int", NEXEC, 0, 1, 1 },
			{ "select 1/$1::int", 1, 1, -1, 0 },
			{ "select 1/0", 1, 1, -1, 0 },
			{ "begin", 1, 1, 0, 1 },
			{ "select * from lp_no_such_table where a = $1", 1, 1, 0, 0 },
			{ "rollback", 1, 1, 0, 1 },
			{ "begin", 1, 1, 0, 1 },
			{ "select $1::int", 1, 1, 1, 1 },
			{ "rollback", 1, 1, 0, 1 },
			{ "select $1::int + 10", 1, 1, 1, 1 },
			{ "select $1::text || 'x'", 1, 1, 1, 1 },
			{ "select $1::int * 3", 1, 1, 1, 1 },
		};
		size_t total = 0;

		for (size_t w = 0; w < ARRAY_SIZE(want); w++)
			total += (size_t)want[w].n;
		if (nst != total)
			fail_msg("%zu statement spans in the client's backend, %zu sent", nst, total);
		for (size_t w = 0; w < ARRAY_SIZE(want); w++)
			for (int i = 0; i < want[w].n; i++, k++) {
				char *sent = plain(st[k].sql);
				size_t np = count_in(&st[k], pa, npa, NULL);
				size_t nl = count_in(&st[k], pl, npl, &u);

				if (strcmp(sent, want[w].sql))
					fail_msg("statement %zu is '%s', sent '%s'", k, sent, want[w].sql);
				free(sent);
				assert_int_equal(np, (size_t)want[w].parse);
				assert_int_equal(count_in(&st[k], an, nan, NULL),
						 (size_t)(want[w].parse && strcmp(want[w].sql, "begin") &&
									  strcmp(want[w].sql, "rollback")
								  ? 1
								  : want[w].parse));
				if (want[w].plan < 0) {
					assert_int_equal(nl, 1);
					assert_int_equal(u, 1);
				} else {
					assert_int_equal(nl, (size_t)want[w].plan);
					assert_int_equal(u, 0);
				}
				assert_int_equal(count_in(&st[k], ex, nex, &u), (size_t)want[w].exec);
				assert_int_equal(u, 0);
				if (k > 0)
					assert_true(st[k].ts >= st[k - 1].end - EPS);
			}
	}
	{
		/* The failures end before the client even had the error, not after its idle. */
		const struct span *f[2] = { &st[NPARAMS + 1 + NEXEC], &st[NPARAMS + 1 + NEXEC + 1] };

		for (int i = 0; i < 2; i++) {
			uint64_t end_ns = base_ns + (uint64_t)llround(f[i]->end * 1000);

			if (end_ns > failed_at[i])
				fail_msg("'%s' ends %.3f ms after its error reached the client", f[i]->sql,
					 (double)(end_ns - failed_at[i]) / 1e6);
			assert_true(f[i]->end - f[i]->ts < IDLE_MS * 1000 / 3);
		}
	}
	{
		/* Its transaction ends at the failure; the ROLLBACK after it is whole. */
		const struct span *b = &st[NPARAMS + 1 + NEXEC + 2], *bad = b + 1, *rb = b + 2;
		const struct span *hb = b + 3, *hrb = b + 5;
		size_t mine = 0;

		for (size_t i = 0; i < ntx; i++)
			if (tx[i].pid == backend) {
				tx[i].tid = TRACK_REAL(tx[i].tid);
				tx[mine++] = tx[i];
			}
		ntx = mine;
		assert_true(tx_between(tx, ntx, b, bad)->end < rb->ts);
		assert_false(rb->unterminated);
		/* A healthy ROLLBACK's abort is the end of its transaction, inside it. */
		assert_non_null(tx_between(tx, ntx, hb, hrb));
		assert_false(hrb->unterminated);
	}
	check_phases_nested(trace, backend);
	check_pgss(trace, sum, "pgclient", NULL);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	check_none_before(trace);
	free(st);
	free(pa);
	free(an);
	free(pl);
	free(ex);
	free(tx);
	json_object_put(trace);
	json_object_put(sum);
}

/* ---- pgbench ---- */

/* pgbench's tpcb-like script, as pg_stat_statements shows it. */
static const char *const tpcb[] = {
	"BEGIN",
	"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
	"SELECT abalance FROM pgbench_accounts WHERE aid = $1",
	"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
	"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, "
	"CURRENT_TIMESTAMP)",
	"END",
};

static void pgbench_case(const char *mode)
{
	char *out = fmt("%s/pgbench-%s", tmpdir, mode);
	char *argv[] = { PGBENCH, "-n", "-M", (char *)mode, "-t", fmt("%d", PGBENCH_TX), "-c", "1",
			 "-h", fmt("%s/sock", tmpdir), "-U", "lp", DB, NULL };
	struct span *st, *ex, *pa;
	size_t nst, nex, npa, per[ARRAY_SIZE(tpcb)] = { 0 }, prepares = 0, executed = 0, npids = 0;
	int64_t pids[8];
	json_object *trace, *sum;
	struct run r;
	pid_t lp;

	pgss_reset();
	lp = start_recording(out);
	assert_int_equal(run(&r, argv), 0);
	stop_recording(lp, out);
	if (r.status != 0 ||
	    !strstr(r.out, fmt("number of transactions actually processed: %d/%d", PGBENCH_TX,
			       PGBENCH_TX)))
		fail_msg("pgbench -M %s: exit %d\n%s%s", mode, r.status, r.out, r.err);
	run_free(&r);

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	st = spans(trace, "statement", &nst);
	ex = spans(trace, "execute", &nex);
	pa = spans(trace, "parse", &npa);
	for (size_t i = 0; i < nst; i++) {
		char *q;
		size_t u, n = count_in(&st[i], ex, nex, &u);

		if (st[i].before)
			continue; /* checked by check_none_before below */
		q = plain(st[i].query);
		if (!n) {
			/* -M prepared: each statement is prepared once (Parse, Sync) before its first use. */
			assert_int_equal(count_in(&st[i], pa, npa, NULL), 1);
			prepares++;
		}
		for (size_t k = 0; n && !u && k < ARRAY_SIZE(tpcb); k++)
			if (!strcmp(q, tpcb[k])) {
				per[k]++;
				executed++;
			}
		free(q);
		for (size_t k = 0; k <= npids; k++)
			if (k == npids) {
				assert_true(npids < ARRAY_SIZE(pids));
				pids[npids++] = st[i].pid;
				break;
			} else if (pids[k] == st[i].pid) {
				break;
			}
	}
	/* pgbench's backends: its first connection's (checks the tables) and the client's. */
	assert_true(npids >= 2);
	for (size_t k = 0; k < npids; k++)
		check_phases_nested(trace, pids[k]);
	/* One statement span per statement pgbench ran: transactions x the script's statements. */
	for (size_t k = 0; k < ARRAY_SIZE(tpcb); k++)
		if (per[k] != PGBENCH_TX)
			fail_msg("-M %s: %zu statement spans of '%s', %d transactions ran", mode, per[k],
				 tpcb[k], PGBENCH_TX);
	assert_int_equal(executed, ARRAY_SIZE(tpcb) * PGBENCH_TX);
	assert_int_equal(prepares, strcmp(mode, "prepared") ? 0 : ARRAY_SIZE(tpcb));
	/*
	 * pg_stat_statements 15 counts a prepared BEGIN or END (a utility statement
	 * run by Bind and Execute of a statement prepared once) at its first
	 * execution only: 1 call for pgbench's 60 (measured on 15.18); every SELECT,
	 * UPDATE and INSERT it counts each time.
	 */
	static const char *const utility[] = { "BEGIN", "END", NULL };

	check_pgss(trace, sum, fmt("pgbench -M %s", mode), strcmp(mode, "prepared") ? NULL : utility);
	check_none_before(trace);
	free(st);
	free(ex);
	free(pa);
	json_object_put(trace);
	json_object_put(sum);
}

static void test_pgbench_extended(void **state)
{
	(void)state;
	pgbench_case("extended");
}

static void test_pgbench_prepared(void **state)
{
	(void)state;
	pgbench_case("prepared");
}

/* psql -At -c sql's output, first line, as a number; the query must succeed. */
static long long query_num(const char *sql)
{
	char *psql[] = { PSQL, "-X", "-At", "-h", fmt("%s/sock", tmpdir), "-U", "lp", "-d",
			 "postgres", "-c", (char *)sql, NULL };
	struct run r;
	long long v;

	assert_int_equal(run(&r, psql), 0);
	if (r.status != 0)
		fail_msg("psql -c '%s': exit %d: %s", sql, r.status, r.err);
	v = strtoll(r.out, NULL, 10);
	run_free(&r);
	return v;
}

/* Polls sql (a count) from another connection until it is want; false after WAIT_MS. */
static bool wait_count(const char *sql, long long want)
{
	uint64_t t0 = now_ns();

	do {
		if (query_num(sql) == want)
			return true;
		wait_ms(5);
	} while ((now_ns() - t0) / 1000000ULL < WAIT_MS);
	return false;
}

/* A psql session reading its statements from a pipe: *in is the pipe's writing end. */
static pid_t spawn_session(int *in, const char *log)
{
	char *psql[] = { PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", fmt("%s/sock", tmpdir),
			 "-U", "lp", "-d", "postgres", NULL };
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(p[0], 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(psql[0], psql);
		_exit(99);
	}
	close(p[0]);
	*in = p[1];
	return pid;
}

static void say(int fd, const char *sql)
{
	assert_int_equal(write(fd, sql, strlen(sql)), (ssize_t)strlen(sql));
}

/*
 * Session A locks table t; session B's query then waits for the lock until A
 * commits. B's backend has one `lock wait` span, inside B's query, from before
 * the test saw B waiting (pg_locks) to after the test sent A's COMMIT.
 */
static void test_lock_wait(void **state)
{
	static const char *const b_sql = "select count(*) from lp_locked;";
	char *out = fmt("%s/lock", tmpdir);
	char *b_argv[] = { PSQL, "-X", "-q", "-h", fmt("%s/sock", tmpdir), "-U", "lp", "-d",
			   "postgres", "-c", (char *)b_sql, NULL };
	struct span *q, *lw;
	const struct span *bq = NULL, *w = NULL;
	size_t nq, nlw, in_b = 0;
	long long rel, db;
	uint64_t blocked_ns, commit_ns, base_ns;
	json_object *trace;
	int a_in;
	pid_t lp, a, b;

	(void)state;
	query_num("create table lp_locked (x int); select 1;");
	rel = query_num("select 'lp_locked'::regclass::oid;");
	db = query_num("select oid from pg_database where datname = current_database();");
	assert_true(rel > 0 && db > 0);
	lp = start_recording(out);

	a = spawn_session(&a_in, fmt("%s/session-a.log", tmpdir));
	say(a_in, "begin;\nlock table lp_locked in access exclusive mode;\n");
	assert_true(wait_count("select count(*) from pg_locks where relation = 'lp_locked'::regclass"
			       " and mode = 'AccessExclusiveLock' and granted;", 1));
	b = spawn_as_owner(b_argv, fmt("%s/session-b.log", tmpdir));
	assert_true(wait_count("select count(*) from pg_locks where relation = 'lp_locked'::regclass"
			       " and not granted;", 1));
	blocked_ns = now_ns();
	/* B is still waiting: A holds the lock until its COMMIT. */
	assert_int_equal(waitpid(b, NULL, WNOHANG), 0);
	commit_ns = now_ns();
	say(a_in, "commit;\n");
	close(a_in);
	assert_int_equal(wait_exit(b), 0);
	assert_int_equal(wait_exit(a), 0);
	kill(lp, SIGINT);
	assert_int_equal(wait_exit(lp), 0);

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	base_ns = (uint64_t)json_object_get_int64(get(get(trace, "otherData"), "base_ns"));
	q = spans(trace, "statement", &nq);
	for (size_t i = 0; i < nq; i++)
		if (q[i].sql && !strcmp(q[i].sql, b_sql)) {
			assert_null(bq);
			bq = &q[i];
		}
	if (!bq)
		fail_msg("no statement span of '%s'", b_sql);
	lw = spans(trace, "lock wait", &nlw);
	for (size_t i = 0; i < nlw; i++)
		if (lw[i].pid == bq->pid) {
			w = &lw[i];
			in_b++;
		}
	if (in_b != 1)
		fail_msg("%zu lock wait spans in B's backend (%zu in all)", in_b, nlw);
	assert_int_equal(w->tid, bq->tid);
	assert_false(w->unterminated);
	assert_true(inside(w, bq));
	/* Trace times are microseconds after base_ns (CLOCK_MONOTONIC, as the test's). */
	if (!(base_ns + (uint64_t)llround(w->ts * 1000) <= blocked_ns &&
	      base_ns + (uint64_t)llround(w->end * 1000) >= commit_ns))
		fail_msg("lock wait %.3f..%.3f us does not cover %.3f..%.3f us", w->ts, w->end,
			 (double)(blocked_ns - base_ns) / 1000, (double)(commit_ns - base_ns) / 1000);
	/* The preset's metadata: a relation lock (type 0), AccessShareLock (1), on t. */
	assert_string_equal(json_object_get_string(get(w->args, "locktag_type")), "0");
	assert_string_equal(json_object_get_string(get(w->args, "mode")), "1");
	assert_string_equal(json_object_get_string(get(w->args, "db")), fmt("%lld", db));
	assert_string_equal(json_object_get_string(get(w->args, "rel")), fmt("%lld", rel));
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	free(q);
	free(lw);
	json_object_put(trace);
}

/* checkpoint__done's arguments are symbol(%rip): skipped, said, then missing. */
static void test_undecodable_probe(void **state)
{
	struct run r;
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", fmt("%s/undec", tmpdir),
			 "--span", "postgresql:checkpoint__start,checkpoint__done",
			 "--all-processes", PGBIN "/postgres", NULL };

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 125);
	if (!strstr(r.err, "leanprofiler: warning: skipping postgresql:checkpoint__done in " PGBIN
			   "/postgres: libbpf cannot decode its argument '-4@40+CheckpointStats(%rip)'\n"
			   "leanprofiler: no usable exit probe postgresql:checkpoint__done in " PGBIN
			   "/postgres"))
		fail_msg("unexpected: %s", r.err);
	run_free(&r);
}

/* ---- SQL-level PREPARE and EXECUTE; a failure inside a SAVEPOINT ---- */

#define NEXECUTE 40

/*
 * A user's psql script: a statement prepared in SQL and executed 40 times is
 * one row, as pg_stat_statements counts the 40 under its PREPARE; a failure
 * inside a SAVEPOINT (no transaction__abort: the subtransaction aborts) leaves
 * its phase unterminated, closed with its statement, and the header says so:
 * every unterminated span has its cause counted.
 */
static void test_prepared_and_savepoint(void **state)
{
	static const char *const errors[] = { "relation \"no_such_table\" does not exist", NULL };
	char *out = fmt("%s/prepared", tmpdir);
	char *text = strdup("prepare lp_p1(int) as select $1 + 1;\n"), *table, *t;
	static const struct {
		const char *pgss, *ours; /* pg_stat_statements' PREPARE, our EXECUTE row */
		long calls;
	} want[] = {
		{ "prepare lp_p1(int) as select $1 + $2", "execute lp_p1($1)", NEXECUTE },
		{ "prepare lp_p2(text, int) as select $1 || $3, $2 * $4", "execute lp_p2($1, $2)", 2 },
	};
	json_object *sum, *trace, *evs, *by;
	size_t nst, nph, nex, unterminated = 0, executed = 0, u;
	struct span *st, *ph, *ex;
	const struct span *failed = NULL;
	struct run r;

	(void)state;
	/* Each longer text replaces the one before, which is freed: fmt()'s result is the new one. */
	for (int i = 1; i <= NEXECUTE; i++) {
		t = fmt("%sexecute lp_p1(%d);\n", text, i);
		free(text);
		text = t;
	}
	t = fmt("%sprepare lp_p2(text, int) as select $1 || 'x', $2 * 3;\n"
		"execute lp_p2('a', 1);\nexecute lp_p2('b', -2);\n"
		"begin;\nsavepoint s1;\nselect * from no_such_table;\n"
		"rollback to savepoint s1;\nselect 'after';\ncommit;\n",
		text);
	free(text);
	text = t;
	record_script(out, fmt("%s/prepared.sql", tmpdir), text, errors, &sum, &trace);

	/* pg_stat_statements: the executions under the PREPARE; here one EXECUTE row. */
	for (size_t k = 0; k < ARRAY_SIZE(want); k++) {
		char *q = fmt("select calls from pg_stat_statements s join pg_database d on "
			      "d.oid = s.dbid where d.datname = '" DB "' and s.query = '%s'",
			      want[k].pgss);

		psql_ok(q, &r);
		if (strtol(r.out, NULL, 10) != want[k].calls)
			fail_msg("pg_stat_statements: '%s' has calls '%s', want %ld", want[k].pgss,
				 r.out, want[k].calls);
		run_free(&r);
		if (statement_calls(sum, want[k].ours) != want[k].calls)
			fail_msg("the summary's row '%s' has %ld calls, want %ld", want[k].ours,
				 statement_calls(sum, want[k].ours), want[k].calls);
	}
	/* Each PREPARE's own span keeps the text pg_stat_statements shows for it. */
	st = spans(trace, "statement", &nst);
	ex = spans(trace, "execute", &nex);
	for (size_t i = 0; i < nst; i++) {
		char *q = plain(st[i].query), *sent = plain(st[i].sql);

		if (!strncmp(sent, "prepare lp_p1", 13))
			assert_string_equal(q, want[0].pgss);
		if (!strncmp(sent, "prepare lp_p2", 13))
			assert_string_equal(q, want[1].pgss);
		/* EXECUTE's portal runs the prepared statement's own: two execute spans. */
		if (!strcmp(q, want[0].ours))
			executed += count_in(&st[i], ex, nex, &u) == 2 && !u;
		if (!strcmp(sent, "select * from no_such_table;"))
			failed = &st[i];
		free(q);
		free(sent);
	}
	assert_int_equal(executed, NEXECUTE);
	/* The failed phase: closed with its statement, unterminated; nothing after it. */
	assert_non_null(failed);
	ph = spans(trace, "analyze and rewrite", &nph);
	assert_int_equal(count_in(failed, ph, nph, &u), 1);
	assert_int_equal(u, 1);
	free(ph);
	ph = spans(trace, "plan", &nph);
	assert_int_equal(count_in(failed, ph, nph, NULL), 0);
	free(ph);

	/* Every unterminated span of the trace is counted, and where it was closed. */
	evs = get(trace, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (!strcmp(json_object_get_string(get(e, "ph")), "X"))
			unterminated += span_of(e).unterminated;
	}
	assert_true(unterminated >= 1);
	assert_int_equal(get_i(sum, "unterminated_spans"), unterminated);
	by = get(sum, "unterminated_by");
	assert_int_equal(get_i(by, "enclosing_exit") + get_i(by, "span_pairs") +
				 get_i(by, "thread_end") + get_i(by, "recording_end"),
			 unterminated);
	assert_true(get_i(get(sum, "span_pairs"), "enclosed") >= 1);
	table = slurp(fmt("%s.out", out), NULL);
	assert_non_null(table);
	assert_non_null(strstr(table, fmt("Unterminated spans: %zu (", unterminated)));
	assert_non_null(strstr(table, " closed with a span of another spec around them"));
	free(table);
	free(st);
	free(ex);
	free(text);
	json_object_put(sum);
	json_object_put(trace);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_extended_protocol),
		cmocka_unit_test(test_pgbench_extended),
		cmocka_unit_test(test_pgbench_prepared),
		cmocka_unit_test(test_lock_wait),
		cmocka_unit_test(test_undecodable_probe),
		cmocka_unit_test(test_prepared_and_savepoint),
	};

	if (argc > 1)
		build = argv[1];
	if (getuid() != 0) {
		printf("SKIPPED: test_postgres needs root (BPF)\n");
		return 0;
	}
	if (access(PGBIN "/postgres", X_OK) || access(PSQL, X_OK) || access(PGBENCH, X_OK)) {
		printf("FAILED: needs PostgreSQL 15 (%s, %s, %s; scripts/deps.sh test installs it)\n",
		       PGBIN, PSQL, PGBENCH);
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	/* One test, or a few, on a cluster of its own (LP_TEST_FILTER=test_lock_wait). */
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	return cmocka_run_group_tests(tests, start_cluster, stop_cluster);
}
