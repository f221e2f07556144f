// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* memrchr */
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nest.h"
#include "outfile.h"

/* ---- one line: a JSON scanner for the event objects the writer makes ---- */

struct cur {
	const char *p, *end;
};

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

/* Consumes ch (after white space) if it is next. */
static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static int hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		char h = p[i];

		v <<= 4;
		if (h >= '0' && h <= '9')
			v |= (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			v |= (uint32_t)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			v |= (uint32_t)(h - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static int put_utf8(struct lp_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return lp_buf_put(b, u, n);
}

/* The \uXXXX escape at c->p (after the backslash and 'u'), a surrogate pair as one. */
static int unicode_escape(struct cur *c, struct lp_buf *out)
{
	uint32_t cp, lo;

	if (c->end - c->p < 4 || hex4(c->p, &cp))
		return -EINVAL;
	c->p += 4;
	if (cp >= 0xd800 && cp <= 0xdbff && c->end - c->p >= 6 && c->p[0] == '\\' &&
	    c->p[1] == 'u' && !hex4(c->p + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
		c->p += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xd800 && cp <= 0xdfff) {
		cp = 0xfffd; /* a lone surrogate: no character */
	}
	return put_utf8(out, cp);
}

/* A JSON string at c->p, its text appended to out (bytes as they are: callers sanitize). */
static int string(struct cur *c, struct lp_buf *out)
{
	if (!eat(c, '"'))
		return -EINVAL;
	for (;;) {
		const char *q = c->p;
		int err;

		/* The common case: a run without escapes, copied whole. */
		while (q < c->end && *q != '"' && *q != '\\')
			q++;
		if (q == c->end)
			return -EINVAL;
		if (q > c->p && lp_buf_put(out, c->p, (size_t)(q - c->p)))
			return -ENOMEM;
		c->p = q + 1;
		if (*q == '"')
			return 0;
		if (c->p == c->end)
			return -EINVAL;
		switch (*c->p++) {
		case '"': err = lp_buf_putc(out, '"'); break;
		case '\\': err = lp_buf_putc(out, '\\'); break;
		case '/': err = lp_buf_putc(out, '/'); break;
		case 'b': err = lp_buf_putc(out, '\b'); break;
		case 'f': err = lp_buf_putc(out, '\f'); break;
		case 'n': err = lp_buf_putc(out, '\n'); break;
		case 'r': err = lp_buf_putc(out, '\r'); break;
		case 't': err = lp_buf_putc(out, '\t'); break;
		case 'u': err = unicode_escape(c, out); break;
		default: return -EINVAL;
		}
		if (err)
			return err;
	}
}

/* Past a JSON string without keeping it. */
static int skip_string(struct cur *c)
{
	if (!eat(c, '"'))
		return -EINVAL;
	while (c->p < c->end) {
		char ch = *c->p++;

		if (ch == '"')
			return 0;
		if (ch == '\\') {
			if (c->p == c->end)
				return -EINVAL;
			c->p++;
		}
	}
	return -EINVAL;
}

/* Past any JSON value; depth bounds the recursion on nested arrays and objects. */
static int skip_value(struct cur *c, int depth)
{
	char close;

	ws(c);
	if (c->p == c->end || depth > 64)
		return -EINVAL;
	if (*c->p == '"')
		return skip_string(c);
	if (*c->p != '{' && *c->p != '[') {
		/* A number or a literal: up to the next delimiter. */
		const char *q = c->p;

		while (c->p < c->end && !strchr(",}] \t\r\n", *c->p))
			c->p++;
		return c->p > q ? 0 : -EINVAL;
	}
	close = *c->p == '{' ? '}' : ']';
	c->p++;
	if (eat(c, close))
		return 0;
	do {
		if (close == '}' && (skip_string(c) || !eat(c, ':')))
			return -EINVAL;
		if (skip_value(c, depth + 1))
			return -EINVAL;
	} while (eat(c, ','));
	return eat(c, close) ? 0 : -EINVAL;
}

/* A JSON number that is a non-negative integer. */
static int uint_value(struct cur *c, uint64_t *out)
{
	uint64_t v = 0;
	const char *q;

	ws(c);
	q = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*c->p++ - '0');
	}
	if (c->p == q || (c->p < c->end && strchr(".eE", *c->p)))
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Microseconds as ns: the writer's "US.NNN" exactly; another form of JSON
 * number through strtod (a negative time counts as 0).
 */
static int usec_value(struct cur *c, uint64_t *ns)
{
	uint64_t us = 0, frac = 0;
	const char *q;
	int digits = 0;

	ws(c);
	q = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && c->p - q < 15)
		us = us * 10 + (uint64_t)(*c->p++ - '0');
	if (c->p > q && c->p < c->end && *c->p == '.') {
		c->p++;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && digits < 3) {
			frac = frac * 10 + (uint64_t)(*c->p++ - '0');
			digits++;
		}
		while (digits < 3 && digits > 0) {
			frac *= 10;
			digits++;
		}
	}
	if (c->p > q && (c->p == c->end || strchr(",}] \t\r\n", *c->p)) && digits == 3) {
		*ns = us * 1000 + frac;
		return 0;
	}
	{
		char num[64], *e;
		size_t n;
		double v;

		c->p = q;
		while (c->p < c->end && !strchr(",}] \t\r\n", *c->p))
			c->p++;
		n = (size_t)(c->p - q);
		if (n == 0 || n >= sizeof(num))
			return -EINVAL;
		memcpy(num, q, n);
		num[n] = '\0';
		v = strtod(num, &e);
		if (*e || v != v)
			return -EINVAL;
		*ns = v <= 0 ? 0 : v >= 1.8e16 ? UINT64_MAX / 1024 : (uint64_t)(v * 1000.0 + 0.5);
	}
	return 0;
}

/* The literal true or false. */
static int bool_value(struct cur *c, bool *out)
{
	ws(c);
	if (c->end - c->p >= 4 && !memcmp(c->p, "true", 4)) {
		c->p += 4;
		*out = true;
		return 0;
	}
	if (c->end - c->p >= 5 && !memcmp(c->p, "false", 5)) {
		c->p += 5;
		*out = false;
		return 0;
	}
	return skip_value(c, 0) ? -EINVAL : (*out = false, 0);
}

/* Appends text to a meta blob: a 2-byte length (cut at 65535 bytes), then the bytes. */
int lp_tr_meta_put(struct lp_buf *b, const char *s, size_t len)
{
	unsigned char n[2];

	if (len > 0xffff)
		len = 0xffff;
	n[0] = (unsigned char)(len & 0xff);
	n[1] = (unsigned char)(len >> 8);
	if (lp_buf_put(b, (const char *)n, 2))
		return -ENOMEM;
	return lp_buf_put(b, s, len);
}

bool lp_tr_meta_next(const char *meta, size_t len, size_t *pos, const char **key, size_t *klen,
		     const char **val, size_t *vlen)
{
	const unsigned char *u = (const unsigned char *)meta;
	size_t p = *pos;

	if (p + 2 > len)
		return false;
	*klen = (size_t)u[p] | (size_t)u[p + 1] << 8;
	*key = meta + p + 2;
	p += 2 + *klen;
	if (p + 2 > len)
		return false;
	*vlen = (size_t)u[p] | (size_t)u[p + 1] << 8;
	*val = meta + p + 2;
	p += 2 + *vlen;
	if (p > len)
		return false;
	*pos = p;
	return true;
}

/* Keys of args the profiler writes itself (trace.c lp_trace_write_args): not metadata. */
enum own_kind { OWN_U64, OWN_USEC, OWN_FLAG };

static const struct {
	const char *key;
	enum own_kind kind;
	unsigned flag; /* OWN_FLAG: the span flag of a true value */
	size_t off;    /* OWN_U64, OWN_USEC: where the value goes in struct lp_tr_span */
} own_args[] = {
	{ "counter", OWN_U64, 0, offsetof(struct lp_tr_span, counter) },
	{ "self_counter", OWN_U64, 0, offsetof(struct lp_tr_span, self_counter) },
	{ "unterminated", OWN_FLAG, LP_SPAN_UNTERMINATED, 0 },
	{ "uncertain", OWN_FLAG, LP_SPAN_UNCERTAIN, 0 },
	{ "started_before_recording", OWN_FLAG, LP_SPAN_STARTED_BEFORE, 0 },
	{ "cpu_us", OWN_USEC, 0, offsetof(struct lp_tr_span, sched.cpu_ns) },
	{ "steal_us", OWN_USEC, 0, offsetof(struct lp_tr_span, sched.steal_ns) },
	{ "runq_us", OWN_USEC, 0, offsetof(struct lp_tr_span, sched.runq_ns) },
	{ "blocked_us", OWN_USEC, 0, offsetof(struct lp_tr_span, sched.blocked_ns) },
	{ "voluntary_switches", OWN_U64, 0, offsetof(struct lp_tr_span, sched.vcsw) },
	{ "involuntary_switches", OWN_U64, 0, offsetof(struct lp_tr_span, sched.ivcsw) },
	{ "off_cpu_unmeasured_us", OWN_USEC, 0, offsetof(struct lp_tr_span, unmeasured_ns) },
};

/* The number of an own arg into s; a value of another form is skipped, as before it was. */
static int own_number(struct cur *c, struct lp_tr_span *s, size_t i)
{
	const char *at = c->p;
	uint64_t *v = (uint64_t *)((char *)s + own_args[i].off);
	int err = own_args[i].kind == OWN_USEC ? usec_value(c, v) : uint_value(c, v);

	if (err) {
		c->p = at;
		return skip_value(c, 0);
	}
	if (own_args[i].off == offsetof(struct lp_tr_span, counter))
		s->has_counter = true;
	else if (own_args[i].off == offsetof(struct lp_tr_span, self_counter))
		s->has_self_counter = true;
	else if (own_args[i].off == offsetof(struct lp_tr_span, sched.cpu_ns))
		s->has_sched = true;
	return 0;
}

/* A JSON object's string members into blob as a meta blob; members of other values skipped. */
static int string_members(struct cur *c, struct lp_buf *b, struct lp_buf *blob)
{
	if (!eat(c, '{'))
		return -EINVAL;
	if (eat(c, '}'))
		return 0;
	do {
		size_t key_off = b->len, voff;
		int err = string(c, b);

		if (err || !eat(c, ':'))
			return -EINVAL;
		ws(c);
		if (c->p < c->end && *c->p == '"') {
			voff = b->len;
			err = string(c, b);
			if (!err)
				err = lp_tr_meta_put(blob, b->p + key_off, voff - key_off);
			if (!err)
				err = lp_tr_meta_put(blob, b->p + voff, b->len - voff);
		} else {
			err = skip_value(c, 0);
		}
		if (err)
			return err;
		b->len = key_off;
	} while (eat(c, ','));
	return eat(c, '}') ? 0 : -EINVAL;
}

/* One member of args whose key is in key (scratch from key_off on). */
static int arg_member(struct cur *c, struct lp_buf *b, size_t key_off, struct lp_tr_span *s,
		      struct lp_tr_scratch *sc)
{
	const char *key = b->p + key_off;
	size_t klen = b->len - key_off;

	ws(c);
	if (c->p < c->end && *c->p == '"') {
		size_t voff = b->len;
		int err = string(c, b);

		if (err)
			return err;
		err = lp_tr_meta_put(&sc->blob, b->p + key_off, voff - key_off);
		return err ? err : lp_tr_meta_put(&sc->blob, b->p + voff, b->len - voff);
	}
	if (c->p < c->end && *c->p == '{' && klen == 6 && !memcmp(key, "detail", 6)) {
		s->has_detail = true;
		return string_members(c, b, &sc->detail);
	}
	for (size_t i = 0; i < ARRAY_SIZE(own_args); i++) {
		bool v;

		if (klen != strlen(own_args[i].key) || memcmp(key, own_args[i].key, klen))
			continue;
		if (own_args[i].kind != OWN_FLAG)
			return own_number(c, s, i);
		if (bool_value(c, &v))
			return -EINVAL;
		if (v)
			s->flags |= own_args[i].flag;
		return 0;
	}
	return skip_value(c, 0);
}

/* The args object: its string items into the meta blob, the profiler's own into s. */
static int args_object(struct cur *c, struct lp_buf *b, struct lp_tr_span *s,
		       struct lp_tr_scratch *sc)
{
	if (!eat(c, '{'))
		return skip_value(c, 0);
	if (eat(c, '}'))
		return 0;
	do {
		size_t key_off = b->len;
		int err = string(c, b);

		if (err || !eat(c, ':'))
			return -EINVAL;
		err = arg_member(c, b, key_off, s, sc);
		if (err)
			return err;
		b->len = key_off; /* the key and value are in the blob now */
	} while (eat(c, ','));
	return eat(c, '}') ? 0 : -EINVAL;
}

static bool key_is(const struct lp_buf *b, size_t off, const char *lit)
{
	size_t n = strlen(lit);

	return b->len - off == n && !memcmp(b->p + off, lit, n);
}

struct event_fields {
	char ph;
	size_t name_off, name_len;
	bool have_ph, have_name, have_pid, have_tid, have_times;
	bool not_span; /* a category other than "span" */
	bool off_cpu;  /* the category "off-cpu": --off-cpu's slices */
};

/* One member of the event object. */
static int event_member(struct cur *c, struct lp_buf *b, size_t key_off, struct lp_tr_span *s,
			struct event_fields *f, struct lp_tr_scratch *sc)
{
	uint64_t v;
	int err = 0;

	if (key_is(b, key_off, "ph")) {
		size_t off = b->len;

		err = string(c, b);
		f->ph = !err && b->len - off == 1 ? b->p[off] : '?';
		f->have_ph = true;
		b->len = off;
	} else if (key_is(b, key_off, "cat")) {
		size_t off = b->len;

		err = string(c, b);
		f->not_span = !err && !key_is(b, off, "span");
		f->off_cpu = !err && key_is(b, off, "off-cpu");
		b->len = off;
	} else if (key_is(b, key_off, "name")) {
		b->len = key_off; /* the name replaces its key */
		err = string(c, b);
		f->name_off = key_off;
		f->name_len = b->len - key_off;
		f->have_name = true;
		return err;
	} else if (key_is(b, key_off, "pid") || key_is(b, key_off, "tid")) {
		bool pid = b->p[key_off] == 'p';

		err = uint_value(c, &v);
		if (!err && v > UINT32_MAX)
			err = -ERANGE;
		if (!err)
			*(pid ? &s->pid : &s->tid) = (uint32_t)v;
		*(pid ? &f->have_pid : &f->have_tid) = true;
	} else if (key_is(b, key_off, "ts")) {
		err = usec_value(c, &s->start_ns);
		f->have_times = true;
	} else if (key_is(b, key_off, "dur")) {
		err = usec_value(c, &s->dur_ns);
	} else if (key_is(b, key_off, "args")) {
		err = args_object(c, b, s, sc);
	} else {
		err = skip_value(c, 0);
	}
	b->len = key_off;
	return err;
}

/* The name an M event gives: its args' "name" item. */
static void given_name(struct lp_tr_span *s)
{
	const char *k, *v;
	size_t kl, vl, pos = 0;

	while (lp_tr_meta_next(s->meta, s->meta_len, &pos, &k, &kl, &v, &vl)) {
		if (kl == 4 && !memcmp(k, "name", 4)) {
			s->name = v;
			s->name_len = vl;
			return;
		}
	}
	s->name = "";
	s->name_len = 0;
}

/*
 * sc->text holds the name first: keys and values pass through it after the
 * name while parsing and are dropped after use. The metadata goes to sc->blob.
 */
int lp_tr_parse_event(const char *line, size_t len, struct lp_tr_span *s,
		      struct lp_tr_scratch *sc)
{
	struct cur c = { line, line + len };
	struct event_fields f = { 0 };
	struct lp_buf *b = &sc->text;
	int err;

	memset(s, 0, sizeof(*s));
	b->len = 0;
	sc->blob.len = 0;
	sc->detail.len = 0;
	if (!b->p && lp_buf_put(b, "", 0))
		return -ENOMEM; /* s->name points into it, even when empty */
	eat(&c, ',');
	if (!eat(&c, '{'))
		return -EINVAL;
	if (!eat(&c, '}')) {
		do {
			size_t key_off = b->len;

			err = string(&c, b);
			if (err || !eat(&c, ':'))
				return err ? err : -EINVAL;
			err = event_member(&c, b, key_off, s, &f, sc);
			if (err)
				return err;
		} while (eat(&c, ','));
		if (!eat(&c, '}'))
			return -EINVAL;
	}
	ws(&c);
	if (c.p != c.end || !f.have_ph || !f.have_pid || !f.have_tid)
		return -EINVAL;
	s->name = f.have_name ? b->p + f.name_off : "";
	s->name_len = f.have_name ? f.name_len : 0;
	s->meta = sc->blob.p ? sc->blob.p : "";
	s->meta_len = sc->blob.len;
	s->detail = sc->detail.p ? sc->detail.p : "";
	s->detail_len = sc->detail.len;
	if (f.ph == 'X' && f.off_cpu && f.have_times)
		return LP_TR_OFF_CPU;
	if (f.ph == 'X' && f.not_span)
		return LP_TR_OTHER;
	if (f.ph == 'X')
		return f.have_times ? LP_TR_SPAN : -EINVAL;
	if (f.ph != 'M')
		return LP_TR_OTHER;
	if (s->name_len == 11 && !memcmp(s->name, "thread_name", 11)) {
		given_name(s);
		return LP_TR_THREAD_NAME;
	}
	if (s->name_len == 12 && !memcmp(s->name, "process_name", 12)) {
		given_name(s);
		return LP_TR_PROCESS_NAME;
	}
	return LP_TR_OTHER;
}

void lp_tr_scratch_free(struct lp_tr_scratch *sc)
{
	lp_buf_free(&sc->text);
	lp_buf_free(&sc->blob);
	lp_buf_free(&sc->detail);
}

/* ---- the file, line by line from its end ---- */

struct rev {
	int fd;
	char *buf;
	size_t cap;
	size_t lo, hi; /* buf[lo, hi): the file's bytes [pos, pos + hi - lo) not handed out yet */
	off_t pos;
};

static int rev_open(struct rev *r, const char *path)
{
	struct stat st;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (fstat(r->fd, &st)) {
		err = -errno;
		close(r->fd);
		return err;
	}
	r->pos = st.st_size;
	/* No output of this command may replace it (lp_outfile_openat refuses). */
	err = lp_outfile_input_fd(r->fd, path);
	if (err)
		close(r->fd);
	return err;
}

static void rev_close(struct rev *r)
{
	close(r->fd);
	free(r->buf);
}

/* Reads the chunk before the bytes held, keeping them at the end of the buffer. */
static int rev_fill(struct rev *r)
{
	size_t held = r->hi - r->lo, n = r->pos < LP_TRACE_READ_CHUNK ? (size_t)r->pos
								      : LP_TRACE_READ_CHUNK;
	ssize_t got;

	if (held > LP_TRACE_LINE_MAX)
		return -E2BIG;
	if (r->lo < n) {
		size_t cap = held + n + LP_TRACE_READ_CHUNK;
		char *p = malloc(cap);

		if (!p)
			return -ENOMEM;
		if (held)
			memcpy(p + cap - held, r->buf + r->lo, held);
		free(r->buf);
		r->buf = p;
		r->cap = cap;
		r->lo = cap - held;
		r->hi = cap;
	}
	got = pread(r->fd, r->buf + r->lo - n, n, r->pos - (off_t)n);
	if (got < 0)
		return -errno;
	if ((size_t)got != n)
		return -EIO; /* the file shrank while read */
	r->lo -= n;
	r->pos -= (off_t)n;
	return 0;
}

/* The previous line (without its newline): 1, 0 at the file's start, or -errno. */
static int rev_line(struct rev *r, const char **line, size_t *len)
{
	for (;;) {
		const char *nl = r->hi > r->lo ? memrchr(r->buf + r->lo, '\n', r->hi - r->lo) : NULL;
		int err;

		if (nl) {
			size_t at = (size_t)(nl - r->buf);

			*line = nl + 1;
			*len = r->hi - at - 1;
			r->hi = at;
			return *len > LP_TRACE_LINE_MAX ? -E2BIG : 1;
		}
		if (r->pos == 0) {
			if (r->hi == r->lo)
				return 0;
			*line = r->buf + r->lo;
			*len = r->hi - r->lo;
			r->hi = r->lo;
			return *len > LP_TRACE_LINE_MAX ? -E2BIG : 1;
		}
		err = rev_fill(r);
		if (err)
			return err;
	}
}

/* The otherData object of the trace's last line, `],"otherData":{...}}`. */
static int other_data(const char *line, size_t len, const struct lp_tr_sink *sink)
{
	static const char key[] = "\"otherData\":";
	const char *p = memmem(line, len, key, sizeof(key) - 1);
	struct json_tokener *tok;
	json_object *o = NULL;
	size_t text_len = 0;
	int err = 0;

	if (p) {
		p += sizeof(key) - 1;
		tok = json_tokener_new();
		if (!tok)
			return -ENOMEM;
		o = json_tokener_parse_ex(tok, p, (int)(len - (size_t)(p - line)));
		text_len = json_tokener_get_parse_end(tok);
		json_tokener_free(tok);
	}
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	if (sink->other_data)
		err = sink->other_data(sink->ctx, o);
	if (!err && sink->other_data_text)
		err = sink->other_data_text(sink->ctx, o ? p : NULL, o ? text_len : 0);
	json_object_put(o);
	return err;
}

/* The frame around the events: `{"displayTimeUnit":...,"traceEvents":[` and `]...`. */
static bool frame_line(const char *line, size_t len)
{
	return (len > 0 && line[len - 1] == '[' && memmem(line, len, "\"traceEvents\"", 13)) ||
	       (len > 0 && line[0] == ']');
}

static int event_line(const char *line, size_t len, const struct lp_tr_sink *sink,
		      struct lp_tr_stats *st, struct lp_tr_scratch *scratch)
{
	struct lp_tr_span s;
	int kind = lp_tr_parse_event(line, len, &s, scratch);

	if (kind < 0) {
		st->skipped++;
		return kind == -ENOMEM ? kind : 0;
	}
	if (kind == LP_TR_SPAN) {
		st->spans++;
		return sink->span ? sink->span(sink->ctx, &s) : 0;
	}
	if (kind == LP_TR_OFF_CPU)
		return sink->off_cpu ? sink->off_cpu(sink->ctx, &s) : 0;
	if ((kind == LP_TR_THREAD_NAME || kind == LP_TR_PROCESS_NAME) && sink->thread_name)
		return sink->thread_name(sink->ctx, kind == LP_TR_PROCESS_NAME, s.pid, s.tid, s.name,
					 s.name_len);
	return 0;
}

int lp_trace_read(const char *path, const struct lp_tr_sink *sink, struct lp_tr_stats *stats)
{
	struct lp_tr_stats st = { 0 };
	struct lp_tr_scratch scratch = { 0 };
	bool saw_other = false;
	struct rev r;
	const char *line = NULL;
	size_t len = 0;
	int err = rev_open(&r, path);

	if (err)
		return err;
	while ((err = rev_line(&r, &line, &len)) == 1) {
		st.lines++;
		while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		if (len == 0)
			continue;
		if (!saw_other) {
			/* The last line that is not blank: otherData, or nothing to say. */
			saw_other = true;
			if (line[0] == ']') {
				err = other_data(line, len, sink);
				if (err)
					break;
				continue;
			}
			err = other_data("", 0, sink);
			if (err)
				break;
		}
		if (frame_line(line, len))
			continue;
		err = event_line(line, len, sink, &st, &scratch);
		if (err)
			break;
	}
	if (err == 0 && !saw_other)
		err = other_data("", 0, sink); /* an empty file: said once all the same */
	lp_tr_scratch_free(&scratch);
	rev_close(&r);
	if (stats)
		*stats = st;
	return err;
}
