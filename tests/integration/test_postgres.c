// SPDX-License-Identifier: MIT
/*
 * The postgresql preset on Debian's PostgreSQL 15: a throwaway cluster in a
 * temporary directory (as user postgres, else nobody), listening only on a
 * unix socket there, recorded with --all-processes while psql runs a scripted
 * workload: plain queries, one that fails, a transaction that commits, one that
 * rolls back, one that fails inside, a sort. Checks the query count, that a
 * failed query is closed unterminated where the next one starts, that the
 * transactions are on keyed tracks and contain their queries, that the phases
 * nest inside their query, and the independent consumer. A lock wait: one
 * session holds a table lock while another's query waits for it, the wait one
 * `lock wait` span inside that query, covering the time the test saw it wait,
 * with the lock's fields. Also: a probe libbpf cannot decode is skipped with a
 * warning. Needs root.
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
#define TRACK_BIT 0x40000000 /* user/core/pairs.h LP_TRACK_BIT */
#define TRACK_REAL(t) ((t) & 0x3fffff)
#define WAIT_MS 30000 /* for the server to accept, and the recording to start */

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

/* The cluster: initdb, then postgres itself, on a socket in tmpdir only. */
static int start_cluster(void **state)
{
	char *data = fmt("%s/data", tmpdir), *sock = fmt("%s/sock", tmpdir);
	char *initdb[] = { PGBIN "/initdb", "-D", data, "-U", "lp", "-A", "trust", "--no-sync",
			   NULL };
	char *postgres[] = { PGBIN "/postgres", "-D", data, "-c", "listen_addresses=", "-k", sock,
			     "-c", "fsync=off", "-c", "autovacuum=off", NULL };
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
		if (accepts(fmt("%s/.s.PGSQL.5432", sock)))
			return 0;
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
	double ts, end;
	int64_t pid, tid;
	bool unterminated;
	const char *sql;
	json_object *args;
};

static struct span span_of(json_object *e)
{
	struct span s = { 0 };
	json_object *args, *v;

	s.ts = json_object_get_double(get(e, "ts"));
	s.end = s.ts + json_object_get_double(get(e, "dur"));
	s.pid = json_object_get_int64(get(e, "pid"));
	s.tid = json_object_get_int64(get(e, "tid"));
	if (json_object_object_get_ex(e, "args", &args)) {
		s.args = args;
		s.unterminated = json_object_object_get_ex(args, "unterminated", &v) &&
				 json_object_get_boolean(v);
		if (json_object_object_get_ex(args, "sql", &v))
			s.sql = json_object_get_string(v);
	}
	return s;
}

/* The complete events named name, in order of start. */
static size_t spans(json_object *trace, const char *name, struct span *out, size_t max)
{
	json_object *evs = get(trace, "traceEvents");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (strcmp(json_object_get_string(get(e, "ph")), "X") ||
		    strcmp(json_object_get_string(get(e, "name")), name))
			continue;
		assert_true(n < max);
		out[n++] = span_of(e);
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && out[j].ts < out[j - 1].ts; j--) {
			struct span t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Microseconds in the trace: a nanosecond apart or less is the same moment. */
#define EPS 0.002
static bool inside(const struct span *in, const struct span *out)
{
	return in->ts >= out->ts - EPS && in->end <= out->end + EPS;
}

/* The transaction span that begins inside query a and ends inside query b. */
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

static void test_workload(void **state)
{
	char *out = fmt("%s/out", tmpdir), *sql = fmt("%s/workload.sql", tmpdir);
	char *psql[] = { PSQL, "-X", "-q", "-h", fmt("%s/sock", tmpdir), "-U", "lp", "-d",
			 "postgres", "-f", sql, NULL };
	struct span q[64], tx[64], ph[64];
	size_t nq, ntx, nph, mine = 0;
	json_object *sum, *trace;
	char *text = NULL;
	int64_t backend = -1;
	pid_t lp;
	struct run r;

	(void)state;
	for (size_t i = 0; i < NQUERIES; i++) {
		char *t = fmt("%s%s\n", text ? text : "", workload[i]);

		free(text);
		text = t;
	}
	write_file(sql, text);
	chmod(sql, 0644);
	lp = start_recording(out);
	assert_int_equal(run(&r, psql), 0);
	kill(lp, SIGINT);
	assert_int_equal(wait_exit(lp), 0);
	/* Two statements fail; psql goes on with the next line. */
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "ERROR:  division by zero"));
	assert_non_null(strstr(r.err, "relation \"no_such_table\" does not exist"));
	run_free(&r);

	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	nq = spans(trace, "query", q, 64);
	ntx = spans(trace, "transaction", tx, 64);
	/* Only psql's backend ran queries: exactly the workload's, in its order. */
	assert_int_equal(nq, NQUERIES);
	backend = q[0].pid;
	for (size_t i = 0; i < nq; i++) {
		assert_int_equal(q[i].pid, backend);
		assert_int_equal(q[i].tid, backend);
		assert_string_equal(q[i].sql, i == NQUERIES - 1
						      ? "select g from generate_series(1\xef\xbc\x8c 20000) g "
							"order by g desc limit 3;"
						      : workload[i]);
		/* The failed ones are given up where the next one starts; the others ended. */
		assert_int_equal(q[i].unterminated, i == 1 || i == 11);
		if (i == 1 || i == 11)
			assert_true(fabs(q[i + 1].ts - q[i].end - 0.001) <= EPS);
		if (i > 0)
			assert_true(q[i].ts >= q[i - 1].end - EPS);
	}
	assert_true(json_object_get_int64(get(sum, "unterminated_spans")) >= 2);
	/* Transactions: on keyed tracks of the backend's thread. */
	for (size_t i = 0; i < ntx; i++) {
		if (tx[i].pid != backend)
			continue; /* another process's (a background worker's) */
		assert_true(tx[i].tid & TRACK_BIT);
		assert_int_equal(TRACK_REAL(tx[i].tid), backend);
		assert_false(tx[i].unterminated);
		mine++;
	}
	/* One per statement outside BEGIN, one per BEGIN block (and psql's connection's). */
	assert_true(mine >= 4 + 3);
	{
		/* BEGIN .. COMMIT holds its queries; so does BEGIN .. ROLLBACK. */
		const struct span *c = tx_between(tx, ntx, &q[3], &q[6]);
		const struct span *rb = tx_between(tx, ntx, &q[7], &q[9]);
		/* A failure inside a transaction aborts it there, not at the ROLLBACK. */
		const struct span *ab = tx_between(tx, ntx, &q[10], &q[11]);

		assert_true(inside(&q[4], c) && inside(&q[5], c));
		assert_true(inside(&q[8], rb));
		assert_true(ab->end < q[12].ts);
		/* A statement outside BEGIN is a transaction of its own, inside its query. */
		assert_non_null(tx_between(tx, ntx, &q[13], &q[13]));
	}
	/* The sort: parse, rewrite, plan, execute, once each, in order, inside its query. */
	{
		const char *phases[] = { "parse", "rewrite", "plan", "execute" };
		double prev = 0;

		for (size_t k = 0; k < 4; k++) {
			size_t in = 0;

			nph = spans(trace, phases[k], ph, 64);
			for (size_t i = 0; i < nph; i++) {
				if (ph[i].tid != backend || !inside(&ph[i], &q[13]))
					continue;
				assert_false(ph[i].unterminated);
				assert_true(ph[i].ts >= prev);
				prev = ph[i].end;
				in++;
			}
			if (in != 1)
				fail_msg("%zu %s spans in the sort's query", in, phases[k]);
		}
		/* The failed query's plan was given up with it. */
		nph = spans(trace, "plan", ph, 64);
		for (size_t i = 0, found = 0; i < nph && !found; i++)
			if (inside(&ph[i], &q[1])) {
				assert_true(ph[i].unterminated);
				found = 1;
			}
	}
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(sum);
	json_object_put(trace);
	free(text);
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
	struct span q[256], lw[64];
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
	nq = spans(trace, "query", q, 256);
	for (size_t i = 0; i < nq; i++)
		if (q[i].sql && !strcmp(q[i].sql, b_sql)) {
			assert_null(bq);
			bq = &q[i];
		}
	if (!bq)
		fail_msg("no query span of '%s'", b_sql);
	nlw = spans(trace, "lock wait", lw, 64);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_lock_wait),
		cmocka_unit_test(test_undecodable_probe),
	};

	if (argc > 1)
		build = argv[1];
	if (getuid() != 0) {
		printf("SKIPPED: test_postgres needs root (BPF)\n");
		return 0;
	}
	if (access(PGBIN "/postgres", X_OK) || access(PSQL, X_OK)) {
		printf("FAILED: needs PostgreSQL 15 (%s, %s; scripts/deps.sh test installs it)\n",
		       PGBIN, PSQL);
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, start_cluster, stop_cluster);
}
