// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "diff.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define WHY_SELF 0x1
#define WHY_P95 0x2

/* A row of either or both recordings. */
struct drow {
	const struct lp_summary_row *b, *n; /* NULL: not in that recording */
	const struct lp_summary *bs, *ns;
	bool grew;     /* self time or P95 past the threshold */
	bool judged;   /* ... with enough calls and histograms for the rank test */
	const char *why_not; /* grew, not judged: why */
	double z_self, z_dur; /* NAN: not computed */
	unsigned why;  /* WHY_*: regressed */
};

double lp_rank_z(const struct lp_shist *a, const struct lp_shist *b)
{
	double n1 = (double)a->total, n2 = (double)b->total, nn = n1 + n2;
	double u = 0, below = 0, ties = 0, mean, var, d;
	uint32_t i = 0, j = 0;

	if (!a->total || !b->total)
		return 0;
	while (i < a->n || j < b->n) {
		uint32_t ia = i < a->n ? a->b[i].index : UINT32_MAX;
		uint32_t ib = j < b->n ? b->b[j].index : UINT32_MAX;
		uint32_t idx = ia < ib ? ia : ib;
		double ca = ia == idx ? (double)a->b[i++].count : 0;
		double cb = ib == idx ? (double)b->b[j++].count : 0;
		double t = ca + cb;

		/* b's values above a's count 1, those in the same bucket 1/2. */
		u += cb * (below + ca / 2);
		below += ca;
		ties += t * t * t - t;
	}
	mean = n1 * n2 / 2;
	var = n1 * n2 / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
	if (!(var > 0))
		return 0;
	d = u - mean;
	d = d > 0.5 ? d - 0.5 : d < -0.5 ? d + 0.5 : 0;
	return d / sqrt(var);
}

static uint64_t mean_of(const struct lp_group *g)
{
	return g->calls ? g->total_ns / g->calls : 0;
}

/* new against base, percent; NAN when base is 0. */
static double change(uint64_t base, uint64_t now)
{
	if (!base)
		return now ? INFINITY : NAN;
	return 100.0 * ((double)now - (double)base) / (double)base;
}

static bool grew(uint64_t base, uint64_t now, double threshold)
{
	double c = change(base, now);

	return now > base && (isinf(c) || c > threshold);
}

static void judge(struct drow *r, const struct lp_diff_opts *o)
{
	const struct lp_group *b, *n;
	bool self_grew, p95_grew;

	r->z_self = r->z_dur = NAN;
	if (!r->b || !r->n)
		return;
	b = &r->b->g;
	n = &r->n->g;
	self_grew = grew(b->self_ns, n->self_ns, o->threshold);
	p95_grew = grew(lp_group_p95((struct lp_group *)b), lp_group_p95((struct lp_group *)n),
			o->threshold);
	r->grew = self_grew || p95_grew;
	if (!r->grew)
		return;
	if (b->calls < LP_DIFF_MIN_CALLS || n->calls < LP_DIFF_MIN_CALLS) {
		r->why_not = "too few calls";
		return;
	}
	if (!r->b->has_hist || !r->n->has_hist) {
		r->why_not = "no histogram";
		return;
	}
	r->judged = true;
	if (self_grew) {
		r->z_self = lp_rank_z(&b->self_hist, &n->self_hist);
		if (r->z_self >= LP_DIFF_Z)
			r->why |= WHY_SELF;
	}
	if (p95_grew) {
		r->z_dur = lp_rank_z(&r->b->hist, &r->n->hist);
		if (r->z_dur >= LP_DIFF_Z)
			r->why |= WHY_P95;
	}
	if (!r->why)
		r->why_not = "not significant";
}

static const struct lp_group *any_group(const struct drow *r)
{
	return r->b ? &r->b->g : &r->n->g;
}

static const struct lp_summary *any_summary(const struct drow *r)
{
	return r->b ? r->bs : r->ns;
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c ? c : al < bl ? -1 : al > bl;
}

/* By name, then metadata text: the two recordings' rows meet in one pass. */
static int cmp_key(const struct lp_summary *xs, const struct lp_group *x,
		   const struct lp_summary *ys, const struct lp_group *y)
{
	size_t xl, yl;
	const char *xt = strtab_str(xs->st, x->name, &xl), *yt = strtab_str(ys->st, y->name, &yl);
	int c = cmp_bytes(xt, xl, yt, yl);

	if (c)
		return c;
	xt = lp_group_meta_text(xs->st, x, &xl);
	yt = lp_group_meta_text(ys->st, y, &yl);
	c = cmp_bytes(xt, xl, yt, yl);
	/* Metadata not known (spans that began before recording) is not "none". */
	return c ? c : (x->meta == LP_META_UNKNOWN) - (y->meta == LP_META_UNKNOWN);
}

static int cmp_row_key(const void *a, const void *b, void *ctx)
{
	const struct lp_summary *s = ctx;
	const struct lp_summary_row *x = *(const struct lp_summary_row *const *)a;
	const struct lp_summary_row *y = *(const struct lp_summary_row *const *)b;

	return cmp_key(s, &x->g, s, &y->g);
}

static uint64_t self_delta(const struct drow *r)
{
	uint64_t b = r->b ? r->b->g.self_ns : 0, n = r->n ? r->n->g.self_ns : 0;

	return b > n ? b - n : n - b;
}

/* By the change of self time, largest first; then by name. */
static int cmp_change(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	uint64_t dx = self_delta(x), dy = self_delta(y);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return cmp_key(any_summary(x), any_group(x), any_summary(y), any_group(y));
}

static const struct lp_summary_row **sorted_rows(const struct lp_summary *s)
{
	const struct lp_summary_row **v = calloc(s->nrows ? s->nrows : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < s->nrows; i++)
		v[i] = &s->rows[i];
	qsort_r(v, s->nrows, sizeof(*v), cmp_row_key, (void *)s);
	return v;
}

/* Every row of either recording, matched, judged and sorted. NULL on ENOMEM. */
static struct drow *match(const struct lp_summary *bs, const struct lp_summary *ns,
			  const struct lp_diff_opts *o, size_t *count)
{
	const struct lp_summary_row **b = sorted_rows(bs), **n = sorted_rows(ns);
	struct drow *rows = calloc(bs->nrows + ns->nrows + 1, sizeof(*rows));
	size_t i = 0, j = 0, k = 0;

	if (!b || !n || !rows) {
		free(b);
		free(n);
		free(rows);
		return NULL;
	}
	while (i < bs->nrows || j < ns->nrows) {
		int c = i == bs->nrows   ? 1
			: j == ns->nrows ? -1
					 : cmp_key(bs, &b[i]->g, ns, &n[j]->g);
		struct drow *r = &rows[k++];

		r->bs = bs;
		r->ns = ns;
		r->b = c <= 0 ? b[i++] : NULL;
		r->n = c >= 0 ? n[j++] : NULL;
		judge(r, o);
	}
	free(b);
	free(n);
	qsort(rows, k, sizeof(*rows), cmp_change);
	*count = k;
	return rows;
}

/* "name [meta]" for a terminal, whole or cut to cols columns (0: whole). */
static int row_name(const struct drow *r, size_t cols, struct lp_buf *out)
{
	const struct lp_summary *s = any_summary(r);
	const struct lp_group *g = any_group(r);
	struct lp_buf b = { 0 };
	size_t len;
	const char *t = strtab_str(s->st, g->name, &len);
	int err = lp_text_display(&b, t, len);

	if (!err && g->meta && g->meta != LP_META_UNKNOWN) {
		t = strtab_str(s->st, g->meta, &len);
		err = lp_buf_put(&b, " [", 2);
		err = err ? err : lp_text_display(&b, t, len);
		err = err ? err : lp_buf_put(&b, "]", 1);
	}
	out->len = 0;
	if (!err && cols) {
		char cell[LP_TABLE_NAME_COLS * 4 + 8];
		size_t n = lp_fit_columns(b.p ? b.p : "", b.len, cols, true, cell, sizeof(cell));

		err = lp_buf_put(out, cell, n);
	} else if (!err) {
		err = lp_buf_put(out, b.p ? b.p : "", b.len);
	}
	lp_buf_free(&b);
	return err;
}

static void fmt_change(double c, char *out, size_t sz)
{
	if (isnan(c))
		snprintf(out, sz, "-");
	else if (isinf(c))
		snprintf(out, sz, "new");
	else
		snprintf(out, sz, "%+.1f%%", c);
}

/* One metric: base, new and the change, or "-" for a missing side. */
static void put_metric(FILE *out, const struct drow *r, uint64_t b, uint64_t n, bool duration,
		       int width)
{
	char bs[32] = "-", ns[32] = "-", cs[32] = "-";

	if (r->b && duration)
		lp_fmt_duration(b, bs, sizeof(bs));
	else if (r->b)
		snprintf(bs, sizeof(bs), "%" PRIu64, b);
	if (r->n && duration)
		lp_fmt_duration(n, ns, sizeof(ns));
	else if (r->n)
		snprintf(ns, sizeof(ns), "%" PRIu64, n);
	if (r->b && r->n)
		fmt_change(change(b, n), cs, sizeof(cs));
	fprintf(out, " %*s %*s %9s", width, bs, width, ns, cs);
}

static const char *status(const struct drow *r)
{
	if (!r->b)
		return "added";
	if (!r->n)
		return "removed";
	if (r->why)
		return "REGRESSION";
	return r->why_not ? r->why_not : "";
}

static void print_table(FILE *out, const struct drow *rows, size_t n, struct lp_buf *name)
{
	static const char *const groups[] = { "Calls", "Self", "Total", "Mean", "P95" };

	/* Each metric: base, new, change; its name over the three. */
	fprintf(out, "%-*s", LP_TABLE_NAME_COLS, "");
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		fprintf(out, " %-*s", i + 1 < ARRAY_SIZE(groups) ? (i ? 31 : 25) : 0, groups[i]);
	fprintf(out, "\n%-*s", LP_TABLE_NAME_COLS, "Name");
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		fprintf(out, " %*s %*s %9s", i ? 10 : 7, "base", i ? 10 : 7, "new", "change");
	fprintf(out, "  Status\n");
	for (size_t i = 0; i < n; i++) {
		const struct drow *r = &rows[i];
		const struct lp_group *b = r->b ? &r->b->g : NULL, *g = r->n ? &r->n->g : NULL;

		if (row_name(r, LP_TABLE_NAME_COLS, name))
			continue;
		fprintf(out, "%.*s", (int)name->len, name->p);
		put_metric(out, r, b ? b->calls : 0, g ? g->calls : 0, false, 7);
		put_metric(out, r, b ? b->self_ns : 0, g ? g->self_ns : 0, true, 10);
		put_metric(out, r, b ? b->total_ns : 0, g ? g->total_ns : 0, true, 10);
		put_metric(out, r, b ? mean_of(b) : 0, g ? mean_of(g) : 0, true, 10);
		put_metric(out, r, b ? lp_group_p95((struct lp_group *)b) : 0,
			   g ? lp_group_p95((struct lp_group *)g) : 0, true, 10);
		fprintf(out, "%s%s\n", *status(r) ? "  " : "", status(r));
	}
}

/* "self +200.0% (2.01 ms -> 6.03 ms, z 4.52)" */
static void put_reason(FILE *out, const char *what, uint64_t b, uint64_t n, double z)
{
	char bs[32], ns[32], cs[32];

	lp_fmt_duration(b, bs, sizeof(bs));
	lp_fmt_duration(n, ns, sizeof(ns));
	fmt_change(change(b, n), cs, sizeof(cs));
	fprintf(out, "%s %s (%s -> %s, rank test z %.2f)", what, cs, bs, ns, z);
}

/* A figure per call: a row's calls may differ between the recordings. */
static uint64_t per_call(uint64_t total, const struct lp_group *g)
{
	return g->calls ? total / g->calls : 0;
}

/*
 * Both recorded with --off-cpu: where the time per call went, so that a
 * regression says whether it ran longer, waited for a CPU or waited for
 * something else. "; per call: cpu 1.20 ms -> 1.25 ms, runq ..., blocked ...",
 * and ", steal ..." when the hypervisor took time in either.
 */
static void put_split(FILE *out, const struct lp_group *b, const struct lp_group *n)
{
	static const char *const what[] = { "cpu", "runq", "blocked", "steal" };
	const uint64_t bv[] = { b->sched.cpu_ns, b->sched.runq_ns, b->sched.blocked_ns,
				b->sched.steal_ns };
	const uint64_t nv[] = { n->sched.cpu_ns, n->sched.runq_ns, n->sched.blocked_ns,
				n->sched.steal_ns };
	size_t parts = b->sched.steal_ns || n->sched.steal_ns ? 4 : 3;

	fputs("; per call:", out);
	for (size_t i = 0; i < parts; i++) {
		char x[32], y[32];

		lp_fmt_duration(per_call(bv[i], b), x, sizeof(x));
		lp_fmt_duration(per_call(nv[i], n), y, sizeof(y));
		fprintf(out, "%s %s %s -> %s", i ? "," : "", what[i], x, y);
	}
	if (b->unmeasured_ns || n->unmeasured_ns) {
		char x[32], y[32];

		lp_fmt_duration(per_call(b->unmeasured_ns, b), x, sizeof(x));
		lp_fmt_duration(per_call(n->unmeasured_ns, n), y, sizeof(y));
		fprintf(out, ", not split %s -> %s", x, y);
	}
}

/* One plain line per regression, for a CI log, and one that says the rule. */
static void print_regressions(FILE *out, const struct drow *rows, size_t n, struct lp_buf *name,
			      const struct lp_diff_opts *o, size_t count)
{
	for (size_t i = 0; i < n; i++) {
		const struct drow *r = &rows[i];
		struct lp_group *b, *g;

		if (!r->why || row_name(r, 0, name))
			continue;
		b = (struct lp_group *)&r->b->g;
		g = (struct lp_group *)&r->n->g;
		fprintf(out, "regression: %.*s: ", (int)name->len, name->p);
		if (r->why & WHY_SELF)
			put_reason(out, "self time", b->self_ns, g->self_ns, r->z_self);
		if (r->why == (WHY_SELF | WHY_P95))
			fputs(", ", out);
		if (r->why & WHY_P95)
			put_reason(out, "P95", lp_group_p95(b), lp_group_p95(g), r->z_dur);
		fprintf(out, "; calls %" PRIu64 " -> %" PRIu64, b->calls, g->calls);
		if (r->bs->rep.off_cpu && r->ns->rep.off_cpu)
			put_split(out, b, g);
		fputc('\n', out);
	}
	if (count)
		fprintf(out, "%zu regression%s", count, count == 1 ? "" : "s");
	else
		fprintf(out, "no regression");
	fprintf(out,
		": a row regresses when its self time or P95 grows by more than %g%% and its calls "
		"are slower by a rank test (z >= %.2f, at least %d calls on each side)\n",
		o->threshold, LP_DIFF_Z, LP_DIFF_MIN_CALLS);
}

static void print_side(FILE *out, const char *label, const struct lp_summary *s)
{
	struct lp_buf b = { 0 };
	char rec[32];

	lp_fmt_duration(s->totals.recorded_ns, rec, sizeof(rec));
	if (lp_text_display(&b, s->path, strlen(s->path)) == 0)
		fprintf(out, "%s %s: %" PRIu64 " events, %zu rows, recorded thread time %s\n", label,
			b.p, s->totals.spans, s->nrows, rec);
	lp_buf_free(&b);
}

/* A JSON string of untrusted bytes, made valid UTF-8 first (json-c would pass them through). */
static json_object *json_text(const char *s, size_t len)
{
	struct lp_buf b = { 0 };
	json_object *o;

	if (lp_utf8_sanitize(&b, s, len))
		return NULL;
	o = json_object_new_string_len(b.p ? b.p : "", (int)b.len);
	lp_buf_free(&b);
	return o;
}

static json_object *jdouble(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *side_json(const struct lp_summary_row *r, const struct lp_summary *s)
{
	json_object *o;
	struct lp_group *g;

	if (!r)
		return NULL;
	g = (struct lp_group *)&r->g;
	o = json_object_new_object();
	json_object_object_add(o, "calls", json_object_new_uint64(g->calls));
	json_object_object_add(o, "self_ns", json_object_new_uint64(g->self_ns));
	json_object_object_add(o, "total_ns", json_object_new_uint64(g->total_ns));
	json_object_object_add(o, "mean_ns", json_object_new_uint64(mean_of(g)));
	json_object_object_add(o, "p95_ns", json_object_new_uint64(lp_group_p95(g)));
	if (s->rep.off_cpu) {
		json_object_object_add(o, "total_cpu_ns", json_object_new_uint64(g->sched.cpu_ns));
		json_object_object_add(o, "total_runq_ns", json_object_new_uint64(g->sched.runq_ns));
		json_object_object_add(o, "total_blocked_ns",
				       json_object_new_uint64(g->sched.blocked_ns));
		json_object_object_add(o, "total_steal_ns",
				       json_object_new_uint64(g->sched.steal_ns));
		json_object_object_add(o, "off_cpu_unmeasured_ns",
				       json_object_new_uint64(g->unmeasured_ns));
	}
	return o;
}

static json_object *changes_json(const struct drow *r)
{
	json_object *o;
	struct lp_group *b, *n;

	if (!r->b || !r->n)
		return NULL;
	b = (struct lp_group *)&r->b->g;
	n = (struct lp_group *)&r->n->g;
	o = json_object_new_object();
	/* null when BASE's figure is 0. */
	json_object_object_add(o, "calls", jdouble(change(b->calls, n->calls)));
	json_object_object_add(o, "self", jdouble(change(b->self_ns, n->self_ns)));
	json_object_object_add(o, "total", jdouble(change(b->total_ns, n->total_ns)));
	json_object_object_add(o, "mean", jdouble(change(mean_of(b), mean_of(n))));
	json_object_object_add(o, "p95", jdouble(change(lp_group_p95(b), lp_group_p95(n))));
	return o;
}

static json_object *row_json(const struct drow *r)
{
	const struct lp_summary *s = any_summary(r);
	const struct lp_group *g = any_group(r);
	json_object *o = json_object_new_object(), *why = json_object_new_array(), *z;
	size_t len;
	const char *t = strtab_str(s->st, g->name, &len);

	json_object_object_add(o, "name", json_text(t, len));
	t = lp_group_meta_text(s->st, g, &len);
	json_object_object_add(o, "meta_text",
			       g->meta == LP_META_UNKNOWN ? NULL : json_text(t, len));
	json_object_object_add(o, "status", json_object_new_string(!r->b ? "added"
								   : !r->n ? "removed"
									   : "both"));
	json_object_object_add(o, "base", side_json(r->b, r->bs));
	json_object_object_add(o, "new", side_json(r->n, r->ns));
	json_object_object_add(o, "change_percent", changes_json(r));
	json_object_object_add(o, "grew", json_object_new_boolean(r->grew));
	json_object_object_add(o, "judged", json_object_new_boolean(r->judged));
	if (r->why_not)
		json_object_object_add(o, "not_judged_because",
				       json_object_new_string(r->why_not));
	z = json_object_new_object();
	json_object_object_add(z, "self", jdouble(r->z_self));
	json_object_object_add(z, "durations", jdouble(r->z_dur));
	json_object_object_add(o, "rank_z", z);
	if (r->why & WHY_SELF)
		json_object_array_add(why, json_object_new_string("self"));
	if (r->why & WHY_P95)
		json_object_array_add(why, json_object_new_string("p95"));
	json_object_object_add(o, "regression", json_object_new_boolean(r->why != 0));
	json_object_object_add(o, "regressed", why);
	return o;
}

static int print_json(FILE *out, const struct lp_summary *bs, const struct lp_summary *ns,
		      const struct drow *rows, size_t n, const struct lp_diff_opts *o, size_t count)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array_ext((int)n);
	const char *text;

	json_object_object_add(root, "schema", json_object_new_string(LP_DIFF_SCHEMA));
	json_object_object_add(root, "base", json_text(bs->path, strlen(bs->path)));
	json_object_object_add(root, "new", json_text(ns->path, strlen(ns->path)));
	json_object_object_add(root, "threshold_percent", json_object_new_double(o->threshold));
	json_object_object_add(root, "min_calls", json_object_new_int(LP_DIFF_MIN_CALLS));
	json_object_object_add(root, "min_z", json_object_new_double(LP_DIFF_Z));
	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, row_json(&rows[i]));
	json_object_object_add(root, "regressions", json_object_new_uint64(count));
	json_object_object_add(root, "rows", arr);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		json_object_put(root);
		return -ENOMEM;
	}
	fprintf(out, "%s\n", text);
	json_object_put(root);
	return 0;
}

int lp_diff_print(FILE *out, const struct lp_summary *base, const struct lp_summary *new_,
		  const struct lp_diff_opts *o, size_t *regressions)
{
	size_t n = 0;
	struct drow *rows = match(base, new_, o, &n);
	struct lp_buf name = { 0 };
	int err = 0;

	*regressions = 0;
	if (!rows) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		*regressions += rows[i].why != 0;
	if (o->json) {
		err = print_json(out, base, new_, rows, n, o, *regressions);
	} else {
		print_side(out, "Base", base);
		print_side(out, "New ", new_);
		fputc('\n', out);
		print_table(out, rows, n, &name);
		fputc('\n', out);
		print_regressions(out, rows, n, &name, o, *regressions);
	}
	if (err)
		lp_err("out of memory");
	lp_buf_free(&name);
	free(rows);
	return err;
}
