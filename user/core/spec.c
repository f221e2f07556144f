// SPDX-License-Identifier: MIT
#include "spec.h"

#include <asm/ptrace.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlnorm.h"
#include "text.h"

static int fail(char *err, size_t errsz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errsz)
		vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Splits s at top-level commas (not escaped, not inside {}): the end of the field at s. */
static const char *field_end(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			continue;
		}
		if (*s == '{')
			depth++;
		else if (*s == '}' && depth > 0)
			depth--;
		else if (*s == ',' && depth == 0)
			break;
	}
	return s;
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

static int parse_arg(const char **s, const char *end, uint8_t *arg, char *err, size_t errsz);

/* "[argN==V]" or "[argN!=V]" at the end of a probe (s..end). */
static int parse_pred(const char *s, const char *end, struct lp_probe_ref *p, char *err,
		      size_t errsz)
{
	const char *start = s;
	char num[24], *nend;
	int e;

	if (end[-1] != ']')
		return fail(err, errsz, "unclosed '[' in '%.*s'", (int)(end - start), start);
	s++;
	end--;
	e = parse_arg(&s, end, &p->pred_arg, err, errsz);
	if (e)
		return e;
	if (end - s < 3 || (s[0] != '=' && s[0] != '!') || s[1] != '=')
		return fail(err, errsz, "expected [argN==VALUE] or [argN!=VALUE], not '%.*s'",
			    (int)(end - start + 1), start);
	p->pred_ne = s[0] == '!';
	s += 2;
	if ((size_t)(end - s) >= sizeof(num))
		return fail(err, errsz, "bad value '%.*s' in '%.*s'", (int)(end - s), s,
			    (int)(end - start + 1), start);
	memcpy(num, s, (size_t)(end - s));
	num[end - s] = '\0';
	errno = 0;
	p->pred_val = num[0] == '-' ? (uint64_t)strtoll(num, &nend, 0) : strtoull(num, &nend, 0);
	if (errno || nend == num || *nend)
		return fail(err, errsz, "bad value '%s' in '%.*s': a number", num,
			    (int)(end - start + 1), start);
	p->has_pred = true;
	return 0;
}

/* One probe of ENTRY or EXIT: [PROVIDER:]NAME[PREDICATE]. */
static int parse_probe(const char *s, size_t len, const char *prev_provider,
		       struct lp_probe_ref *p, char *err, size_t errsz)
{
	const char *bracket = memchr(s, '[', len);
	const char *colon, *name = s;
	size_t plen = 0, nlen;

	memset(p, 0, sizeof(*p));
	if (bracket) {
		int e = parse_pred(bracket, s + len, p, err, errsz);

		if (e)
			return e;
		len = (size_t)(bracket - s);
	}
	colon = memchr(s, ':', len);
	nlen = len;

	if (colon) {
		plen = (size_t)(colon - s);
		name = colon + 1;
		nlen = len - plen - 1;
		if (plen == 0)
			return fail(err, errsz, "empty provider in '%.*s'", (int)len, s);
	} else if (!prev_provider) {
		return fail(err, errsz, "probe '%.*s' needs a provider: PROVIDER:NAME", (int)len, s);
	}
	if (nlen == 0)
		return fail(err, errsz, "empty probe name in '%.*s'", (int)len, s);
	if (plen >= LP_SPEC_PROBE_MAX || nlen >= LP_SPEC_PROBE_MAX)
		return fail(err, errsz, "probe name '%.*s' is longer than %d bytes", (int)len, s,
			    LP_SPEC_PROBE_MAX - 1);
	for (size_t i = 0; i < len; i++)
		if (s + i != colon && !is_ident(s[i]))
			return fail(err, errsz, "unexpected '%c' in probe '%.*s'", s[i], (int)len, s);
	if (colon)
		memcpy(p->provider, s, plen), p->provider[plen] = '\0';
	else
		snprintf(p->provider, sizeof(p->provider), "%s", prev_provider);
	memcpy(p->name, name, nlen);
	p->name[nlen] = '\0';
	return 0;
}

/* PROBE { "|" PROBE } */
static int parse_probes(const char *s, size_t len, const char *what, const char *prev_provider,
			struct lp_probe_ref *out, size_t *n, char *err, size_t errsz)
{
	const char *end = s + len;

	*n = 0;
	if (len == 0)
		return fail(err, errsz, "no %s probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...", what);
	while (s <= end) {
		const char *bar = memchr(s, '|', (size_t)(end - s));
		size_t l = bar ? (size_t)(bar - s) : (size_t)(end - s);
		int err2;

		if (*n == LP_SPEC_ALTS)
			return fail(err, errsz, "more than %d %s probes", LP_SPEC_ALTS, what);
		err2 = parse_probe(s, l, *n ? out[*n - 1].provider : prev_provider, &out[*n], err,
				   errsz);
		if (err2)
			return err2;
		(*n)++;
		if (!bar)
			break;
		s = bar + 1;
	}
	return 0;
}

/* "argN" at *s, advancing *s. */
static int parse_arg(const char **s, const char *end, uint8_t *arg, char *err, size_t errsz)
{
	const char *p = *s;
	unsigned v = 0;
	size_t digits = 0;

	if (end - p < 4 || strncmp(p, "arg", 3) != 0)
		return fail(err, errsz, "expected argN at '%.*s'", (int)(end - p), p);
	for (p += 3; p < end && isdigit((unsigned char)*p) && digits < 3; p++, digits++)
		v = v * 10 + (unsigned)(*p - '0');
	if (digits == 0)
		return fail(err, errsz, "expected argN at '%.*s'", (int)(end - *s), *s);
	if (v >= LP_USDT_ARGS)
		return fail(err, errsz, "arg%u: a USDT probe has at most %d arguments (arg0..arg%d)",
			    v, LP_USDT_ARGS, LP_USDT_ARGS - 1);
	*arg = (uint8_t)v;
	*s = p;
	return 0;
}

static void use_arg(struct lp_spec *sp, uint8_t arg, bool exit_arg)
{
	uint8_t *max = exit_arg ? &sp->max_exit_arg : &sp->max_arg;

	if (arg + 1u > *max)
		*max = arg + 1;
}

/* The string slot reading this argument this way; added if new, else read at want's roles too. */
static int str_slot(struct lp_spec *sp, const struct lp_usdt_str *want, uint8_t *slot,
		    char *err, size_t errsz)
{
	for (uint32_t i = 0; i < sp->desc.nstr; i++) {
		struct lp_usdt_str *h = &sp->desc.str[i];

		if (h->arg == want->arg && h->len_arg == want->len_arg && h->deref == want->deref &&
		    h->off == want->off) {
			h->roles |= want->roles;
			*slot = (uint8_t)i;
			return 0;
		}
	}
	if (sp->desc.nstr == LP_USDT_STR_SLOTS)
		return fail(err, errsz, "more than %d different string arguments", LP_USDT_STR_SLOTS);
	sp->desc.str[sp->desc.nstr] = *want;
	*slot = (uint8_t)sp->desc.nstr++;
	return 0;
}

/* FILTER after "|" in {...}, for a string. */
static int parse_filter(struct lp_tpl_part *part, const char *s, const char *end,
			const char *start, const char *close, char *err, size_t errsz)
{
	if (part->fmt != LP_FMT_STR)
		return fail(err, errsz, "a filter applies to a string (:str...) in {%.*s}",
			    (int)(close - start), start);
	if (end - s == 6 && !strncmp(s, "lambda", 6)) {
		part->filter = LP_FILTER_LAMBDA;
		return 0;
	}
	if (end - s == 3 && !strncmp(s, "sql", 3)) {
		part->filter = LP_FILTER_SQL;
		return 0;
	}
	return fail(err, errsz, "unknown filter '%.*s' in {%.*s}: expected lambda or sql",
		    (int)(end - s), s, (int)(close - start), start);
}

static int parse_format(struct lp_spec *sp, const char *s, const char *end,
			struct lp_tpl_part *part, const char *start, char *err, size_t errsz);

/* EXPR between { and }; allow_exit: exit.argN may be used (meta=, args=). */
static int parse_expr(struct lp_spec *sp, const char *s, const char *end, struct lp_tpl_part *part,
		      bool allow_exit, char *err, size_t errsz)
{
	const char *start = s, *close = end, *bar = memchr(s, '|', (size_t)(end - s));
	int e;

	if (bar)
		end = bar;
	if (end - s > 5 && !strncmp(s, "exit.", 5)) {
		if (!allow_exit)
			return fail(err, errsz, "{%.*s}: exit arguments are for meta= and args= "
					    "(the name is known at the entry)",
				    (int)(close - start), start);
		part->exit_arg = true;
		s += 5;
	}
	e = parse_arg(&s, end, &part->arg, err, errsz);
	if (e)
		return e;
	use_arg(sp, part->arg, part->exit_arg);
	part->is_arg = true;
	part->fmt = LP_FMT_AS_DECLARED;
	if (s != end) {
		if (*s != ':')
			return fail(err, errsz, "unexpected '%.*s' in {%.*s}", (int)(end - s), s,
				    (int)(close - start), start);
		e = parse_format(sp, s + 1, end, part, start, err, errsz);
		if (e)
			return e;
	}
	return bar ? parse_filter(part, bar + 1, close, start, close, err, errsz) : 0;
}

/* FORMAT after ':' in {...}. */
static int parse_format(struct lp_spec *sp, const char *s, const char *end,
			struct lp_tpl_part *part, const char *start, char *err, size_t errsz)
{
	int e;

	if ((size_t)(end - s) == 1 && *s == 'd')
		return part->fmt = LP_FMT_DEC, 0;
	if ((size_t)(end - s) == 1 && *s == 'u')
		return part->fmt = LP_FMT_UNS, 0;
	if ((size_t)(end - s) == 1 && *s == 'x')
		return part->fmt = LP_FMT_HEX, 0;
	if (end - s >= 3 && strncmp(s, "str", 3) == 0) {
		struct lp_usdt_str want = {
			.arg = (__s8)part->arg,
			.len_arg = -1,
			.roles = 1u << (part->exit_arg ? LP_USDT_ROLE_EXIT : LP_USDT_ROLE_ENTRY),
		};

		s += 3;
		part->fmt = LP_FMT_STR;
		if (s < end && *s == '/') {
			uint8_t la;

			s++;
			e = parse_arg(&s, end, &la, err, errsz);
			if (e)
				return e;
			use_arg(sp, la, part->exit_arg);
			want.len_arg = (__s8)la;
		} else if (s < end && *s == '@') {
			char num[16];
			char *nend;
			long off;

			s++;
			if (end - s == 0 || end - s >= (long)sizeof(num))
				return fail(err, errsz, "expected an offset after 'str@' in {%.*s}",
					    (int)(end - start), start);
			memcpy(num, s, (size_t)(end - s));
			num[end - s] = '\0';
			errno = 0;
			off = strtol(num, &nend, 0);
			if (errno || *nend || off < -65536 || off > 65536)
				return fail(err, errsz,
					    "bad offset '%s' in {%.*s}: a number from -65536 to 65536",
					    num, (int)(end - start), start);
			want.deref = 1;
			want.off = (__s32)off;
			s = end;
		}
		if (s != end)
			return fail(err, errsz, "unexpected '%.*s' in {%.*s}", (int)(end - s), s,
				    (int)(end - start), start);
		return str_slot(sp, &want, &part->slot, err, errsz);
	}
	return fail(err, errsz, "unknown format '%.*s' in {%.*s}: expected d, u, x, str, str/argN or "
			    "str@OFFSET",
		    (int)(end - s), s, (int)(end - start), start);
}

static int add_lit(struct lp_spec *sp, struct lp_tpl *t, const char *s, size_t len, char *err,
		   size_t errsz)
{
	struct lp_tpl_part *last = t->n ? &t->part[t->n - 1] : NULL;

	if (len == 0)
		return 0;
	if (sp->lit_len + len > sizeof(sp->lit))
		return fail(err, errsz, "spec longer than %d bytes", LP_SPEC_TEXT_MAX);
	/* Consecutive literal bytes (escapes split them) join the previous piece. */
	if (last && !last->is_arg && last->off + last->len == sp->lit_len) {
		last->len += (uint16_t)len;
	} else {
		if (t->n == LP_SPEC_PARTS)
			return fail(err, errsz, "template with more than %d pieces", LP_SPEC_PARTS);
		t->part[t->n++] = (struct lp_tpl_part){ .off = (uint16_t)sp->lit_len,
							 .len = (uint16_t)len };
	}
	memcpy(sp->lit + sp->lit_len, s, len);
	sp->lit_len += len;
	return 0;
}

static int parse_tpl(struct lp_spec *sp, const char *s, const char *end, struct lp_tpl *t,
		     const char *field, bool allow_exit, char *err, size_t errsz)
{
	t->n = 0;
	while (s < end) {
		const char *close;
		int e;

		if (*s == '\\') {
			if (s + 1 == end)
				return fail(err, errsz, "'\\' at the end of %s=", field);
			e = add_lit(sp, t, s + 1, 1, err, errsz);
			s += 2;
		} else if (*s == '{') {
			close = memchr(s, '}', (size_t)(end - s));
			if (!close)
				return fail(err, errsz, "unclosed '{' in %s=", field);
			if (t->n == LP_SPEC_PARTS)
				return fail(err, errsz, "template with more than %d pieces",
					    LP_SPEC_PARTS);
			memset(&t->part[t->n], 0, sizeof(t->part[t->n]));
			e = parse_expr(sp, s + 1, close, &t->part[t->n], allow_exit, err, errsz);
			if (!e && t->part[t->n].exit_arg)
				t->uses_exit = true;
			if (!e)
				t->n++;
			s = close + 1;
		} else if (*s == '}') {
			return fail(err, errsz, "'}' without '{' in %s= (write \\} for the character)",
				    field);
		} else {
			size_t l = strcspn(s, "\\{}");

			if (l > (size_t)(end - s))
				l = (size_t)(end - s);
			e = add_lit(sp, t, s, l, err, errsz);
			s += l;
		}
		if (e)
			return e;
	}
	return 0;
}

/* Whether s..end is KEY=VALUE: a '=' outside a probe's [predicate]. */
static bool is_kv(const char *s, const char *end)
{
	int depth = 0;

	for (; s < end; s++) {
		if (*s == '[')
			depth++;
		else if (*s == ']' && depth > 0)
			depth--;
		else if (*s == '=' && depth == 0)
			return true;
	}
	return false;
}

int lp_spec_parse(const char *text, struct lp_spec *sp, char *err, size_t errsz)
{
	const char *s = text, *end;
	bool seen_name = false, seen_meta = false, seen_key = false, seen_reentry = false;
	bool seen_late = false, seen_match = false, seen_args = false, seen_abort = false;
	int e;

	memset(sp, 0, sizeof(*sp));
	if (!text || !*text)
		return fail(err, errsz, "empty spec: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	if (strlen(text) >= sizeof(sp->text))
		return fail(err, errsz, "spec longer than %d bytes", LP_SPEC_TEXT_MAX - 1);
	snprintf(sp->text, sizeof(sp->text), "%s", text);

	end = field_end(s);
	if (is_kv(s, end))
		return fail(err, errsz, "the spec must start with the entry probe, "
			    "PROVIDER:ENTRY,PROVIDER:EXIT,...");
	e = parse_probes(s, (size_t)(end - s), "entry", NULL, sp->entry, &sp->nentry, err, errsz);
	if (e)
		return e;
	if (!*end)
		return fail(err, errsz, "no exit probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	s = end + 1;
	end = field_end(s);
	if (is_kv(s, end))
		return fail(err, errsz, "the second field must be the exit probe, not '%.*s'",
			    (int)(end - s), s);
	e = parse_probes(s, (size_t)(end - s), "exit", sp->entry[0].provider, sp->exit,
			 &sp->nexit, err, errsz);
	if (e)
		return e;

	while (*end) {
		const char *eq, *v;

		s = end + 1;
		end = field_end(s);
		eq = memchr(s, '=', (size_t)(end - s));
		if (!eq)
			return fail(err, errsz, "field '%.*s' is not KEY=VALUE (name=, meta=, args=, "
					    "key=, match=, reentry=, abort=, late=)",
				    (int)(end - s), s);
		v = eq + 1;
		if (eq - s == 4 && !strncmp(s, "name", 4)) {
			if (seen_name)
				return fail(err, errsz, "name= given twice");
			seen_name = true;
			e = parse_tpl(sp, v, end, &sp->name, "name", false, err, errsz);
			if (!e && sp->name.n == 0)
				e = fail(err, errsz, "name= is empty");
		} else if (eq - s == 4 && !strncmp(s, "meta", 4)) {
			if (seen_meta)
				return fail(err, errsz, "meta= given twice");
			seen_meta = true;
			sp->has_meta = true;
			e = parse_tpl(sp, v, end, &sp->meta, "meta", true, err, errsz);
		} else if (eq - s == 4 && !strncmp(s, "args", 4)) {
			if (seen_args)
				return fail(err, errsz, "args= given twice");
			seen_args = true;
			sp->has_args = true;
			e = parse_tpl(sp, v, end, &sp->args, "args", true, err, errsz);
		} else if (eq - s == 5 && !strncmp(s, "match", 5)) {
			if (seen_match)
				return fail(err, errsz, "match= given twice");
			seen_match = true;
			if (end - v == 4 && !strncmp(v, "name", 4))
				sp->match_name = true;
			else
				e = fail(err, errsz, "match= is name, not '%.*s'", (int)(end - v), v);
		} else if (eq - s == 5 && !strncmp(s, "abort", 5)) {
			if (seen_abort)
				return fail(err, errsz, "abort= given twice");
			seen_abort = true;
			e = parse_probes(v, (size_t)(end - v), "abort", sp->entry[0].provider, sp->abort,
					 &sp->nabort, err, errsz);
		} else if (eq - s == 3 && !strncmp(s, "key", 3)) {
			const char *p = v;

			if (seen_key)
				return fail(err, errsz, "key= given twice");
			seen_key = true;
			sp->keyed = true;
			e = parse_arg(&p, end, &sp->key_entry, err, errsz);
			sp->key_exit = sp->key_entry;
			if (!e && p < end && *p == '/') {
				p++;
				e = parse_arg(&p, end, &sp->key_exit, err, errsz);
			}
			if (!e && p != end)
				e = fail(err, errsz, "key= is argN or argN/argM, not '%.*s'",
					 (int)(end - v), v);
			if (!e) {
				use_arg(sp, sp->key_entry, false);
				use_arg(sp, sp->key_exit, true);
			}
		} else if (eq - s == 7 && !strncmp(s, "reentry", 7)) {
			if (seen_reentry)
				return fail(err, errsz, "reentry= given twice");
			seen_reentry = true;
			if (end - v == 5 && !strncmp(v, "close", 5))
				sp->reentry_close = true;
			else if (end - v == 8 && !strncmp(v, "continue", 8))
				sp->reentry_continue = true;
			else if (!(end - v == 4 && !strncmp(v, "nest", 4)))
				e = fail(err, errsz, "reentry= is nest, close or continue, not '%.*s'",
					 (int)(end - v), v);
		} else if (eq - s == 4 && !strncmp(s, "late", 4)) {
			if (seen_late)
				return fail(err, errsz, "late= given twice");
			seen_late = true;
			if (end - v == 3 && !strncmp(v, "yes", 3))
				sp->late = true;
			else if (!(end - v == 2 && !strncmp(v, "no", 2)))
				e = fail(err, errsz, "late= is yes or no, not '%.*s'", (int)(end - v),
					 v);
		} else {
			return fail(err, errsz,
				    "unknown field '%.*s' (expected name=, meta=, args=, key=, match=, "
				    "reentry=, abort= or late=)",
				    (int)(eq - s), s);
		}
		if (e)
			return e;
	}
	if ((sp->reentry_close || sp->reentry_continue) && sp->keyed)
		return fail(err, errsz, "reentry=close and reentry=continue are for specs without "
			    "key=: a keyed exit names the span it closes");
	if (sp->match_name && sp->keyed)
		return fail(err, errsz, "match=name is for specs without key=: a keyed exit "
			    "names the span it closes");
	if (sp->nabort && sp->keyed)
		return fail(err, errsz, "abort= is for specs without key=: it gives up the "
			    "innermost open span");
	if (!seen_name) {
		/* Default: the entry probe's name. */
		e = add_lit(sp, &sp->name, sp->entry[0].name, strlen(sp->entry[0].name), err, errsz);
		if (e)
			return e;
	}
	if (sp->match_name) {
		/* The exit renders the name too: its arguments and strings are read there. */
		for (size_t i = 0; i < sp->name.n; i++) {
			const struct lp_tpl_part *pt = &sp->name.part[i];

			if (!pt->is_arg)
				continue;
			use_arg(sp, pt->arg, true);
			if (pt->fmt == LP_FMT_STR) {
				struct lp_usdt_str *h = &sp->desc.str[pt->slot];

				h->roles |= 1u << LP_USDT_ROLE_EXIT;
				if (h->len_arg >= 0)
					use_arg(sp, (uint8_t)h->len_arg, true);
			}
		}
	}
	/* Predicates are tested on the arguments sent. */
	for (size_t i = 0; i < sp->nentry; i++)
		if (sp->entry[i].has_pred)
			use_arg(sp, sp->entry[i].pred_arg, false);
	for (size_t i = 0; i < sp->nexit; i++)
		if (sp->exit[i].has_pred)
			use_arg(sp, sp->exit[i].pred_arg, true);
	for (size_t i = 0; i < sp->nabort; i++)
		if (sp->abort[i].has_pred && sp->abort[i].pred_arg + 1u > sp->desc.nargs[LP_USDT_ROLE_ABORT])
			sp->desc.nargs[LP_USDT_ROLE_ABORT] = sp->abort[i].pred_arg + 1;
	/* The kernel reads only these arguments (the key's and predicates' included). */
	sp->desc.nargs[LP_USDT_ROLE_ENTRY] = sp->max_arg;
	sp->desc.nargs[LP_USDT_ROLE_EXIT] = sp->max_exit_arg;
	return 0;
}

bool lp_tpl_literal(const struct lp_tpl *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->part[i].is_arg)
			return false;
	return true;
}

size_t lp_filter_lambda(const char *s, size_t len)
{
	size_t i = len;

	while (i > 0 && isxdigit((unsigned char)s[i - 1]))
		i--;
	if (i == len || i < 3 || s[i - 1] != 'x' || s[i - 2] != '0' ||
	    (s[i - 3] != '+' && s[i - 3] != '/'))
		return len;
	return i - 3;
}

/* A number at the argument's declared size: size bytes, negative when signed, 0 unknown. */
static void format_num(char *num, size_t cap, uint64_t v, int size, enum lp_arg_fmt fmt)
{
	unsigned bytes = size ? (unsigned)(size < 0 ? -size : size) : 8;
	bool is_signed = size <= 0;
	uint64_t masked = v, sext = v;

	if (bytes < 8) {
		unsigned bits = bytes * 8;

		masked = v & ((UINT64_C(1) << bits) - 1);
		sext = masked;
		if (masked >> (bits - 1))
			sext |= ~UINT64_C(0) << bits;
	}
	if (fmt == LP_FMT_AS_DECLARED)
		fmt = is_signed ? LP_FMT_DEC : LP_FMT_UNS;
	if (fmt == LP_FMT_UNS)
		snprintf(num, cap, "%" PRIu64, masked);
	else if (fmt == LP_FMT_HEX)
		snprintf(num, cap, "0x%" PRIx64, masked);
	else
		snprintf(num, cap, "%" PRId64, (int64_t)sext);
}

/* A string argument through its filter; in metadata, its commas as U+FF0C. */
static int put_str(struct lp_buf *b, const char *s, size_t len, enum lp_filter filter,
		   bool in_meta)
{
	struct lp_buf norm = { 0 };
	int e = 0;

	if (filter == LP_FILTER_LAMBDA) {
		len = lp_filter_lambda(s, len);
	} else if (filter == LP_FILTER_SQL) {
		e = lp_sql_normalize(s, len, &norm);
		s = norm.p ? norm.p : "";
		len = norm.len;
	}
	if (!e && !in_meta)
		e = lp_buf_put(b, s, len);
	for (size_t k = 0; !e && in_meta && k < len; k++)
		e = s[k] == ',' ? lp_buf_put(b, "\xef\xbc\x8c", 3) : lp_buf_putc(b, s[k]);
	lp_buf_free(&norm);
	return e;
}

int lp_tpl_render(const struct lp_spec *sp, const struct lp_tpl *t, int role,
		  const struct lp_tpl_vals *entry, const struct lp_tpl_vals *exit, bool in_meta,
		  void *bufp)
{
	struct lp_buf *b = bufp;

	for (size_t i = 0; i < t->n; i++) {
		const struct lp_tpl_part *p = &t->part[i];
		const struct lp_tpl_vals *vals = p->exit_arg ? exit : entry;
		int vrole = p->exit_arg ? LP_USDT_ROLE_EXIT : role;
		char num[32];
		int e = 0;

		if (!p->is_arg) {
			e = lp_buf_put(b, sp->lit + p->off, p->len);
		} else if (p->fmt == LP_FMT_STR) {
			const struct lp_spec_str *st =
				vals && p->slot < vals->nstrs ? &vals->strs[p->slot] : NULL;
			size_t len = st ? st->len : 0;

			if (!vals) {
				e = lp_buf_putc(b, '?');
			} else if (!st || !st->s) {
				e = lp_buf_put(b, "(unreadable)", 12);
			} else {
				e = put_str(b, st->s, len, p->filter, in_meta);
			}
		} else if (!vals || p->arg >= vals->nargs) {
			e = lp_buf_putc(b, '?');
		} else {
			int size = vrole >= 0 && vrole < LP_USDT_ROLES ? sp->arg_size[vrole][p->arg] : 0;

			format_num(num, sizeof(num), vals->args[p->arg], size, p->fmt);
			e = lp_buf_put(b, num, strlen(num));
		}
		if (e)
			return e;
	}
	return 0;
}

size_t lp_usdt_arg_sizes(const char *args, int8_t *sizes, size_t max)
{
	const char *s = args;
	size_t n = 0;

	while (*s && n < max) {
		size_t len;
		long v;
		char *e;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ");
		v = strtol(s, &e, 10);
		sizes[n++] = e < s + len && *e == '@' && v >= -8 && v <= 8 ? (int8_t)v : 0;
		s += len;
	}
	return n;
}

bool lp_probe_pred_holds(const struct lp_probe_ref *p, const uint64_t *args, size_t nargs)
{
	uint64_t v;

	if (!p->has_pred)
		return true;
	v = p->pred_arg < nargs ? args[p->pred_arg] : 0;
	return (v == p->pred_val) != p->pred_ne;
}

bool lp_probe_is(const struct lp_probe_ref *p, const char *provider, const char *name)
{
	return !strcmp(p->provider, provider) && !strcmp(p->name, name);
}

bool lp_spec_uses(const struct lp_spec *sp, const char *provider, const char *name, int *role)
{
	for (size_t i = 0; i < sp->nentry; i++)
		if (lp_probe_is(&sp->entry[i], provider, name)) {
			if (role)
				*role = LP_USDT_ROLE_ENTRY;
			return true;
		}
	for (size_t i = 0; i < sp->nexit; i++)
		if (lp_probe_is(&sp->exit[i], provider, name)) {
			if (role)
				*role = LP_USDT_ROLE_EXIT;
			return true;
		}
	for (size_t i = 0; i < sp->nabort; i++)
		if (lp_probe_is(&sp->abort[i], provider, name)) {
			if (role)
				*role = LP_USDT_ROLE_ABORT;
			return true;
		}
	return false;
}

/* The general-purpose registers libbpf 1.1 maps to pt_regs (x86-64). */
static bool gp_register(const char *r, size_t len)
{
	static const char *const names[] = {
		"rax", "eax", "ax", "al", "rbx", "ebx", "bx", "bl", "rcx", "ecx", "cx", "cl",
		"rdx", "edx", "dx", "dl", "rsi", "esi", "si", "sil", "rdi", "edi", "di", "dil",
		"rbp", "ebp", "bp", "bpl", "rsp", "esp", "sp", "spl",
	};
	char buf[8];

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, r, len);
	buf[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(buf, names[i]))
			return true;
	/* r8..r15 with their d, w, b forms */
	if (buf[0] == 'r' && isdigit((unsigned char)buf[1])) {
		char *e;
		long n = strtol(buf + 1, &e, 10);

		return n >= 8 && n <= 15 && (!*e || !strcmp(e, "d") || !strcmp(e, "w") ||
					     !strcmp(e, "b"));
	}
	return false;
}

static bool arg_supported(const char *a, size_t len)
{
	const char *at = memchr(a, '@', len), *p, *end = a + len;
	char *e;

	if (!at)
		return false;
	/* size: [-]1, 2, 4 or 8 */
	p = a;
	if (*p == '-')
		p++;
	if (at - p != 1 || !strchr("1248", *p))
		return false;
	p = at + 1;
	if (p < end && *p == '%')
		return gp_register(p + 1, (size_t)(end - p - 1));
	if (p < end && *p == '$') {
		strtoll(p + 1, &e, 0);
		return e == end && e > p + 1;
	}
	/* [OFF](%reg) */
	if (p < end && (*p == '-' || isdigit((unsigned char)*p))) {
		strtoll(p, &e, 0);
		if (e == p)
			return false;
		p = e;
	}
	if (end - p < 4 || p[0] != '(' || p[1] != '%' || end[-1] != ')')
		return false;
	return gp_register(p + 2, (size_t)(end - p - 3));
}

/* Where struct pt_regs (x86-64) keeps a general-purpose register: its offset, or -1. */
static int reg_offset(const char *r, size_t len)
{
	static const struct {
		const char *names[4];
		short off;
	} regs[] = {
		{ { "rax", "eax", "ax", "al" }, offsetof(struct pt_regs, rax) },
		{ { "rbx", "ebx", "bx", "bl" }, offsetof(struct pt_regs, rbx) },
		{ { "rcx", "ecx", "cx", "cl" }, offsetof(struct pt_regs, rcx) },
		{ { "rdx", "edx", "dx", "dl" }, offsetof(struct pt_regs, rdx) },
		{ { "rsi", "esi", "si", "sil" }, offsetof(struct pt_regs, rsi) },
		{ { "rdi", "edi", "di", "dil" }, offsetof(struct pt_regs, rdi) },
		{ { "rbp", "ebp", "bp", "bpl" }, offsetof(struct pt_regs, rbp) },
		{ { "rsp", "esp", "sp", "spl" }, offsetof(struct pt_regs, rsp) },
		{ { "r8", "r8d", "r8w", "r8b" }, offsetof(struct pt_regs, r8) },
		{ { "r9", "r9d", "r9w", "r9b" }, offsetof(struct pt_regs, r9) },
		{ { "r10", "r10d", "r10w", "r10b" }, offsetof(struct pt_regs, r10) },
		{ { "r11", "r11d", "r11w", "r11b" }, offsetof(struct pt_regs, r11) },
		{ { "r12", "r12d", "r12w", "r12b" }, offsetof(struct pt_regs, r12) },
		{ { "r13", "r13d", "r13w", "r13b" }, offsetof(struct pt_regs, r13) },
		{ { "r14", "r14d", "r14w", "r14b" }, offsetof(struct pt_regs, r14) },
		{ { "r15", "r15d", "r15w", "r15b" }, offsetof(struct pt_regs, r15) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(regs); i++)
		for (size_t k = 0; k < 4; k++)
			if (strlen(regs[i].names[k]) == len && !memcmp(regs[i].names[k], r, len))
				return regs[i].off;
	return -1;
}

/* One argument spec arg_supported() accepted, decoded into a. */
static void site_arg(const char *s, size_t len, struct lp_usdt_arg *a)
{
	const char *at = memchr(s, '@', len), *p = at + 1, *end = s + len, *reg;
	long size = strtol(s, NULL, 10);
	char *e;

	memset(a, 0, sizeof(*a));
	a->is_signed = size < 0;
	a->bitshift = (uint8_t)(64 - 8 * (size < 0 ? -size : size));
	if (*p == '%') {
		a->kind = LP_USDT_ARG_REG;
		a->reg_off = (int16_t)reg_offset(p + 1, (size_t)(end - p - 1));
		return;
	}
	if (*p == '$') {
		a->kind = LP_USDT_ARG_CONST;
		a->val_off = (uint64_t)strtoll(p + 1, NULL, 0);
		return;
	}
	a->kind = LP_USDT_ARG_DEREF;
	if (*p != '(') {
		a->val_off = (uint64_t)strtoll(p, &e, 0);
		p = e;
	}
	reg = p + 2; /* past "(%" */
	a->reg_off = (int16_t)reg_offset(reg, (size_t)(end - 1 - reg));
}

int lp_usdt_site_args(const char *args, struct lp_usdt_site *site)
{
	const char *s = args;
	int n = lp_usdt_args_check(args, NULL, 0);

	if (n < 0)
		return n;
	memset(site->args, 0, sizeof(site->args));
	site->nargs = 0;
	site->pad = 0;
	while (*s && site->nargs < LP_USDT_ARGS) {
		size_t len;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ");
		site_arg(s, len, &site->args[site->nargs++]);
		s += len;
	}
	return (int)site->nargs;
}

int lp_usdt_args_check(const char *args, char *bad, size_t badsz)
{
	const char *s = args;
	int n = 0;

	while (*s) {
		size_t len;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ");
		if (!arg_supported(s, len)) {
			if (bad && badsz)
				snprintf(bad, badsz, "%.*s", (int)len, s);
			return -EINVAL;
		}
		n++;
		s += len;
	}
	return n;
}
