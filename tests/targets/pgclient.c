// SPDX-License-Identifier: MIT
/*
 * pgclient: a libpq client speaking PostgreSQL's extended protocol, as drivers
 * do (JDBC, psycopg 3, node-postgres, pgx), for tests/integration/test_postgres.c.
 * Usage: pgclient CONNINFO
 *
 * Reads one command per line on stdin, its fields separated by tabs, and answers
 * each with exactly one line on stdout once the server has answered it:
 *   pid                          "pid=N": the backend's PID
 *   simple SQL                   PQexec (simple protocol)
 *   params SQL [P1 ...]          PQexecParams, text parameters (Parse, Bind, Execute, Sync)
 *   prepare NAME SQL             PQprepare (Parse, Sync)
 *   exec NAME [P1 ...]           PQexecPrepared (Bind, Execute, Sync)
 *   pipeline SQL P [SQL P ...]   pipeline mode: each SQL with its one parameter, one Sync for all
 * The answer is "ok" (and the first row's first value, if any: "ok VALUE") or
 * "error SQLSTATE"; for a pipeline one per statement, "ok ok error 22012 skipped" (after a
 * failure the server skips the rest until the Sync).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#define MAX_FIELDS 64

/* Appends the answer for one result to line: "ok", "ok VALUE" (with value), "skipped", "error SQLSTATE". */
static void answer(PGresult *res, char *line, size_t size, bool value)
{
	size_t used = strlen(line);
	ExecStatusType st = PQresultStatus(res);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (value && st == PGRES_TUPLES_OK && PQntuples(res) > 0 && PQnfields(res) > 0)
			snprintf(line + used, size - used, "%sok %s", used ? " " : "",
				 PQgetvalue(res, 0, 0));
		else
			snprintf(line + used, size - used, "%sok", used ? " " : "");
	} else if (st == PGRES_PIPELINE_ABORTED) {
		snprintf(line + used, size - used, "%sskipped", used ? " " : "");
	} else {
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		snprintf(line + used, size - used, "%serror %s", used ? " " : "",
			 state ? state : "?");
	}
}

static void one(PGresult *res)
{
	char line[4096] = "";

	answer(res, line, sizeof(line), true);
	PQclear(res);
	printf("%s\n", line);
}

/* Each SQL with its parameter (f: SQL, P, SQL, P ...), all in one pipeline with one Sync at the end. */
static void pipeline(PGconn *c, char **f, int n)
{
	char line[4096] = "";

	if (!PQenterPipelineMode(c)) {
		printf("error pipeline: %s", PQerrorMessage(c));
		return;
	}
	for (int i = 0; i < n; i++)
		if (!PQsendQueryParams(c, f[2 * i], 1, NULL, (const char *const *)&f[2 * i + 1], NULL,
				       NULL, 0)) {
			printf("error send: %s", PQerrorMessage(c));
			exit(1);
		}
	if (!PQpipelineSync(c)) {
		printf("error sync: %s", PQerrorMessage(c));
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		PGresult *res = PQgetResult(c);

		/* A failure makes the statements after it PGRES_PIPELINE_ABORTED: errors too. */
		answer(res, line, sizeof(line), false);
		PQclear(res);
		while ((res = PQgetResult(c)))
			PQclear(res);
	}
	{
		PGresult *res = PQgetResult(c); /* the Sync's */

		if (PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
			printf("error no sync\n");
			exit(1);
		}
		PQclear(res);
	}
	PQexitPipelineMode(c);
	printf("%s\n", line);
}

int main(int argc, char **argv)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	PGconn *c;

	if (argc != 2) {
		fprintf(stderr, "usage: pgclient CONNINFO\n");
		return 2;
	}
	c = PQconnectdb(argv[1]);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "pgclient: %s", PQerrorMessage(c));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((len = getline(&buf, &cap, stdin)) > 0) {
		char *f[MAX_FIELDS], *save = NULL;
		int n = 0;

		if (buf[len - 1] == '\n')
			buf[len - 1] = '\0';
		for (char *t = strtok_r(buf, "\t", &save); t && n < MAX_FIELDS;
		     t = strtok_r(NULL, "\t", &save))
			f[n++] = t;
		if (n == 0)
			continue;
		if (!strcmp(f[0], "pid"))
			printf("pid=%d\n", PQbackendPID(c));
		else if (!strcmp(f[0], "simple") && n == 2)
			one(PQexec(c, f[1]));
		else if (!strcmp(f[0], "params") && n >= 2)
			one(PQexecParams(c, f[1], n - 2, NULL, (const char *const *)&f[2], NULL, NULL,
					 0));
		else if (!strcmp(f[0], "prepare") && n == 3)
			one(PQprepare(c, f[1], f[2], 0, NULL));
		else if (!strcmp(f[0], "exec") && n >= 2)
			one(PQexecPrepared(c, f[1], n - 2, (const char *const *)&f[2], NULL, NULL, 0));
		else if (!strcmp(f[0], "pipeline") && n >= 3 && n % 2 == 1)
			pipeline(c, &f[1], (n - 1) / 2);
		else
			printf("error usage\n");
		if (PQstatus(c) != CONNECTION_OK) {
			fprintf(stderr, "pgclient: %s", PQerrorMessage(c));
			return 1;
		}
	}
	free(buf);
	PQfinish(c);
	return 0;
}
