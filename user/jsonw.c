// SPDX-License-Identifier: MIT
#include "jsonw.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "text.h"

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = true;
}

static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open(struct jw *w, char c)
{
	sep(w);
	fputc(c, w->f);
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
	fputc(c, w->f);
}

void jw_obj_begin(struct jw *w) { open(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_begin(struct jw *w) { open(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

void jw_write_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		size_t n = lp_utf8_seq(u + i, len - i);

		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (u[i] == '"' || u[i] == '\\') {
			fputc('\\', f);
			fputc(u[i], f);
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			fprintf(f, "\\u%04x", u[i]);
		} else {
			fwrite(s + i, 1, n, f);
		}
		i += n;
	}
	fputc('"', f);
}

void jw_key(struct jw *w, const char *key, size_t len)
{
	sep(w);
	jw_write_string(w->f, key, len);
	fputc(':', w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s, size_t len)
{
	sep(w);
	jw_write_string(w->f, s, len);
}

void jw_cstr(struct jw *w, const char *s)
{
	jw_str(w, s, strlen(s));
}

void jw_u64(struct jw *w, uint64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRId64, v);
}

void jw_bool(struct jw *w, bool v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_usec(struct jw *w, uint64_t ns)
{
	sep(w);
	fprintf(w->f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

void jw_newline(struct jw *w)
{
	fputc('\n', w->f);
}

int jw_error(const struct jw *w)
{
	if (w->err)
		return w->err;
	return ferror(w->f) ? -EIO : 0;
}
