// SPDX-License-Identifier: MIT
#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One probe of ENTRY or EXIT: [PROVIDER:]NAME. */
static int parse_probe(const char *s, size_t len, const char *prev_provider,
		       struct lp_probe_ref *p, char *err, size_t errsz)
{
	const char *colon = memchr(s, ':', len), *name = s;
	size_t plen = 0, nlen = len;

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

static void use_arg(struct lp_spec *sp, uint8_t arg)
{
	if (arg + 1u > sp->max_arg)
		sp->max_arg = arg + 1;
}

/* The string slot reading this argument this way; added if new. */
static int str_slot(struct lp_spec *sp, const struct lp_usdt_str *want, uint8_t *slot,
		    char *err, size_t errsz)
{
	for (uint32_t i = 0; i < sp->desc.nstr; i++) {
		const struct lp_usdt_str *h = &sp->desc.str[i];

		if (h->arg == want->arg && h->len_arg == want->len_arg && h->deref == want->deref &&
		    h->off == want->off) {
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

/* EXPR between { and }. */
static int parse_expr(struct lp_spec *sp, const char *s, const char *end, struct lp_tpl_part *part,
		      char *err, size_t errsz)
{
	const char *start = s;
	int e = parse_arg(&s, end, &part->arg, err, errsz);

	if (e)
		return e;
	use_arg(sp, part->arg);
	part->is_arg = true;
	part->fmt = LP_FMT_DEC;
	if (s == end)
		return 0;
	if (*s != ':')
		return fail(err, errsz, "unexpected '%.*s' in {%.*s}", (int)(end - s), s,
			    (int)(end - start), start);
	s++;
	if ((size_t)(end - s) == 1 && *s == 'd')
		return 0;
	if ((size_t)(end - s) == 1 && *s == 'u')
		return part->fmt = LP_FMT_UNS, 0;
	if ((size_t)(end - s) == 1 && *s == 'x')
		return part->fmt = LP_FMT_HEX, 0;
	if (end - s >= 3 && strncmp(s, "str", 3) == 0) {
		struct lp_usdt_str want = { .arg = (__s8)part->arg, .len_arg = -1 };

		s += 3;
		part->fmt = LP_FMT_STR;
		if (s < end && *s == '/') {
			uint8_t la;

			s++;
			e = parse_arg(&s, end, &la, err, errsz);
			if (e)
				return e;
			use_arg(sp, la);
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
		     const char *field, char *err, size_t errsz)
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
			e = parse_expr(sp, s + 1, close, &t->part[t->n], err, errsz);
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

int lp_spec_parse(const char *text, struct lp_spec *sp, char *err, size_t errsz)
{
	const char *s = text, *end;
	bool seen_name = false, seen_meta = false, seen_key = false, seen_reentry = false;
	bool seen_late = false;
	int e;

	memset(sp, 0, sizeof(*sp));
	if (!text || !*text)
		return fail(err, errsz, "empty spec: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	if (strlen(text) >= sizeof(sp->text))
		return fail(err, errsz, "spec longer than %d bytes", LP_SPEC_TEXT_MAX - 1);
	snprintf(sp->text, sizeof(sp->text), "%s", text);

	end = field_end(s);
	if (memchr(s, '=', (size_t)(end - s)))
		return fail(err, errsz, "the spec must start with the entry probe, "
			    "PROVIDER:ENTRY,PROVIDER:EXIT,...");
	e = parse_probes(s, (size_t)(end - s), "entry", NULL, sp->entry, &sp->nentry, err, errsz);
	if (e)
		return e;
	if (!*end)
		return fail(err, errsz, "no exit probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	s = end + 1;
	end = field_end(s);
	if (memchr(s, '=', (size_t)(end - s)))
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
			return fail(err, errsz, "field '%.*s' is not KEY=VALUE (name=, meta=, key=, "
					    "reentry=, late=)",
				    (int)(end - s), s);
		v = eq + 1;
		if (eq - s == 4 && !strncmp(s, "name", 4)) {
			if (seen_name)
				return fail(err, errsz, "name= given twice");
			seen_name = true;
			e = parse_tpl(sp, v, end, &sp->name, "name", err, errsz);
			if (!e && sp->name.n == 0)
				e = fail(err, errsz, "name= is empty");
		} else if (eq - s == 4 && !strncmp(s, "meta", 4)) {
			if (seen_meta)
				return fail(err, errsz, "meta= given twice");
			seen_meta = true;
			sp->has_meta = true;
			e = parse_tpl(sp, v, end, &sp->meta, "meta", err, errsz);
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
			if (!e)
				use_arg(sp, sp->key_entry);
		} else if (eq - s == 7 && !strncmp(s, "reentry", 7)) {
			if (seen_reentry)
				return fail(err, errsz, "reentry= given twice");
			seen_reentry = true;
			if (end - v == 5 && !strncmp(v, "close", 5))
				sp->reentry_close = true;
			else if (!(end - v == 4 && !strncmp(v, "nest", 4)))
				e = fail(err, errsz, "reentry= is nest or close, not '%.*s'",
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
				    "unknown field '%.*s' (expected name=, meta=, key=, reentry= or "
				    "late=)",
				    (int)(eq - s), s);
		}
		if (e)
			return e;
	}
	if (sp->reentry_close && sp->keyed)
		return fail(err, errsz, "reentry=close is for specs without key=: a keyed exit "
			    "names the span it closes");
	if (!seen_name) {
		/* Default: the entry probe's name. */
		e = add_lit(sp, &sp->name, sp->entry[0].name, strlen(sp->entry[0].name), err, errsz);
		if (e)
			return e;
	}
	/* The kernel reads only these arguments (the key's included in max_arg). */
	sp->desc.nargs[LP_USDT_ROLE_ENTRY] = sp->max_arg;
	sp->desc.nargs[LP_USDT_ROLE_EXIT] = sp->keyed ? (uint8_t)(sp->key_exit + 1) : 0;
	return 0;
}

bool lp_tpl_literal(const struct lp_tpl *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->part[i].is_arg)
			return false;
	return true;
}

int lp_tpl_render(const struct lp_spec *sp, const struct lp_tpl *t, const uint64_t *args,
		  size_t nargs, const struct lp_spec_str *strs, size_t nstrs, bool in_meta,
		  void *bufp)
{
	struct lp_buf *b = bufp;

	for (size_t i = 0; i < t->n; i++) {
		const struct lp_tpl_part *p = &t->part[i];
		char num[32];
		uint64_t v;
		int e = 0;

		if (!p->is_arg) {
			e = lp_buf_put(b, sp->lit + p->off, p->len);
		} else if (p->fmt == LP_FMT_STR) {
			const struct lp_spec_str *st = p->slot < nstrs ? &strs[p->slot] : NULL;

			if (!st || !st->s) {
				e = lp_buf_put(b, "(unreadable)", 12);
			} else if (!in_meta) {
				e = lp_buf_put(b, st->s, st->len);
			} else {
				for (size_t k = 0; !e && k < st->len; k++)
					e = st->s[k] == ',' ? lp_buf_put(b, "\xef\xbc\x8c", 3)
							    : lp_buf_putc(b, st->s[k]);
			}
		} else {
			if (p->arg >= nargs) {
				e = lp_buf_putc(b, '?');
			} else {
				v = args[p->arg];
				if (p->fmt == LP_FMT_UNS)
					snprintf(num, sizeof(num), "%" PRIu64, v);
				else if (p->fmt == LP_FMT_HEX)
					snprintf(num, sizeof(num), "0x%" PRIx64, v);
				else
					snprintf(num, sizeof(num), "%" PRId64, (int64_t)v);
				e = lp_buf_put(b, num, strlen(num));
			}
		}
		if (e)
			return e;
	}
	return 0;
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
