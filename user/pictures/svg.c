// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* qsort_r */
#include "svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nest.h"
#include "outfile.h"

#define MARGIN_LEFT 190 /* thread labels, row labels' start */
#define MARGIN_RIGHT 24
#define PLOT_WIDTH (LP_SVG_WIDTH - MARGIN_LEFT - MARGIN_RIGHT)
#define ROW_H 20       /* a depth of the timeline */
#define LANE_GAP 10    /* between threads */
#define CHAR_W 6.6     /* the average advance of an 11 px sans-serif character, generously */
#define MIXED_COLOR "#cfcfcf"
#define FONT "font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\""

int lp_xml_text(struct lp_buf *out, const char *s, size_t len)
{
	struct lp_buf clean = { 0 };
	int err = lp_text_picture(&clean, s, len);

	for (size_t i = 0; !err && i < clean.len; i++) {
		switch (clean.p[i]) {
		case '&': err = lp_buf_put(out, "&amp;", 5); break;
		case '<': err = lp_buf_put(out, "&lt;", 4); break;
		case '>': err = lp_buf_put(out, "&gt;", 4); break;
		case '"': err = lp_buf_put(out, "&quot;", 6); break;
		case '\'': err = lp_buf_put(out, "&#39;", 5); break;
		default: err = lp_buf_putc(out, clean.p[i]); break;
		}
	}
	if (!err)
		err = lp_buf_put(out, "", 0); /* NUL-terminated, also when empty */
	lp_buf_free(&clean);
	return err;
}

/* Untrusted text cut to cols characters ("…" when cut), as XML character data. */
static int fit_xml(struct lp_buf *out, const char *s, size_t len, size_t cols)
{
	struct lp_buf clean = { 0 };
	char *cut = NULL;
	int err = lp_text_picture(&clean, s, len);

	out->len = 0;
	if (!err) {
		size_t sz = cols * 4 + 8, n;

		cut = malloc(sz);
		err = cut ? 0 : -ENOMEM;
		if (!err) {
			n = lp_fit_columns(clean.p ? clean.p : "", clean.len, cols, false, cut, sz);
			err = lp_xml_text(out, cut, n);
		}
	}
	free(cut);
	lp_buf_free(&clean);
	return err;
}

/* ---- the time axis ---- */

/* A step of 1, 2 or 5 times a power of ten giving at most max_ticks ticks over range. */
static uint64_t nice_step(uint64_t range, int max_ticks)
{
	double raw = (double)range / max_ticks, mag = pow(10, floor(log10(raw > 1 ? raw : 1)));
	static const double mult[] = { 1, 2, 5, 10 };

	for (size_t i = 0; i < ARRAY_SIZE(mult); i++)
		if (mult[i] * mag >= raw)
			return (uint64_t)(mult[i] * mag);
	return (uint64_t)(10 * mag);
}

/* "12 ms", "2.5 s": in the step's unit, with the decimals the step needs. */
static void fmt_tick(uint64_t ns, uint64_t step, char *out, size_t n)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t u = 0;
	int decimals = 0;
	double v;

	while (u + 1 < ARRAY_SIZE(units) && (double)step >= units[u + 1].div)
		u++;
	for (v = (double)step / units[u].div; v < 0.999 && decimals < 3; v *= 10)
		decimals++;
	snprintf(out, n, "%.*f %s", decimals, (double)ns / units[u].div, units[u].unit);
}

/* Characters in text (bytes that do not continue a UTF-8 sequence). */
static size_t text_columns(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static void duration(uint64_t ns, char *out, size_t n)
{
	lp_fmt_duration(ns, out, n);
}

/*
 * Ticks over t0..t1 (labels: time from the recording's start) at x0 + scaled,
 * labels at y, grid lines from y + 4 down to bottom.
 */
static void axis(FILE *f, uint64_t t0, uint64_t t1, double x0, double width, double y,
		 double bottom)
{
	uint64_t step = nice_step(t1 - t0, 8), t = (t0 + step - 1) / step * step;
	double scale = width / (double)(t1 - t0);
	char label[32];

	fprintf(f, "<g class=\"axis\" font-size=\"11\" fill=\"#444\">\n");
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x0,
		y + 4, x0 + width, y + 4);
	for (; t <= t1; t += step) {
		double x = x0 + (double)(t - t0) * scale;

		fmt_tick(t, step, label, sizeof(label));
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
			x, y + 4, x, bottom);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, y,
			label);
	}
	fprintf(f, "</g>\n");
}

static void svg_begin(FILE *f, double height, const char *title_xml)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		   "viewBox=\"0 0 %d %.0f\" " FONT ">\n",
		LP_SVG_WIDTH, height, LP_SVG_WIDTH, height);
	fprintf(f, "<title>%s</title>\n", title_xml);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
	fprintf(f, "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\" fill=\"#222\">%s"
		   "</text>\n", title_xml);
}

/* "leanprofiler: COMMAND" for titles, the command cut to 60 characters. */
static int title_of(const struct lp_recording *r, const char *what, struct lp_buf *out)
{
	json_object *cmd = lp_sum_obj(r->summary, "command");
	struct lp_buf text = { 0 }, fitted = { 0 };
	int err = lp_buf_put(&text, what, strlen(what));

	for (size_t i = 0; !err && cmd && json_object_is_type(cmd, json_type_array) &&
			   i < json_object_array_length(cmd); i++) {
		json_object *a = json_object_array_get_idx(cmd, i);

		err = lp_buf_put(&text, i ? " " : ": ", i ? 1 : 2);
		if (!err && json_object_is_type(a, json_type_string))
			err = lp_buf_put(&text, json_object_get_string(a),
					 (size_t)json_object_get_string_len(a));
	}
	if (!err)
		err = fit_xml(&fitted, text.p, text.len, 100);
	if (!err)
		err = lp_buf_put(out, fitted.p, fitted.len);
	lp_buf_free(&text);
	lp_buf_free(&fitted);
	return err;
}

/* ---- timeline.svg ---- */

struct lane {
	double y;        /* top */
	uint32_t depths; /* drawn */
};

/* A run of items being drawn as one rectangle, per depth. */
struct pending {
	bool on, narrow;
	double x0, x1;
	struct lp_pic_item it;
};

struct tl {
	const struct lp_recording *r;
	const struct lp_picture *p;
	FILE *f;
	uint64_t t0, t1;
	double scale;
	struct lane *lanes; /* per thread; depths 0: not drawn */
	double *busy;       /* per group: time drawn, for the legend */
	bool mixed;
	struct lp_buf a, b;
	struct lp_buf counter; /* the counter's name as XML; empty: no marker passed one */
};

static int cmp_spans_desc(const void *x, const void *y, void *ctx)
{
	const struct lp_picture *p = ctx;
	const struct lp_pic_thread *a = &p->threads[*(const uint32_t *)x],
				   *b = &p->threads[*(const uint32_t *)y];

	if (a->spans != b->spans)
		return a->spans > b->spans ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int cmp_ids(const void *x, const void *y, void *ctx)
{
	const struct lp_picture *p = ctx;
	const struct lp_pic_thread *a = &p->threads[*(const uint32_t *)x],
				   *b = &p->threads[*(const uint32_t *)y];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/*
 * The lanes: of the *with_spans threads that have spans, the *shown with the
 * most, in pid and tid order at the start of order. Their total height.
 */
static double layout(struct tl *t, double top, size_t *shown, size_t *with_spans, uint32_t *order)
{
	const struct lp_picture *p = t->p;
	size_t n = 0;
	double y = top;

	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].spans)
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_spans_desc, (void *)p);
	*shown = n < LP_SVG_THREADS_MAX ? n : LP_SVG_THREADS_MAX;
	qsort_r(order, *shown, sizeof(*order), cmp_ids, (void *)p);
	for (size_t k = 0; k < *shown; k++) {
		const struct lp_pic_thread *th = &p->threads[order[k]];
		struct lane *l = &t->lanes[order[k]];

		l->y = y;
		l->depths = th->max_depth + 1 < LP_SVG_DEPTH_MAX ? th->max_depth + 1 : LP_SVG_DEPTH_MAX;
		y += l->depths * ROW_H + LANE_GAP;
	}
	*with_spans = n;
	return y - top;
}

static int lane_label(struct tl *t, uint32_t thread)
{
	const struct lp_pic_thread *th = &t->p->threads[thread];
	const struct lane *l = &t->lanes[thread];
	char ids[48];
	int err;

	if (th->pid == th->tid)
		snprintf(ids, sizeof(ids), " (%" PRIu32 ")", th->tid);
	else
		snprintf(ids, sizeof(ids), " (%" PRIu32 "/%" PRIu32 ")", th->pid, th->tid);
	err = fit_xml(&t->a, th->name_len ? lp_picture_text(t->p, th->name_off) : "thread",
		      th->name_len ? th->name_len : 6, 18);
	if (err)
		return err;
	fprintf(t->f, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%u\" fill=\"#f5f5f5\"/>\n",
		l->y, LP_SVG_WIDTH, l->depths * ROW_H);
	fprintf(t->f, "<text x=\"10\" y=\"%.1f\" font-size=\"12\" fill=\"#222\">%s%s</text>\n",
		l->y + 14, t->a.p, ids);
	return 0;
}

/* The tooltip of a rectangle: its name and what it covers. */
static int rect_title(struct tl *t, const struct lp_pic_item *it)
{
	char d[32], busy[32];
	int err = 0;

	duration(it->end - it->start, d, sizeof(d));
	t->b.len = 0;
	if (it->group != LP_PIC_MIXED) {
		t->a.len = 0;
		err = lp_picture_group_label(t->p, it->group, &t->a);
		if (!err)
			err = lp_xml_text(&t->b, t->a.p ? t->a.p : "", t->a.len);
	} else {
		err = lp_buf_put(&t->b, "several names", 13);
	}
	if (err)
		return err;
	if (it->count == 1) {
		fprintf(t->f, "<title>%s&#10;%s", t->b.p, d);
		if (t->counter.len &&
		    t->p->groups[it->group == LP_PIC_MIXED ? 0 : it->group].has_counter)
			fprintf(t->f, ", %" PRIu64 " %s", it->counter, t->counter.p);
	} else {
		duration(it->busy, busy, sizeof(busy));
		fprintf(t->f, "<title>%" PRIu32 " spans merged: %s&#10;%s busy within %s", it->count,
			t->b.p, busy, d);
	}
	fprintf(t->f, "%s</title>", it->flags & LP_SPAN_UNTERMINATED ? " (unterminated)" : "");
	return 0;
}

static int draw_rect(struct tl *t, const struct pending *pd)
{
	const struct lp_pic_item *it = &pd->it;
	double y = t->lanes[it->thread].y + it->depth * ROW_H + 1, w = pd->x1 - pd->x0;
	const char *fill = it->group == LP_PIC_MIXED
				   ? MIXED_COLOR
				   : lp_picture_palette[t->p->groups[it->group].color];
	int err;

	if (w < 0.6)
		w = 0.6; /* visible, however short */
	if (it->group == LP_PIC_MIXED)
		t->mixed = true;
	else
		t->busy[it->group] += (double)it->busy;
	fprintf(t->f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"%s>",
		pd->x0, y, w, ROW_H - 2, fill, w >= 3 ? " stroke=\"#ffffff\" stroke-width=\"0.5\"" : "");
	err = rect_title(t, it);
	if (err)
		return err;
	fprintf(t->f, "</rect>\n");
	if (w >= 40 && it->group != LP_PIC_MIXED) {
		const struct lp_pic_group *g = &t->p->groups[it->group];
		size_t cols = (size_t)((w - 6) / CHAR_W);

		/* The name with its metadata when both fit, else the name alone. */
		t->a.len = 0;
		err = lp_picture_group_label(t->p, it->group, &t->a);
		if (!err && text_columns(t->a.p, t->a.len) > cols) {
			t->a.len = 0;
			err = lp_buf_put(&t->a, lp_picture_text(t->p, g->name_off), g->name_len);
		}
		if (!err)
			err = fit_xml(&t->b, t->a.p ? t->a.p : "", t->a.len, cols);
		if (!err)
			fprintf(t->f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"11\" fill=\"#1a1a1a\" "
				      "pointer-events=\"none\">%s</text>\n",
				pd->x0 + 3, y + 13, t->b.p);
	}
	return err;
}

/*
 * Items narrower than a pixel that touch are drawn as one rectangle, so that
 * the file stays small however many spans the level holds.
 */
static int draw_item(struct tl *t, struct pending *pd, const struct lp_pic_item *it)
{
	double x0 = MARGIN_LEFT + (double)(it->start - t->t0) * t->scale;
	double x1 = MARGIN_LEFT + (double)(it->end - t->t0) * t->scale;
	bool narrow = x1 - x0 < 1;
	int err;

	if (pd->on && narrow && pd->narrow && x0 - pd->x1 < 1) {
		lp_pic_item_merge(&pd->it, it);
		if (x1 > pd->x1)
			pd->x1 = x1;
		return 0;
	}
	if (pd->on) {
		err = draw_rect(t, pd);
		if (err)
			return err;
	}
	*pd = (struct pending){ .on = true, .narrow = narrow, .x0 = x0, .x1 = x1, .it = *it };
	return 0;
}

static int draw_items(struct tl *t, int level)
{
	const struct lp_pic_level *L = &t->p->levels[level];
	struct pending pd[LP_SVG_DEPTH_MAX] = { 0 };
	uint32_t thread = UINT32_MAX;
	int err = 0;

	for (size_t i = 0; !err && i <= L->n; i++) {
		const struct lp_pic_item *it = i < L->n ? &L->items[i] : NULL;

		if (!it || it->thread != thread) {
			for (int d = 0; !err && d < LP_SVG_DEPTH_MAX; d++)
				err = pd[d].on ? draw_rect(t, &pd[d]) : 0;
			memset(pd, 0, sizeof(pd));
			thread = it ? it->thread : 0;
		}
		if (!it || err || it->depth >= t->lanes[it->thread].depths)
			continue;
		err = draw_item(t, &pd[it->depth], it);
	}
	return err;
}

static int cmp_busy(const void *x, const void *y, void *ctx)
{
	const double *busy = ctx;
	double a = busy[*(const uint32_t *)x], b = busy[*(const uint32_t *)y];

	return a > b ? -1 : a < b;
}

/* The legend: the names drawn, the most time first. Its height. */
static double legend(struct tl *t, double y)
{
	const struct lp_picture *p = t->p;
	uint32_t *best = calloc(p->ngroups + 1, sizeof(*best));
	size_t n = 0;

	if (!best)
		return 0;
	for (size_t g = 0; g < p->ngroups; g++)
		if (t->busy[g] > 0)
			best[n++] = (uint32_t)g;
	qsort_r(best, n, sizeof(*best), cmp_busy, t->busy);
	if (n > LP_SVG_LEGEND_MAX)
		n = LP_SVG_LEGEND_MAX;
	fprintf(t->f, "<g class=\"legend\" font-size=\"12\" fill=\"#222\">\n");
	for (size_t i = 0; i < n + t->mixed; i++) {
		const char *fill = i < n ? lp_picture_palette[p->groups[best[i]].color] : MIXED_COLOR;
		double x = 12 + (double)(i % 2) * (LP_SVG_WIDTH / 2.0), yy = y + (double)(i / 2) * 20;

		if (i < n) {
			t->a.len = 0;
			if (lp_picture_group_label(p, best[i], &t->a) ||
			    fit_xml(&t->b, t->a.p ? t->a.p : "", t->a.len, 80))
				break;
		}
		fprintf(t->f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"14\" height=\"14\" "
			      "fill=\"%s\"/><text x=\"%.0f\" y=\"%.1f\">%s</text>\n",
			x, yy, fill, x + 20, yy + 12,
			i < n ? t->b.p : "spans narrower than a pixel, of several names, merged");
	}
	fprintf(t->f, "</g>\n");
	free(best);
	return (double)((n + t->mixed + 1) / 2) * 20;
}

/* The lanes, spans and legend into body; the picture's height. */
static int timeline_body(struct tl *t, double top, double *height)
{
	const struct lp_picture *p = t->p;
	uint32_t *order = calloc(p->nthreads + 1, sizeof(*order));
	size_t shown = 0, with_spans = 0;
	double lanes_h;
	int err = order ? 0 : -ENOMEM;

	if (err)
		return err;
	lanes_h = layout(t, top, &shown, &with_spans, order);
	fprintf(t->f, "<text x=\"12\" y=\"40\" font-size=\"11\" fill=\"#555\">%" PRIu64
		      " spans, %zu thread%s%s; time from the start of the recording</text>\n",
		p->spans, with_spans, with_spans == 1 ? "" : "s",
		shown < with_spans ? " (the busiest shown)" : "");
	for (size_t k = 0; !err && k < shown; k++)
		err = lane_label(t, order[k]);
	if (!err) {
		axis(t->f, t->t0, t->t1, MARGIN_LEFT, PLOT_WIDTH, top - 8, top + lanes_h - LANE_GAP);
		err = draw_items(t, lp_picture_level_for(p, (double)(t->t1 - t->t0) / PLOT_WIDTH));
	}
	if (!err)
		*height = top + lanes_h + 12 + legend(t, top + lanes_h + 12) + 8;
	free(order);
	return err;
}

static int timeline_svg(const struct lp_recording *r, FILE *f)
{
	const struct lp_picture *p = &r->pic;
	struct tl t = { .r = r, .p = p };
	struct lp_buf title = { 0 };
	char *body = NULL;
	size_t body_len = 0;
	double height = 0;
	int err;

	t.lanes = calloc(p->nthreads + 1, sizeof(*t.lanes));
	t.busy = calloc(p->ngroups + 1, sizeof(*t.busy));
	/* The body first: the height goes in the first line. */
	t.f = open_memstream(&body, &body_len);
	err = t.lanes && t.busy && t.f ? 0 : -ENOMEM;
	t.t0 = p->first_ns;
	t.t1 = p->last_ns > p->first_ns ? p->last_ns : p->first_ns + 1;
	t.scale = PLOT_WIDTH / (double)(t.t1 - t.t0);
	/* As the table's header names it ("12 Lean heartbeats"), only when a marker passed one. */
	if (!err && r->counter_name)
		err = lp_xml_text(&t.counter, r->counter_name, strlen(r->counter_name));
	if (!err)
		err = timeline_body(&t, 64, &height);
	if (t.f && fclose(t.f) && !err)
		err = -ENOMEM;
	if (!err)
		err = title_of(r, "Timeline", &title);
	if (!err) {
		svg_begin(f, height, title.p);
		fwrite(body, 1, body_len, f);
		fprintf(f, "</svg>\n");
	}
	free(body);
	lp_buf_free(&title);
	lp_buf_free(&t.a);
	lp_buf_free(&t.b);
	lp_buf_free(&t.counter);
	free(t.lanes);
	free(t.busy);
	return err;
}

/* ---- rows.svg ---- */

#define BAR_LABEL_W 330 /* the rows' labels */
#define BAR_VALUE_W 150 /* the values after the longest bar */
#define BAR_ROW_H 34

static int row_svg(FILE *f, const struct lp_pic_row *w, double y, double x0, double scale,
		   struct lp_buf *a, struct lp_buf *b)
{
	const char *color = lp_picture_palette[w->color];
	double tw = (double)w->total_ns * scale, sw = (double)w->self_ns * scale;
	char total[32], self[32];
	int err;

	a->len = 0;
	err = lp_picture_label(w->name, strlen(w->name), w->meta_text, strlen(w->meta_text), a);
	if (!err)
		err = fit_xml(b, a->p ? a->p : "", a->len, 46);
	if (err)
		return err;
	duration(w->total_ns, total, sizeof(total));
	duration(w->self_ns, self, sizeof(self));
	fprintf(f, "<g class=\"row\"><text x=\"12\" y=\"%.1f\" font-size=\"12\" fill=\"#222\">%s"
		   "</text>\n", y + 17, b->p);
	/* The tooltip has the whole label. */
	b->len = 0;
	err = lp_xml_text(b, a->p ? a->p : "", a->len);
	if (err)
		return err;
	fprintf(f, "<title>%s&#10;total %s, self %s, %" PRIu64 " calls</title>\n", b->p, total, self,
		w->calls);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"13\" fill=\"%s\" "
		   "fill-opacity=\"0.4\" stroke=\"%s\"/>\n",
		x0, y + 2, tw > 0.6 ? tw : 0.6, color, color);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"13\" fill=\"%s\" "
		   "stroke=\"#555\" stroke-width=\"0.5\"/>\n",
		x0, y + 17, sw > 0.6 ? sw : 0.6, color);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#333\">total %s</text>\n",
		x0 + tw + 5, y + 13, total);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#333\">self %s</text>\n",
		x0 + sw + 5, y + 28, self);
	fprintf(f, "</g>\n");
	return 0;
}

static int rows_svg(const struct lp_recording *r, FILE *f)
{
	size_t n = r->nrows < LP_SVG_ROWS_MAX ? r->nrows : LP_SVG_ROWS_MAX;
	double x0 = BAR_LABEL_W + 10, width = LP_SVG_WIDTH - x0 - BAR_VALUE_W, top = 64;
	double height = top + (double)n * BAR_ROW_H + 80;
	uint64_t max = 1;
	struct lp_buf title = { 0 }, a = { 0 }, b = { 0 };
	int err;

	for (size_t i = 0; i < n; i++)
		if (r->rows[i].total_ns > max)
			max = r->rows[i].total_ns;
	err = title_of(r, "Inclusive and self time per row", &title);
	if (err)
		return err;
	svg_begin(f, height, title.p);
	fprintf(f, "<text x=\"12\" y=\"40\" font-size=\"11\" fill=\"#555\">%zu row%s%s, by self "
		   "time; each row: its spans' total (inclusive) time, then their self time</text>\n",
		r->nrows, r->nrows == 1 ? "" : "s", n < r->nrows ? " (the first shown)" : "");
	axis(f, 0, max, x0, width, top - 8, top + (double)n * BAR_ROW_H);
	for (size_t i = 0; !err && i < n; i++)
		err = row_svg(f, &r->rows[i], top + (double)i * BAR_ROW_H, x0,
			      width / (double)max, &a, &b);
	if (!err) {
		double y = top + (double)n * BAR_ROW_H + 20;

		fprintf(f, "<g class=\"legend\" font-size=\"12\" fill=\"#222\">\n"
			   "<rect x=\"12\" y=\"%.1f\" width=\"28\" height=\"13\" fill=\"#8c8c8c\" "
			   "fill-opacity=\"0.4\" stroke=\"#8c8c8c\"/>"
			   "<text x=\"48\" y=\"%.1f\">total (inclusive): the row's spans with "
			   "everything they called</text>\n"
			   "<rect x=\"12\" y=\"%.1f\" width=\"28\" height=\"13\" fill=\"#8c8c8c\" "
			   "stroke=\"#555\" stroke-width=\"0.5\"/>"
			   "<text x=\"48\" y=\"%.1f\">self: total less the time in the spans they "
			   "called</text>\n</g>\n</svg>\n",
			y, y + 11, y + 22, y + 33);
	}
	lp_buf_free(&title);
	lp_buf_free(&a);
	lp_buf_free(&b);
	return err;
}

/* ---- the files ---- */

static int write_one(int dirfd, const char *dir, const char *name,
		     int (*draw)(const struct lp_recording *, FILE *), const struct lp_recording *r)
{
	struct lp_outfile o;
	int err = lp_outfile_openat(&o, dirfd, name);

	if (err) {
		lp_err("cannot write %s/%s: %s", dir, name, lp_outfile_strerror(err));
		return err;
	}
	err = draw(r, o.f);
	if (err) {
		lp_outfile_abort(&o);
		lp_err("cannot draw %s/%s: %s", dir, name, strerror(-err));
		return err;
	}
	err = lp_outfile_commit(&o);
	if (err)
		lp_err("cannot write %s/%s: %s", dir, name, strerror(-err));
	return err;
}

int lp_svg_write(const struct lp_recording *r, int dirfd, const char *dir)
{
	static const char *const names[] = { "timeline.svg", "rows.svg" };
	int err = 0;

	/* Neither is written when either would replace an input. */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		err = lp_outfile_check(dirfd, names[i]);
		if (err) {
			lp_err("cannot write %s/%s: %s", dir, names[i], lp_outfile_strerror(err));
			return err;
		}
	}

	if (r->has_trace) {
		err = write_one(dirfd, dir, "timeline.svg", timeline_svg, r);
		if (!err)
			printf("Timeline: %s/timeline.svg\n", dir);
	} else {
		lp_note("no trace in this recording (--summary-only?): no timeline.svg");
	}
	if (!err)
		err = write_one(dirfd, dir, "rows.svg", rows_svg, r);
	if (!err)
		printf("Rows: %s/rows.svg\n", dir);
	return err;
}
