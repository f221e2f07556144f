// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* qsort_r */
#include "cmd_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* The --threads view's Name column: a thread's comm, or a keyed track's longer name. */
#define LP_THREAD_NAME_COLS 32

int lp_sort_parse(const char *s, enum lp_sort *out)
{
	static const char *const keys[] = {
		[LP_SORT_SELF] = "self", [LP_SORT_TOTAL] = "total", [LP_SORT_CALLS] = "calls",
		[LP_SORT_MEAN] = "mean", [LP_SORT_P95] = "p95",     [LP_SORT_NAME] = "name",
	};

	for (size_t i = LP_SORT_SELF; i < ARRAY_SIZE(keys); i++) {
		if (!strcmp(s, keys[i])) {
			*out = (enum lp_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

int lp_duration_parse(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || isinf(v))
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].ns >= 1.8e19)
				return -EINVAL;
			*ns = (uint64_t)llround(v * units[i].ns);
			return 0;
		}
	}
	return -EINVAL;
}

/* Text of the file made safe for a terminal, cut to cols columns (padded). */
static void cell(const struct strtab *st, uint32_t id, size_t cols, char *out, size_t sz)
{
	struct lp_buf b = { 0 };
	size_t len;
	const char *s = strtab_str(st, id, &len);

	if (lp_text_display(&b, s, len) || !b.p)
		lp_fit_columns("", 0, cols, true, out, sz);
	else
		lp_fit_columns(b.p, b.len, cols, true, out, sz);
	lp_buf_free(&b);
}

/* Name, then metadata, as bytes: the same order whatever the strtab's ids. */
static int cmp_text(const struct strtab *st, uint32_t a, uint32_t b)
{
	size_t al, bl;
	const char *as = strtab_str(st, a, &al), *bs = strtab_str(st, b, &bl);
	int c = memcmp(as, bs, al < bl ? al : bl);

	return c ? c : al < bl ? -1 : al > bl;
}

struct row_order {
	const struct lp_summary *s;
	enum lp_sort key;
};

uint64_t lp_sort_key(const struct lp_group *g, enum lp_sort key)
{
	switch (key) {
	case LP_SORT_TOTAL:
		return g->total_ns;
	case LP_SORT_CALLS:
		return g->calls;
	case LP_SORT_MEAN:
		return g->calls ? g->total_ns / g->calls : 0;
	case LP_SORT_P95:
		return lp_group_p95((struct lp_group *)g); /* fixed: reads only */
	default:
		return g->self_ns;
	}
}

/* Largest first, names in byte order; ties keep the table's order. */
static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct row_order *o = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct lp_group *gx = o->s->groups[x], *gy = o->s->groups[y];
	int c = 0;

	if (o->key == LP_SORT_NAME) {
		c = cmp_text(o->s->st, gx->name, gy->name);
		if (!c && gx->meta != LP_META_UNKNOWN && gy->meta != LP_META_UNKNOWN)
			c = cmp_text(o->s->st, gx->meta, gy->meta);
		else if (!c)
			c = (gx->meta == LP_META_UNKNOWN) - (gy->meta == LP_META_UNKNOWN);
	} else if (lp_sort_key(gx, o->key) != lp_sort_key(gy, o->key)) {
		c = lp_sort_key(gx, o->key) > lp_sort_key(gy, o->key) ? -1 : 1;
	}
	return c ? c : x < y ? -1 : x > y;
}

/* The table record printed, its rows sorted, cut to --top and --min-total. */
static int print_table(FILE *out, const struct lp_summary *s, const struct lp_view_opts *o)
{
	struct row_order ord = { s, o->sort };
	struct lp_report rep = s->rep;
	size_t *idx = calloc(s->nrows ? s->nrows : 1, sizeof(*idx)), n = 0;
	struct lp_group **rows = calloc(s->nrows ? s->nrows : 1, sizeof(*rows));

	if (!idx || !rows) {
		free(idx);
		free(rows);
		lp_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nrows; i++)
		idx[i] = i;
	if (o->sort != LP_SORT_RECORDED)
		qsort_r(idx, s->nrows, sizeof(*idx), cmp_row, &ord);
	for (size_t i = 0; i < s->nrows && (!o->top || n < o->top); i++)
		if (s->groups[idx[i]]->total_ns >= o->min_total_ns)
			rows[n++] = s->groups[idx[i]];
	rep.groups = rows;
	rep.ngroups = n;
	/* --top replaces the cut record's table made (--rows); without it, the same table. */
	if (o->top)
		rep.table_rows = 0;
	rep.show_self |= o->verbose;
	lp_report_table(out, &rep);
	if (n < s->nrows)
		fprintf(out, "%zu more rows not shown (--top, --min-total)\n", s->nrows - n);
	free(idx);
	free(rows);
	return 0;
}

struct thread_order {
	const struct lp_summary *s;
	enum lp_sort key;
};

static int cmp_thread(const void *a, const void *b, void *ctx)
{
	const struct thread_order *o = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct lp_report_thread *tx = &o->s->threads[x], *ty = &o->s->threads[y];
	int c = 0;

	if (o->key == LP_SORT_NAME)
		c = cmp_text(o->s->st, tx->name, ty->name);
	else if (o->key == LP_SORT_CALLS && tx->spans != ty->spans)
		c = tx->spans > ty->spans ? -1 : 1;
	else if (o->key != LP_SORT_CALLS && tx->recorded_ns != ty->recorded_ns)
		c = tx->recorded_ns > ty->recorded_ns ? -1 : 1;
	return c ? c : x < y ? -1 : x > y;
}

/*
 * --off-cpu: the share of the thread's recorded time on a CPU, its time the
 * hypervisor took (when any thread's was), waiting for a CPU and blocked (its
 * top-level spans that were split).
 */
static void thread_split(FILE *out, const struct lp_report_thread *t, bool steal)
{
	char stolen[32], runq[32], blocked[32], pct[16] = "-";

	if (t->recorded_ns)
		snprintf(pct, sizeof(pct), "%.1f%%",
			 100.0 * (double)t->sched.cpu_ns / (double)t->recorded_ns);
	lp_fmt_duration(t->sched.steal_ns, stolen, sizeof(stolen));
	lp_fmt_duration(t->sched.runq_ns, runq, sizeof(runq));
	lp_fmt_duration(t->sched.blocked_ns, blocked, sizeof(blocked));
	fprintf(out, "%7s", pct);
	if (steal)
		fprintf(out, "%10s", stolen);
	fprintf(out, "%10s%10s", runq, blocked);
}

/*
 * One row per thread (or keyed track): its spans and recorded time, by
 * recorded time (--sort calls: spans; name).
 */
static int print_threads(FILE *out, const struct lp_summary *s, const struct lp_view_opts *o)
{
	struct thread_order ord = { s, o->sort };
	size_t n = s->rep.nthreads, shown = 0;
	size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	char rec[32], pct[16], name[LP_THREAD_NAME_COLS * 4 + 8];
	bool steal = false;

	if (!idx) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_thread, &ord);
	lp_fmt_duration(s->totals.recorded_ns, rec, sizeof(rec));
	fprintf(out, "Threads: %zu, recorded thread time %s\n\n", n, rec);
	for (size_t i = 0; i < n; i++)
		steal |= s->threads[i].sched.steal_ns != 0;
	fprintf(out, "       PID        TID  %-*s    Spans    Recorded       %%    Lost  Depth%s%s%s\n",
		LP_THREAD_NAME_COLS, "Name", s->rep.off_cpu ? "   CPU%" : "",
		s->rep.off_cpu && steal ? "     Steal" : "", s->rep.off_cpu ? "      Runq   Blocked" : "");
	for (size_t i = 0; i < n && (!o->top || shown < o->top); i++) {
		const struct lp_report_thread *t = &s->threads[idx[i]];

		cell(s->st, t->name, LP_THREAD_NAME_COLS, name, sizeof(name));
		lp_fmt_duration(t->recorded_ns, rec, sizeof(rec));
		if (s->totals.recorded_ns)
			snprintf(pct, sizeof(pct), "%.1f%%",
				 100.0 * (double)t->recorded_ns / (double)s->totals.recorded_ns);
		else
			snprintf(pct, sizeof(pct), "-");
		fprintf(out, "%10" PRIu32 " %10" PRIu32 "  %s%9" PRIu64 "%12s%8s%8" PRIu64 "%7" PRIu32,
			t->pid, t->tid, name, t->spans, rec, pct, t->lost, t->max_depth);
		if (s->rep.off_cpu)
			thread_split(out, t, steal);
		fputc('\n', out);
		shown++;
	}
	if (shown < n)
		fprintf(out, "%zu more threads not shown (--top)\n", n - shown);
	free(idx);
	return 0;
}

/*
 * Which nodes the tree shows: a node is shown when its parent is, its total
 * reaches --min-total, and fewer than --top of its siblings came before it
 * (siblings are by total time, largest first). last[i]: it is the last shown
 * child of its parent. The count shown.
 */
static size_t tree_shown(const struct lp_summary *s, const struct lp_view_opts *o, bool *shown,
			 bool *last, size_t *kids)
{
	size_t n = 0;
	size_t *last_kid = kids + s->nnodes + 1; /* by parent + 1: the last shown child */

	for (size_t i = 0; i <= s->nnodes; i++)
		last_kid[i] = SIZE_MAX;
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct lp_path_node *nd = &s->nodes[i];
		size_t p = (size_t)(nd->parent + 1);

		shown[i] = (nd->parent < 0 || shown[nd->parent]) && nd->total_ns >= o->min_total_ns &&
			   (!o->top || kids[p] < o->top);
		if (!shown[i])
			continue;
		kids[p]++;
		last_kid[p] = i;
		n++;
	}
	for (size_t i = 0; i < s->nnodes; i++)
		last[i] = shown[i] && last_kid[s->nodes[i].parent + 1] == i;
	return n;
}

/* Like `uftrace graph`: total, self and calls per call path, indented by depth. */
static int print_tree(FILE *out, const struct lp_summary *s, const struct lp_view_opts *o)
{
	bool *shown = calloc(s->nnodes + 1, sizeof(*shown));
	bool *last = calloc(s->nnodes + 1, sizeof(*last));
	bool *more = calloc(LP_NEST_MAX_DEPTH + 2, sizeof(*more)); /* more[d]: siblings follow */
	size_t *kids = calloc(2 * (s->nnodes + 1), sizeof(*kids)), n;
	struct lp_buf line = { 0 };
	char a[32], b[32];
	int err = 0;

	if (!shown || !last || !more || !kids) {
		err = -ENOMEM;
		goto out;
	}
	n = tree_shown(s, o, shown, last, kids);
	lp_fmt_duration(s->totals.recorded_ns, a, sizeof(a));
	fprintf(out, "Call paths: %" PRIu64 " kept (at most %" PRIu64 "), recorded thread time %s\n",
		s->paths_kept, s->paths_max, a);
	if (s->folded_spans)
		fprintf(out, "%" PRIu64 " spans of paths past the limit are in \"%s\" nodes\n",
			s->folded_spans, LP_PATHS_OTHER_NAME);
	fprintf(out, "\n     Total       Self    Calls  Call path\n");
	for (size_t i = 0; i < s->nnodes && !err; i++) {
		const struct lp_path_node *nd = &s->nodes[i];
		size_t len;
		const char *name = strtab_str(s->st, nd->name, &len);

		if (!shown[i])
			continue;
		more[nd->depth] = !last[i];
		line.len = 0;
		for (uint32_t d = 1; d < nd->depth && !err; d++)
			err = lp_buf_put(&line, more[d] ? " |" : "  ", 2);
		if (nd->depth && !err)
			err = lp_buf_put(&line, " +-", 3);
		if (!err)
			err = lp_text_display(&line, name, len);
		if (err)
			break;
		lp_fmt_duration(nd->total_ns, a, sizeof(a));
		lp_fmt_duration(nd->self_ns, b, sizeof(b));
		fprintf(out, "%10s %10s %8" PRIu64 "  %s\n", a, b, nd->calls, line.p);
	}
	if (!err && n < s->nnodes)
		fprintf(out, "%zu more paths not shown (--top, --min-total)\n", s->nnodes - n);
out:
	if (err)
		lp_err("out of memory");
	lp_buf_free(&line);
	free(shown);
	free(last);
	free(more);
	free(kids);
	return err;
}

/* A frame of a folded line: displayable, and ';' (the frame separator) as \x3b. */
static int put_frame(struct lp_buf *b, const char *s, size_t len)
{
	size_t start = 0;
	int err = 0;

	for (size_t i = 0; i <= len && !err; i++) {
		if (i < len && s[i] != ';')
			continue;
		err = lp_text_display(b, s + start, i - start);
		if (!err && i < len)
			err = lp_buf_put(b, "\\x3b", 4);
		start = i + 1;
	}
	return err;
}

/*
 * Folded stacks (flamegraph.pl, inferno, speedscope): "root;child;leaf SELF"
 * per path with self time, in ns; the values add up to the self time of all
 * spans, the recorded thread time.
 */
static int print_folded(FILE *out, const struct lp_summary *s)
{
	size_t *end = calloc(LP_NEST_MAX_DEPTH + 2, sizeof(*end)); /* the path's end per depth */
	struct lp_buf line = { 0 };
	int err = end ? lp_buf_put(&line, "", 0) : -ENOMEM;

	for (size_t i = 0; i < s->nnodes && !err; i++) {
		const struct lp_path_node *nd = &s->nodes[i];
		size_t len;
		const char *name = strtab_str(s->st, nd->name, &len);

		/* Pre-order: the path so far up to the parent is still in line. */
		line.len = nd->depth ? end[nd->depth - 1] : 0;
		if (nd->depth)
			err = lp_buf_put(&line, ";", 1);
		if (!err)
			err = put_frame(&line, name, len);
		end[nd->depth] = line.len;
		if (!err && nd->self_ns)
			fprintf(out, "%.*s %" PRIu64 "\n", (int)line.len, line.p, nd->self_ns);
	}
	if (err)
		lp_err("out of memory");
	lp_buf_free(&line);
	free(end);
	return err;
}

int lp_view_print(FILE *out, const struct lp_summary *s, const struct lp_view_opts *o)
{
	switch (o->view) {
	case LP_VIEW_TABLE:
		return print_table(out, s, o);
	case LP_VIEW_THREADS:
		return print_threads(out, s, o);
	case LP_VIEW_TREE:
	case LP_VIEW_FOLDED:
		if (!s->has_paths) {
			lp_err("%s has no call paths (recorded by a leanprofiler before they were "
			       "kept): --tree and --folded need them",
			       s->path);
			return -EINVAL;
		}
		if (o->view == LP_VIEW_TREE)
			return print_tree(out, s, o);
		return print_folded(out, s);
	}
	return -EINVAL;
}
