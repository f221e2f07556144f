// SPDX-License-Identifier: MIT
#include "jsonw.h"
#include "bgwrite.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->buf = w->small;
	w->cap = sizeof(w->small);
	w->first[0] = true;
}

void jw_init(struct jw *w, FILE *f)
{
	init(w);
	w->f = f;
}

void jw_init_buf(struct jw *w, struct lp_buf *mem)
{
	init(w);
	w->mem = mem;
}

void jw_init_fd(struct jw *w, int fd)
{
	char *buf;

	init(w);
	w->fd = fd;
	w->bg = lp_bgw_start(fd);
	if (w->bg) {
		w->buf = lp_bgw_buffer(w->bg);
		w->cap = LP_BGW_BUFFER;
		return;
	}
	buf = malloc(JW_FD_BUFFER);
	if (buf) {
		w->buf = buf;
		w->cap = JW_FD_BUFFER;
	}
}

/* The thread has written all it was given, and goes with its buffers. */
static void end_thread(struct jw *w)
{
	uint64_t written;
	int err = lp_bgw_finish(w->bg, &written, NULL);

	w->bg = NULL;
	w->bytes += written;
	if (err && !w->err)
		w->err = err;
	w->buf = w->small;
	w->cap = sizeof(w->small);
}

void jw_release(struct jw *w)
{
	if (w->bg) {
		w->len = 0; /* dropped: only what was handed over is written */
		end_thread(w);
	}
	if (w->buf != w->small)
		free(w->buf);
	w->buf = w->small;
	w->cap = sizeof(w->small);
	w->len = 0;
}

static void write_fd(struct jw *w, const char *p, size_t n)
{
	while (n > 0 && !w->err) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			/* A short write then -1: the second says why (ENOSPC, EDQUOT...). */
			w->err = k < 0 ? -errno : -EIO;
			break;
		}
		p += k;
		n -= (size_t)k;
		w->bytes += (uint64_t)k;
	}
}

/* Hands the pending text on. After an error it is dropped: the output is lost anyway. */
static void spill(struct jw *w)
{
	if (!w->len)
		return;
	if (w->bg) {
		int err = lp_bgw_queue(w->bg, w->buf, w->len);

		if (err && !w->err)
			w->err = err;
		w->buf = lp_bgw_buffer(w->bg);
	} else if (w->fd >= 0) {
		write_fd(w, w->buf, w->len);
	} else if (w->f) {
		/* A stream's errors are its own (ferror), as with any stdio writer. */
		w->bytes += fwrite(w->buf, 1, w->len, w->f);
	} else if (w->mem && !w->err) {
		if (lp_buf_put(w->mem, w->buf, w->len))
			w->err = -ENOMEM;
		else
			w->bytes += w->len;
	}
	w->len = 0;
}

/* The end of every public call: a stream or memory sees the call's text now. */
static inline void done(struct jw *w)
{
	if (w->fd < 0)
		spill(w);
}

static inline char *room(struct jw *w, size_t n)
{
	if (w->cap - w->len < n)
		spill(w);
	return w->buf + w->len;
}

static inline void putch(struct jw *w, char c)
{
	if (w->len == w->cap)
		spill(w);
	w->buf[w->len++] = c;
}

static void out(struct jw *w, const char *s, size_t n)
{
	while (n > 0) {
		size_t k;

		if (w->len == w->cap)
			spill(w);
		k = w->cap - w->len < n ? w->cap - w->len : n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		putch(w, ',');
	w->first[w->depth] = false;
	if (w->brk) {
		w->brk = false;
		putch(w, '\n');
	}
}

static void open_(struct jw *w, char c)
{
	sep(w);
	putch(w, c);
	done(w);
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	w->first[++w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	if (w->brk) {
		w->brk = false;
		putch(w, '\n');
	}
	putch(w, c);
	done(w);
}

void jw_obj_begin(struct jw *w) { open_(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_begin(struct jw *w) { open_(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

/* Byte classes of string escaping: copied as is, escaped, or UTF-8 to check. */
enum { PLAIN = 0, ESCAPE = 1, HIGH = 2 };
static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = ESCAPE, ['"'] = ESCAPE, ['\\'] = ESCAPE, [0x7f] = ESCAPE,
	[0x80 ... 0xff] = HIGH,
};
static const char hex[] = "0123456789abcdef";

static void put_string(struct jw *w, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	putch(w, '"');
	while (i < len) {
		size_t j = i;
		unsigned c;

		/* The common case: runs of printable ASCII, copied whole. */
		while (j < len && byte_class[u[j]] == PLAIN)
			j++;
		if (j > i) {
			out(w, s + i, j - i);
			i = j;
			if (i == len)
				break;
		}
		c = u[i];
		if (byte_class[c] == ESCAPE) {
			char *p = room(w, 6);

			if (c == '"' || c == '\\') {
				p[0] = '\\';
				p[1] = (char)c;
				w->len += 2;
			} else {
				memcpy(p, "\\u00", 4);
				p[4] = hex[c >> 4];
				p[5] = hex[c & 0xf];
				w->len += 6;
			}
			i++;
		} else {
			size_t n = lp_utf8_seq(u + i, len - i);

			if (n == 0) {
				out(w, "\\ufffd", 6);
				i++;
			} else {
				out(w, s + i, n);
				i += n;
			}
		}
	}
	putch(w, '"');
}

void jw_string_raw(struct jw *w, const char *s, size_t len)
{
	put_string(w, s, len);
	done(w);
}

void jw_write_string(FILE *f, const char *s, size_t len)
{
	struct jw w;

	jw_init(&w, f);
	jw_string_raw(&w, s, len);
}

void jw_key(struct jw *w, const char *key, size_t len)
{
	sep(w);
	put_string(w, key, len);
	putch(w, ':');
	done(w);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s, size_t len)
{
	sep(w);
	put_string(w, s, len);
	done(w);
}

void jw_cstr(struct jw *w, const char *s)
{
	jw_str(w, s, strlen(s));
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930"
			      "31323334353637383940414243444546474849505152535455565758596061"
			      "62636465666768697071727374757677787980818283848586878889909192"
			      "93949596979899";

static inline unsigned digits(uint64_t v)
{
	unsigned n = 1;

	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* Two digits at a time, from the end, in place: no printf, no copy. */
char *jw_fmt_u64(char *out, uint64_t v)
{
	char *end, *p;

	/* A span's duration in µs and its counters: mostly one or two digits. */
	if (v < 100) {
		if (v < 10) {
			*out = (char)('0' + v);
			return out + 1;
		}
		memcpy(out, digits2 + 2 * v, 2);
		return out + 2;
	}
	end = out + digits(v);
	p = end;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		p -= 2;
		memcpy(p, digits2 + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(p - 2, digits2 + 2 * v, 2);
	else
		p[-1] = (char)('0' + v);
	return end;
}

char *jw_fmt_usec(char *out, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);
	char *p = jw_fmt_u64(out, ns / 1000);

	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	memcpy(p + 2, digits2 + 2 * (frac % 100), 2);
	return p + 4;
}

void jw_u64(struct jw *w, uint64_t v)
{
	sep(w);
	w->len = (size_t)(jw_fmt_u64(room(w, 20), v) - w->buf);
	done(w);
}

void jw_i64(struct jw *w, int64_t v)
{
	char *p;

	sep(w);
	p = room(w, 21);
	if (v < 0) {
		*p++ = '-';
		/* Unsigned negation: INT64_MIN has no positive int64_t. */
		p = jw_fmt_u64(p, 0 - (uint64_t)v);
	} else {
		p = jw_fmt_u64(p, (uint64_t)v);
	}
	w->len = (size_t)(p - w->buf);
	done(w);
}

void jw_bool(struct jw *w, bool v)
{
	sep(w);
	out(w, v ? "true" : "false", v ? 4 : 5);
	done(w);
}

void jw_null(struct jw *w)
{
	sep(w);
	out(w, "null", 4);
	done(w);
}

void jw_double(struct jw *w, double v)
{
	char *p;
	int n;

	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	sep(w);
	p = room(w, 32); /* "%.17g" is at most 24 bytes ("-1.2345678901234567e-308") */
	n = snprintf(p, 32, "%.17g", v);
	if (!memchr(p, '.', (size_t)n) && !memchr(p, 'e', (size_t)n)) {
		memcpy(p + n, ".0", 2);
		n += 2;
	}
	w->len += (size_t)n;
	done(w);
}

void jw_usec(struct jw *w, uint64_t ns)
{
	sep(w);
	w->len = (size_t)(jw_fmt_usec(room(w, 24), ns) - w->buf);
	done(w);
}

void jw_newline(struct jw *w)
{
	putch(w, '\n');
	done(w);
}

void jw_break(struct jw *w)
{
	w->brk = true;
}

void jw_raw_value(struct jw *w, const char *json, size_t len)
{
	sep(w);
	out(w, json, len);
	done(w);
}

void jw_raw(struct jw *w, const char *json, size_t len)
{
	out(w, json, len);
	done(w);
}

char *jw_room(struct jw *w, size_t n)
{
	return room(w, n); /* n <= JW_ROOM_MAX fits even the small buffer */
}

char *jw_line_room(struct jw *w, size_t n)
{
	if (n > w->cap)
		return NULL;
	putch(w, '\n');
	sep(w);
	return room(w, n);
}

void jw_advance(struct jw *w, char *end)
{
	w->len = (size_t)(end - w->buf);
	done(w);
}

int jw_flush(struct jw *w)
{
	spill(w);
	if (w->bg)
		end_thread(w);
	return jw_error(w);
}

int jw_error(const struct jw *w)
{
	if (w->err)
		return w->err;
	return w->f && ferror(w->f) ? -EIO : 0;
}
