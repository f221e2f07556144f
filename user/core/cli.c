// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

extern const char *argp_program_version;

/* How the parse ended besides going on: a usage error said, or help given. */
static struct {
	bool said;
	bool done;           /* help, usage or version printed: exit 0 */
	const char *bad_arg; /* the argument argp stopped at (ARGP_KEY_ERROR) */
} cli;

error_t lp_usage_error(const struct argp_state *state, const char *fmt, ...)
{
	char *what = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	lp_err_from(state->name, "%s; see '%s --help'", what ? what : "bad command line",
		    state->name);
	free(what);
	cli.said = true;
	return EINVAL;
}

enum { OPT_USAGE = -2 }; /* no short option, not a printable key */

static const struct argp_option std_options[] = {
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ NULL, '?', NULL, OPTION_ALIAS, NULL, 0 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", 0 },
	{ "version", 'V', NULL, 0, "Print the program version", 0 },
	{ 0 },
};

static error_t std_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
	case '?':
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK,
			  state->name);
		break;
	case OPT_USAGE:
		argp_help(state->root_argp, stdout, ARGP_HELP_USAGE, state->name);
		break;
	case 'V':
		printf("%s\n", argp_program_version);
		break;
	case ARGP_KEY_ERROR:
		if (state->next > 0 && state->next <= state->argc)
			cli.bad_arg = state->argv[state->next - 1];
		return ARGP_ERR_UNKNOWN;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	cli.done = true;
	return ECANCELED; /* ends the parse: the command does not run */
}

const struct argp lp_cli_std_argp = { std_options, std_parse, NULL, NULL, NULL, NULL, NULL };

/* ---- what argp stopped at, said as our usage errors are ---- */

struct found {
	const struct argp_option *opt; /* the option (not its alias) */
	const struct argp_option *hit;
	int n;                         /* options matching */
	char names[160];               /* theirs, for an ambiguous prefix */
};

/* Options of argp and its children matching: --name (a prefix of it) or -c. */
static void find_opt(const struct argp *argp, const char *name, size_t len, int key,
		     struct found *f)
{
	const struct argp_option *real = NULL;

	for (const struct argp_option *o = argp->options; o && (o->name || o->key || o->doc); o++) {
		if (!(o->flags & OPTION_ALIAS))
			real = o;
		if (key ? o->key != key : !o->name || strncmp(o->name, name, len))
			continue;
		if (!key && strlen(o->name) == len) { /* exact: it wins */
			f->opt = real, f->hit = o, f->n = 1, f->names[0] = '\0';
			return;
		}
		f->opt = real, f->hit = o, f->n++;
		snprintf(f->names + strlen(f->names), sizeof(f->names) - strlen(f->names),
			 "%s--%s", f->names[0] ? ", " : "", o->name);
	}
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		if (!(f->n == 1 && !key && strlen(f->hit->name) == len))
			find_opt(c->argp, name, len, key, f);
}

static void say_bad_arg(const struct argp_state *state, const char *arg)
{
	struct found f = { 0 };

	if (!strncmp(arg, "--", 2) && arg[2]) {
		const char *name = arg + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);

		find_opt(state->root_argp, name, len, 0, &f);
		if (f.n == 0)
			lp_usage_error(state, "unknown option '--%.*s'", (int)len, name);
		else if (f.n > 1)
			lp_usage_error(state, "ambiguous option '--%.*s' (%s)", (int)len, name,
				       f.names);
		else if (eq && !f.opt->arg)
			lp_usage_error(state, "--%s takes no value", f.hit->name);
		else if (!eq && f.opt->arg)
			lp_usage_error(state, "--%s needs a value (%s)", f.hit->name, f.opt->arg);
		else
			lp_usage_error(state, "invalid option '%s'", arg);
		return;
	}
	if (arg[0] == '-' && arg[1]) {
		for (const char *c = arg + 1; *c; c++) {
			memset(&f, 0, sizeof(f));
			find_opt(state->root_argp, NULL, 0, (unsigned char)*c, &f);
			if (!f.n || !isprint((unsigned char)*c)) {
				lp_usage_error(state, "unknown option '-%c'", *c);
				return;
			}
			if (f.opt->arg) {
				if (c[1])
					break; /* the rest is its value */
				lp_usage_error(state, "-%c needs a value (%s)", *c, f.opt->arg);
				return;
			}
		}
	}
	lp_usage_error(state, "unexpected argument '%s'", arg);
}

bool lp_cli_parse(const struct argp *argp, int argc, char **argv, unsigned flags, void *input,
		  int *status)
{
	struct argp_state state = { .root_argp = argp, .name = argv[0] };
	error_t err;

	memset(&cli, 0, sizeof(cli));
	err = argp_parse(argp, argc, argv, flags | ARGP_NO_ERRS | ARGP_NO_HELP, NULL, input);
	if (!err)
		return true;
	*status = cli.done ? 0 : LP_EXIT_USAGE;
	if (cli.done || cli.said)
		return false;
	if (err == EINVAL && cli.bad_arg)
		say_bad_arg(&state, cli.bad_arg);
	else
		lp_err("cannot read the command line: %s", strerror(err));
	return false;
}
