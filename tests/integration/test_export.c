// SPDX-License-Identifier: MIT
/*
 * leanprofiler export against real ClickHouse servers: two throwaway
 * clickhouse-server processes on loopback ports, each with its own data
 * directory and config (users: default, a password user, a readonly user;
 * a cluster "fleet" of the two as shards), started here and stopped by PID.
 *
 * The recordings are made by the real profiler (build/examples/nested,
 * tests/targets/hostile); what ClickHouse answers is compared with what the
 * summaries and traces hold, computed here from the files (calls, nearest-
 * rank P95, spans per name, bytes of every name and metadata). The SQL of
 * docs/fleet.md is run as written there (its ```sql blocks, by their
 * "-- example: NAME" line). Needs root (BPF): skipped otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-export-XXXXXX";

#include "itest.h"

#define SERVER_BIN "/usr/sbin/clickhouse-server"
#define CLIENT_BIN "/usr/bin/clickhouse-client"
#define START_MS 90000 /* a server's start, bounded */
#define PASSWORD "s3cr:et pw"
#define MOMENT "2026-01-06 00:00:00" /* docs/fleet.md's example date, replaced here */
#define LP_STR_(x) #x
#define LP_STR(x) LP_STR_(x)

struct server {
	int http, tcp, https; /* https: the first server only */
	pid_t pid;
	char *dir, *url;
};
static struct server srv[2];

/* The recordings: made once (group setup), exported by the tests. */
/* HOSTILE_PF: hostile again, with --format perfetto (only leanprofiler-trace.pftrace). */
enum { ALPHA, BETA1, BETA2, GAMMA, HOSTILE, SUMONLY, FLOOD, HOSTILE_PF, NREC };
static const char *const rec_host[NREC] = { "alpha", "beta", "beta", "gamma",
					    "host\twith \"quotes\" and \xc3\xa9", "sumonly",
					    "flood", "perfetto" };
/* FLOOD: tests/targets/flood, 2 threads of 25000 outer spans with an inner one each: 100000
 * spans (fewer if the ring buffer lost some), ~39 MB of rows: several 16 MiB batches. */
#define FLOOD_SPANS 100000
static char *rec_dir[NREC];
static json_object *rec_sum[NREC], *rec_trace[NREC];

/* ---- servers ---- */

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void write_configs(struct server *s)
{
	write_file(fmt("%s/config.xml", s->dir),
		   fmt("<?xml version=\"1.0\"?>\n<yandex>\n"
		       " <logger><level>warning</level><log>%s/server.log</log>"
		       "<errorlog>%s/error.log</errorlog></logger>\n"
		       " <http_port>%d</http_port><tcp_port>%d</tcp_port>\n"
		       " <listen_host>127.0.0.1</listen_host>\n"
		       " <path>%s/data/</path><tmp_path>%s/data/tmp/</tmp_path>\n"
		       " <user_files_path>%s/data/user_files/</user_files_path>\n"
		       " <format_schema_path>%s/data/format_schemas/</format_schema_path>\n"
		       " <users_config>%s/users.xml</users_config>\n"
		       " <default_profile>default</default_profile>"
		       "<default_database>default</default_database>\n"
		       " <mark_cache_size>67108864</mark_cache_size>"
		       "<uncompressed_cache_size>67108864</uncompressed_cache_size>\n"
		       " <timezone>UTC</timezone>\n%s"
		       " <remote_servers><fleet>\n"
		       "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>\n"
		       "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>\n"
		       " </fleet></remote_servers>\n"
		       "</yandex>\n",
		       s->dir, s->dir, s->http, s->tcp, s->dir, s->dir, s->dir, s->dir, s->dir,
		       !s->https ? "" :
		       fmt(" <https_port>%d</https_port>\n <openSSL><server>"
			   "<certificateFile>%s/server.crt</certificateFile>"
			   "<privateKeyFile>%s/server.key</privateKeyFile>"
			   "<verificationMode>none</verificationMode>"
			   "<loadDefaultCAFile>false</loadDefaultCAFile>"
			   "<disableProtocols>sslv2,sslv3</disableProtocols>"
			   "</server></openSSL>\n", s->https, s->dir, s->dir),
		       srv[0].tcp, srv[1].tcp));
	write_file(fmt("%s/users.xml", s->dir),
		   "<?xml version=\"1.0\"?>\n<yandex>\n"
		   " <profiles><default><max_memory_usage>2000000000</max_memory_usage></default>\n"
		   "  <ro><readonly>1</readonly></ro></profiles>\n"
		   " <users>\n"
		   "  <default><password></password><networks><ip>127.0.0.1</ip></networks>"
		   "<profile>default</profile><quota>default</quota></default>\n"
		   "  <lp><password>" PASSWORD "</password><networks><ip>127.0.0.1</ip></networks>"
		   "<profile>default</profile><quota>default</quota></lp>\n"
		   "  <reader><password></password><networks><ip>127.0.0.1</ip></networks>"
		   "<profile>ro</profile><quota>default</quota></reader>\n"
		   " </users>\n <quotas><default></default></quotas>\n</yandex>\n");
}

/* The answer of sql on server s (TabSeparated), or NULL when the client fails (said). */
static char *query_as(const struct server *s, const char *user, const char *sql)
{
	char *argv[] = { CLIENT_BIN, "--host", "127.0.0.1", "--port", fmt("%d", s->tcp),
			 "--user", (char *)user, "--query", (char *)sql, NULL };
	struct run r;

	if (run(&r, argv))
		return NULL;
	if (r.status != 0) {
		print_message("clickhouse-client exited %d for: %s\n%s", r.status, sql, r.err);
		return NULL;
	}
	free(r.err);
	return r.out;
}

static char *query(const struct server *s, const char *sql)
{
	char *out = query_as(s, "default", sql);

	if (!out)
		fail_msg("query failed: %s", sql);
	return out;
}

static uint64_t query_u64(const struct server *s, const char *sql)
{
	return strtoull(query(s, sql), NULL, 10);
}

static int start_server(struct server *s, int i)
{
	char *argv[] = { SERVER_BIN, fmt("--config-file=%s/config.xml", s->dir), NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_FILE };
	char *ans;

	out.file = fmt("%s/stdout.log", s->dir);
	s->pid = start_io(argv, &in, &out, &out, true);
	for (int t = 0; t < START_MS / 100; t++) {
		char *probe[] = { CLIENT_BIN, "--host", "127.0.0.1", "--port", fmt("%d", s->tcp),
				  "--query", "SELECT 'Ok.'", NULL };
		struct run r;

		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			printf("FAILED: clickhouse-server %d exited:\n%s\n", i,
			       slurp(out.file, NULL) ?: "");
			s->pid = -1;
			return -1;
		}
		if (!run(&r, probe) && r.status == 0 && (ans = r.out) && !strcmp(ans, "Ok.\n"))
			return 0;
		wait_ms(100);
	}
	printf("FAILED: clickhouse-server %d does not answer on port %d\n", i, s->tcp);
	return -1;
}

static void stop_server(struct server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	if (wait_exit_within(s->pid, 30000) < 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = -1;
}

/* ---- recordings ---- */

static int record_one(int k)
{
	const char *target = k == HOSTILE || k == HOSTILE_PF ? "tests/targets/hostile" :
			     k == FLOOD ? "tests/targets/flood" : "examples/nested";
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", rec_dir[k], "--",
			 fmt("%s/%s", build, target), NULL, NULL, NULL };
	struct run r = { 0 };

	if (k == SUMONLY || k == HOSTILE_PF) {
		argv[4] = k == SUMONLY ? "--summary-only" : "--format=perfetto";
		argv[5] = "--";
		argv[6] = fmt("%s/%s", build, target);
	}
	if (k == FLOOD) {
		argv[6] = "2";
		argv[7] = fmt("%d", FLOOD_SPANS / 4);
	}
	if (run(&r, argv) || !(rec_sum[k] = summary_of(rec_dir[k]))) {
		printf("FAILED: cannot record %s: %s\n", target, r.err ? r.err : "");
		return -1;
	}
	/* FLOOD's is not parsed here (json-c would take ~100 MB): ClickHouse compares it. */
	if (k != SUMONLY && k != FLOOD && k != HOSTILE_PF)
		rec_trace[k] = load_json(fmt("%s/leanprofiler-trace.json", rec_dir[k]));
	return 0;
}

static int setup(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		srv[i].http = free_port();
		srv[i].tcp = free_port();
		srv[i].dir = fmt("%s/server%d", tmpdir, i);
		srv[i].url = fmt("http://127.0.0.1:%d/", srv[i].http);
		if (srv[i].http < 0 || srv[i].tcp < 0 || mkdir(srv[i].dir, 0700))
			return -1;
	}
	/* A self-signed certificate for 127.0.0.1: the TLS test's CA file. */
	srv[0].https = free_port();
	{
		char *argv[] = { "/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
				 "-keyout", fmt("%s/server.key", srv[0].dir), "-out",
				 fmt("%s/server.crt", srv[0].dir), "-days", "2", "-subj",
				 "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", NULL };
		struct run r;

		if (srv[0].https < 0 || run(&r, argv) || r.status != 0) {
			printf("FAILED: openssl cannot make a certificate\n");
			return -1;
		}
	}
	for (int i = 0; i < 2; i++)
		write_configs(&srv[i]);
	for (int i = 0; i < 2; i++)
		if (start_server(&srv[i], i))
			return -1;
	for (int k = 0; k < NREC; k++) {
		time_t t0 = time(NULL);

		rec_dir[k] = fmt("%s/rec%d", tmpdir, k);
		if (record_one(k))
			return -1;
		/* BETA2 starts in a later second than BETA1: DateTime has seconds. */
		while (k == BETA1 && time(NULL) == t0)
			wait_ms(20);
		while (k == BETA1 && time(NULL) <= (time_t)(get_i(get(rec_sum[k], "recording"), "start_unix_ns") / 1000000000))
			wait_ms(20);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *rm[] = { "/bin/rm", "-rf", tmpdir, NULL };

	for (int i = 0; i < 2; i++)
		stop_server(&srv[i]);
	stop_started(state);
	/* The servers' data: a few hundred MB that nothing reads again. */
	wait_exit(spawn_to(rm, "/dev/null", "/dev/null"));
	return 0;
}

/* ---- helpers ---- */

static struct run export_as(const char *url, const char *host, const char *path, const char *extra)
{
	char *argv[] = { fmt("%s/leanprofiler", build), "export", "--clickhouse", (char *)url,
			 "--host", (char *)host, (char *)path, (char *)extra, NULL };
	struct run r;

	assert_int_equal(run(&r, argv), 0);
	return r;
}

static void export_ok(int server, int k)
{
	struct run r = export_as(srv[server].url, rec_host[k], rec_dir[k], NULL);

	if (r.status != 0)
		fail_msg("export of %s exited %d:\n%s", rec_dir[k], r.status, r.err);
	run_free(&r);
}

static size_t lines_of(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* The docs/fleet.md example named name, with its date replaced by moment (may be NULL). */
static char *example(const char *name, const char *moment)
{
	char *doc = slurp("docs/fleet.md", NULL), *p, *end, *sql;
	char *tag = fmt("```sql\n-- example: %s\n", name);

	assert_non_null(doc);
	p = strstr(doc, tag);
	if (!p)
		fail_msg("docs/fleet.md has no example %s", name);
	p += strlen(tag);
	end = strstr(p, "```");
	assert_non_null(end);
	sql = strndup(p, (size_t)(end - p));
	while (moment && (p = strstr(sql, MOMENT)))
		memcpy(p, moment, strlen(MOMENT));
	return sql;
}

/* The recording's run id, as the runs table has it. */
static char *run_id_of(int server, int k)
{
	char *id = query(&srv[server], fmt("SELECT run_id FROM leanprofiler.runs WHERE "
					    "start_unix_ns = %lld",
					    (long long)get_i(get(rec_sum[k], "recording"),
							     "start_unix_ns")));

	id[strcspn(id, "\n")] = '\0';
	assert_int_equal(strlen(id), 64);
	return id;
}

/* The durations (ns) of the trace's spans named name, sorted. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t durations(int k, const char *name, uint64_t *out, size_t max)
{
	json_object *ev = get(rec_trace[k], "traceEvents");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		const char *d;

		if (strcmp(get_s(e, "ph"), "X") || strcmp(get_s(e, "name"), name))
			continue;
		d = json_object_get_string(get(e, "dur")); /* "US.NNN": exact ns */
		assert_true(n < max);
		out[n++] = (uint64_t)strtoull(d, NULL, 10) * 1000 + (uint64_t)atoi(strchr(d, '.') + 1);
	}
	return n;
}

/* Nearest rank, as the summary's P95: the ceil(0.95 n)-th smallest. */
static uint64_t p95_of(uint64_t *d, size_t n)
{
	size_t rank = (95 * n + 99) / 100;

	qsort(d, n, sizeof(*d), cmp_u64);
	return n ? d[rank - 1] : 0;
}

static json_object *row_named(int k, const char *name)
{
	json_object *rows = get(rec_sum[k], "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++)
		if (!strcmp(get_s(json_object_array_get_idx(rows, i), "name"), name))
			return json_object_array_get_idx(rows, i);
	fail_msg("no row %s", name);
	return NULL;
}

/* ---- tests ---- */

/* Two hosts' recordings: what SQL answers is what the summaries and traces say. */
static void test_two_hosts_answer_the_summaries(void **state)
{
	static const char *const names[] = { "model.forward", "input.load",
					     "example.nested-spans" };
	uint64_t d[64], n;
	char *ans, *want;

	(void)state;
	export_ok(0, ALPHA);
	export_ok(0, BETA1);
	export_ok(0, BETA2);
	for (size_t i = 0; i < 3; i++) {
		for (int k = ALPHA; k <= BETA2; k++) {
			json_object *row = row_named(k, names[i]);
			char *id = run_id_of(0, k);

			/* The groups row: the summary's figures. */
			ans = query(&srv[0], fmt("SELECT calls, p95_ns, total_ns, self_ns FROM "
						 "leanprofiler.groups WHERE run_id = '%s' AND "
						 "name = '%s'", id, names[i]));
			want = fmt("%lld\t%lld\t%lld\t%lld\n", (long long)get_i(row, "calls"),
				   (long long)get_i(row, "p95_ns"), (long long)get_i(row, "total_ns"),
				   (long long)get_i(row, "self_ns"));
			assert_string_equal(ans, want);
			/* The spans: as many as calls, the same P95 by nearest rank. */
			n = durations(k, names[i], d, 64);
			assert_int_equal(n, get_i(row, "calls"));
			ans = query(&srv[0], fmt("SELECT count(), arrayElement(arraySort(groupArray("
						 "dur_ns)), toUInt64(ceil(0.95 * count()))) FROM "
						 "leanprofiler.spans WHERE run_id = '%s' AND name = '%s'",
						 id, names[i]));
			assert_string_equal(ans, fmt("%llu\t%lld\n", (unsigned long long)n,
						     (long long)get_i(row, "p95_ns")));
		}
	}
	/* docs/fleet.md: P95 of model.forward per host this week. */
	{
		uint64_t a[64], b[128];
		size_t na = durations(ALPHA, "model.forward", a, 64);
		size_t nb = durations(BETA1, "model.forward", b, 128);

		nb += durations(BETA2, "model.forward", b + nb, 128 - nb);
		ans = query(&srv[0], example("p95-per-host", NULL));
		want = fmt("alpha\t%zu\t%llu\nbeta\t%zu\t%llu\n", na,
			   (unsigned long long)p95_of(a, na), nb, (unsigned long long)p95_of(b, nb));
		assert_string_equal(ans, want);
		assert_int_equal(p95_of(a, na), get_i(row_named(ALPHA, "model.forward"), "p95_ns"));
	}
	/* Every span of the run has a parent that is a span of the run, and depth = its depth + 1. */
	ans = query(&srv[0], fmt("SELECT countIf(c.depth != p.depth + 1) FROM leanprofiler.spans AS c "
				 "ANY INNER JOIN (SELECT toInt64(span) AS parent, depth FROM leanprofiler.spans "
				 "WHERE run_id = '%s') AS p USING parent WHERE c.run_id = '%s'",
				 run_id_of(0, ALPHA), run_id_of(0, ALPHA)));
	assert_string_equal(ans, "0\n");
	assert_int_equal(query_u64(&srv[0], fmt("SELECT countIf(parent = -1) FROM leanprofiler.spans "
						"WHERE run_id = '%s'", run_id_of(0, ALPHA))),
			 1);
}

/* docs/fleet.md's regression query: BETA1 before the moment, BETA2 after. */
static void test_regression_between_two_dates(void **state)
{
	char *moment = query(&srv[0], fmt("SELECT toString(start_time) FROM leanprofiler.runs WHERE "
					   "run_id = '%s'", run_id_of(0, BETA2)));
	char *ans, *line;

	(void)state;
	moment[strcspn(moment, "\n")] = '\0';
	assert_int_equal(strlen(moment), strlen(MOMENT));
	ans = query(&srv[0], example("regression", moment));
	/* host, name, p95_before, p95_after, ratio: one line per name of beta. */
	assert_int_equal(lines_of(ans), json_object_array_length(get(rec_sum[BETA1], "rows")));
	for (line = ans; *line; line = strchr(line, '\n') + 1) {
		char host[64], name[64];
		unsigned long long before, after;

		assert_int_equal(sscanf(line, "%63[^\t]\t%63[^\t]\t%llu\t%llu", host, name, &before,
					&after), 4);
		assert_string_equal(host, "beta");
		assert_int_equal(before, get_i(row_named(BETA1, name), "p95_ns"));
		assert_int_equal(after, get_i(row_named(BETA2, name), "p95_ns"));
	}
	/* docs/fleet.md: beta's runs, oldest first. */
	ans = query(&srv[0], example("runs-of-host", NULL));
	assert_int_equal(lines_of(ans), 2);
	assert_non_null(strstr(ans, run_id_of(0, BETA1)));
	assert_true(strstr(ans, run_id_of(0, BETA1)) < strstr(ans, run_id_of(0, BETA2)));
}

static uint64_t total_rows(int server)
{
	return query_u64(&srv[server], "SELECT (SELECT count() FROM leanprofiler.runs) * 1000000 + "
				       "(SELECT count() FROM leanprofiler.groups) * 1000 + "
				       "(SELECT count() FROM leanprofiler.spans)");
}

/* A second export of the same recording stores nothing more, and says so. */
static void test_second_export_duplicates_nothing(void **state)
{
	uint64_t before, after;
	struct run r;

	(void)state;
	export_ok(0, ALPHA);
	before = total_rows(0);
	r = export_as(srv[0].url, "another-name", rec_dir[ALPHA], NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "already"));
	assert_int_equal(lines_of(r.err), 1);
	after = total_rows(0);
	/* Without FINAL: nothing was inserted, not merely folded later. */
	assert_int_equal(after, before);
	assert_int_equal(query_u64(&srv[0], example("exactly-once", NULL)),
			 query_u64(&srv[0], "SELECT count() FROM leanprofiler.spans"));
}

/* Cut short before its runs row: the next export completes it without a second copy. */
static void test_cut_short_export_is_completed(void **state)
{
	const char *db = "cutshort";
	char *id;
	struct run r;
	char *argv[] = { fmt("%s/leanprofiler", build), "export", "--clickhouse", srv[1].url,
			 "--database", (char *)db, "-q", rec_dir[BETA1], NULL };
	uint64_t spans, groups;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	spans = query_u64(&srv[1], "SELECT count() FROM cutshort.spans");
	groups = query_u64(&srv[1], "SELECT count() FROM cutshort.groups");
	/* What a crash between the spans and the runs row leaves. */
	query(&srv[1], "DROP TABLE cutshort.runs");
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM cutshort.spans"), spans);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM cutshort.groups"), groups);
	id = query(&srv[1], "SELECT run_id, groups_rows, spans_rows FROM cutshort.runs");
	assert_non_null(strstr(id, fmt("\t%llu\t%llu\n", (unsigned long long)groups,
				       (unsigned long long)spans)));
	query(&srv[1], "DROP DATABASE cutshort");
}

/* A Distributed table over the two servers (two shards) answers across both. */
static void test_distributed_over_two_shards(void **state)
{
	char *create = example("distributed", NULL), *stmt, *save = NULL, *ans;
	uint64_t a, b;

	(void)state;
	export_ok(1, GAMMA);
	export_ok(0, ALPHA);
	for (stmt = strtok_r(create, ";", &save); stmt; stmt = strtok_r(NULL, ";", &save))
		if (strspn(stmt, " \n") < strlen(stmt))
			query(&srv[0], stmt);
	a = query_u64(&srv[0], "SELECT count() FROM leanprofiler.spans");
	b = query_u64(&srv[1], "SELECT count() FROM leanprofiler.spans");
	assert_true(a > 0 && b > 0);
	ans = query(&srv[0], example("across-shards", NULL));
	/* gamma is only on the second server, alpha only on the first. */
	assert_non_null(strstr(ans, fmt("gamma\t%lld\n", (long long)get_i(get(rec_sum[GAMMA],
									      "events_received"),
								  "enter"))));
	assert_non_null(strstr(ans, "alpha\t"));
	assert_int_equal(query_u64(&srv[0], "SELECT count() FROM leanprofiler.spans_all"), a + b);
}

/* The recording's files, byte for byte. */
static char *files_of(int k)
{
	char *s = slurp(fmt("%s/leanprofiler-summary.json", rec_dir[k]), NULL);
	char *t = slurp(fmt("%s/leanprofiler-trace.json", rec_dir[k]), NULL);

	assert_non_null(s);
	return fmt("%s\n--\n%s", s, t ? t : "");
}

static void expect_failure(struct run *r, int status, const char *says, const char *files_before,
			   int k)
{
	if (r->status != status)
		fail_msg("exit %d, not %d; stderr:\n%s", r->status, status, r->err);
	assert_int_equal(lines_of(r->err), 1);
	assert_true(says_error(r->err));
	if (!strstr(r->err, says))
		fail_msg("stderr does not say '%s':\n%s", says, r->err);
	assert_string_equal(files_of(k), files_before);
	run_free(r);
}

static void test_unreachable_server(void **state)
{
	char *before = files_of(BETA1);
	int closed = free_port(); /* nothing listens there */
	struct run r = export_as(fmt("http://127.0.0.1:%d/", closed), "x", rec_dir[BETA1], NULL);

	(void)state;
	expect_failure(&r, 1, "cannot reach", before, BETA1);
}

/* Not a recording, or one whose trace is missing: one line, 125, nothing stored. */
static void test_bad_recording(void **state)
{
	char *empty = fmt("%s/empty", tmpdir), *half = fmt("%s/half", tmpdir);
	uint64_t before = total_rows(0);
	struct run r;

	(void)state;
	assert_int_equal(mkdir(empty, 0700), 0);
	r = export_as(srv[0].url, "x", empty, NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(lines_of(r.err), 1);
	assert_non_null(strstr(r.err, "no recording here"));
	run_free(&r);
	/* The summary alone, of a recording that has a trace. */
	assert_int_equal(mkdir(half, 0700), 0);
	write_file(fmt("%s/leanprofiler-summary.json", half),
		   slurp(fmt("%s/leanprofiler-summary.json", rec_dir[GAMMA]), NULL));
	r = export_as(srv[0].url, "x", half, NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(lines_of(r.err), 1);
	assert_non_null(strstr(r.err, "copy the recording's directory whole"));
	run_free(&r);
	/* A summary that is not one. */
	write_file(fmt("%s/leanprofiler-summary.json", half), "{\"schema\":\"nope\"}\n");
	r = export_as(srv[0].url, "x", half, NULL);
	assert_int_equal(r.status, 125);
	assert_int_equal(lines_of(r.err), 1);
	run_free(&r);
	assert_int_equal(total_rows(0), before);
}

static void test_credentials(void **state)
{
	char *before = files_of(BETA1), *cred = fmt("%s/creds", tmpdir);
	struct run r;

	(void)state;
	/* A wrong password from the environment. */
	setenv("LEANPROFILER_CLICKHOUSE_USER", "lp", 1);
	setenv("LEANPROFILER_CLICKHOUSE_PASSWORD", "wrong", 1);
	r = export_as(srv[0].url, "x", rec_dir[BETA1], NULL);
	expect_failure(&r, 2, "credentials refused", before, BETA1);
	/* The right one works. */
	setenv("LEANPROFILER_CLICKHOUSE_PASSWORD", PASSWORD, 1);
	r = export_as(srv[0].url, "beta", rec_dir[BETA1], NULL);
	assert_int_equal(r.status, 0);
	run_free(&r);
	unsetenv("LEANPROFILER_CLICKHOUSE_USER");
	unsetenv("LEANPROFILER_CLICKHOUSE_PASSWORD");
	/* A file: refused while others can read it, used once it is the owner's alone. */
	write_file(cred, "lp:" PASSWORD "\n");
	assert_int_equal(chmod(cred, 0644), 0);
	r = export_as(srv[0].url, "beta", rec_dir[BETA1], fmt("--credentials=%s", cred));
	expect_failure(&r, 125, "chmod 600", before, BETA1);
	assert_int_equal(chmod(cred, 0600), 0);
	r = export_as(srv[0].url, "beta", rec_dir[BETA1], fmt("--credentials=%s", cred));
	assert_int_equal(r.status, 0);
	run_free(&r);
	/* A first line past LP_EX_CREDENTIALS_MAX (4096): refused, not cut to a wrong password. */
	{
		char *long_line = calloc(1, 5001);

		assert_non_null(long_line);
		memcpy(long_line, "lp:", 3);
		memset(long_line + 3, 'p', 4997);
		write_file(cred, long_line);
		free(long_line);
	}
	r = export_as(srv[0].url, "beta", rec_dir[BETA1], fmt("--credentials=%s", cred));
	expect_failure(&r, 125, "longer than 4096 bytes", before, BETA1);
	write_file(cred, "lp:nope\n");
	r = export_as(srv[0].url, "beta", rec_dir[BETA1], fmt("--credentials=%s", cred));
	expect_failure(&r, 2, "credentials refused", before, BETA1);
	/* In the URL, where ps shows them: refused before anything is sent. */
	r = export_as(fmt("http://lp:pw@127.0.0.1:%d/", srv[0].http), "x", rec_dir[BETA1], NULL);
	expect_failure(&r, 125, "ps shows", before, BETA1);
}

/* TLS by the URL's scheme: the server's certificate is verified (here against --ca-file). */
static void test_tls(void **state)
{
	char *before = files_of(BETA1), *url = fmt("https://127.0.0.1:%d/", srv[0].https);
	struct run r;

	(void)state;
	/* Self-signed: not trusted by the system's CAs. */
	r = export_as(url, "beta", rec_dir[BETA1], NULL);
	expect_failure(&r, 1, "certificate", before, BETA1);
	/* Plain HTTP to the TLS port gets no answer it can read. */
	r = export_as(fmt("http://127.0.0.1:%d/", srv[0].https), "beta", rec_dir[BETA1], NULL);
	assert_int_not_equal(r.status, 0);
	run_free(&r);
	r = export_as(url, "gamma", rec_dir[GAMMA], fmt("--ca-file=%s/server.crt", srv[0].dir));
	if (r.status != 0)
		fail_msg("export over TLS exited %d:\n%s", r.status, r.err);
	run_free(&r);
	assert_int_equal(query_u64(&srv[0], fmt("SELECT count() FROM leanprofiler.runs WHERE "
						"host = 'gamma'")), 1);
}

/* The server answers an error (a readonly user cannot create tables): its text, one line. */
static void test_http_error(void **state)
{
	char *before = files_of(BETA1);
	struct run r;

	(void)state;
	setenv("LEANPROFILER_CLICKHOUSE_USER", "reader", 1);
	r = export_as(srv[0].url, "x", rec_dir[BETA1], "--database=readonly_db");
	unsetenv("LEANPROFILER_CLICKHOUSE_USER");
	expect_failure(&r, 3, "answered HTTP 500", before, BETA1);
}

/* A growing text (the test links no core code). */
struct text {
	char *p;
	size_t len, cap;
};

static void add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->len, s, n + 1);
	t->len += n;
}

/* The bytes of s as ClickHouse's hex() writes them. */
static char *hex(const char *s, size_t len)
{
	char *h = malloc(2 * len + 1);

	assert_non_null(h);
	for (size_t i = 0; i < len; i++)
		sprintf(h + 2 * i, "%02X", (unsigned char)s[i]);
	h[2 * len] = '\0';
	return h;
}

static char *hex_str(json_object *v)
{
	return v ? hex(json_object_get_string(v), (size_t)json_object_get_string_len(v)) : "";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The hostile names and metadata, byte for byte, in groups and in spans. */
/*
 * The spans table of run id: each name with its string metadata, as a sorted
 * list of lines, the same as recording k's JSON trace's spans.
 */
static void spans_as_trace(const char *id, int k)
{
	json_object *ev = get(rec_trace[k], "traceEvents");
	struct text want = { 0 };
	char *ans, **lines;
	size_t n = 0, cap = json_object_array_length(ev);

	lines = calloc(cap + 1, sizeof(*lines));
	assert_non_null(lines);
	for (size_t i = 0; i < cap; i++) {
		json_object *e = json_object_array_get_idx(ev, i), *args;
		char *keys = "", *vals = "";
		int nk = 0;

		if (strcmp(get_s(e, "ph"), "X"))
			continue;
		args = NULL;
		json_object_object_get_ex(e, "args", &args);
		if (!args)
			args = json_object_new_object();
		json_object_object_foreach(args, key, val)
			{
				if (!json_object_is_type(val, json_type_string))
					continue;
				keys = fmt("%s%s%s", keys, nk ? "," : "", hex(key, strlen(key)));
				vals = fmt("%s%s%s", vals, nk++ ? "," : "", hex_str(val));
			}
		lines[n++] = fmt("%s\t%s\t%s", hex_str(get(e, "name")), keys, vals);
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	want.len = 0;
	for (size_t i = 0; i < n; i++) {
		add(&want, lines[i]);
		add(&want, "\n");
	}
	ans = query(&srv[0], fmt("SELECT hex(name), arrayStringConcat(arrayMap(x -> hex(x), meta_keys), ','), "
				 "arrayStringConcat(arrayMap(x -> hex(x), meta_values), ',') AS l "
				 "FROM leanprofiler.spans WHERE run_id = '%s'", id));
	{
		/* Sorted here too: ClickHouse's ORDER BY of hex text is not strcmp's order of these lines. */
		char **got = calloc(n + 1, sizeof(*got)), *save = NULL, *l;
		size_t m = 0;
		struct text g = { 0 };

		for (l = strtok_r(ans, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			assert_true(m < n + 1);
			got[m++] = l;
		}
		assert_int_equal(m, n);
		qsort(got, m, sizeof(*got), cmp_str);
		for (size_t i = 0; i < m; i++) {
			add(&g, got[i]);
			add(&g, "\n");
		}
		assert_string_equal(g.p, want.p);
	}
}

static void test_hostile_round_trip(void **state)
{
	json_object *rows = get(rec_sum[HOSTILE], "rows");
	struct text want = { 0 };
	char *id, *ans;

	(void)state;
	export_ok(0, HOSTILE);
	id = run_id_of(0, HOSTILE);
	/* The host name too. */
	assert_string_equal(query(&srv[0], fmt("SELECT hex(host) FROM leanprofiler.runs WHERE "
					       "run_id = '%s'", id)),
			    fmt("%s\n", hex(rec_host[HOSTILE], strlen(rec_host[HOSTILE]))));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);
		char *line = fmt("%zu\t%s\t%s\t%lld\n", i, hex_str(get(r, "name")), hex_str(get(r, "meta_text")),
			   (long long)get_i(r, "calls"));
		add(&want, line);
	}
	ans = query(&srv[0], fmt("SELECT row, hex(name), hex(meta_text), calls FROM leanprofiler.groups "
				 "WHERE run_id = '%s' ORDER BY row", id));
	assert_string_equal(ans, want.p);
	/* Metadata keys and values of every row, as the summary's meta objects. */
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i), *meta = get(r, "meta");
		char *keys = "", *vals = "";
		int nk = 0;

		if (!meta)
			meta = json_object_new_object();
		json_object_object_foreach(meta, key, val)
			{
				keys = fmt("%s%s%s", keys, nk ? "," : "", hex(key, strlen(key)));
				vals = fmt("%s%s%s", vals, nk++ ? "," : "", hex_str(val));
			}
		ans = query(&srv[0], fmt("SELECT arrayStringConcat(arrayMap(x -> hex(x), meta_keys), ','), "
					 "arrayStringConcat(arrayMap(x -> hex(x), meta_values), ',') "
					 "FROM leanprofiler.groups WHERE run_id = '%s' AND row = %zu",
					 id, i));
		assert_string_equal(ans, fmt("%s\t%s\n", keys, vals));
	}
	spans_as_trace(id, HOSTILE);
}

/* record --format perfetto: its spans are exported as the JSON trace's (read from the .pftrace). */
static void test_perfetto_trace_exported(void **state)
{
	(void)state;
	export_ok(0, HOSTILE_PF);
	spans_as_trace(run_id_of(0, HOSTILE_PF), HOSTILE);
}

static void test_summary_only(void **state)
{
	char *id;

	(void)state;
	export_ok(0, SUMONLY);
	id = run_id_of(0, SUMONLY);
	assert_int_equal(query_u64(&srv[0], fmt("SELECT count() FROM leanprofiler.spans WHERE "
						"run_id = '%s'", id)), 0);
	assert_int_equal(query_u64(&srv[0], fmt("SELECT count() FROM leanprofiler.groups WHERE "
						"run_id = '%s'", id)),
			 json_object_array_length(get(rec_sum[SUMONLY], "rows")));
	assert_string_equal(query(&srv[0], fmt("SELECT summary_only, spans_rows FROM "
					       "leanprofiler.runs WHERE run_id = '%s'", id)),
			    "1\t0\n");
}

/* record --export: one command; a failed export keeps the recording, and says so by 124. */
static void test_record_export(void **state)
{
	char *dir = fmt("%s/rec-export", tmpdir), *bad = fmt("%s/rec-export-bad", tmpdir);
	char *ok[] = { fmt("%s/leanprofiler", build), "record", "-o", dir, "--export", srv[1].url,
		       "--", fmt("%s/examples/nested", build), NULL };
	char *fail[] = { fmt("%s/leanprofiler", build), "record", "-o", bad, "--export",
			 fmt("http://127.0.0.1:%d/", free_port()), "--",
			 fmt("%s/examples/nested", build), NULL };
	char *report[] = { fmt("%s/leanprofiler", build), "report", bad, NULL };
	uint64_t runs = query_u64(&srv[1], "SELECT count() FROM leanprofiler.runs");
	struct run r;

	(void)state;
	assert_int_equal(run(&r, ok), 0);
	if (r.status != 0)
		fail_msg("record --export exited %d:\n%s", r.status, r.err);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM leanprofiler.runs"), runs + 1);
	assert_int_equal(query_u64(&srv[1], fmt("SELECT count() FROM leanprofiler.spans WHERE "
						"run_id IN (SELECT run_id FROM leanprofiler.runs "
						"WHERE start_unix_ns = %lld)",
						(long long)get_i(get(summary_of(dir), "recording"),
								 "start_unix_ns"))),
			 get_i(get(summary_of(dir), "events_received"), "enter"));
	run_free(&r);

	assert_int_equal(run(&r, fail), 0);
	if (r.status != 124)
		fail_msg("record --export to a closed port exited %d, not 124:\n%s", r.status, r.err);
	assert_int_equal(lines_of(r.err), 1);
	assert_non_null(strstr(r.err, "cannot reach"));
	run_free(&r);
	/* Nothing lost: the recording reads back whole, and exports later. */
	assert_int_equal(run(&r, report), 0);
	assert_int_equal(r.status, 0);
	run_free(&r);
	r = export_as(srv[1].url, "later", bad, "-q");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* This host's name, as record --export stores its runs under. */
static const char *host_name(void)
{
	static char host[256];

	if (!host[0] && (gethostname(host, sizeof(host) - 1) || !host[0]))
		snprintf(host, sizeof(host), "unknown");
	return host;
}

/*
 * record --window --export: one runs row per window as each closes, with its
 * start and length; docs/fleet.md's P95 per window answers what each window's
 * summary says. Then a runs table of the first schema (no window columns)
 * gets them when a window is exported into it.
 */
static void test_record_window_export(void **state)
{
	char *dir = fmt("%s/rec-window", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", dir, "--window", "0.5",
			 "--export", srv[1].url, "--", fmt("%s/tests/targets/windowed", build),
			 fmt("%s/windowed.log", tmpdir), "25", NULL };
	char *files = NULL, *want = strdup(""), *sql, *p, *ans, *first = NULL;
	uint64_t before = query_u64(&srv[1], "SELECT count() FROM leanprofiler.runs "
					     "WHERE window_length_ns > 0");
	size_t nwin = 0;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record --window --export exited %d:\n%s", r.status, r.err);
	run_free(&r);
	{
		char *ls[] = { "/bin/sh", "-c", fmt("cd %s && ls leanprofiler-summary.2*.json", dir),
			       NULL };

		assert_int_equal(run(&r, ls), 0);
		files = r.out;
	}
	/* The expected answer, window by window from the summaries: host, start, P95, calls. */
	for (char *f = strtok(files, "\n"); f; f = strtok(NULL, "\n")) {
		json_object *sum = json_object_from_file(fmt("%s/%s", dir, f)), *w = get(sum, "window");
		json_object *rows = get(sum, "rows");
		const char *host = host_name();

		if (!first)
			first = strdup(f);
		nwin++;
		assert_int_equal(query_u64(&srv[1], fmt("SELECT count() FROM leanprofiler.runs WHERE "
							"window_start_unix_ns = %lld AND "
							"window_length_ns = %lld",
							(long long)get_i(w, "start_unix_ns"),
							(long long)get_i(w, "length_ns"))),
				 1);
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *row = json_object_array_get_idx(rows, i);

			if (strcmp(json_object_get_string(get(row, "name")), "win.inner"))
				continue;
			want = fmt("%s%s\t%lld\t%lld\t%lld\n", want, host,
				   (long long)get_i(w, "start_unix_ns"), (long long)get_i(row, "p95_ns"),
				   (long long)get_i(row, "calls"));
		}
		json_object_put(sum);
	}
	assert_true(nwin >= 5);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM leanprofiler.runs "
					    "WHERE window_length_ns > 0"),
			 before + nwin);
	sql = example("p95-per-window", NULL);
	while ((p = strstr(sql, "'model.forward'")))
		memcpy(p, "'win.inner'    ", 15);
	ans = query(&srv[1], sql);
	assert_string_equal(ans, want);

	/* A runs table an older leanprofiler made: the window columns are added, the row goes in. */
	query(&srv[0], "CREATE DATABASE IF NOT EXISTS oldschema");
	/* The runs table of schema leanprofiler-clickhouse/1 as it was first made. */
	query(&srv[0], "CREATE TABLE oldschema.runs (run_id String, schema_version UInt16, "
		       "host String, label_keys Array(String), label_values Array(String), "
		       "command Array(String), mode String, binary String, pid Int64, "
		       "start_time DateTime, start_unix_ns UInt64, start_ns UInt64, end_ns UInt64, "
		       "window_ns UInt64, end_reason String, exit_status Int32, "
		       "events UInt64, threads UInt64, lost_events UInt64, unterminated_spans UInt64, "
		       "uncertain_spans UInt64, started_before_recording UInt64, "
		       "resources_available UInt8, user_cpu_ns UInt64, system_cpu_ns UInt64, "
		       "peak_rss_kib Nullable(UInt64), voluntary_context_switches UInt64, "
		       "involuntary_context_switches UInt64, counter_name String, summary_only UInt8, "
		       "groups_rows UInt64, spans_rows UInt64, exported_at DateTime) "
		       "ENGINE = ReplacingMergeTree(exported_at) PARTITION BY toYYYYMM(start_time) "
		       "ORDER BY run_id");
	query(&srv[0], "INSERT INTO oldschema.runs (run_id, host) VALUES ('older', 'old')");
	{
		char *ex[] = { fmt("%s/leanprofiler", build), "export", "--clickhouse", srv[0].url,
			       "--database", "oldschema", "-q", fmt("%s/%s", dir, first), NULL };

		assert_int_equal(run(&r, ex), 0);
		if (r.status != 0)
			fail_msg("export of a window into an older runs table exited %d:\n%s",
				 r.status, r.err);
		run_free(&r);
	}
	assert_int_equal(query_u64(&srv[0], "SELECT count() FROM system.columns WHERE database = "
					    "'oldschema' AND table = 'runs' AND name IN "
					    "('window_start_unix_ns', 'window_length_ns')"),
			 2);
	/* The older row reads 0 there: not a window. */
	ans = query(&srv[0], "SELECT host, window_length_ns > 0 FROM oldschema.runs "
			     "ORDER BY window_length_ns");
	assert_string_equal(ans, fmt("old\t0\n%s\t1\n", host_name()));
}


/* ---- compressed rows (--compress), through a proxy that counts the bytes ---- */

/*
 * An HTTP proxy in front of the second server, as a site may put one there,
 * in one of five modes towards request bodies sent with Content-Encoding:
 * "pass" forwards them as they are; "strip" drops the header (ClickHouse then
 * reads the gzip bytes as rows); "inflate" decodes the body and keeps the
 * header (ClickHouse then inflates plain rows); "upper" sends the header's
 * value in capitals (a coding ClickHouse does not know: "GZIP"); "415"
 * answers 415 Unsupported Media Type itself (RFC 7694). A sixth, "failN",
 * forwards every body but the N-th, which it answers itself with HTTP 500 and
 * a ClickHouse exception (a server that fails mid-export). Every other
 * answer is the server's own.
 * One line per request with a body in its log: "ENCODING BYTES STATUS TABLE
 * ROWS FIRST LAST GAPLESS": the table of its INSERT, its rows, and for spans
 * the first and last span id and whether the ids between go up by one (-1:
 * not rows it could read).
 * Prints its port once it listens.
 */
static const char proxy_py[] =
	"import gzip, http.client, http.server, json, sys, urllib.parse\n"
	"upstream, mode, log = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], 'a', buffering=1)\n"
	"bodies = 0\n"
	"def rows_of(path, enc, body):\n"
	"    q = urllib.parse.parse_qs(urllib.parse.urlparse(path).query).get('query', [''])[0]\n"
	"    table = q.split()[2].split('.')[-1] if q.startswith('INSERT INTO ') else '-'\n"
	"    try:\n"
	"        rows = (gzip.decompress(body) if enc == 'gzip' else body).splitlines()\n"
	"        ids = [json.loads(r)['span'] for r in rows] if table == 'spans' else [-1]\n"
	"    except Exception:\n"
	"        return '%s -1 -1 -1 -1' % table\n"
	"    gapless = all(b == a + 1 for a, b in zip(ids, ids[1:]))\n"
	"    return '%s %d %d %d %d' % (table, len(rows), ids[0], ids[-1], gapless)\n"
	"class Proxy(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a): pass\n"
	"    def do_POST(self):\n"
	"        global bodies\n"
	"        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))\n"
	"        bodies += bool(body)\n"
	"        enc = self.headers.get('Content-Encoding', '')\n"
	"        fwd = {k: v for k, v in self.headers.items()\n"
	"               if k.lower() not in ('host', 'content-length', 'expect', 'connection')}\n"
	"        if enc and mode == 'strip':\n"
	"            fwd = {k: v for k, v in fwd.items() if k.lower() != 'content-encoding'}\n"
	"        if enc and mode == 'inflate':\n"
	"            body = gzip.decompress(body)\n"
	"        if enc and mode == 'upper':\n"
	"            fwd = {k: v.upper() if k.lower() == 'content-encoding' else v\n"
	"                   for k, v in fwd.items()}\n"
	"        if enc and mode == '415':\n"
	"            status, ans = 415, b'Unsupported Media Type\\n'\n"
	"        elif body and mode == 'fail%d' % bodies:\n"
	"            status, ans = 500, b'Code: 241, e.displayText() = DB::Exception: Memory limit '\\\n"
	"                b'(for query) exceeded (the test proxy)\\nmore lines\\n'\n"
	"        else:\n"
	"            c = http.client.HTTPConnection('127.0.0.1', upstream, timeout=60)\n"
	"            c.request('POST', self.path, body, fwd)\n"
	"            r = c.getresponse(); status, ans = r.status, r.read(); c.close()\n"
	"        if body:\n"
	"            log.write('%s %d %d %s\\n' % (enc or 'identity', len(body), status,\n"
	"                                            rows_of(self.path, enc, body)))\n"
	"        self.send_response(status)\n"
	"        if status == 415:\n"
	"            self.send_header('Accept-Encoding', 'identity')\n"
	"        self.send_header('Content-Length', str(len(ans)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(ans)\n"
	"s = http.server.HTTPServer(('127.0.0.1', 0), Proxy)\n"
	"print('port', s.server_address[1], flush=True)\n"
	"s.serve_forever()\n";

struct proxy {
	pid_t pid;
	char *url, *log;
};

static struct proxy proxy_start(const char *mode)
{
	static int n;
	char *script = fmt("%s/proxy.py", tmpdir);
	struct proxy p = { .log = fmt("%s/proxy-%d-%s.log", tmpdir, n++, mode) };
	char *argv[] = { "/usr/bin/python3", script, fmt("%d", srv[1].http), (char *)mode, p.log,
			 NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_PIPE }, err = { .mode = IO_INHERIT };
	struct lines *l;
	char line[64];
	int port;

	write_file(script, proxy_py);
	write_file(p.log, "");
	p.pid = spawn(argv, &in, &out, &err);
	started_add(p.pid);
	l = lines_new(out.fd);
	if (lines_read(l, line, sizeof(line), 20000) != 1 || sscanf(line, "port %d", &port) != 1)
		fail_msg("the proxy did not start: %s", l->all);
	p.url = fmt("http://127.0.0.1:%d/", port);
	return p;
}

static void proxy_stop(struct proxy *p)
{
	kill(p->pid, SIGKILL);
	wait_exit(p->pid);
	started_forget(p->pid);
}

/* What the proxy's log says: requests with a body by encoding, their bytes, those not 200. */
struct wire {
	int gzip, plain, not_ok;
	uint64_t gzip_bytes, plain_bytes;
	char first[64]; /* the first line */
};

static struct wire wire_of(const struct proxy *p)
{
	struct wire w = { 0 };
	char *log = slurp(p->log, NULL), *save = NULL;

	assert_non_null(log);
	for (char *l = strtok_r(log, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char enc[16];
		unsigned long long bytes;
		int status;

		assert_int_equal(sscanf(l, "%15s %llu %d", enc, &bytes, &status), 3);
		if (!w.first[0])
			snprintf(w.first, sizeof(w.first), "%s", l);
		if (!strcmp(enc, "gzip"))
			w.gzip++, w.gzip_bytes += bytes;
		else if (!strcmp(enc, "identity"))
			w.plain++, w.plain_bytes += bytes;
		else
			fail_msg("the proxy saw Content-Encoding %s", enc);
		w.not_ok += status != 200;
	}
	free(log);
	return w;
}

/* export PATHs... through url with extra options (a NULL-ended list), to database db. */
static struct run export_to(const char *url, const char *db, const char *const *extra,
			    const char *const *paths)
{
	char *argv[16] = { fmt("%s/leanprofiler", build), "export", "--clickhouse", (char *)url,
			   "--database", (char *)db };
	int n = 6;
	struct run r;

	for (; extra && *extra; extra++)
		argv[n++] = (char *)*extra;
	for (; *paths; paths++)
		argv[n++] = (char *)*paths;
	assert_true(n < 16);
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	return r;
}

/* FLOOD's spans (every column) in database db of the second server, one line each, in span order. */
static char *spans_dump(const char *db)
{
	return query(&srv[1], fmt("SELECT run_id, host, time, start_unix_ns, start_ns, dur_ns, pid, "
				  "tid, span, parent, depth, name, meta_keys, meta_values, "
				  "has_counter, counter, unterminated, uncertain, "
				  "started_before_recording FROM %s.spans WHERE run_id IN (SELECT "
				  "run_id FROM %s.runs WHERE start_unix_ns = %lld) ORDER BY span",
				  db, db, (long long)get_i(get(rec_sum[FLOOD], "recording"),
							   "start_unix_ns")));
}

/* The spans of FLOOD's trace: its summary's calls. */
static uint64_t flood_spans(void)
{
	json_object *rows = get(rec_sum[FLOOD], "rows");
	uint64_t n = 0;

	for (size_t i = 0; i < json_object_array_length(rows); i++)
		n += (uint64_t)get_i(json_object_array_get_idx(rows, i), "calls");
	return n;
}

/* FLOOD sent plain into database "plain" of the second server (once): what the others must equal. */
static char *plain_reference(void)
{
	static char *dump;
	static const char *const none[] = { "--compress=none", "--host=flood", NULL };
	const char *const paths[] = { rec_dir[FLOOD], NULL };

	if (!dump) {
		struct run r = export_to(srv[1].url, "plain", none, paths);

		if (r.status != 0)
			fail_msg("export --compress=none exited %d:\n%s", r.status, r.err);
		run_free(&r);
		dump = spans_dump("plain");
		assert_int_equal(lines_of(dump), flood_spans());
	}
	return dump;
}

/* X of the first "X<what>" in err (e.g. what " MB sent (gzip)" in export's last line). */
static char *mb_before(const char *err, const char *what)
{
	const char *p = strstr(err, what), *start;

	if (!p)
		fail_msg("no '%s' in:\n%s", what, err);
	for (start = p; start > err && start[-1] != ' '; start--)
		;
	return fmt("%.*s", (int)(p - start), start);
}

/*
 * By default rows go compressed: every span stored as the same rows sent
 * plain give, in several batches, in at least 8 times fewer bytes on the
 * wire (measured: 15.5 for these spans), and export says both figures.
 */
static void test_gzip_stores_every_span_in_fewer_bytes(void **state)
{
	static const char *const host[] = { "--host=flood", NULL };
	static const char *const none[] = { "--compress=none", "--host=flood", NULL };
	const char *const paths[] = { rec_dir[FLOOD], NULL };
	struct proxy gz = proxy_start("pass"), plain = proxy_start("pass");
	struct wire wg, wp;
	struct run r;

	(void)state;
	assert_true(flood_spans() > 50000); /* more than one batch of spans */
	r = export_to(gz.url, "gz", host, paths);
	if (r.status != 0 || !strstr(r.err, " MB sent (gzip) in "))
		fail_msg("export (auto) exited %d:\n%s", r.status, r.err);
	wg = wire_of(&gz);
	print_message("gzip: %d requests, %llu bytes\n%s", wg.gzip,
		      (unsigned long long)wg.gzip_bytes, r.err);
	/* groups, at least 2 batches of spans, runs: each compressed, each taken. */
	assert_true(wg.gzip >= 4);
	assert_int_equal(wg.plain, 0);
	assert_int_equal(wg.not_ok, 0);
	/* What export says it sent is what went through. */
	assert_string_equal(mb_before(r.err, " MB sent (gzip)"),
			    fmt("%.1f", (double)wg.gzip_bytes / 1e6));
	run_free(&r);

	r = export_to(plain.url, "plain_wire", none, paths);
	if (r.status != 0 || !strstr(r.err, " MB sent (plain) in "))
		fail_msg("export --compress=none exited %d:\n%s", r.status, r.err);
	wp = wire_of(&plain);
	assert_int_equal(wp.gzip, 0);
	assert_int_equal(wp.plain, wg.gzip);
	assert_int_equal(wp.not_ok, 0);
	assert_string_equal(mb_before(r.err, " MB sent (plain)"),
			    fmt("%.1f", (double)wp.plain_bytes / 1e6));
	assert_string_equal(mb_before(r.err, " MB of rows"), mb_before(r.err, " MB sent (plain)"));
	print_message("plain: %llu bytes, %.1f times gzip's\n", (unsigned long long)wp.plain_bytes,
		      (double)wp.plain_bytes / (double)wg.gzip_bytes);
	assert_true(wp.plain_bytes >= 8 * wg.gzip_bytes);
	run_free(&r);
	proxy_stop(&gz);
	proxy_stop(&plain);

	/* Every span, every column, as sent plain; each once. */
	assert_string_equal(spans_dump("gz"), spans_dump("plain_wire"));
	assert_string_equal(spans_dump("gz"), plain_reference());
	assert_int_equal(query_u64(&srv[1], "SELECT uniqExact(span) FROM gz.spans"), flood_spans());
	assert_string_equal(query(&srv[1], "SELECT row, name, calls, p95_ns, hist_count FROM "
					   "gz.groups ORDER BY row"),
			    query(&srv[1], "SELECT row, name, calls, p95_ns, hist_count FROM "
					   "plain_wire.groups ORDER BY row"));
	assert_string_equal(query(&srv[1], "SELECT run_id, groups_rows, spans_rows FROM gz.runs"),
			    query(&srv[1], "SELECT run_id, groups_rows, spans_rows FROM "
					   "plain_wire.runs"));
}

/*
 * A proxy that spoils compressed bodies, four ways: the first batch's
 * refusal is recognised, that batch sent again plain, and the rest of the
 * run (a second recording too) plain from the start; said once, in a
 * warning, and in each recording's line. Nothing is stored twice.
 */
static void test_gzip_refused_falls_back_to_plain(void **state)
{
	static const struct {
		const char *mode, *status, *says;
	} cases[] = {
		{ "strip", "500", "gzip: Code: 27, the gzip bytes were read as rows" },
		{ "inflate", "500", "gzip: Code: 354, inflate failed" },
		{ "upper", "500", "gzip: Code: 89, unknown Content-Encoding" },
		{ "415", "415", "gzip: HTTP 415 Unsupported Media Type; sending" },
	};
	static const char *const host[] = { "--host=flood", NULL };
	const char *const paths[] = { rec_dir[FLOOD], rec_dir[GAMMA], NULL };
	const char *reference = plain_reference();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct proxy p = proxy_start(cases[i].mode);
		char *db = fmt("fallback_%s", cases[i].mode), *warning;
		struct run r = export_to(p.url, db, host, paths);
		struct wire w = wire_of(&p);

		print_message("%s: exit %d, first request '%s'\n%s", cases[i].mode, r.status,
			      w.first, r.err);
		if (r.status != 0)
			fail_msg("%s: exit %d:\n%s", cases[i].mode, r.status, r.err);
		/* One attempt, refused; then every body plain and taken. */
		assert_int_equal(w.gzip, 1);
		assert_non_null(strstr(w.first, "gzip "));
		assert_non_null(strstr(w.first, fmt(" %s", cases[i].status)));
		assert_int_equal(w.not_ok, 1);
		assert_true(w.plain >= 6); /* FLOOD's batches (the refused one again) and GAMMA's */
		/* Said once, as a warning with the reason; both recordings' lines say plain. */
		warning = strstr(r.err, "leanprofiler: warning: ");
		assert_non_null(warning);
		assert_null(strstr(warning + strlen("leanprofiler: warning: "), "warning"));
		assert_non_null(strstr(warning, "did not take rows compressed with gzip"));
		if (!strstr(warning, cases[i].says))
			fail_msg("the warning does not say '%s':\n%s", cases[i].says, r.err);
		assert_null(strstr(r.err, "cannot export"));
		{
			const char *a = strstr(r.err, "(plain: the server refused gzip) in ");

			assert_non_null(a);
			assert_non_null(strstr(a + 1, "(plain: the server refused gzip) in "));
		}
		proxy_stop(&p);
		assert_string_equal(spans_dump(db), reference);
		assert_int_equal(query_u64(&srv[1], fmt("SELECT count() FROM %s.runs", db)), 2);
		assert_int_equal(query_u64(&srv[1], fmt("SELECT count() FROM %s.groups", db)),
				 json_object_array_length(get(rec_sum[FLOOD], "rows")) +
				 json_object_array_length(get(rec_sum[GAMMA], "rows")));
		run_free(&r);
	}
}

/* --compress=gzip does not fall back: one line, exit 3, nothing of the batch stored; none never tries. */
static void test_gzip_forced_and_none(void **state)
{
	static const char *const gzip[] = { "--compress=gzip", "--host=flood", NULL };
	static const char *const none[] = { "--compress=none", "--host=flood", NULL };
	const char *const paths[] = { rec_dir[FLOOD], NULL };
	char *before = files_of(FLOOD);
	struct proxy p = proxy_start("strip");
	struct run r = export_to(p.url, "forced", gzip, paths);
	struct wire w = wire_of(&p);

	(void)state;
	assert_int_equal(w.gzip, 1); /* not sent again, plain or not */
	assert_int_equal(w.plain, 0);
	expect_failure(&r, 3, "did not take rows compressed with gzip: Code: 27", before, FLOOD);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM forced.groups"), 0);
	proxy_stop(&p);

	p = proxy_start("415");
	r = export_to(p.url, "never", none, paths);
	w = wire_of(&p);
	if (r.status != 0 || strstr(r.err, "warning"))
		fail_msg("--compress=none through a proxy refusing gzip: exit %d:\n%s", r.status,
			 r.err);
	assert_int_equal(w.gzip, 0);
	assert_int_equal(w.not_ok, 0);
	run_free(&r);
	proxy_stop(&p);
	assert_string_equal(spans_dump("never"), plain_reference());
}

/* ---- batches sent while the next is built ---- */

/* A request with a body, as the proxy's log has it (see proxy_py). */
struct body {
	char enc[16], table[16];
	unsigned long long bytes;
	int status, gapless;
	long long rows, first, last;
};

/* The proxy's log, in the order of the requests: their number. */
static size_t bodies_of(const struct proxy *p, struct body *out, size_t max)
{
	char *log = slurp(p->log, NULL), *save = NULL;
	size_t n = 0;

	assert_non_null(log);
	for (char *l = strtok_r(log, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		struct body *b = &out[n++];

		assert_true(n <= max);
		if (sscanf(l, "%15s %llu %d %15s %lld %lld %lld %d", b->enc, &b->bytes, &b->status,
			   b->table, &b->rows, &b->first, &b->last, &b->gapless) != 8)
			fail_msg("the proxy's log line '%s'", l);
	}
	free(log);
	return n;
}

#define SMALL_BATCH 1000
#define BODIES_MAX 512

/*
 * Many small batches (--batch-rows), the next built while the one before is
 * sent: the server is sent groups, then every span once, in order, each
 * batch whole and alone (ids 0, 1, 2, ... across the bodies, SMALL_BATCH
 * rows each), then the runs row; and it holds the same rows, column for
 * column, as an export in the default batches. Compressed and plain.
 */
static void test_small_batches_in_order(void **state)
{
	static const char *const modes[] = { "--compress=auto", "--compress=none" };
	const char *const paths[] = { rec_dir[FLOOD], NULL };
	uint64_t spans = flood_spans();
	struct body *b = calloc(BODIES_MAX, sizeof(*b));

	(void)state;
	assert_non_null(b);
	for (size_t m = 0; m < 2; m++) {
		const char *const extra[] = { modes[m], "--host=flood",
					      "--batch-rows=" LP_STR(SMALL_BATCH), NULL };
		char *db = fmt("small_%zu", m);
		struct proxy p = proxy_start("pass");
		struct run r = export_to(p.url, db, extra, paths);
		size_t n = bodies_of(&p, b, BODIES_MAX);
		long long next = 0;

		proxy_stop(&p);
		if (r.status != 0 || !strstr(r.err, fmt(" %llu spans, ", (unsigned long long)spans)))
			fail_msg("%s: exit %d:\n%s", modes[m], r.status, r.err);
		print_message("%s: %zu bodies\n", modes[m], n);
		/* groups, ceil(spans / SMALL_BATCH) batches of spans, runs. */
		assert_int_equal(n, 2 + (spans + SMALL_BATCH - 1) / SMALL_BATCH);
		assert_string_equal(b[0].table, "groups");
		assert_int_equal(b[0].rows, json_object_array_length(get(rec_sum[FLOOD], "rows")));
		assert_string_equal(b[n - 1].table, "runs");
		assert_int_equal(b[n - 1].rows, 1);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(b[i].status, 200);
			assert_string_equal(b[i].enc, m ? "identity" : "gzip");
			if (i == 0 || i == n - 1)
				continue;
			assert_string_equal(b[i].table, "spans");
			if (b[i].first != next || !b[i].gapless ||
			    b[i].rows != (i < n - 2 ? SMALL_BATCH : (long long)(spans - (uint64_t)next)))
				fail_msg("%s: body %zu holds spans %lld to %lld (%lld rows, gapless %d), "
					 "not from %lld", modes[m], i, b[i].first, b[i].last,
					 b[i].rows, b[i].gapless, next);
			next = b[i].last + 1;
		}
		assert_int_equal(next, spans);
		assert_string_equal(spans_dump(db), plain_reference());
		assert_string_equal(query(&srv[1], fmt("SELECT row, name, calls, hist_count FROM "
						       "%s.groups ORDER BY row", db)),
				    query(&srv[1], "SELECT row, name, calls, hist_count FROM "
						   "plain.groups ORDER BY row"));
		assert_string_equal(query(&srv[1], fmt("SELECT run_id, groups_rows, spans_rows FROM "
						       "%s.runs", db)),
				    query(&srv[1], "SELECT run_id, groups_rows, spans_rows FROM "
						   "plain.runs"));
		run_free(&r);
	}
	free(b);
}

/*
 * The server fails the second batch of spans (the third body) while export
 * builds the next: the failure is said in one line with the server's first
 * line, exit 3, nothing is sent after it (not the batch built meanwhile, not
 * the runs row), nothing claims the run was exported, and the server holds
 * the prefix sent before (groups, the first batch of spans), which the next
 * export completes: every span once.
 */
static void test_server_fails_mid_export(void **state)
{
	static const char *const extra[] = { "--host=flood", "--batch-rows=" LP_STR(SMALL_BATCH),
					     NULL };
	const char *const paths[] = { rec_dir[FLOOD], NULL };
	struct body b[8];
	struct proxy p = proxy_start("fail3");
	struct run r = export_to(p.url, "midway", extra, paths);
	size_t n = bodies_of(&p, b, 8);
	char *last;

	(void)state;
	proxy_stop(&p);
	print_message("exit %d, %zu bodies:\n%s", r.status, n, r.err);
	if (r.status != 3)
		fail_msg("exit %d, not 3:\n%s", r.status, r.err);
	assert_int_equal(n, 3);
	assert_int_equal(b[1].status, 200);
	assert_string_equal(b[2].table, "spans");
	assert_int_equal(b[2].first, SMALL_BATCH);
	assert_int_equal(b[2].status, 500);
	/* The failure is the last line said, the server's first line only; no success claimed. */
	last = strstr(r.err, "leanprofiler: cannot export ");
	assert_non_null(last);
	assert_true(says_error(last));
	assert_int_equal(lines_of(last), 1);
	assert_non_null(strstr(last, "answered HTTP 500: Code: 241, e.displayText() = DB::Exception: "
				     "Memory limit (for query) exceeded (the test proxy)\n"));
	assert_null(strstr(r.err, "more lines"));
	assert_null(strstr(r.err, " as run "));
	/* Progress said before it counts only spans stored. */
	for (const char *q = r.err; (q = strstr(q, "exported ")); q++) {
		unsigned long long said = strtoull(q + strlen("exported "), NULL, 10);

		assert_true(said <= SMALL_BATCH);
	}
	run_free(&r);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM midway.runs"), 0);
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM midway.groups"),
			 json_object_array_length(get(rec_sum[FLOOD], "rows")));
	assert_string_equal(query(&srv[1], "SELECT count(), min(span), max(span) FROM midway.spans"),
			    fmt("%d\t0\t%d\n", SMALL_BATCH, SMALL_BATCH - 1));

	/* Straight to the server: the rest is sent, nothing twice. */
	r = export_to(srv[1].url, "midway", extra, paths);
	if (r.status != 0)
		fail_msg("the second export exited %d:\n%s", r.status, r.err);
	run_free(&r);
	assert_string_equal(spans_dump("midway"), plain_reference());
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM midway.spans"), flood_spans());
	assert_int_equal(query_u64(&srv[1], "SELECT count() FROM midway.runs"), 1);
}

/* ---- a hostile server (no ClickHouse: a few lines of Python) ---- */

/*
 * Answers every request with HTTP 500 and a body that never ends: "fast", a
 * first line and then 64 KiB chunks as fast as they are taken; "trickle", no
 * newline ever, a byte every 50 ms (faster than libcurl's stall limit of 1
 * byte a second, so that only a time limit of our own ends it). Prints its
 * port once it listens.
 */
static const char hostile_server_py[] =
	"import socket, sys, time\n"
	"mode = sys.argv[1]\n"
	"s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
	"s.bind(('127.0.0.1', 0)); s.listen(8)\n"
	"print('port', s.getsockname()[1], flush=True)\n"
	"while True:\n"
	"    c, _ = s.accept()\n"
	"    try:\n"
	"        c.settimeout(5); req = b''\n"
	"        while b'\\r\\n\\r\\n' not in req:\n"
	"            d = c.recv(65536)\n"
	"            if not d: break\n"
	"            req += d\n"
	"        c.sendall(b'HTTP/1.1 500 Internal Server Error\\r\\nContent-Type: text/plain\\r\\n\\r\\n')\n"
	"        if mode == 'fast':\n"
	"            c.sendall(b'Code: 999. DB::Exception: hostile first line\\n')\n"
	"            while True: c.sendall(b'x' * 65536)\n"
	"        else:\n"
	"            while True: c.sendall(b'y'); time.sleep(0.05)\n"
	"    except OSError:\n"
	"        pass\n"
	"    c.close()\n";

static char *hostile_rec;

static int hostile_setup(void **state)
{
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o",
			 fmt("%s/hostile-server-rec", tmpdir), "--",
			 fmt("%s/examples/nested", build), NULL };
	struct run r;

	(void)state;
	write_file(fmt("%s/hostile_server.py", tmpdir), hostile_server_py);
	if (run(&r, argv) || r.status != 0)
		return -1;
	run_free(&r);
	hostile_rec = argv[3];
	return 0;
}

/* Starts the server in mode: its PID, *port its port. */
static pid_t hostile_server(const char *mode, int *port)
{
	char *argv[] = { "/usr/bin/python3", fmt("%s/hostile_server.py", tmpdir), (char *)mode, NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_PIPE }, err = { .mode = IO_INHERIT };
	pid_t pid = spawn(argv, &in, &out, &err);
	struct lines *l = lines_new(out.fd);
	char line[64];

	if (lines_read(l, line, sizeof(line), 20000) != 1 || sscanf(line, "port %d", port) != 1)
		fail_msg("the fake server did not start: %s", l->all);
	return pid;
}

/*
 * Issue: a server answering 500 with an endless body held `export` forever
 * (its answer was read to the end, only the first 4096 bytes kept). Now the
 * first line ends the read, and a body without one is read for
 * LP_CH_ERROR_TIMEOUT (10 s) at most: exit 3, one line, within the bound.
 */
static void test_hostile_server_error_body(void **state)
{
	static const struct {
		const char *mode, *says;
		int within_ms;
	} cases[] = {
		{ "fast", "answered HTTP 500: Code: 999. DB::Exception: hostile first line\n", 5000 },
		{ "trickle", "answered HTTP 500: yyy", (10 + 8) * 1000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int port = 0;
		pid_t server = hostile_server(cases[i].mode, &port);
		char *argv[] = { fmt("%s/leanprofiler", build), "export", "--clickhouse",
				 fmt("http://127.0.0.1:%d/", port), "--host", "x", hostile_rec, NULL };
		char *out = fmt("%s/hostile.out", tmpdir), *errp = fmt("%s/hostile.err", tmpdir), *err;
		uint64_t t0 = now_ns();
		pid_t lp = spawn_to(argv, out, errp);
		int status;

		started_add(lp);
		status = wait_exit_within(lp, cases[i].within_ms);
		err = slurp(errp, NULL);
		print_message("%s: exit %d after %.1f s: %s", cases[i].mode, status,
			      (double)(now_ns() - t0) / 1e9, err);
		if (status != 3 || !strstr(err, cases[i].says) || lines_of(err) != 1)
			fail_msg("%s: exit %d, stderr:\n%s", cases[i].mode, status, err);
		if (!strcmp(cases[i].mode, "trickle") &&
		    !strstr(err, "(the rest of the answer not read: more than 10 s)\n"))
			fail_msg("the time limit is not said:\n%s", err);
		free(err);
		kill(server, SIGKILL);
		wait_exit(server);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest hostile[] = {
		cmocka_unit_test_teardown(test_hostile_server_error_body, stop_started),
	};
	const char *filter = getenv("LP_TEST_FILTER");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_hosts_answer_the_summaries),
		cmocka_unit_test(test_regression_between_two_dates),
		cmocka_unit_test(test_second_export_duplicates_nothing),
		cmocka_unit_test(test_cut_short_export_is_completed),
		cmocka_unit_test(test_distributed_over_two_shards),
		cmocka_unit_test(test_unreachable_server),
		cmocka_unit_test(test_bad_recording),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_http_error),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_hostile_round_trip),
		cmocka_unit_test(test_summary_only),
		cmocka_unit_test(test_perfetto_trace_exported),
		cmocka_unit_test(test_record_export),
		cmocka_unit_test(test_gzip_stores_every_span_in_fewer_bytes),
		cmocka_unit_test(test_gzip_refused_falls_back_to_plain),
		cmocka_unit_test(test_gzip_forced_and_none),
		cmocka_unit_test(test_small_batches_in_order),
		cmocka_unit_test(test_server_fails_mid_export),
		cmocka_unit_test(test_record_window_export),
	};

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("export tests"))
		return 0;
	if (access(SERVER_BIN, X_OK) || access(CLIENT_BIN, X_OK)) {
		printf("FAILED: %s and %s are needed (scripts/deps.sh test installs them)\n",
		       SERVER_BIN, CLIENT_BIN);
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	if (filter) /* e.g. LP_TEST_FILTER=test_hostile_server_error_body */
		cmocka_set_test_filter(filter);
	/* Without ClickHouse: first, and alone when the filter names it. */
	if (cmocka_run_group_tests_name("hostile server", hostile, hostile_setup, NULL))
		return 1;
	if (filter && !strncmp(filter, "test_hostile_server", 19)) {
		char *rm[] = { "/bin/rm", "-rf", tmpdir, NULL };

		wait_exit(spawn_to(rm, "/dev/null", "/dev/null"));
		return 0;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
