/* SPDX-License-Identifier: MIT */
/*
 * leanprofiler export: recordings into ClickHouse tables (docs/fleet.md), and
 * the same at the end of `record --export URL`.
 */
#ifndef LP_CMD_EXPORT_H
#define LP_CMD_EXPORT_H

#include "cli.h"

/* export's exit statuses besides 0 and 125 (bad command line, unreadable recording). */
#define LP_EXPORT_EXIT_UNREACHABLE 1 /* no answer from the server: nothing was stored */
#define LP_EXPORT_EXIT_AUTH 2        /* the server refused the credentials */
#define LP_EXPORT_EXIT_SERVER 3      /* the server answered an error */
#define LP_EXPORT_EXIT_RECORDING LP_EXIT_FAILURE /* a recording could not be read (or a bad option) */

/* The environment export reads its credentials from (never the command line). */
#define LP_EXPORT_ENV_USER "LEANPROFILER_CLICKHOUSE_USER"
#define LP_EXPORT_ENV_PASSWORD "LEANPROFILER_CLICKHOUSE_PASSWORD"
#define LP_EXPORT_ENV_CREDENTIALS "LEANPROFILER_CLICKHOUSE_CREDENTIALS"

int cmd_export(int argc, char **argv);
/*
 * record --export URL: the recording in dir into URL's database leanprofiler,
 * under this host's name. 0, or one of export's exit statuses, said on stderr in
 * one line that ends with after.
 */
int lp_export_recording(const char *url, const char *dir, const char *after);

#endif
