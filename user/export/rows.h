/* SPDX-License-Identifier: MIT */
/*
 * A recording as rows of the ClickHouse tables `export` fills (docs/fleet.md,
 * schema leanprofiler-clickhouse/1): the CREATE statements, and one
 * JSONEachRow line per run, summary row and trace span, appended to a buffer
 * that the caller sends in batches. No network here: the unit tests check the
 * rows, the client (user/export/client) sends them.
 *
 * Strings go out as JSON strings, which ClickHouse decodes byte for byte
 * (\u0000 included): what the recording holds is what a query reads back.
 */
#ifndef LP_EXPORT_ROWS_H
#define LP_EXPORT_ROWS_H

#include <json-c/json.h>

#include "map.h"
#include "text.h"
#include "trace_read.h"

#define LP_EX_SCHEMA "leanprofiler-clickhouse/1"
#define LP_EX_SCHEMA_VERSION 1
#define LP_EX_DATABASE_DEFAULT "leanprofiler"
#define LP_EX_DATABASE_MAX 64 /* bytes of a database name: [A-Za-z0-9_], not a digit first */
#define LP_EX_LABELS_MAX 64

enum lp_ex_table { LP_EX_RUNS = 0, LP_EX_GROUPS, LP_EX_SPANS, LP_EX_NTABLES };

/* The table's name in the database ("runs", "groups", "spans"). */
const char *lp_ex_table_name(enum lp_ex_table t);
/* true: name is a database name the exporter uses (no quoting needed anywhere). */
bool lp_ex_database_valid(const char *name);
/* A column added to a table after its first version (NULL name: the list's end). */
struct lp_ex_column {
	const char *name, *type;
};
extern const struct lp_ex_column lp_ex_runs_added[];

/* "CREATE TABLE IF NOT EXISTS db.table (...) ENGINE = ..." into sql (appended); 0 or -ENOMEM. */
int lp_ex_create_sql(struct lp_buf *sql, const char *db, enum lp_ex_table t);

/* What a run's rows carry besides the recording's own figures. */
struct lp_ex_run {
	char run_id[65];        /* hex; the same recording, the same id */
	const char *host;
	const char *const *label_keys, *const *label_values;
	size_t nlabels;
	uint64_t start_unix_ns; /* the recording's start by the wall clock */
	uint64_t exported_unix; /* seconds */
	uint64_t groups_rows, spans_rows; /* the rows exported with it (the runs row) */
};

/*
 * The runs row of the summary (the parsed JSON of leanprofiler-summary.json,
 * checked by lp_summary_parse first). 0 or -ENOMEM.
 */
int lp_ex_run_row(struct lp_buf *out, json_object *summary, const struct lp_ex_run *run);
/* The groups row of rows[index] of the summary. 0, -EINVAL (not a row object) or -ENOMEM. */
int lp_ex_group_row(struct lp_buf *out, json_object *row, size_t index,
		    const struct lp_ex_run *run);

/*
 * Spans, in the order lp_trace_read hands them (from the trace's end): a
 * span's id is its place in that order, so the same trace gives the same
 * ids, and a parent comes before its children (per thread, the enclosing
 * spans still open).
 */
struct lp_ex_frame {
	uint64_t start, end, id;
};
struct lp_ex_stack {
	struct lp_ex_frame *f;
	size_t n, cap;
};
struct lp_ex_spans {
	const struct lp_ex_run *run;
	struct lp_buf prefix; /* {"run_id":..,"host":.., written once */
	uint64_t next_id;
	struct lp_map threads; /* (pid, tid) -> 1 + index in stacks */
	struct lp_ex_stack *stacks;
	size_t nstacks, cap;
};

int lp_ex_spans_init(struct lp_ex_spans *sp, const struct lp_ex_run *run);
/*
 * Appends the row of s to out, unless skip (a row already exported: its id
 * and nesting still count). 0 or -ENOMEM.
 */
int lp_ex_span_row(struct lp_ex_spans *sp, struct lp_buf *out, const struct lp_tr_span *s,
		   bool skip);
void lp_ex_spans_free(struct lp_ex_spans *sp);

#endif
