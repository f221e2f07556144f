// SPDX-License-Identifier: MIT
/*
 * top's view: which spans (the last interval, or the whole recording), in
 * which order, filtered by name, paused or not; drawn as the header lines
 * and record's own table rows (lp_report_rows: the same columns, the same
 * escaping of the targets' names), on the screen or on stdout.
 */
#define _GNU_SOURCE
#include "top.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "interval.h"
#include "report.h"
#include "screen.h"
#include "strtab.h"
#include "text.h"

/* The lines above the table on the screen: two of figures, the keys, a blank one. */
#define LP_TOP_HEAD_LINES 4

struct lp_top {
	struct lp_top_opts o;
	struct lp_record_watch watch;
	struct lp_top_interval iv;
	struct lp_screen screen;
	bool whole;     /* the whole recording, not the last interval */
	bool paused;    /* the interval shown stays; the screen is redrawn only for keys */
	bool quitting;  /* q was pressed: the recording ends (a launched command gets SIGINT) */
	bool quit;      /* ... to be said to lp_record */
	bool redraw;    /* a key changed the view */
	bool tick;      /* an interval ended */
	bool drawn;     /* the screen was drawn once */
	enum lp_sort sort;
	bool editing;   /* '/' typed: keys go to the filter */
	char filter[LP_TOP_FILTER_MAX + 1], edit[LP_TOP_FILTER_MAX + 1];
	/* The header's figures, of the last interval. */
	uint64_t since_ns;
	uint64_t lost_before, lost_interval;
	uint64_t cpu_before_ns, cpu_at_ns;
	double self_cpu_pct;
};

static const char *const sort_names[] = {
	[LP_SORT_SELF] = "self", [LP_SORT_TOTAL] = "total", [LP_SORT_CALLS] = "calls",
	[LP_SORT_MEAN] = "mean", [LP_SORT_P95] = "p95",     [LP_SORT_NAME] = "name",
};

static uint64_t cpu_used_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
}

/* ---- what is shown: the rows of a window, filtered and sorted ---- */

struct row {
	struct lp_group *g;
	size_t at; /* its place by self time: ties keep the table's order */
};

struct order {
	const struct strtab *st;
	enum lp_sort key;
};

static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct order *o = ctx;
	const struct row *x = a, *y = b;
	int c = 0;

	if (o->key == LP_SORT_NAME) {
		size_t lx, ly;
		const char *sx = strtab_str(o->st, x->g->name, &lx);
		const char *sy = strtab_str(o->st, y->g->name, &ly);

		c = memcmp(sx, sy, lx < ly ? lx : ly);
		c = c ? c : (lx > ly) - (lx < ly);
	} else {
		uint64_t kx = lp_sort_key(x->g, o->key), ky = lp_sort_key(y->g, o->key);

		c = kx > ky ? -1 : kx < ky;
	}
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The filter holds for the span name (its bytes as the target gave them). */
static bool passes(const struct lp_top *t, const struct strtab *st, const struct lp_group *g)
{
	size_t len;
	const char *name;

	if (!t->filter[0])
		return true;
	name = strtab_str(st, g->name, &len);
	return g->overflow != LP_OVERFLOW_NAME && memmem(name, len, t->filter, strlen(t->filter));
}

/*
 * view: what lp_report_rows draws, from rep (the whole recording's rows and
 * totals) or the last interval's; its groups in *groups (caller frees).
 */
static int make_view(struct lp_top *t, const struct lp_report *rep, struct lp_report *view,
		     struct lp_group ***groups)
{
	struct lp_group **all;
	size_t n, kept = 0;
	struct row *rows;
	struct order ord = { rep->st, t->sort };

	*view = *rep;
	if (!t->whole) {
		view->totals = &t->iv.shown.totals;
		lp_stats_folding(t->iv.shown.stats, &view->fold);
		view->ngroups = lp_stats_sorted(t->iv.shown.stats, &all);
	} else {
		all = rep->groups;
	}
	n = view->ngroups;
	rows = calloc(n ? n : 1, sizeof(*rows));
	*groups = calloc(n ? n : 1, sizeof(**groups));
	if (!rows || !*groups) {
		free(rows);
		free(*groups);
		*groups = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (passes(t, rep->st, all[i]))
			rows[kept++] = (struct row){ all[i], i };
	qsort_r(rows, kept, sizeof(*rows), cmp_row, &ord);
	for (size_t i = 0; i < kept; i++)
		(*groups)[i] = rows[i].g;
	free(rows);
	view->groups = *groups;
	view->ngroups = kept;
	return 0;
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The lines above the table: what is shown, then the recording's figures. */
static void header(FILE *out, const struct lp_top *t, const struct lp_report *rep)
{
	const struct lp_top_window *w = &t->iv.shown;
	uint64_t lost = rep->loss.enter + rep->loss.exit;
	double len = seconds(w->end_ns - w->start_ns);

	if (t->whole)
		fprintf(out, "Whole recording: %" PRIu64 " spans", rep->totals->spans);
	else if (w->end_ns)
		fprintf(out, "Last interval: %.3f s to %.3f s of the recording, %" PRIu64 " spans",
			seconds(w->start_ns - t->since_ns), seconds(w->end_ns - t->since_ns),
			w->totals.spans);
	else
		fprintf(out, "Last interval: none yet (one every %.3g s)",
			seconds(t->o.interval_ns));
	fprintf(out, "; sorted by %s", sort_names[t->sort]);
	if (t->filter[0]) {
		struct lp_buf b = { 0 };

		/* What was typed, shown as safely as a target's name. */
		lp_text_display(&b, t->filter, strlen(t->filter));
		fprintf(out, "; names with \"%.*s\"", (int)b.len, b.p ? b.p : "");
		lp_buf_free(&b);
	}
	if (t->paused)
		fputs("; PAUSED", out);
	fputc('\n', out);
	fprintf(out, "Spans/s %.0f, lost events %" PRIu64 " (%" PRIu64 " in the interval), "
		     "threads %" PRIu32 ", leanprofiler CPU %.1f%%\n",
		w->end_ns && len > 0 ? (double)w->totals.spans / len : 0.0, lost, t->lost_interval,
		t->whole ? rep->totals->threads : w->totals.threads, t->self_cpu_pct);
}

/* The keys, or the filter being typed, or that the recording is ending. */
static void keys_line(FILE *out, const struct lp_top *t)
{
	if (t->editing)
		fprintf(out, "Filter by name (Enter: apply, Esc: cancel): %s_\n", t->edit);
	else if (t->quitting)
		fputs("Ending: the command got SIGINT; q again stops recording now\n", out);
	else
		fprintf(out, "q quit  a %s  s sort  / filter  p %s\n",
			t->whole ? "last interval" : "whole recording", t->paused ? "resume" : "pause");
}

/* The header, the keys (on the screen), and the table. */
static int render(struct lp_top *t, const struct lp_report *rep, int rows, int cols,
		  char **text, size_t *len)
{
	struct lp_report view;
	struct lp_group **groups = NULL;
	FILE *out = open_memstream(text, len);
	size_t name_cols = LP_TABLE_NAME_COLS;
	int err = out ? make_view(t, rep, &view, &groups) : -ENOMEM;

	if (err) {
		if (out)
			fclose(out);
		return err;
	}
	header(out, t, &view);
	if (!t->o.batch) {
		size_t figures, lines = rows > LP_TOP_HEAD_LINES + 1 ? rows - LP_TOP_HEAD_LINES - 1 : 1;

		keys_line(out, t);
		view.table_rows = lines;
		/* A narrow terminal cuts the names first, then what does not fit. */
		figures = lp_report_figure_cols(&view);
		if ((size_t)cols < LP_TABLE_NAME_COLS + figures)
			name_cols = (size_t)cols > figures + 12 ? (size_t)cols - figures : 12;
	} else {
		view.table_rows = t->o.table_rows;
	}
	fputc('\n', out);
	lp_report_rows(out, &view, name_cols);
	if (t->o.batch && view.table_rows && view.ngroups > view.table_rows)
		fprintf(out, "(%zu more rows)\n", view.ngroups - view.table_rows);
	free(groups);
	return fclose(out) ? -ENOMEM : 0;
}

/* ---- keys ---- */

static void edit_key(struct lp_top *t, int k)
{
	size_t n = strlen(t->edit);

	if (k == '\r' || k == '\n') {
		memcpy(t->filter, t->edit, sizeof(t->filter));
		t->editing = false;
	} else if (k == 27) {
		t->editing = false;
	} else if (k == LP_KEY_BACKSPACE) {
		if (n)
			t->edit[n - 1] = '\0';
	} else if (k >= 0x20 && k < 0x7f && n < LP_TOP_FILTER_MAX) {
		t->edit[n] = (char)k;
		t->edit[n + 1] = '\0';
	}
}

static void key(struct lp_top *t, int k)
{
	t->redraw = true;
	if (t->editing) {
		edit_key(t, k);
		return;
	}
	switch (k) {
	case 'q':
	case 'Q':
		t->quit = true;
		break;
	case 'a':
		t->whole = !t->whole;
		break;
	case 's':
		t->sort = t->sort == LP_SORT_NAME ? LP_SORT_SELF : (enum lp_sort)(t->sort + 1);
		break;
	case '/':
		t->editing = true;
		memcpy(t->edit, t->filter, sizeof(t->edit));
		break;
	case 'p':
	case ' ':
		t->paused = !t->paused;
		break;
	default:
		break; /* a resize, or a key of none: drawn again */
	}
}

/* ---- the watch lp_record calls ---- */

static void on_span(void *ctx, const struct lp_span *s)
{
	struct lp_top *t = ctx;

	lp_top_interval_span(&t->iv, s);
}

static void on_mark(void *ctx, struct strtab *st)
{
	struct lp_top *t = ctx;

	lp_top_interval_mark(&t->iv, st);
}

static bool on_due(void *ctx, uint64_t since_ns, uint64_t drained_ns)
{
	struct lp_top *t = ctx;
	int k;

	t->since_ns = since_ns;
	while ((k = lp_screen_key(&t->screen)) >= 0)
		key(t, k);
	if (lp_top_interval_advance(&t->iv, since_ns, drained_ns, t->paused))
		t->tick = true;
	return t->tick || t->redraw || t->quit || (!t->o.batch && !t->drawn);
}

/* An interval ended: its lost events and leanprofiler's share of a CPU in it. */
static void interval_figures(struct lp_top *t, const struct lp_report *rep)
{
	uint64_t lost = rep->loss.enter + rep->loss.exit;
	uint64_t cpu = cpu_used_ns(), now = t->iv.shown.end_ns;

	t->lost_interval = lost - t->lost_before;
	t->lost_before = lost;
	if (t->cpu_at_ns && now > t->cpu_at_ns)
		t->self_cpu_pct = 100.0 * (double)(cpu - t->cpu_before_ns) /
				  (double)(now - t->cpu_at_ns);
	t->cpu_before_ns = cpu;
	t->cpu_at_ns = now;
}

static int on_draw(void *ctx, struct lp_report *rep)
{
	struct lp_top *t = ctx;
	char *text = NULL;
	size_t len = 0;
	int rows, cols, err;
	bool tick = t->tick;

	if (tick)
		interval_figures(t, rep);
	t->tick = t->redraw = false;
	if (t->quit) {
		t->quit = false;
		t->quitting = true;
		return 1;
	}
	if (t->o.batch && !tick)
		return 0;
	if (!t->o.batch && !t->screen.open) {
		err = lp_screen_open(&t->screen);
		if (err)
			return err;
	}
	lp_screen_size(&t->screen, &rows, &cols);
	err = render(t, rep, rows, cols, &text, &len);
	if (err) {
		lp_err("cannot show the recording: out of memory");
		return err;
	}
	if (t->o.batch) {
		/* One table per interval, a blank line after each. */
		fwrite(text, 1, len, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	} else {
		lp_screen_draw(&t->screen, text, len, tick);
		t->drawn = true;
	}
	free(text);
	return 0;
}

int lp_top_new(struct lp_top **out, const struct lp_top_opts *o)
{
	struct lp_top *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t || lp_top_interval_init(&t->iv, o->interval_ns, o->max_groups, o->bounded)) {
		free(t);
		lp_err("out of memory");
		return -ENOMEM;
	}
	t->o = *o;
	t->sort = o->sort == LP_SORT_RECORDED ? LP_SORT_SELF : o->sort;
	t->screen.saved_err = t->screen.held_err = -1;
	t->watch = (struct lp_record_watch){
		/* Keys from the terminal only (a background job's stdin is /dev/null). */
		.input_fd = o->batch || !isatty(STDIN_FILENO) ? -1 : STDIN_FILENO, .span = on_span, .mark = on_mark,
		.due = on_due, .draw = on_draw, .ctx = t,
	};
	*out = t;
	return 0;
}

const struct lp_record_watch *lp_top_watch(struct lp_top *t)
{
	return &t->watch;
}

void lp_top_leave(struct lp_top *t)
{
	if (t)
		lp_screen_close(&t->screen);
}

void lp_top_end(struct lp_top *t, struct lp_report *rep)
{
	lp_top_leave(t);
	if (!t || !t->o.batch || !t->iv.started || t->paused)
		return;
	/* The intervals that ended before the recording did, then the one it cut short. */
	if (lp_top_interval_advance(&t->iv, t->since_ns, rep->end_ns, false)) {
		t->tick = true;
		on_draw(t, rep);
	}
	if (rep->end_ns > t->iv.cur.start_ns && !lp_top_interval_cut(&t->iv, rep->end_ns)) {
		t->tick = true;
		on_draw(t, rep);
	}
}

void lp_top_free(struct lp_top *t)
{
	if (!t)
		return;
	lp_top_leave(t);
	if (t->iv.err)
		lp_warn("top: the last interval's figures were short of memory: some spans are "
			"missing from them");
	lp_top_interval_free(&t->iv);
	free(t);
}
