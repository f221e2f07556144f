/* SPDX-License-Identifier: MIT */
/*
 * Span-pair specs: a pair of USDT probes (entry, exit) that makes spans, and
 * how the span's name and metadata are built from the entry's arguments.
 * Pure: no libbpf, no ELF; `--span` strings and the presets (presets.c) are
 * parsed here. The grammar (docs/span-spec.md):
 *
 *   SPEC  = ENTRY "," EXIT { "," FIELD }
 *   ENTRY = PROBE { "|" PROBE }          alternatives, any of them opens the span
 *   EXIT  = PROBE { "|" PROBE }          any of them closes it
 *   PROBE = [PROVIDER ":"] NAME [ "[" ARG ("==" | "!=") NUMBER "]" ]
 *                                        provider defaults to the previous one's; the
 *                                        predicate: the probe counts only when it holds
 *   FIELD = "name=" TEMPLATE             default: the entry probe's name
 *         | "meta=" TEMPLATE             default: no metadata
 *         | "key=" ARG [ "/" ARG ]       match exits by key (entry's ARG, exit's ARG)
 *         | "reentry=" ("nest" | "close" | "continue")  an entry while a span of the
 *                                        spec is open on the thread: nests (default),
 *                                        first closes the open one, unterminated, or
 *                                        (continue) belongs to the open one when it
 *                                        renders the same name and metadata, else
 *                                        closes it (unkeyed specs)
 *         | "late=" ("no" | "yes")       yes: the probes may appear only later (a library
 *                                        dlopen()ed at run time); missing at the start is
 *                                        no error, never found is a warning at the end
 *         | "match=name"                 unkeyed: an exit renders name= from its own
 *                                        arguments and closes the innermost open span
 *                                        of the spec of that name (frames unwound
 *                                        without their exit close with it)
 *         | "args=" TEMPLATE             like meta=, on each span in the trace only:
 *                                        not part of the summary's row key
 *         | "abort=" PROBE { "|" PROBE } unkeyed: gives up the innermost open span of
 *                                        the spec, unterminated
 *   TEMPLATE = text with "{" EXPR "}" replaced; "\" escapes the next character;
 *              a "," inside "{}" does not end the field
 *   EXPR  = ARG [ ":" FORMAT ] [ "|" FILTER ]
 *   ARG   = [ "exit." ] "arg" N          N: 0..11, the entry probe's argument, or the
 *                                        exit probe's (meta= and args= only)
 *   FORMAT= "d" (signed decimal) | "u" (unsigned) | "x" (hex), at the argument's size;
 *           no format: as the probe declares it (signed or not)
 *         | "str"                        NUL-terminated string at the address
 *         | "str/" ARG                   string of ARG bytes at the address
 *         | "str@" OFF                   string at the pointer stored at address+OFF
 *   FILTER= "lambda"                     (strings) a JVM hidden class's address dropped
 *         | "sql"                        (strings) constants as $1, $2, ... (sqlnorm.h)
 */
#ifndef LP_SPEC_H
#define LP_SPEC_H

#include <linux/types.h>

#include "bpf/wire.h"
#include "common.h"

#define LP_SPEC_TEXT_MAX 1024 /* bytes of one spec's text */
#define LP_SPEC_ALTS 4        /* alternatives of an entry or an exit */
#define LP_SPEC_PROBE_MAX 64  /* bytes of a provider or probe name */
#define LP_SPEC_PARTS 16      /* literal pieces and expressions of one template */

struct lp_probe_ref {
	char provider[LP_SPEC_PROBE_MAX];
	char name[LP_SPEC_PROBE_MAX];
	/* [argN==V] / [argN!=V]: the probe counts only when its argument compares so. */
	bool has_pred, pred_ne;
	uint8_t pred_arg;
	uint64_t pred_val;
};

enum lp_arg_fmt { LP_FMT_AS_DECLARED = 0, LP_FMT_DEC, LP_FMT_UNS, LP_FMT_HEX, LP_FMT_STR };
enum lp_filter { LP_FILTER_NONE = 0, LP_FILTER_LAMBDA, LP_FILTER_SQL };

struct lp_tpl_part {
	bool is_arg;
	bool exit_arg;       /* exit.argN: the exit probe's argument */
	uint16_t off, len;   /* literal: bytes of lp_spec.lit */
	uint8_t arg;         /* expression: argument index */
	enum lp_arg_fmt fmt;
	enum lp_filter filter;
	uint8_t slot;        /* LP_FMT_STR: the string slot (lp_usdt_desc.str[slot]) */
};

struct lp_tpl {
	struct lp_tpl_part part[LP_SPEC_PARTS];
	size_t n;
	bool uses_exit; /* some part is an exit argument: rendered again when the span closes */
};

struct lp_spec {
	struct lp_probe_ref entry[LP_SPEC_ALTS], exit[LP_SPEC_ALTS], abort[LP_SPEC_ALTS];
	size_t nentry, nexit, nabort;
	struct lp_tpl name, meta, args;
	bool has_meta, has_args;
	bool match_name;             /* match=name */
	bool keyed;
	uint8_t key_entry, key_exit; /* argument indexes of the key */
	bool reentry_close;          /* reentry=close */
	bool reentry_continue;       /* reentry=continue */
	bool late;                   /* late=yes */
	uint8_t max_arg;             /* highest entry argument the templates use, +1 (0: none) */
	uint8_t max_exit_arg;        /* highest exit argument (exit.argN, key, match), +1 */
	/*
	 * Each argument's size in bytes as the probe's note declares it, negative
	 * when signed (-4@%eax: -4); 0 when not known (taken as 8, signed). Set by
	 * the recorder from the first file it attaches the probe in.
	 */
	int8_t arg_size[LP_USDT_ROLES][LP_USDT_ARGS];
	struct lp_usdt_desc desc;    /* the string arguments the kernel copies at entry */
	char lit[LP_SPEC_TEXT_MAX];  /* literal pieces of the templates */
	size_t lit_len;
	char text[LP_SPEC_TEXT_MAX]; /* the spec as given, for messages */
	const char *preset;          /* the preset it comes from, NULL for --span */
};

/*
 * Parses one spec. 0, or -EINVAL with a one-line reason in err (what is
 * wrong, where).
 */
int lp_spec_parse(const char *text, struct lp_spec *out, char *err, size_t errsz);

/* A string argument's value as it arrived: text (not NUL-terminated) or why not. */
struct lp_spec_str {
	const char *s;
	size_t len;
};

/* One probe's arguments and strings, as a template reads them. */
struct lp_tpl_vals {
	const uint64_t *args;
	size_t nargs;
	const struct lp_spec_str *strs;
	size_t nstrs;
};

/*
 * Renders a template into out (appended): argN from the entry's values,
 * exit.argN from the exit's (NULL: the span closed without its exit, "?").
 * role says whose values entry holds: LP_USDT_ROLE_EXIT renders name= for
 * match=name with the exit's own arguments. In metadata (in_meta) a ','
 * inside a substituted string becomes U+FF0C '，', so that it does not split
 * the metadata into items.
 */
int lp_tpl_render(const struct lp_spec *sp, const struct lp_tpl *t, int role,
		  const struct lp_tpl_vals *entry, const struct lp_tpl_vals *exit, bool in_meta,
		  void *buf /* struct lp_buf * */);
/*
 * The argument sizes of a probe's note ("-4@%eax 8@%rdx": -4, 8) into sizes;
 * the number of arguments (at most max).
 */
size_t lp_usdt_arg_sizes(const char *args, int8_t *sizes, size_t max);
/*
 * A JVM hidden class's name without the address at its end
 * ("T$$Lambda$1+0x00007f46a0000c10" or "T$$Lambda$1/0x0000000800c03000" ->
 * "T$$Lambda$1"): the length to keep.
 */
size_t lp_filter_lambda(const char *s, size_t len);
/* True when the template has no expressions: the text is known without arguments. */
bool lp_tpl_literal(const struct lp_tpl *t);

/* True when the probe's predicate holds for these arguments (or it has none). */
bool lp_probe_pred_holds(const struct lp_probe_ref *p, const uint64_t *args, size_t nargs);
/* True when p names the probe (provider, name). */
bool lp_probe_is(const struct lp_probe_ref *p, const char *provider, const char *name);
/* True when the spec uses probe (provider, name); *role: LP_USDT_ROLE_ENTRY, _EXIT or _ABORT. */
bool lp_spec_uses(const struct lp_spec *sp, const char *provider, const char *name, int *role);

/*
 * libbpf 1.1 decodes only these USDT argument specs: N@%reg, N@$imm,
 * N@OFF(%reg), N@(%reg), with a general-purpose register (not %rip). Returns
 * the number of arguments, or -EINVAL with the first unsupported one copied
 * into bad.
 */
int lp_usdt_args_check(const char *args, char *bad, size_t badsz);

/*
 * A probe site's argument specs decoded as libbpf decodes them (wire.h struct
 * lp_usdt_site: for the sites user space attaches itself), at most
 * LP_USDT_ARGS: their number, or -EINVAL when lp_usdt_args_check refuses them.
 * site->cookie is left as it is.
 */
int lp_usdt_site_args(const char *args, struct lp_usdt_site *site);

#endif
