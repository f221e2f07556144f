/* SPDX-License-Identifier: MIT */
/*
 * What every command's command line shares: argp without its own error
 * messages (they wrapped mid-sentence at 79 columns and took two lines), a
 * usage error as one line with where to look, -h/-?/--help, --usage and
 * -V/--version, and the exit statuses.
 */
#ifndef LP_CLI_H
#define LP_CLI_H

#include <argp.h>
#include <stdbool.h>

/* Exit statuses of leanprofiler's own failures, as env(1) and timeout(1) use them. */
#define LP_EXIT_FAILURE 125    /* leanprofiler failed: a bad command line, BPF, output */
#define LP_EXIT_CANNOT_RUN 126 /* COMMAND was found but could not be executed */
#define LP_EXIT_NOT_FOUND 127  /* COMMAND was not found */
#define LP_EXIT_USAGE LP_EXIT_FAILURE /* a bad command line, in every command */

/*
 * Says "leanprofiler CMD: WHAT; see 'leanprofiler CMD --help'" and returns
 * EINVAL, which a parser returns to end the parse:
 *     return lp_usage_error(state, "invalid --rows '%s'", arg);
 */
error_t lp_usage_error(const struct argp_state *state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -h, -?, --help, --usage, -V, --version: a child every command's argp lists last. */
extern const struct argp lp_cli_std_argp;
#define LP_CLI_STD_CHILD { &lp_cli_std_argp, 0, NULL, -1 }

/*
 * argp_parse() for a command named argv[0] ("leanprofiler record"): true when
 * the command goes on; false when it ends with *status: 0 after --help,
 * --usage or --version, LP_EXIT_USAGE after a usage error (said, one line).
 */
bool lp_cli_parse(const struct argp *argp, int argc, char **argv, unsigned flags, void *input,
		  int *status);

#endif
