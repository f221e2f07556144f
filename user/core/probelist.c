// SPDX-License-Identifier: MIT
#include "probelist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "presets.h"
#include "spec.h"

/* Width of the probe column: longer names push the rest right. */
#define LP_LIST_PROBE_COLS 44

size_t lp_probe_rows(const struct lp_usdt_note *notes, size_t n, struct lp_probe_row *rows)
{
	size_t nrows = 0;

	for (size_t i = 0; i < n; i++) {
		const struct lp_usdt_note *no = &notes[i];
		struct lp_probe_row *r = NULL;

		for (size_t j = 0; j < nrows && !r; j++)
			if (!strcmp(rows[j].first->provider, no->provider) &&
			    !strcmp(rows[j].first->name, no->name))
				r = &rows[j];
		if (!r) {
			rows[nrows] = (struct lp_probe_row){ .first = no, .sema_addr = no->sema_addr };
			nrows++;
			r = &rows[nrows - 1];
		} else {
			r->args_vary |= strcmp(r->first->args, no->args) != 0;
			r->sema_vary |= r->sema_addr != no->sema_addr;
		}
		r->sites++;
		if (lp_usdt_args_check(no->args, NULL, 0) < 0) {
			r->bad = r->bad ? r->bad : no;
			r->bad_sites++;
		}
	}
	return nrows;
}

/* Text from the file, escaped for a terminal. */
static int put_text(struct lp_buf *out, const char *s)
{
	return lp_text_display(out, s, strlen(s));
}

static int put_fmt(struct lp_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int put_fmt(struct lp_buf *out, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return lp_buf_put(out, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

int lp_probe_line(struct lp_buf *out, const struct lp_probe_row *r, const char *file)
{
	const struct lp_usdt_note *no = r->first;
	size_t start = out->len, cols;
	char presets[128], bad[LP_USDT_FIELD_MAX * 2];
	int e = 0;

	e = e ?: put_text(out, no->provider);
	e = e ?: lp_buf_putc(out, ':');
	e = e ?: put_text(out, no->name);
	if (e)
		return e;
	cols = out->len - start;
	while (!e && cols++ < LP_LIST_PROBE_COLS)
		e = lp_buf_putc(out, ' ');
	e = e ?: put_fmt(out, " sites=%zu", r->sites);
	if (r->sema_addr)
		e = e ?: put_fmt(out, " semaphore=yes@0x%" PRIx64 "%s", r->sema_addr,
				 r->sema_vary ? "(varies)" : "");
	else
		e = e ?: put_fmt(out, " semaphore=no");
	e = e ?: lp_buf_put(out, " args=\"", 7);
	e = e ?: put_text(out, no->args);
	e = e ?: lp_buf_putc(out, '"');
	if (r->args_vary)
		e = e ?: put_fmt(out, "(first of %zu sites, they differ)", r->sites);
	e = e ?: lp_buf_put(out, " file=", 6);
	e = e ?: put_text(out, file);
	if (!strcmp(no->provider, "leanprofiler"))
		e = e ?: put_fmt(out, " marker=leanprofiler");
	if (lp_presets_using(no->provider, no->name, presets, sizeof(presets)))
		e = e ?: put_fmt(out, " presets=%s", presets);
	if (r->bad && lp_usdt_args_check(r->bad->args, bad, sizeof(bad)) < 0) {
		e = e ?: lp_buf_put(out, " unsupported=\"", 14);
		e = e ?: put_text(out, bad);
		e = e ?: lp_buf_putc(out, '"');
		/* record attaches the others */
		if (r->bad_sites < r->sites)
			e = e ?: put_fmt(out, "(%zu of %zu sites)", r->bad_sites, r->sites);
	}
	return e ?: lp_buf_putc(out, '\n');
}
