// SPDX-License-Identifier: MIT
/*
 * export: each recording's summary and trace into the runs, groups and spans
 * tables of a ClickHouse database (docs/fleet.md). The trace is streamed in
 * batches (lp_trace_read reads it from its end with a bounded buffer), so
 * memory stays the same whatever its size.
 *
 * Idempotent by the run id, the SHA-256 of the summary's bytes: a run whose
 * runs row exists is not sent again; the runs row goes last, so a run without
 * one was cut short, and its groups and spans rows already there (a prefix:
 * batches are sent one after the other, each stored whole or not at all) are
 * skipped, not sent twice. Two exporters racing past that check both insert;
 * the ReplacingMergeTree tables fold the copies (FINAL at once, merges later).
 *
 * Batches go compressed with gzip (Content-Encoding: gzip, which ClickHouse's
 * HTTP interface decodes without any setting) unless --compress=none. In auto,
 * a batch is kept plain beside its gzip bytes until the server has taken one:
 * a refusal (lp_ch_refused_encoding: nothing of that batch was stored) sends
 * it again plain, and the rest of the run plain.
 *
 * A second thread sends each batch while the next one is built (the server
 * parses and stores rows at about the speed export makes them: the two then
 * share the time instead of taking turns), so two batches are held at most.
 * A batch is handed over only once the one before is stored: what the server
 * holds is still a prefix, and a failure stops the rest. The sender says
 * nothing: what came of a batch is said by the main thread when it takes the
 * result, so lines come in the order of the batches.
 */
#define _GNU_SOURCE /* asprintf */
#include "cmd_export.h"

#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "clickhouse.h"
#include "common.h"
#include "pftrace.h"
#include "pftrace_read.h"
#include "rows.h"
#include "summary_read.h"
#include "trace_read.h"
#include "worker.h"

/* A batch is sent once it holds this many rows or bytes (below ClickHouse's
 * max_insert_block_size of 1048576 rows, so that each is stored as one block). */
#define LP_EX_BATCH_ROWS 100000
#define LP_EX_BATCH_BYTES (16u << 20)
/* Batches held at once: the one being built and the one being sent (docs/limits.md). */
#define LP_EX_BATCHES_HELD 2
#define LP_EX_CREDENTIALS_MAX 4096

enum compress { COMPRESS_AUTO = 0, COMPRESS_GZIP, COMPRESS_NONE };

struct export_opts {
	const char *url, *database, *host, *credentials, *ca_file;
	enum compress compress;
	const char *label_keys[LP_EX_LABELS_MAX], *label_values[LP_EX_LABELS_MAX];
	size_t nlabels;
	char **paths;
	int npaths;
	bool quiet;
	uint64_t batch_rows; /* rows of a batch at most (--batch-rows, LP_EX_BATCH_ROWS at most) */
	const char *after; /* appended to a failure's line (record --export: what was kept) */
};

/* ---- credentials: a file, or the environment; never argv ---- */

struct creds {
	char *user, *password;
};

static void creds_free(struct creds *c)
{
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->user);
	free(c->password);
	c->user = c->password = NULL;
}

/* "USER:PASSWORD" on the file's first line; a file others can read is refused. */
static int creds_from_file(const char *path, struct creds *c)
{
	char buf[LP_EX_CREDENTIALS_MAX + 1];
	FILE *f = fopen(path, "re");
	struct stat st;
	size_t n;
	char *colon, *nl;
	int err = 0;

	if (!f) {
		err = -errno;
		lp_err("cannot open the credentials file %s: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		lp_err("the credentials file %s is not a file", path);
		fclose(f);
		return -EINVAL;
	}
	if (st.st_mode & 077) {
		lp_err("the credentials file %s can be read by others (mode %03o): chmod 600 it",
		       path, (unsigned)(st.st_mode & 0777));
		fclose(f);
		return -EPERM;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = '\0';
	colon = strchr(buf, ':');
	if (!nl && n == sizeof(buf) - 1) {
		lp_err("the credentials file %s: its first line is longer than %d bytes "
		       "(LP_EX_CREDENTIALS_MAX)", path, LP_EX_CREDENTIALS_MAX);
		err = -E2BIG;
	} else if (!colon || colon == buf) {
		lp_err("the credentials file %s: its first line is USER:PASSWORD", path);
		err = -EINVAL;
	} else {
		*colon = '\0';
		c->user = strdup(buf);
		c->password = strdup(colon + 1);
		if (!c->user || !c->password) {
			lp_err("out of memory");
			err = -ENOMEM;
		}
	}
	explicit_bzero(buf, sizeof(buf));
	return err;
}

static int creds_get(const char *file, struct creds *c)
{
	const char *user = getenv(LP_EXPORT_ENV_USER), *pw = getenv(LP_EXPORT_ENV_PASSWORD);

	memset(c, 0, sizeof(*c));
	if (!file)
		file = getenv(LP_EXPORT_ENV_CREDENTIALS);
	if (file && *file)
		return creds_from_file(file, c);
	if (!user || !*user)
		return 0; /* the server's default user */
	c->user = strdup(user);
	c->password = strdup(pw ? pw : "");
	if (!c->user || !c->password) {
		lp_err("out of memory");
		creds_free(c);
		return -ENOMEM;
	}
	return 0;
}

/* ---- one recording ---- */

/* Whether batches go as gzip: not yet known (auto), yes, no (none, or refused). */
enum gzip_state { GZIP_UNTRIED, GZIP_ON, GZIP_OFF };

/* A batch handed to the sender thread, and what came of it (said by collect, on the main thread). */
struct send_job {
	struct lp_ch *ch;
	struct lp_ex_batch *b;
	char *sql;
	enum gzip_state gzip; /* in: what the server did with gzip before; out: after this batch */
	enum lp_ch_failure f;
	const char *refused; /* why the server did not take it as gzip (lp_ch_refused_encoding) */
	bool fell_back;      /* refused as gzip, so sent again plain */
	enum lp_ex_table table;
	uint64_t spans_done; /* spans in this batch and those before: the progress it stands for */
};

struct exporter {
	const struct export_opts *o;
	struct lp_ch *ch;
	int status; /* the exit status so far */
	struct lp_ex_batch batches[LP_EX_BATCHES_HELD];
	struct lp_ex_batch *batch; /* the one being built */
	struct lp_ex_worker *sender;
	struct send_job job; /* the batch being sent, while in_flight */
	bool in_flight;
	enum gzip_state gzip; /* as of the last batch whose result was taken */
	bool refused; /* the server refused gzip: plain since */
	uint64_t rows_bytes; /* plain bytes of the rows sent for this recording */
	unsigned long long sent_before; /* lp_ch_sent when this recording began */
	enum lp_ex_table table;
	uint64_t spans_expected, spans_done, spans_skip, groups_skip;
	struct lp_ex_spans spans;
	const char *what; /* the recording, for messages */
	struct timespec started, said;
};

static int status_of(enum lp_ch_failure f)
{
	switch (f) {
	case LP_CH_OK: return 0;
	case LP_CH_UNREACHABLE: return LP_EXPORT_EXIT_UNREACHABLE;
	case LP_CH_AUTH: return LP_EXPORT_EXIT_AUTH;
	case LP_CH_HTTP: return LP_EXPORT_EXIT_SERVER;
	}
	return LP_EXPORT_EXIT_SERVER;
}

/* The last request failed (f): said in one line, the status set. */
static void failed(struct exporter *ex, enum lp_ch_failure f)
{
	lp_err("cannot export %s: %s%s", ex->what, lp_ch_problem(ex->ch), ex->o->after);
	ex->status = status_of(f);
}

/* Runs sql (with a plain body); on failure says so in one line and sets ex->status. */
static int exec(struct exporter *ex, const char *sql, const char *body, size_t len,
		const struct lp_buf **answer)
{
	enum lp_ch_failure f;
	int err = lp_ch_exec(ex->ch, sql, body, len, NULL, &f, answer);

	if (err)
		failed(ex, f);
	return err;
}

/* SELECT count() ... as a number. */
static int count(struct exporter *ex, const char *sql, uint64_t *out)
{
	const struct lp_buf *a;
	char text[32];
	int err = exec(ex, sql, NULL, 0, &a);

	if (err)
		return err;
	snprintf(text, sizeof(text), "%.*s", (int)(a->len < 31 ? a->len : 31), a->p ? a->p : "");
	text[strcspn(text, "\r\n")] = '\0';
	if (lp_parse_count(text, 0, UINT64_MAX, out)) {
		lp_err("cannot export %s: the server answered '%s' to a count", ex->what, text);
		ex->status = LP_EXPORT_EXIT_SERVER;
		return -EPROTO;
	}
	return 0;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static double sent_mb(const struct exporter *ex)
{
	return (double)(lp_ch_sent(ex->ch) - ex->sent_before) / 1e6;
}

/* On the sender thread: the batch as gzip while the server takes it, else plain (see the top). */
static int send_job_run(void *arg)
{
	struct send_job *j = arg;
	struct lp_ex_batch *b = j->b;
	int err;

	j->refused = NULL;
	j->fell_back = false;
	if (!b->gzip)
		return lp_ch_exec(j->ch, j->sql, b->rows.p, b->rows.len, NULL, &j->f, NULL);
	err = lp_ch_exec(j->ch, j->sql, b->gz.p, b->gz.len, "gzip", &j->f, NULL);
	if (!err) {
		j->gzip = GZIP_ON;
		return 0;
	}
	j->refused = lp_ch_refused_encoding(j->ch);
	if (!j->refused || !b->keep_plain)
		return err;
	j->gzip = GZIP_OFF;
	j->fell_back = true;
	return lp_ch_exec(j->ch, j->sql, b->rows.p, b->rows.len, NULL, &j->f, NULL);
}

/* Waits for the batch being sent, if any, and says what came of it: 0 when it was stored. */
static int collect(struct exporter *ex)
{
	struct send_job *j = &ex->job;
	int err;

	if (!ex->in_flight)
		return 0;
	err = lp_ex_worker_wait(ex->sender);
	ex->in_flight = false;
	free(j->sql);
	j->sql = NULL;
	lp_ex_batch_reset(j->b);
	ex->gzip = j->gzip;
	if (j->fell_back) {
		lp_warn("%s did not take rows compressed with gzip: %s; sending them plain for the "
			"rest of this export (--compress=none does from the start)", ex->o->url,
			j->refused);
		ex->refused = true;
	}
	if (err && j->refused && !j->fell_back) {
		/* Nothing of this batch was stored, and what was is kept: a second export completes it. */
		lp_err("cannot export %s: %s did not take rows compressed with gzip: %s; %s%s",
		       ex->what, ex->o->url, j->refused, ex->o->compress == COMPRESS_GZIP ?
		       "--compress=auto falls back to plain" :
		       "it took them before; export again with --compress=none", ex->o->after);
		ex->status = status_of(j->f);
	} else if (err) {
		failed(ex, j->f);
	}
	if (!err && j->table == LP_EX_SPANS && !ex->o->quiet && since(&ex->said) >= 1.0) {
		clock_gettime(CLOCK_MONOTONIC, &ex->said);
		lp_note("exported %" PRIu64 " of ~%" PRIu64 " spans of %s (%.1f MB sent)",
			j->spans_done, ex->spans_expected, ex->what, sent_mb(ex));
	}
	return err;
}

/* The batch being built: plain rows kept beside gzip's only until the server has taken gzip once. */
static int batch_mode(struct exporter *ex)
{
	if (!lp_ex_batch_mode(ex->batch, ex->gzip != GZIP_OFF, ex->gzip == GZIP_UNTRIED))
		return 0;
	lp_err("cannot export %s: out of memory (gzip)", ex->what);
	return -ENOMEM;
}

/* The batch built goes to the sender once the one before is stored; the other is built meanwhile. */
static int flush(struct exporter *ex)
{
	struct lp_ex_batch *b = ex->batch;
	char *sql = NULL;
	int err;

	if (!b->nrows)
		return 0;
	err = collect(ex);
	if (err)
		return err;
	if (asprintf(&sql, "INSERT INTO %s.%s FORMAT JSONEachRow", ex->o->database,
		     lp_ex_table_name(ex->table)) < 0) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	if (lp_ex_batch_finish(b)) {
		lp_err("cannot export %s: out of memory (gzip)", ex->what);
		free(sql);
		return -ENOMEM;
	}
	ex->rows_bytes += lp_ex_batch_plain_len(b);
	ex->job = (struct send_job){ .ch = ex->ch, .b = b, .sql = sql, .gzip = ex->gzip,
				     .table = ex->table, .spans_done = ex->spans_done };
	lp_ex_worker_give(ex->sender, &ex->job);
	ex->in_flight = true;
	/*
	 * Untried, gzip may be refused: the batch's plain rows are kept to be sent again, and the
	 * next one is built once that is known (the first batch is most often the summary's few
	 * groups), so that one batch at most holds its rows twice.
	 */
	if (ex->gzip == GZIP_UNTRIED) {
		err = collect(ex);
		if (err)
			return err;
	}
	ex->batch = b == &ex->batches[0] ? &ex->batches[1] : &ex->batches[0];
	return batch_mode(ex);
}

/* A row built into the batch (err: short of memory, said here): counted, sent when full. */
static int row_added(struct exporter *ex, int err)
{
	if (!err)
		err = lp_ex_batch_added(ex->batch);
	if (err) {
		lp_err("cannot export %s: out of memory", ex->what);
		return err;
	}
	if (ex->batch->nrows >= ex->o->batch_rows ||
	    lp_ex_batch_plain_len(ex->batch) >= LP_EX_BATCH_BYTES)
		return flush(ex);
	return 0;
}

static int on_span(void *ctx, const struct lp_tr_span *s)
{
	struct exporter *ex = ctx;
	bool skip = ex->spans.next_id < ex->spans_skip;
	int err = lp_ex_span_row(&ex->spans, lp_ex_batch_rows(ex->batch), s, skip);

	if (err || skip)
		return err ? row_added(ex, err) : 0; /* a span already stored: built, not sent */
	ex->spans_done++;
	return row_added(ex, 0);
}

/* The recording's start by the wall clock: the summary's, else its file's time less the window. */
static uint64_t start_unix_of(json_object *summary, const char *path)
{
	json_object *rec = NULL, *v = NULL;
	struct stat st;
	uint64_t start = 0, end = 0, mtime;

	if (json_object_object_get_ex(summary, "recording", &rec) &&
	    json_object_object_get_ex(rec, "start_unix_ns", &v) && json_object_get_int64(v) > 0)
		return json_object_get_uint64(v);
	if (json_object_object_get_ex(rec, "start_ns", &v))
		start = json_object_get_uint64(v);
	if (json_object_object_get_ex(rec, "end_ns", &v))
		end = json_object_get_uint64(v);
	if (stat(path, &st))
		return 0;
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	return end > start && mtime > end - start ? mtime - (end - start) : mtime;
}

static int sha256_hex(const char *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return -EIO;
	for (unsigned i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return 0;
}

/*
 * A window's trace (record --window): its name, leanprofiler-trace.<UTC
 * start>.json, when the summary's trace path ends in one (letters, digits, '.'
 * and '-' only: never a path out of the summary's directory); NULL otherwise.
 */
static const char *window_trace(const char *path)
{
	static const char prefix[] = "leanprofiler-trace.2";
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t n;

	base = base ? base + 1 : path;
	if (!base || strncmp(base, prefix, sizeof(prefix) - 1))
		return NULL;
	n = strlen(base);
	if (n > 64 || n < sizeof(prefix) + 5 || strcmp(base + n - 5, ".json") ||
	    strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != n)
		return NULL;
	return base;
}

/* The trace next to the summary, when the summary says one was written. NULL: none. */
static char *trace_of(json_object *summary, const char *summary_path, int *err)
{
	json_object *files = NULL, *trace = NULL;
	const char *slash = strrchr(summary_path, '/');
	char *p = NULL;

	*err = 0;
	if (!json_object_object_get_ex(summary, "files", &files) ||
	    !json_object_object_get_ex(files, "trace", &trace))
		return NULL; /* --summary-only */
	/*
	 * Next to the summary, where record wrote it (the recording may have been
	 * moved), under the name the summary gives: the JSON or the Perfetto trace.
	 */
	if (asprintf(&p, "%.*s%s", slash ? (int)(slash - summary_path + 1) : 0, summary_path,
		     window_trace(json_object_get_string(trace))
			     ? window_trace(json_object_get_string(trace))
		     : json_object_get_string(trace) &&
				     strstr(json_object_get_string(trace), LP_PFTRACE_FILE)
			     ? LP_PFTRACE_FILE
			     : LP_TRACE_FILE) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	if (access(p, R_OK)) {
		*err = -errno;
		lp_err("%s: the summary says a trace was written, but %s cannot be read (%s): "
		       "copy the recording's directory whole", summary_path, p, strerror(errno));
		free(p);
		return NULL;
	}
	return p;
}

/* A runs table an older leanprofiler made gets the columns added since (rows.h). */
static int add_columns(struct exporter *ex)
{
	int err = 0;

	for (const struct lp_ex_column *c = lp_ex_runs_added; !err && c->name; c++) {
		char *sql = NULL;
		uint64_t n = 0;

		if (asprintf(&sql, "SELECT count() FROM system.columns WHERE database = '%s' AND "
			     "table = 'runs' AND name = '%s'", ex->o->database, c->name) < 0)
			return -ENOMEM;
		err = count(ex, sql, &n);
		free(sql);
		if (err || n)
			continue;
		if (asprintf(&sql, "ALTER TABLE %s.runs ADD COLUMN %s %s", ex->o->database, c->name,
			     c->type) < 0)
			return -ENOMEM;
		err = exec(ex, sql, NULL, 0, NULL);
		free(sql);
	}
	return err;
}

static int create_tables(struct exporter *ex)
{
	char *sql = NULL;
	int err;

	if (asprintf(&sql, "CREATE DATABASE IF NOT EXISTS %s", ex->o->database) < 0)
		return -ENOMEM;
	err = exec(ex, sql, NULL, 0, NULL);
	free(sql);
	for (enum lp_ex_table t = 0; !err && t < LP_EX_NTABLES; t++) {
		struct lp_buf b = { 0 };

		err = lp_ex_create_sql(&b, ex->o->database, t);
		if (!err)
			err = lp_buf_putc(&b, '\0') ? -ENOMEM : 0;
		if (!err)
			err = exec(ex, b.p, NULL, 0, NULL);
		lp_buf_free(&b);
	}
	return err ? err : add_columns(ex);
}

/* The rows of run id already in table t. */
static int rows_of(struct exporter *ex, enum lp_ex_table t, const char *id, uint64_t *n)
{
	char *sql = NULL;
	int err;

	if (asprintf(&sql, "SELECT count() FROM %s.%s WHERE run_id = '%s'", ex->o->database,
		     lp_ex_table_name(t), id) < 0)
		return -ENOMEM;
	err = count(ex, sql, n);
	free(sql);
	return err;
}

static int export_one(struct exporter *ex, const char *arg)
{
	const struct export_opts *o = ex->o;
	struct lp_ex_run run = { .host = o->host, .label_keys = o->label_keys,
				 .label_values = o->label_values, .nlabels = o->nlabels };
	char *path = NULL, *text = NULL, *trace = NULL, problem[LP_SUMMARY_PROBLEM_MAX];
	json_object *root = NULL, *rows = NULL;
	struct lp_summary s;
	struct lp_tr_stats stats;
	uint64_t already = 0;
	size_t len, nrows;
	int err;

	ex->what = arg;
	err = lp_summary_text(arg, &path, &text, &len);
	if (err) {
		ex->status = LP_EXPORT_EXIT_RECORDING;
		return err;
	}
	err = lp_summary_parse_json(text, len, path, &s, problem, sizeof(problem), &root);
	if (err) {
		lp_err("%s: %s", path, problem);
		ex->status = LP_EXPORT_EXIT_RECORDING;
		goto cleanup;
	}
	lp_summary_free(&s);
	if (sha256_hex(text, len, run.run_id)) {
		lp_err("cannot export %s: SHA-256 failed (libcrypto)", arg);
		ex->status = LP_EXPORT_EXIT_RECORDING;
		err = -EIO;
		goto cleanup;
	}
	trace = trace_of(root, path, &err);
	if (err) {
		ex->status = LP_EXPORT_EXIT_RECORDING;
		goto cleanup;
	}
	run.start_unix_ns = start_unix_of(root, path);
	run.exported_unix = (uint64_t)time(NULL);
	json_object_object_get_ex(root, "rows", &rows);
	nrows = rows ? json_object_array_length(rows) : 0;
	for (size_t i = 0; i < nrows; i++) {
		json_object *r = json_object_array_get_idx(rows, i), *calls = NULL;

		json_object_object_get_ex(r, "calls", &calls);
		ex->spans_expected += trace ? json_object_get_uint64(calls) : 0;
	}

	err = create_tables(ex);
	if (!err)
		err = rows_of(ex, LP_EX_RUNS, run.run_id, &already);
	if (err)
		goto cleanup;
	if (already) {
		if (!o->quiet)
			lp_note("%s is already in %s (run %s): not sent again", arg, o->database,
				run.run_id);
		goto cleanup;
	}
	/* Cut short before: what is there is a prefix of what is sent (see the top). */
	err = rows_of(ex, LP_EX_GROUPS, run.run_id, &ex->groups_skip);
	if (!err && trace)
		err = rows_of(ex, LP_EX_SPANS, run.run_id, &ex->spans_skip);
	if (err)
		goto cleanup;

	ex->table = LP_EX_GROUPS;
	for (size_t i = (size_t)ex->groups_skip; !err && i < nrows; i++) {
		err = row_added(ex, lp_ex_group_row(lp_ex_batch_rows(ex->batch),
						    json_object_array_get_idx(rows, i), i, &run));
	}
	if (!err)
		err = flush(ex);
	if (err)
		goto cleanup;
	run.groups_rows = nrows;

	if (trace) {
		struct lp_tr_sink sink = { .span = on_span, .ctx = ex };

		ex->table = LP_EX_SPANS;
		err = lp_ex_spans_init(&ex->spans, &run);
		if (err) {
			lp_err("cannot export %s: out of memory", arg);
			goto cleanup;
		}
		err = lp_read_any_trace(trace, &sink, &stats);
		/* A batch still being sent failed first: that is said, and first. */
		if (err && !ex->status)
			collect(ex);
		if (err && !ex->status) {
			if (err == -E2BIG)
				lp_err("%s: a line longer than %u bytes (LP_TRACE_LINE_MAX): not a "
				       "trace record writes", trace, LP_TRACE_LINE_MAX);
			else
				lp_err("cannot read the trace %s: %s", trace, strerror(-err));
			ex->status = LP_EXPORT_EXIT_RECORDING;
		}
		if (!err)
			err = flush(ex);
		run.spans_rows = ex->spans.next_id;
		lp_ex_spans_free(&ex->spans);
		if (err)
			goto cleanup;
		if (stats.skipped)
			lp_warn("%s: %" PRIu64 " lines are not events as record writes them: left out",
				trace, stats.skipped);
	}

	/* Last: its presence says the run is complete. */
	ex->table = LP_EX_RUNS;
	err = row_added(ex, lp_ex_run_row(lp_ex_batch_rows(ex->batch), root, &run));
	if (!err)
		err = flush(ex);
	if (!err)
		err = collect(ex);
	if (!err && !o->quiet)
		lp_note("exported %s as run %s to database %s: %zu groups, %" PRIu64 " spans, "
			"%.1f MB of rows, %.1f MB sent (%s) in %.1f s", arg, run.run_id,
			o->database, nrows, run.spans_rows, (double)ex->rows_bytes / 1e6,
			sent_mb(ex), ex->refused ? "plain: the server refused gzip" :
				     ex->gzip == GZIP_OFF ? "plain" : "gzip", since(&ex->started));
cleanup:
	/* Failed while a batch was being sent: what came of it is said too. */
	collect(ex);
	if (err && !ex->status)
		ex->status = LP_EXPORT_EXIT_RECORDING;
	for (int i = 0; i < LP_EX_BATCHES_HELD; i++)
		lp_ex_batch_reset(&ex->batches[i]);
	ex->rows_bytes = 0;
	ex->spans_expected = ex->spans_done = ex->spans_skip = ex->groups_skip = 0;
	json_object_put(root);
	free(trace);
	free(text);
	free(path);
	return err;
}

static int export_all(const struct export_opts *o)
{
	struct exporter ex = { .o = o };
	struct creds c;
	char problem[512];
	int worst = 0;

	if (creds_get(o->credentials, &c))
		return LP_EXPORT_EXIT_RECORDING;
	ex.ch = lp_ch_open(o->url, c.user, c.password, o->ca_file, problem, sizeof(problem));
	creds_free(&c);
	if (!ex.ch) {
		lp_err("%s", problem);
		return LP_EXPORT_EXIT_RECORDING;
	}
	ex.gzip = o->compress == COMPRESS_NONE ? GZIP_OFF :
		  o->compress == COMPRESS_GZIP ? GZIP_ON : GZIP_UNTRIED;
	ex.batch = &ex.batches[0];
	ex.sender = lp_ex_worker_start(send_job_run);
	if (!ex.sender) {
		lp_err("cannot start export's sender thread: %s", strerror(errno));
		lp_ch_close(ex.ch);
		return LP_EXPORT_EXIT_RECORDING;
	}
	for (int i = 0; i < o->npaths; i++) {
		ex.sent_before = lp_ch_sent(ex.ch);
		clock_gettime(CLOCK_MONOTONIC, &ex.started);
		ex.said = ex.started;
		ex.status = 0;
		ex.what = o->paths[i];
		if (batch_mode(&ex))
			ex.status = LP_EXPORT_EXIT_RECORDING;
		else
			export_one(&ex, o->paths[i]);
		if (ex.status && !worst)
			worst = ex.status;
		/* The server is gone or refuses us: the next recordings would fail the same way. */
		if (ex.status == LP_EXPORT_EXIT_UNREACHABLE || ex.status == LP_EXPORT_EXIT_AUTH)
			break;
	}
	lp_ex_worker_stop(ex.sender);
	for (int i = 0; i < LP_EX_BATCHES_HELD; i++)
		lp_ex_batch_free(&ex.batches[i]);
	lp_ch_close(ex.ch);
	return worst;
}

static char hostname_buf[256];

static const char *this_host(void)
{
	if (gethostname(hostname_buf, sizeof(hostname_buf) - 1) || !hostname_buf[0])
		snprintf(hostname_buf, sizeof(hostname_buf), "unknown");
	return hostname_buf;
}

int lp_export_recording(const char *url, const char *dir, const char *after)
{
	char *paths[] = { (char *)dir };
	struct export_opts o = { .url = url, .database = LP_EX_DATABASE_DEFAULT,
				 .host = this_host(), .paths = paths, .npaths = 1,
				 .batch_rows = LP_EX_BATCH_ROWS, .after = after };

	return export_all(&o);
}

/* ---- the command line ---- */

static const char export_doc[] =
	"Send recordings (directories, or either of their files) to a ClickHouse server over "
	"its HTTP interface: one row per recording in the table runs, one per summary row in "
	"groups, one per trace span in spans, in database leanprofiler (created when missing; "
	"schema " LP_EX_SCHEMA "). A recording already there is not sent again. "
	"The trace is sent in batches: memory stays bounded, and progress is said on stderr "
	"about once a second. Rows go compressed with gzip (about 14 times fewer bytes), "
	"plain to a server that refuses that (said once on stderr): --compress.\n\n"
	"Credentials: the first line USER:PASSWORD of --credentials FILE or of the file in "
	"$" LP_EXPORT_ENV_CREDENTIALS " (readable by its owner only), else $" LP_EXPORT_ENV_USER
	" and $" LP_EXPORT_ENV_PASSWORD "; never in the URL, which ps shows. https:// URLs "
	"verify the server's certificate. More in leanprofiler-export(1)."
	"\vExamples:\n"
	"  leanprofiler export --clickhouse http://127.0.0.1:8123/ build\n"
	"  leanprofiler export --clickhouse https://ch.example:8443/ --host db-07 \\\n"
	"      --label role=primary --credentials /etc/leanprofiler/clickhouse \\\n"
	"      /var/lib/prof/*\n"
	"  sudo leanprofiler record --export http://ch:8123/ -o /var/lib/prof/run1 \\\n"
	"      -- ./job\n\n"
	"Exit status: 125 for a bad command line or a recording that cannot be read; 0 when "
	"every recording is stored (or already was); 1 when the server cannot be reached "
	"(nothing is stored, the files stay as they are); 2 when it refuses the credentials; "
	"3 when it answers an error (or refuses gzip under --compress=gzip). The first failure "
	"sets it; one line says each.\n";

enum { OPT_CLICKHOUSE = 1300, OPT_DATABASE, OPT_HOST, OPT_LABEL, OPT_CREDENTIALS, OPT_CA_FILE,
       OPT_COMPRESS, OPT_BATCH_ROWS };

static const char *const compress_names[] = { [COMPRESS_AUTO] = "auto", [COMPRESS_GZIP] = "gzip",
					      [COMPRESS_NONE] = "none" };

static const struct argp_option export_options[] = {
	{ "clickhouse", OPT_CLICKHOUSE, "URL", 0,
	  "The server's HTTP interface, http:// or https:// (required)", 0 },
	{ "database", OPT_DATABASE, "DB", 0,
	  "The database of the tables, letters, digits and _ (default: leanprofiler)", 0 },
	{ "host", OPT_HOST, "NAME", 0, "The host the runs are stored under (default: this "
				      "machine's hostname)", 0 },
	{ "label", OPT_LABEL, "K=V", 0, "A label of the runs, e.g. role=primary; repeatable", 0 },
	{ "credentials", OPT_CREDENTIALS, "FILE", 0,
	  "Read USER:PASSWORD from the first line of FILE (mode 600)", 0 },
	{ "ca-file", OPT_CA_FILE, "FILE", 0,
	  "Verify an https:// server with the CA certificates in FILE (PEM)", 0 },
	{ "compress", OPT_COMPRESS, "MODE", 0,
	  "auto (default): rows compressed with gzip, plain if the server refuses that; gzip: "
	  "compressed or fail; none: plain", 0 },
	{ "batch-rows", OPT_BATCH_ROWS, "N", 0,
	  "At most N rows per INSERT, 1 to " LP_STR_CH(LP_EX_BATCH_ROWS) " (the default)", 0 },
	{ "quiet", 'q', NULL, 0, "Say only failures and warnings, no progress", 0 },
	{ 0 },
};

static error_t export_parse(int key, char *arg, struct argp_state *state)
{
	struct export_opts *o = state->input;
	char *eq;
	size_t i;

	switch (key) {
	case OPT_CLICKHOUSE:
		o->url = arg;
		break;
	case OPT_DATABASE:
		if (!lp_ex_database_valid(arg))
			return lp_usage_error(state, "invalid --database '%s': letters, digits and _, "
						  "at most %d, not a digit first", arg,
					   LP_EX_DATABASE_MAX);
		o->database = arg;
		break;
	case OPT_HOST:
		if (!*arg)
			return lp_usage_error(state, "--host needs a name");
		o->host = arg;
		break;
	case OPT_LABEL:
		eq = strchr(arg, '=');
		if (!eq || eq == arg)
			return lp_usage_error(state, "invalid --label '%s': KEY=VALUE", arg);
		if (o->nlabels == LP_EX_LABELS_MAX)
			return lp_usage_error(state, "more than %d labels", LP_EX_LABELS_MAX);
		*eq = '\0';
		o->label_keys[o->nlabels] = arg;
		o->label_values[o->nlabels++] = eq + 1;
		break;
	case OPT_CREDENTIALS:
		o->credentials = arg;
		break;
	case OPT_CA_FILE:
		o->ca_file = arg;
		break;
	case OPT_COMPRESS:
		for (i = 0; i < ARRAY_SIZE(compress_names) && strcmp(arg, compress_names[i]); i++)
			;
		if (i == ARRAY_SIZE(compress_names))
			return lp_usage_error(state, "invalid --compress '%s': auto, gzip or none", arg);
		o->compress = (enum compress)i;
		break;
	case OPT_BATCH_ROWS:
		if (lp_parse_count(arg, 1, LP_EX_BATCH_ROWS, &o->batch_rows))
			return lp_usage_error(state, "invalid --batch-rows '%s': 1 to %d", arg,
					      LP_EX_BATCH_ROWS);
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARGS:
		o->paths = state->argv + state->next;
		o->npaths = state->argc - state->next;
		break;
	case ARGP_KEY_END:
		if (!o->url)
			return lp_usage_error(state, "no --clickhouse URL");
		if (!o->npaths)
			return lp_usage_error(state, "no recording to export (PATH...)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct argp_child children[] = { LP_CLI_STD_CHILD, { 0 } };
	static const struct argp argp = { export_options, export_parse,
					  "--clickhouse URL [OPTION...] PATH...", export_doc, children,
					  NULL, NULL };
	struct export_opts o = { .database = LP_EX_DATABASE_DEFAULT, .batch_rows = LP_EX_BATCH_ROWS,
				 .after = "" };
	int status;

	argv[0] = "leanprofiler export";
	if (!lp_cli_parse(&argp, argc, argv, 0, &o, &status))
		return status;
	if (!o.host)
		o.host = this_host();
	return export_all(&o);
}
