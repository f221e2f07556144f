// SPDX-License-Identifier: MIT
/*
 * pg_stat_statements 15 replaces the constants its parse analysis recorded, each
 * from its location to the end of the scanner token there (generate_normalized_query
 * and fill_in_constant_lengths in contrib/pg_stat_statements). Here the text is
 * cut into the tokens of PostgreSQL 15's scanner (src/backend/parser/scan.l), and
 * the few places where the parser, not the scanner, decides whether a token is a
 * constant are recognised by their neighbours.
 */
#include "sqlnorm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	T_WORD,	  /* identifier or keyword */
	T_QIDENT, /* "quoted identifier", U&"..." */
	T_STRING, /* '', E'', U&'', B'', X'', $tag$..$tag$ */
	T_NUMBER,
	T_PARAM, /* $N */
	T_OP,
	T_MINUS, /* an operator that is exactly "-" */
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_COMMA,
	T_SEMI,
	T_CAST, /* :: */
	T_DOT,
	T_OTHER,
};

struct tok {
	size_t start, end;
	unsigned kind;
	unsigned param; /* T_PARAM: N */
};

struct toks {
	struct tok *t;
	size_t n, cap;
};

/* scan.l's {space}: PostgreSQL 15 has no \v in it. */
static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_cont(unsigned char c)
{
	return is_ident_start(c) || is_digit(c) || c == '$';
}

static bool is_op_char(unsigned char c)
{
	return c && strchr("~!@#^&|`?+-*/%<>=", c);
}

/* The end of a "--" comment at p (its newline not included). */
static size_t line_comment_end(const char *s, size_t len, size_t p)
{
	while (p < len && s[p] != '\n' && s[p] != '\r')
		p++;
	return p;
}

/* The end of a block comment at p ("/ *"): they nest; unterminated, the text's end. */
static size_t block_comment_end(const char *s, size_t len, size_t p)
{
	size_t depth = 0;

	while (p < len) {
		if (p + 1 < len && s[p] == '/' && s[p + 1] == '*') {
			depth++;
			p += 2;
		} else if (p + 1 < len && s[p] == '*' && s[p + 1] == '/') {
			p += 2;
			if (--depth == 0)
				return p;
		} else {
			p++;
		}
	}
	return len;
}

/*
 * After a quoted string's closing quote at p: where a continuation begins (its
 * opening quote), or 0. The scanner joins 'a' and 'b' into one string when only
 * white space with at least one newline (and "--" comments) lies between.
 */
static size_t continuation(const char *s, size_t len, size_t p)
{
	while (p < len) {
		if (s[p] == ' ' || s[p] == '\t' || s[p] == '\f')
			p++;
		else if (p + 1 < len && s[p] == '-' && s[p + 1] == '-')
			p = line_comment_end(s, len, p);
		else
			break;
	}
	if (p >= len || (s[p] != '\n' && s[p] != '\r'))
		return 0;
	while (p < len) {
		if (is_space((unsigned char)s[p])) {
			p++;
		} else if (p + 1 < len && s[p] == '-' && s[p + 1] == '-') {
			p = line_comment_end(s, len, p);
			if (p >= len)
				return 0; /* {comment}{newline}: the newline is required */
		} else {
			break;
		}
	}
	return p < len && s[p] == '\'' ? p : 0;
}

/*
 * The end of a quoted string whose opening quote is at p; backslash: E'' strings,
 * where \ escapes the next byte; doubled: '' is a quote (not in B'' and X'').
 * Unterminated, the text's end.
 */
static size_t string_end(const char *s, size_t len, size_t p, bool backslash, bool doubled)
{
	for (;;) {
		size_t next;

		p++; /* the opening quote */
		for (;;) {
			if (p >= len)
				return len;
			if (backslash && s[p] == '\\') {
				p += 2;
				continue;
			}
			if (s[p] == '\'') {
				if (doubled && p + 1 < len && s[p + 1] == '\'') {
					p += 2;
					continue;
				}
				p++;
				break;
			}
			p++;
		}
		next = continuation(s, len, p);
		if (!next)
			return p;
		p = next;
	}
}

/* The end of a "quoted identifier" at p; "" is a quote. */
static size_t qident_end(const char *s, size_t len, size_t p)
{
	p++;
	while (p < len) {
		if (s[p] == '"') {
			if (p + 1 < len && s[p + 1] == '"') {
				p += 2;
				continue;
			}
			return p + 1;
		}
		p++;
	}
	return len;
}

/* A $tag$ delimiter at p: its length, or 0. */
static size_t dollar_delim(const char *s, size_t len, size_t p)
{
	size_t q = p + 1;

	if (q < len && s[q] != '$') {
		if (!is_ident_start((unsigned char)s[q]))
			return 0;
		while (q < len && (is_ident_start((unsigned char)s[q]) || is_digit((unsigned char)s[q])))
			q++;
	}
	return q < len && s[q] == '$' ? q + 1 - p : 0;
}

static size_t dollar_string_end(const char *s, size_t len, size_t p, size_t dl)
{
	for (size_t q = p + dl; q + dl <= len; q++)
		if (!memcmp(s + q, s + p, dl))
			return q + dl;
	return len;
}

/* scan.l's integer, decimal, real, and their *fail rules (which give back the tail). */
static size_t number_end(const char *s, size_t len, size_t p)
{
	bool digits = false;
	size_t e;

	while (p < len && is_digit((unsigned char)s[p]))
		p++, digits = true;
	if (p < len && s[p] == '.') {
		if (digits && p + 1 < len && s[p + 1] == '.')
			return p; /* 1..2: decimalfail */
		p++;
		while (p < len && is_digit((unsigned char)s[p]))
			p++;
	}
	if (p < len && (s[p] == 'e' || s[p] == 'E')) {
		e = p + 1;
		if (e < len && (s[e] == '+' || s[e] == '-'))
			e++;
		if (e < len && is_digit((unsigned char)s[e])) {
			while (e < len && is_digit((unsigned char)s[e]))
				e++;
			p = e;
		}
	}
	return p;
}

/*
 * An operator: the longest run of operator characters, cut where a comment
 * begins, and without trailing + and - unless it has a character SQL's own
 * operators lack ("=-1" is "=" and "-1").
 */
static size_t operator_end(const char *s, size_t len, size_t p)
{
	size_t e = p, n;

	while (e < len && is_op_char((unsigned char)s[e])) {
		if (e > p && e + 1 < len &&
		    ((s[e] == '/' && s[e + 1] == '*') || (s[e] == '-' && s[e + 1] == '-')))
			break;
		e++;
	}
	n = e - p;
	if (n > 1 && (s[p + n - 1] == '+' || s[p + n - 1] == '-')) {
		bool keep = false;

		for (size_t i = 0; i + 1 < n && !keep; i++)
			keep = strchr("~!@#^&|`?%", s[p + i]) != NULL;
		if (!keep)
			while (n > 1 && (s[p + n - 1] == '+' || s[p + n - 1] == '-'))
				n--;
	}
	return p + n;
}

static int push(struct toks *tk, size_t start, size_t end, unsigned kind, unsigned param)
{
	struct tok *t = lp_grow(tk->t, &tk->cap, tk->n + 1, sizeof(*tk->t));

	if (!t)
		return -ENOMEM;
	tk->t = t;
	tk->t[tk->n++] = (struct tok){ .start = start, .end = end, .kind = kind, .param = param };
	return 0;
}

static int lex(const char *s, size_t len, struct toks *tk)
{
	size_t p = 0;

	while (p < len) {
		unsigned char c = (unsigned char)s[p], c1 = p + 1 < len ? (unsigned char)s[p + 1] : 0;
		unsigned char c2 = p + 2 < len ? (unsigned char)s[p + 2] : 0;
		unsigned kind = T_OTHER, param = 0;
		size_t e = p + 1;

		if (is_space(c)) {
			p++;
			continue;
		}
		if (c == '-' && c1 == '-') {
			p = line_comment_end(s, len, p);
			continue;
		}
		if (c == '/' && c1 == '*') {
			p = block_comment_end(s, len, p);
			continue;
		}
		if ((c == 'e' || c == 'E') && c1 == '\'') {
			kind = T_STRING, e = string_end(s, len, p + 1, true, true);
		} else if ((c == 'b' || c == 'B' || c == 'x' || c == 'X') && c1 == '\'') {
			kind = T_STRING, e = string_end(s, len, p + 1, false, false);
		} else if ((c == 'u' || c == 'U') && c1 == '&' && c2 == '\'') {
			kind = T_STRING, e = string_end(s, len, p + 2, false, true);
		} else if ((c == 'u' || c == 'U') && c1 == '&' && c2 == '"') {
			kind = T_QIDENT, e = qident_end(s, len, p + 2);
		} else if (is_ident_start(c)) {
			kind = T_WORD;
			while (e < len && is_ident_cont((unsigned char)s[e]))
				e++;
		} else if (c == '"') {
			kind = T_QIDENT, e = qident_end(s, len, p);
		} else if (c == '\'') {
			kind = T_STRING, e = string_end(s, len, p, false, true);
		} else if (c == '$' && is_digit(c1)) {
			kind = T_PARAM;
			while (e < len && is_digit((unsigned char)s[e])) {
				if (param < 100000000)
					param = param * 10 + (unsigned)(s[e] - '0');
				e++;
			}
		} else if (c == '$' && dollar_delim(s, len, p)) {
			kind = T_STRING, e = dollar_string_end(s, len, p, dollar_delim(s, len, p));
		} else if (is_digit(c) || (c == '.' && is_digit(c1))) {
			kind = T_NUMBER, e = number_end(s, len, p);
		} else if (c == ':' && c1 == ':') {
			kind = T_CAST, e = p + 2;
		} else if (c == '.' && c1 == '.') {
			e = p + 2;
		} else if (c == ':' && c1 == '=') {
			e = p + 2;
		} else if (is_op_char(c)) {
			e = operator_end(s, len, p);
			kind = e == p + 1 && c == '-' ? T_MINUS : T_OP;
		} else {
			static const char self[] = "()[],;.";
			static const unsigned kinds[] = { T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK,
							  T_COMMA,  T_SEMI,   T_DOT };
			const char *k = c ? strchr(self, c) : NULL;

			if (k)
				kind = kinds[k - self];
		}
		if (push(tk, p, e, kind, param))
			return -ENOMEM;
		p = e;
	}
	return 0;
}

/* --- which tokens are constants ------------------------------------------ */

enum {
	F_QUERY,     /* a query: ORDER BY / GROUP BY numbers are column positions */
	F_ITEM,	     /* parentheses around such a list's items (DISTINCT ON, ROLLUP, ...) */
	F_CAST,	     /* CAST( ... AS type ) */
	F_TYPMOD,    /* type modifiers: numbers kept */
	F_EXTRACT,   /* EXTRACT(field FROM ...): the field is a constant */
	F_NORMALIZE, /* NORMALIZE(x, NFC): so is the form */
	F_OTHER,
};

#define FRAMES_MAX 64
#define NEG_DEPTH_MAX 32
#define LOOKAHEAD_MAX 64

struct frame {
	unsigned kind;
	bool ord;    /* in an ORDER BY, GROUP BY or DISTINCT ON list */
	size_t open; /* the token index of its "(" */
};

struct norm {
	const char *s;
	const struct tok *t;
	size_t ts, te; /* the statement's tokens */
	struct frame fr[FRAMES_MAX];
	size_t depth, lost; /* frames in fr, and deeper ones not kept */
	struct frame other; /* the frame of parentheses nested past FRAMES_MAX */
	struct lp_buf *out;
	size_t copied; /* text up to here is in out */
	unsigned next; /* the next $N */
};

static bool kw(const struct norm *n, size_t i, const char *word)
{
	const struct tok *t;
	size_t wl = strlen(word);

	if (i < n->ts || i >= n->te)
		return false;
	t = &n->t[i];
	if (t->kind != T_WORD || t->end - t->start != wl)
		return false;
	for (size_t k = 0; k < wl; k++) {
		char c = n->s[t->start + k];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != word[k])
			return false;
	}
	return true;
}

static bool kw_in(const struct norm *n, size_t i, const char *const *words)
{
	for (; *words; words++)
		if (kw(n, i, *words))
			return true;
	return false;
}

static unsigned kind_at(const struct norm *n, size_t i)
{
	return i >= n->ts && i < n->te ? n->t[i].kind : T_SEMI;
}

static int emit(struct norm *n, size_t start, size_t end)
{
	char num[16];
	int w = snprintf(num, sizeof(num), "$%u", n->next++);

	if (lp_buf_put(n->out, n->s + n->copied, start - n->copied) ||
	    lp_buf_put(n->out, num, (size_t)w))
		return -ENOMEM;
	n->copied = end;
	return 0;
}

static struct frame *top(struct norm *n)
{
	if (n->lost) {
		n->other = (struct frame){ .kind = F_OTHER };
		return &n->other;
	}
	return &n->fr[n->depth - 1];
}

/*
 * Utility statements are kept whole: pg_stat_statements 15 tells them apart by
 * their text. The planned ones begin with these, or "(", and SELECT INTO is not one.
 */
static bool planned(const struct norm *n)
{
	static const char *const dml[] = { "insert", "update", "delete", "merge", "values", "table",
					   NULL };
	size_t depth = 0;

	if (kw_in(n, n->ts, dml))
		return true;
	if (!kw(n, n->ts, "select") && !kw(n, n->ts, "with") && kind_at(n, n->ts) != T_LPAREN)
		return false;
	for (size_t i = n->ts; i < n->te; i++) {
		unsigned k = n->t[i].kind;

		if (k == T_LPAREN)
			depth++;
		else if (k == T_RPAREN && depth)
			depth--;
		else if (!depth && kw(n, i, "into") && !kw(n, i - 1, "insert") &&
			 !kw(n, i - 1, "merge"))
			return false;
	}
	return true;
}

/* The index after the token that closes the "(" at i (or the statement's end). */
static size_t close_paren(const struct norm *n, size_t i, unsigned open, unsigned close)
{
	size_t depth = 0;

	for (; i < n->te; i++) {
		if (n->t[i].kind == open)
			depth++;
		else if (n->t[i].kind == close && --depth == 0)
			return i + 1;
	}
	return n->te;
}

/*
 * A type name at i (after :: or CAST's AS): the index after it, its modifiers
 * and array bounds included (they are not constants).
 */
static size_t type_name(const struct norm *n, size_t i)
{
	static const char *const chars[] = { "character", "char", "varying", "precision", NULL };
	static const char *const fields[] = { "year", "month", "day",	 "hour",
					      "minute", "second", "to", NULL };
	bool interval, timeish;

	if (kind_at(n, i) != T_WORD && kind_at(n, i) != T_QIDENT)
		return i;
	interval = kw(n, i, "interval");
	timeish = kw(n, i, "time") || kw(n, i, "timestamp");
	i++;
	while (kind_at(n, i) == T_DOT &&
	       (kind_at(n, i + 1) == T_WORD || kind_at(n, i + 1) == T_QIDENT))
		i += 2;
	while (kw_in(n, i, chars))
		i++;
	if (interval)
		while (kw_in(n, i, fields))
			i++;
	if (kind_at(n, i) == T_LPAREN)
		i = close_paren(n, i, T_LPAREN, T_RPAREN);
	if (timeish && (kw(n, i, "with") || kw(n, i, "without")) && kw(n, i + 1, "time") &&
	    kw(n, i + 2, "zone"))
		i += 3;
	while (kind_at(n, i) == T_LBRACK)
		i = close_paren(n, i, T_LBRACK, T_RBRACK);
	return i;
}

/* "varchar(3) 'abc'": the "(" at i holds a typed literal's modifiers ($N: normalized already). */
static bool literal_typmod(const struct norm *n, size_t i)
{
	size_t j = i + 1, limit = i + LOOKAHEAD_MAX;

	while (j < n->te && j < limit && (n->t[j].kind == T_NUMBER || n->t[j].kind == T_COMMA))
		j++;
	if (kind_at(n, j) != T_RPAREN)
		return false;
	j++;
	if ((kw(n, j, "with") || kw(n, j, "without")) && kw(n, j + 1, "time") &&
	    kw(n, j + 2, "zone"))
		j += 3;
	return kind_at(n, j) == T_STRING || kind_at(n, j) == T_PARAM;
}

static unsigned paren_kind(struct norm *n, size_t i, bool *ord)
{
	static const char *const query[] = { "select", "values", "with", "table", NULL };
	static const char *const grouping[] = { "rollup", "cube", "sets", NULL };
	static const char *const now[] = { "current_time", "current_timestamp", "localtime",
					   "localtimestamp", NULL };
	struct frame *f = top(n);
	unsigned pk = kind_at(n, i - 1);

	*ord = false;
	if (kw_in(n, i + 1, query))
		return F_QUERY;
	if (f->ord && (f->kind == F_QUERY || f->kind == F_ITEM) &&
	    (kw(n, i - 1, "by") || pk == T_COMMA || kw_in(n, i - 1, grouping) ||
	     (pk == T_LPAREN && f->kind == F_ITEM && f->open == i - 1))) {
		*ord = true;
		return F_ITEM;
	}
	if (kw(n, i - 1, "on") && kw(n, i - 2, "distinct")) {
		*ord = true;
		return F_ITEM;
	}
	if (kw(n, i - 1, "cast"))
		return F_CAST;
	if (kw_in(n, i - 1, now))
		return F_TYPMOD;
	if (kw(n, i - 1, "extract"))
		return F_EXTRACT;
	if (kw(n, i - 1, "normalize"))
		return F_NORMALIZE;
	if ((pk == T_WORD || pk == T_QIDENT) && literal_typmod(n, i))
		return F_TYPMOD;
	return F_OTHER;
}

/* A "-" at i is a sign, not a subtraction: what comes before cannot end an operand. */
static bool unary(const struct norm *n, size_t i)
{
	static const char *const before[] = {
		"select", "where", "and",     "or",	"not",	   "when", "then",   "else",
		"case",	  "limit", "offset",  "returning", "having", "on",   "between", "like",
		"ilike",  "similar", "to",    "escape",	"distinct", "all", "any",    "some",
		"in",	  "by",	   "values",  "set",	"from",	   "for",  "symmetric", "asymmetric",
		"zone",	  "first", "next",    NULL,
	};

	if (i == n->ts)
		return true;
	switch (n->t[i - 1].kind) {
	case T_OP:
	case T_MINUS:
	case T_LPAREN:
	case T_COMMA:
	case T_LBRACK:
		return true;
	case T_WORD:
		return kw_in(n, i - 1, before);
	default:
		return false;
	}
}

/*
 * The parser folds "-" into the constant that follows (doNegate), parentheses
 * and more signs notwithstanding, unless :: or [ binds tighter: the index after
 * the constant at i, or 0.
 */
static size_t negated(const struct norm *n, size_t i, unsigned depth)
{
	size_t e;

	if (depth > NEG_DEPTH_MAX)
		return 0;
	switch (kind_at(n, i)) {
	case T_NUMBER:
		e = i + 1;
		break;
	case T_MINUS:
		return negated(n, i + 1, depth + 1);
	case T_LPAREN:
		e = negated(n, i + 1, depth + 1);
		if (!e || kind_at(n, e) != T_RPAREN)
			return 0;
		e++;
		break;
	default:
		return 0;
	}
	if (kind_at(n, e) == T_CAST || kind_at(n, e) == T_LBRACK || kind_at(n, e) == T_DOT)
		return 0;
	return e;
}

/* ORDER BY 1, GROUP BY 1, DISTINCT ON (1): a column's position, not a constant. */
static bool position(struct norm *n, size_t i)
{
	static const char *const after[] = { "asc",   "desc",	   "nulls",  "using",  "limit",
					     "offset", "fetch",	   "for",    "having", "window",
					     "order", "union",	   "intersect", "except", "returning",
					     NULL };
	struct frame *f = top(n);
	unsigned nk = kind_at(n, i + 1);

	if (!f->ord || (f->kind != F_QUERY && f->kind != F_ITEM))
		return false;
	if (!(kw(n, i - 1, "by") || kind_at(n, i - 1) == T_COMMA ||
	      (kind_at(n, i - 1) == T_LPAREN && f->kind == F_ITEM && f->open == i - 1)))
		return false;
	return nk == T_COMMA || nk == T_RPAREN || nk == T_SEMI || kw_in(n, i + 1, after);
}

/*
 * x IS [NOT] DISTINCT FROM NULL (or NULL IS ... x) becomes a test for NULL: no
 * constant is left of the NULL, when it stands alone as an operand there (every
 * operator binds more tightly than IS).
 */
static bool distinct_null(const struct norm *n, size_t i)
{
	unsigned pk = kind_at(n, i - 1), nk = kind_at(n, i + 1);

	if (kw(n, i - 1, "from") && kw(n, i - 2, "distinct") &&
	    (kw(n, i - 3, "is") || (kw(n, i - 3, "not") && kw(n, i - 4, "is"))))
		return !(nk == T_OP || nk == T_MINUS || nk == T_CAST || nk == T_LBRACK ||
			 nk == T_DOT);
	if (kw(n, i + 1, "is") &&
	    (kw(n, i + 2, "distinct") || (kw(n, i + 2, "not") && kw(n, i + 3, "distinct"))))
		return !(pk == T_OP || pk == T_MINUS);
	return false;
}

/*
 * PREPARE name [(types)] AS query: pg_stat_statements 15 keeps the PREPARE's
 * text with the query's constants replaced (the query is analysed as a planned
 * statement of that text). EXECUTE name (args): not a row of its own there (its
 * calls count under the PREPARE); here its arguments are replaced, so that the
 * executions of one prepared statement are one row. Where the constants to
 * replace begin, or 0 (none: a utility statement kept whole).
 */
static size_t prepared_part(struct norm *n)
{
	size_t i = n->ts + 1;

	if (!kw(n, n->ts, "prepare") && !kw(n, n->ts, "execute"))
		return 0;
	if (kind_at(n, i) != T_WORD && kind_at(n, i) != T_QIDENT)
		return 0;
	i++;
	if (kw(n, n->ts, "execute"))
		return kind_at(n, i) == T_LPAREN ? i : 0;
	if (kind_at(n, i) == T_LPAREN)
		i = close_paren(n, i, T_LPAREN, T_RPAREN); /* the types: modifiers kept */
	if (!kw(n, i, "as") || i + 1 >= n->te)
		return 0;
	return i + 1;
}

static int statement(struct norm *n)
{
	static const char *const ends[] = { "limit",	 "offset", "fetch",  "for",	"having",
					    "window",	 "union",  "intersect", "except", "returning",
					    NULL };
	static const char *const forms[] = { "nfc", "nfd", "nfkc", "nfkd", NULL };
	unsigned highest = 0;
	size_t from;

	for (size_t i = n->ts; i < n->te; i++)
		if (n->t[i].kind == T_PARAM && n->t[i].param > highest)
			highest = n->t[i].param;
	n->next = highest + 1;
	n->depth = 1;
	n->lost = 0;
	n->fr[0] = (struct frame){ .kind = F_QUERY };
	if ((from = prepared_part(n))) {
		/* PREPARE's query is a statement of its own; EXECUTE's arguments, a list. */
		if (kw(n, n->ts, "prepare")) {
			n->ts = from;
			if (!planned(n))
				return 0;
		}
	} else if (!planned(n)) {
		return 0;
	}
	for (size_t i = n->ts > from ? n->ts : from; i < n->te; i++) {
		const struct tok *t = &n->t[i];
		struct frame *f = top(n);
		size_t e;
		bool ord;

		switch (t->kind) {
		case T_LPAREN: {
			unsigned k = paren_kind(n, i, &ord);

			if (n->lost || n->depth == FRAMES_MAX)
				n->lost++;
			else
				n->fr[n->depth++] = (struct frame){ .kind = k, .ord = ord, .open = i };
			break;
		}
		case T_RPAREN:
			if (n->lost)
				n->lost--;
			else if (n->depth > 1)
				n->depth--;
			break;
		case T_CAST:
			i = type_name(n, i + 1) - 1;
			break;
		case T_WORD:
			if (f->kind == F_CAST && kw(n, i, "as")) {
				i = type_name(n, i + 1) - 1;
			} else if ((kw(n, i, "order") || kw(n, i, "group")) && kw(n, i + 1, "by")) {
				if (f->kind == F_QUERY)
					f->ord = true;
				i++;
			} else if (f->kind == F_QUERY && kw_in(n, i, ends)) {
				f->ord = false;
				if (kw(n, i, "limit") && kw(n, i + 1, "all")) {
					if (emit(n, n->t[i + 1].start, n->t[i + 1].end))
						return -ENOMEM;
					i++;
				}
			} else if (kw(n, i, "true") || kw(n, i, "false") || kw(n, i, "null")) {
				if (!kw(n, i - 1, "is") && !(kw(n, i - 1, "not") && kw(n, i - 2, "is")) &&
				    !(kw(n, i, "null") && distinct_null(n, i)) &&
				    emit(n, t->start, t->end))
					return -ENOMEM;
			} else if ((f->kind == F_EXTRACT && f->open == i - 1) ||
				   (f->kind == F_NORMALIZE && kind_at(n, i - 1) == T_COMMA &&
				    kw_in(n, i, forms)) ||
				   (kw_in(n, i, forms) && kw(n, i + 1, "normalized"))) {
				if (emit(n, t->start, t->end))
					return -ENOMEM;
			}
			break;
		case T_STRING:
			if (!kw(n, i - 1, "uescape") && emit(n, t->start, t->end))
				return -ENOMEM;
			break;
		case T_NUMBER:
			if (f->kind != F_TYPMOD && !position(n, i) && emit(n, t->start, t->end))
				return -ENOMEM;
			break;
		case T_MINUS:
			/* pg_stat_statements replaces the sign and the one token after it. */
			if (unary(n, i) && (e = negated(n, i + 1, 0))) {
				if (emit(n, t->start, n->t[i + 1].end))
					return -ENOMEM;
				i = e - 1;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

int lp_sql_normalize(const char *s, size_t len, struct lp_buf *out)
{
	struct toks tk = { 0 };
	struct norm n = { .s = s, .out = out };
	size_t first = 0, last = 0, begin = 0, end = len, ts = 0;
	bool any = false;
	int err;

	if (lex(s, len, &tk)) {
		free(tk.t);
		return -ENOMEM;
	}
	/* The text from the first statement to the last one's end (not its ";"). */
	for (size_t i = 0; i <= tk.n; i++) {
		if (i < tk.n && tk.t[i].kind != T_SEMI)
			continue;
		if (i > ts) {
			if (!any)
				begin = ts ? tk.t[ts - 1].end : 0;
			end = i < tk.n ? tk.t[i].start : len;
			if (end < tk.t[i - 1].end)
				end = tk.t[i - 1].end;
			if (!any)
				first = ts;
			last = i;
			any = true;
		}
		ts = i + 1;
	}
	while (begin < end && is_space((unsigned char)s[begin]))
		begin++;
	while (end > begin && is_space((unsigned char)s[end - 1]) &&
	       (!any || end > tk.t[last - 1].end))
		end--;
	n.t = tk.t;
	n.copied = begin;
	ts = first;
	for (size_t i = first; any && i <= last; i++) {
		if (i < last && tk.t[i].kind != T_SEMI)
			continue;
		n.ts = ts;
		n.te = i;
		if (i > ts && (err = statement(&n))) {
			free(tk.t);
			return err;
		}
		ts = i + 1;
	}
	free(tk.t);
	if (end > n.copied && lp_buf_put(out, s + n.copied, end - n.copied))
		return -ENOMEM;
	if (!out->p && lp_buf_put(out, "", 0))
		return -ENOMEM;
	return 0;
}
