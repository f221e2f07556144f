// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "html.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "jsonw.h"
#include "nest.h"
#include "outfile.h"
#include "report.h"
#include "page_assets.h" /* lp_page_js, lp_page_css: user/pictures/page.js, user/pictures/page.css */

/* JSON text is handed to the file, made safe, once this much waits. */
#define DRAIN_AT (256u << 10)

int lp_html_safe_json(FILE *f, const char *json, size_t len)
{
	size_t from = 0;

	for (size_t i = 0; i < len; i++) {
		const unsigned char *u = (const unsigned char *)json + i;
		const char *esc = NULL;
		size_t skip = 1;

		if (*u == '<')
			esc = "\\u003c";
		else if (*u == '>')
			esc = "\\u003e";
		else if (*u == '&')
			esc = "\\u0026";
		else if (*u == 0xe2 && i + 2 < len && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
			esc = u[2] == 0xa8 ? "\\u2028" : "\\u2029", skip = 3;
		if (!esc)
			continue;
		fwrite(json + from, 1, i - from, f);
		fputs(esc, f);
		i += skip - 1;
		from = i + 1;
	}
	fwrite(json + from, 1, len - from, f);
	return ferror(f) ? -EIO : 0;
}

struct page {
	const struct lp_recording *r;
	const struct lp_picture *p;
	FILE *f;
	struct jw w;
	struct lp_buf mem; /* the JSON not yet in the file */
	struct lp_buf tmp;
	int err;
};

static void drain(struct page *pg, bool all)
{
	if (pg->mem.len < (all ? 1 : DRAIN_AT))
		return;
	if (!pg->err)
		pg->err = lp_html_safe_json(pg->f, pg->mem.p, pg->mem.len);
	pg->mem.len = 0; /* jw appends to the buffer: nothing points into it */
}

/* Untrusted text as a JSON string: shown as the other pictures show it. */
static void text(struct page *pg, const char *s, size_t len)
{
	pg->tmp.len = 0;
	if (lp_text_picture(&pg->tmp, s, len) && !pg->err)
		pg->err = -ENOMEM;
	jw_str(&pg->w, pg->tmp.p ? pg->tmp.p : "", pg->tmp.len);
}

static void ctext(struct page *pg, const char *s)
{
	text(pg, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) textf(struct page *pg, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		pg->err = pg->err ? pg->err : -ENOMEM;
		jw_cstr(&pg->w, "");
		return;
	}
	text(pg, s, (size_t)n);
	free(s);
}

static void key(struct page *pg, const char *k)
{
	jw_key(&pg->w, k, strlen(k));
}

static void number(struct page *pg, double v, int decimals)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%.*f", decimals, isfinite(v) ? v : 0.0);

	jw_raw_value(&pg->w, b, (size_t)n);
}

/* ---- the header ---- */

static const char *dur(uint64_t ns, char *b)
{
	lp_fmt_duration(ns, b, 32);
	return b;
}

static void facts(struct page *pg)
{
	json_object *s = pg->r->summary, *res = lp_sum_obj(s, "resources");
	json_object *cmd = lp_sum_obj(s, "command");
	const char *counter = pg->r->counter_name;
	struct lp_counter_words words;
	char a[32], b[32], c[32], total[32] = "";

	/* As the table's header: the counter's total only when a marker passed one. */
	lp_counter_words(counter, &words);
	if (counter)
		snprintf(total, sizeof(total), ", %" PRIu64 " ", lp_sum_u64(s, "counter_total"));
	jw_arr_begin(&pg->w);
	textf(pg, "%s %" PRIu64 " events, %" PRIu64 " threads, window %s, recorded thread time %s%s%s",
	      words.profile, lp_sum_u64(s, "events"), lp_sum_u64(s, "threads"),
	      dur(lp_sum_u64(s, "window_ns"), a), dur(lp_sum_u64(s, "recorded_thread_time_ns"), b),
	      total, counter ? counter : "");
	if (res && json_object_get_boolean(lp_sum_obj(res, "available"))) {
		json_object *rss = lp_sum_obj(res, "peak_rss_kib");

		/* As the table says them: CPU in whole ms. */
		textf(pg, "Process resources (%s): user CPU %" PRIu64 " ms, system CPU %" PRIu64
			  " ms, peak RSS %s, context switches %" PRIu64,
		      lp_sum_str(res, "scope"), (lp_sum_u64(res, "user_cpu_ns") + 500000) / 1000000,
		      (lp_sum_u64(res, "system_cpu_ns") + 500000) / 1000000,
		      rss && json_object_is_type(rss, json_type_int)
			      ? (snprintf(c, sizeof(c), "%" PRIu64 " KiB", lp_sum_u64(res, "peak_rss_kib")), c)
			      : "not measured",
		      lp_sum_u64(res, "voluntary_context_switches") +
			      lp_sum_u64(res, "involuntary_context_switches"));
	} else {
		ctext(pg, "Process resources: not measured");
	}
	pg->tmp.len = 0;
	for (size_t i = 0; cmd && json_object_is_type(cmd, json_type_array) &&
			   i < json_object_array_length(cmd); i++) {
		json_object *arg = json_object_array_get_idx(cmd, i);

		if (i)
			lp_buf_put(&pg->tmp, " ", 1);
		if (json_object_is_type(arg, json_type_string))
			lp_buf_put(&pg->tmp, json_object_get_string(arg),
				   (size_t)json_object_get_string_len(arg));
	}
	{
		char *command = strndup(pg->tmp.p ? pg->tmp.p : "", pg->tmp.len);

		textf(pg, "Recording: %s (%s), pid %" PRIu64 ", exit status %" PRId64 ", ended: %s",
		      command && *command ? command : lp_sum_str(s, "binary"),
		      lp_sum_str(s, "mode"), lp_sum_u64(s, "pid"),
		      json_object_get_int64(lp_sum_obj(s, "exit_status")),
		      lp_sum_str(lp_sum_obj(s, "recording"), "end_reason"));
		free(command);
	}
	jw_arr_end(&pg->w);
}

static void warnings(struct page *pg)
{
	json_object *s = pg->r->summary, *lost = lp_sum_obj(s, "lost_events"),
		    *in = lp_sum_obj(s, "input"), *by = lp_sum_obj(s, "unterminated_by");
	const struct lp_picture *p = pg->p;
	uint64_t u;

	jw_arr_begin(&pg->w);
	if ((u = lp_sum_u64(lost, "total")))
		textf(pg, "Lost: %" PRIu64 " events (%" PRIu64 " enters, %" PRIu64 " exits) the ring "
			  "buffer could not take; the spans around them are marked uncertain. "
			  "Record with a larger --buffer-size.",
		      u, lp_sum_u64(lost, "enter"), lp_sum_u64(lost, "exit"));
	if ((u = lp_sum_u64(s, "unterminated_spans")) && by)
		textf(pg, "Unterminated spans: %" PRIu64 " never got their exit: %" PRIu64
			  " closed by the exit of a span around them, %" PRIu64 " given up by span "
			  "pairs, %" PRIu64 " at their thread's end, %" PRIu64 " open when the "
			  "recording ended",
		      u, lp_sum_u64(by, "enclosing_exit"), lp_sum_u64(by, "span_pairs"),
		      lp_sum_u64(by, "thread_end"), lp_sum_u64(by, "recording_end"));
	else if (u)
		textf(pg, "Unterminated spans: %" PRIu64 " never got their exit (closed at an outer "
			  "exit, their thread's exit or the end of the recording)", u);
	if (lp_sum_u64(s, "uncertain_spans") || lp_sum_u64(s, "started_before_recording") ||
	    lp_sum_u64(s, "unmatched_exits") || lp_sum_u64(s, "too_deep_enters"))
		textf(pg, "Nesting: uncertain spans %" PRIu64 ", started before recording %" PRIu64
			  ", exits without an open span %" PRIu64 ", enters past depth %d %" PRIu64,
		      lp_sum_u64(s, "uncertain_spans"), lp_sum_u64(s, "started_before_recording"),
		      lp_sum_u64(s, "unmatched_exits"), LP_NEST_MAX_DEPTH,
		      lp_sum_u64(s, "too_deep_enters"));
	if (lp_sum_u64(in, "truncated_strings") || lp_sum_u64(in, "unreadable_strings"))
		textf(pg, "Texts: %" PRIu64 " cut at their limit, %" PRIu64 " unreadable",
		      lp_sum_u64(in, "truncated_strings"), lp_sum_u64(in, "unreadable_strings"));
	if (pg->r->trace_missing)
		ctext(pg, "The trace is missing (the summary names one): no timeline; the flame "
			  "graph comes from the summary only if it has paths.");
	if (pg->r->trace_stats.skipped)
		textf(pg, "%" PRIu64 " lines of the trace are not events as record writes them: "
			  "left out", pg->r->trace_stats.skipped);
	if (p->out_of_order)
		textf(pg, "%" PRIu64 " spans are not in the order record writes them: their depth "
			  "may be drawn wrong", p->out_of_order);
	if (p->other_spans)
		textf(pg, "%" PRIu64 " spans have names past the first %d distinct ones "
			  "(LP_PICTURE_GROUPS_MAX): drawn as \"(other names)\"",
		      p->other_spans, LP_PICTURE_GROUPS_MAX);
	if (p->dropped_spans)
		textf(pg, "%" PRIu64 " spans are not in the timeline: past %d items at the widest "
			  "zoom (LP_HTML_BLOCKS_MAX)", p->dropped_spans, LP_HTML_BLOCKS_MAX);
	if (p->too_deep)
		textf(pg, "%" PRIu64 " spans nest deeper than %d: not drawn", p->too_deep,
		      LP_NEST_MAX_DEPTH);
	if (p->more_paths)
		textf(pg, "%" PRIu64 " spans are on call paths past the first %d "
			  "(LP_PICTURE_PATHS_MAX): drawn as \"(more call paths)\"",
		      p->more_paths, LP_PICTURE_PATHS_MAX);
	jw_arr_end(&pg->w);
}

/* ---- rows and groups ---- */

/* A summary row's metadata object as [[key, value], ...]: keys never become object keys. */
static void row_pairs(struct page *pg, json_object *meta)
{
	jw_arr_begin(&pg->w);
	if (meta && json_object_is_type(meta, json_type_object)) {
		json_object_object_foreach(meta, k, v)
		{
			jw_arr_begin(&pg->w);
			ctext(pg, k);
			if (json_object_is_type(v, json_type_string))
				text(pg, json_object_get_string(v), (size_t)json_object_get_string_len(v));
			else
				ctext(pg, json_object_to_json_string(v));
			jw_arr_end(&pg->w);
		}
	}
	jw_arr_end(&pg->w);
}

static void rows(struct page *pg)
{
	const struct lp_recording *r = pg->r;
	size_t n = r->nrows < LP_HTML_ROWS_MAX ? r->nrows : LP_HTML_ROWS_MAX;

	jw_arr_begin(&pg->w);
	for (size_t i = 0; i < n; i++) {
		const struct lp_pic_row *w = &r->rows[i];

		jw_arr_begin(&pg->w);
		ctext(pg, w->name);
		ctext(pg, w->meta_text);
		row_pairs(pg, w->meta);
		jw_u64(&pg->w, w->calls);
		jw_u64(&pg->w, w->self_ns);
		jw_u64(&pg->w, w->total_ns);
		jw_u64(&pg->w, w->mean_ns);
		jw_u64(&pg->w, w->p95_ns);
		jw_bool(&pg->w, w->p95_exact);
		if (w->has_counter)
			jw_u64(&pg->w, w->self_counter);
		else
			jw_raw_value(&pg->w, "null", 4);
		number(pg, w->self_percent, 2);
		jw_u64(&pg->w, (uint64_t)w->color);
		if (w->has_split) {
			jw_u64(&pg->w, w->cpu_ns);
			jw_u64(&pg->w, w->runq_ns);
			jw_u64(&pg->w, w->blocked_ns);
			jw_u64(&pg->w, w->steal_ns);
		}
		jw_arr_end(&pg->w);
		drain(pg, false);
	}
	jw_arr_end(&pg->w);
}

static void groups(struct page *pg)
{
	const struct lp_picture *p = pg->p;

	jw_arr_begin(&pg->w);
	for (size_t g = 0; g < p->ngroups; g++) {
		const struct lp_pic_group *gr = &p->groups[g];
		const char *meta = lp_picture_text(p, gr->meta_off), *k, *v;
		size_t pos = 0, kl, vl;

		jw_arr_begin(&pg->w);
		text(pg, lp_picture_text(p, gr->name_off), gr->name_len);
		jw_arr_begin(&pg->w);
		while (lp_tr_meta_next(meta, gr->meta_len, &pos, &k, &kl, &v, &vl)) {
			jw_arr_begin(&pg->w);
			text(pg, k, kl);
			text(pg, v, vl);
			jw_arr_end(&pg->w);
		}
		jw_arr_end(&pg->w);
		jw_u64(&pg->w, (uint64_t)gr->color);
		jw_bool(&pg->w, gr->has_counter);
		jw_arr_end(&pg->w);
		drain(pg, false);
	}
	jw_arr_end(&pg->w);
}

/* ---- the timeline ---- */

enum column { COL_S, COL_D, COL_Z, COL_G, COL_N, COL_B, COL_C, COL_F, NCOLS };
static const char *const col_names[NCOLS] = { "s", "d", "z", "g", "n", "b", "c", "f" };

static uint64_t col_value(const struct lp_pic_item *it, const struct lp_pic_item *prev, int col)
{
	switch (col) {
	case COL_S: return it->start - (prev ? prev->start : 0); /* sorted: deltas */
	case COL_D: return it->end - it->start;
	case COL_Z: return it->depth;
	case COL_G: return it->group; /* LP_PIC_MIXED: written as -1 */
	case COL_N: return it->count;
	case COL_B: return it->count > 1 ? it->busy : 0;
	case COL_C: return it->counter;
	default: return it->flags;
	}
}

/* One thread's items of one level, as columns; a column of zeros is left out. */
static void level_columns(struct page *pg, const struct lp_pic_item *items, size_t n)
{
	jw_obj_begin(&pg->w);
	for (int col = 0; col < NCOLS; col++) {
		bool any = col <= COL_N;

		for (size_t i = 0; !any && i < n; i++)
			any = col_value(&items[i], NULL, col) != 0;
		if (!any)
			continue;
		key(pg, col_names[col]);
		jw_arr_begin(&pg->w);
		for (size_t i = 0; i < n; i++) {
			if (col == COL_G && items[i].group == LP_PIC_MIXED)
				jw_i64(&pg->w, -1);
			else
				jw_u64(&pg->w, col_value(&items[i], i ? &items[i - 1] : NULL, col));
			if ((i & 1023) == 1023)
				drain(pg, false);
		}
		jw_arr_end(&pg->w);
	}
	jw_obj_end(&pg->w);
	drain(pg, false);
}

/* Where each thread's items begin in each level (items are sorted by thread). */
static size_t *thread_ranges(const struct lp_picture *p)
{
	size_t stride = p->nthreads + 1, *begin = calloc(stride * LP_PICTURE_LEVELS, sizeof(*begin));

	if (!begin)
		return NULL;
	for (int l = 0; l < p->nlevels; l++) {
		const struct lp_pic_level *L = &p->levels[l];
		size_t *b = begin + (size_t)l * stride;

		for (size_t i = 0; i < L->n; i++)
			b[L->items[i].thread + 1]++;
		for (size_t t = 0; t < p->nthreads; t++)
			b[t + 1] += b[t];
	}
	return begin;
}

static void thread_entry(struct page *pg, size_t t, const size_t *begin)
{
	const struct lp_picture *p = pg->p;
	const struct lp_pic_thread *th = &p->threads[t];
	size_t stride = p->nthreads + 1;

	jw_obj_begin(&pg->w);
	key(pg, "pid");
	jw_u64(&pg->w, th->pid);
	key(pg, "tid");
	jw_u64(&pg->w, th->tid);
	key(pg, "name");
	text(pg, lp_picture_text(p, th->name_off), th->name_len);
	key(pg, "spans");
	jw_u64(&pg->w, th->spans);
	key(pg, "depth");
	jw_u64(&pg->w, th->max_depth + 1);
	key(pg, "levels");
	jw_arr_begin(&pg->w);
	for (int l = 0; l < p->nlevels; l++) {
		const size_t *b = begin + (size_t)l * stride;

		level_columns(pg, p->levels[l].items + b[t], b[t + 1] - b[t]);
	}
	jw_arr_end(&pg->w);
	jw_obj_end(&pg->w);
}

static void timeline(struct page *pg)
{
	const struct lp_picture *p = pg->p;
	size_t *begin;

	if (!pg->r->has_trace) {
		jw_raw_value(&pg->w, "null", 4);
		return;
	}
	begin = thread_ranges(p);
	if (!begin) {
		pg->err = pg->err ? pg->err : -ENOMEM;
		return;
	}
	jw_obj_begin(&pg->w);
	key(pg, "extent");
	jw_u64(&pg->w, p->extent_ns);
	key(pg, "first");
	jw_u64(&pg->w, p->first_ns);
	key(pg, "last");
	jw_u64(&pg->w, p->last_ns);
	key(pg, "spans");
	jw_u64(&pg->w, p->spans);
	key(pg, "items");
	jw_u64(&pg->w, p->items);
	key(pg, "px");
	jw_arr_begin(&pg->w);
	for (int l = 0; l < p->nlevels; l++)
		number(pg, p->levels[l].px, 3);
	jw_arr_end(&pg->w);
	key(pg, "threads");
	jw_arr_begin(&pg->w);
	for (size_t t = 0; t < p->nthreads; t++)
		if (p->threads[t].spans)
			thread_entry(pg, t, begin);
	jw_arr_end(&pg->w);
	jw_obj_end(&pg->w);
	free(begin);
}

/* ---- the flame graph ---- */

static void flame(struct page *pg)
{
	const struct lp_picture *p = pg->p;
	static const char *const cols[] = { "p", "g", "t", "s", "c" };
	uint32_t *sel = NULL, *pos;
	size_t n = 0;

	pos = malloc((p->nnodes + 1) * sizeof(*pos));
	if (!pos || lp_picture_flame(p, LP_HTML_FLAME_NODES_MAX, &sel, &n)) {
		pg->err = pg->err ? pg->err : -ENOMEM;
		free(pos);
		jw_raw_value(&pg->w, "null", 4);
		return;
	}
	for (size_t k = 0; k < n; k++)
		pos[sel[k]] = (uint32_t)k;
	jw_obj_begin(&pg->w);
	key(pg, "source");
	jw_cstr(&pg->w, p->tree_from_summary ? "summary" : "trace");
	key(pg, "nodes");
	jw_u64(&pg->w, p->nnodes);
	for (size_t col = 0; col < ARRAY_SIZE(cols); col++) {
		key(pg, cols[col]);
		jw_arr_begin(&pg->w);
		for (size_t k = 0; k < n; k++) {
			const struct lp_pic_node *nd = &p->nodes[sel[k]];

			switch (col) {
			case 0:
				jw_i64(&pg->w, k ? (int64_t)pos[nd->parent] : -1);
				break;
			case 1:
				jw_i64(&pg->w, k ? (int64_t)nd->group : -1);
				break;
			case 2: jw_u64(&pg->w, nd->total_ns); break;
			case 3: jw_u64(&pg->w, nd->self_ns); break;
			default: jw_u64(&pg->w, nd->calls); break;
			}
			if ((k & 1023) == 1023)
				drain(pg, false);
		}
		jw_arr_end(&pg->w);
	}
	jw_obj_end(&pg->w);
	free(sel);
	free(pos);
}

/* ---- the page ---- */

static void data(struct page *pg)
{
	jw_init_buf(&pg->w, &pg->mem);
	jw_obj_begin(&pg->w);
	key(pg, "v");
	jw_u64(&pg->w, 1);
	/* null, both, when no marker passed a counter: no column, no counter in a hover */
	key(pg, "counter");
	if (pg->r->counter_name)
		ctext(pg, pg->r->counter_name);
	else
		jw_raw_value(&pg->w, "null", 4);
	key(pg, "counter_column");
	if (pg->r->counter_name) {
		struct lp_counter_words words;

		lp_counter_words(pg->r->counter_name, &words);
		ctext(pg, words.column);
	} else {
		jw_raw_value(&pg->w, "null", 4);
	}
	key(pg, "palette");
	jw_arr_begin(&pg->w);
	for (int i = 0; i < LP_PICTURE_PALETTE; i++)
		jw_cstr(&pg->w, lp_picture_palette[i]);
	jw_arr_end(&pg->w);
	key(pg, "bars_max");
	jw_u64(&pg->w, LP_HTML_BARS_MAX);
	key(pg, "facts");
	facts(pg);
	key(pg, "warnings");
	warnings(pg);
	key(pg, "rows_total");
	jw_u64(&pg->w, pg->r->nrows);
	key(pg, "off_cpu");
	jw_bool(&pg->w, pg->r->off_cpu);
	key(pg, "rows");
	rows(pg);
	key(pg, "groups");
	groups(pg);
	key(pg, "timeline");
	timeline(pg);
	key(pg, "flame");
	flame(pg);
	jw_obj_end(&pg->w);
	if (!pg->err)
		pg->err = jw_error(&pg->w);
	drain(pg, true);
}

/* A nonce for the page's one script: only it may run, whatever the data holds. */
static int nonce(char *out)
{
	unsigned char rnd[16];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	for (size_t i = 0; i < sizeof(rnd); i++)
		sprintf(out + 2 * i, "%02x", rnd[i]);
	return 0;
}

static int page(struct page *pg)
{
	char n[40];
	int err = nonce(n);

	if (err)
		return err;
	fprintf(pg->f,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'nonce-%s'; style-src 'unsafe-inline'; img-src data:; "
		"base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"leanprofiler report --html\">\n"
		"<title>leanprofiler report</title>\n<style>\n%s</style>\n</head>\n<body>\n"
		"<noscript><p>This page draws its pictures with JavaScript.</p></noscript>\n"
		"<script type=\"application/json\" id=\"lp-data\">",
		n, lp_page_css);
	data(pg);
	fprintf(pg->f, "</script>\n<script nonce=\"%s\">\n%s</script>\n</body>\n</html>\n", n,
		lp_page_js);
	return pg->err ? pg->err : ferror(pg->f) ? -EIO : 0;
}

int lp_html_write(const struct lp_recording *r, const char *path)
{
	struct page pg = { .r = r, .p = &r->pic };
	struct lp_outfile o;
	struct stat st;
	int err = lp_outfile_open(&o, path);

	if (err) {
		lp_err("cannot write %s: %s", path, lp_outfile_strerror(err));
		return err;
	}
	pg.f = o.f;
	err = page(&pg);
	jw_release(&pg.w);
	lp_buf_free(&pg.mem);
	lp_buf_free(&pg.tmp);
	if (err) {
		lp_outfile_abort(&o);
		lp_err("cannot write %s: %s", path, strerror(-err));
		return err;
	}
	err = lp_outfile_commit(&o);
	if (err) {
		lp_err("cannot write %s: %s", path, strerror(-err));
		return err;
	}
	if (!stat(path, &st)) {
		char size[32];

		lp_fmt_size((uint64_t)st.st_size, size, sizeof(size));
		printf("Page: %s (%s)\n", path, size);
	}
	return 0;
}
