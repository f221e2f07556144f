// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/wire.h"
#include "jsonw.h"
#include "meta.h"
#include "text.h"

static const char *const mode_names[] = { "launch", "attach", "all-processes" };
static const char *const origin_names[] = { "launched", "attached", "forked", "found" };
static const char *const end_names[] = { "unknown", "command exited", "targets exited",
					 "duration", "signal", "error" };

const char *lp_mode_name(enum lp_mode m)
{
	return (size_t)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "unknown";
}

const char *lp_origin_name(enum lp_origin o)
{
	return (size_t)o < ARRAY_SIZE(origin_names) ? origin_names[o] : "unknown";
}

const char *lp_end_reason_name(enum lp_end_reason e)
{
	return (size_t)e < ARRAY_SIZE(end_names) ? end_names[e] : "unknown";
}

int lp_mode_parse(const char *name, enum lp_mode *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (!strcmp(name, mode_names[i])) {
			*m = (enum lp_mode)i;
			return 0;
		}
	return -EINVAL;
}

enum lp_end_reason lp_end_reason_parse(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(end_names); i++)
		if (!strcmp(name, end_names[i]))
			return (enum lp_end_reason)i;
	return LP_END_UNKNOWN;
}

static uint64_t lost_total(const struct lp_loss *l)
{
	return l->enter + l->exit;
}

/*
 * "name [meta]" made safe for a terminal and cut to the Name column, cols
 * wide. An overflow row's texts are ours; the note after its row (row_notes)
 * is what marks it, since a target may name a span anything.
 */
static void name_cell(const struct lp_report *r, const struct lp_group *g, size_t cols, char *out,
		      size_t sz)
{
	struct lp_buf b = { 0 };
	size_t len;
	const char *s = strtab_str(r->st, g->name, &len);

	if (g->overflow == LP_OVERFLOW_NAME)
		lp_buf_put(&b, LP_OVERFLOW_NAME_TEXT, strlen(LP_OVERFLOW_NAME_TEXT));
	else
		lp_text_display(&b, s, len);
	if (g->overflow == LP_OVERFLOW_META) {
		lp_buf_put(&b, " [" LP_OVERFLOW_META_TEXT "]", strlen(LP_OVERFLOW_META_TEXT) + 3);
	} else if (g->meta && g->meta != LP_META_UNKNOWN) {
		s = strtab_str(r->st, g->meta, &len);
		lp_buf_put(&b, " [", 2);
		lp_text_display(&b, s, len);
		lp_buf_put(&b, "]", 1);
	}
	if (b.p)
		lp_fit_columns(b.p, b.len, cols, true, out, sz);
	else
		lp_fit_columns("", 0, cols, true, out, sz);
	lp_buf_free(&b);
}

/* What follows a row's figures, past the columns a target's text can reach. */
static void row_notes(const struct lp_group *g, char *out, size_t sz)
{
	char unterminated[48] = "";
	int n;

	/* Spans whose exit never came: a failure, an exception, the end of the recording. */
	if (g->unterminated)
		snprintf(unterminated, sizeof(unterminated), "  (%" PRIu64 " unterminated)",
			 g->unterminated);
	n = snprintf(out, sz, "%s%s%s", unterminated, g->uncertain ? "  (uncertain)" : "",
		     g->meta == LP_META_UNKNOWN && !g->overflow
			     ? "  (began before recording: metadata not known)"
			     : "");
	if (g->overflow && n >= 0 && (size_t)n < sz)
		snprintf(out + n, sz - (size_t)n, "  (folded: ~%" PRIu64 " groups)",
			 lp_group_folded_distinct(g));
}

/* After the table: the rows it leaves out, and what was folded. */
static void table_footer(FILE *out, const struct lp_report *r, size_t shown)
{
	const struct lp_fold_stats *f = &r->fold;

	if (shown < r->ngroups)
		fprintf(out,
			"Not shown: %zu more rows; --rows N shows N rows, --rows all every one "
			"(the summary JSON has them all)\n",
			r->ngroups - shown);
	if (f->overflow_rows)
		fprintf(out,
			"Folded: %" PRIu64 " spans of ~%" PRIu64 " groups (a name and its metadata) "
			"past --max-groups %zu are in %zu row%s marked folded; a larger "
			"--max-groups keeps more groups apart\n",
			f->folded_spans, f->folded_distinct, f->max, f->overflow_rows,
			f->overflow_rows > 1 ? "s" : "");
}

static size_t approximate_rows(const struct lp_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ngroups; i++)
		n += !lp_group_p95_exact(r->groups[i]);
	return n;
}

/* What the table's resource figures cover, when it is not the whole launched command. */
static const char *resources_scope(const struct lp_report *r)
{
	if (r->mode == LP_MODE_ATTACH)
		return r->res.exited ? " (attached PID, until its exit)"
				     : " (attached PID, during recording)";
	if (r->mode == LP_MODE_LAUNCH && r->exit_status < 0)
		return " (command still running: so far, its children not counted)";
	return "";
}

/* What the decoder could not take as sent: said only when it happened. */
static void input_lines(FILE *out, const struct lp_report *r)
{
	if (r->abi_mismatch)
		fprintf(out,
			"Marker version: %" PRIu64 " events came from markers built with another "
			"version of include/leanprofiler.h (marker ABI other than %u): their "
			"figures may be wrong; rebuild those programs with this leanprofiler's "
			"header\n",
			r->abi_mismatch, LP_MARKER_ABI_VERSION);
	if (r->unknown_literal)
		fprintf(out,
			"Unknown texts: %" PRIu64 " names or metadata of events referred to a "
			"literal whose text never arrived: they are named (unknown)\n",
			r->unknown_literal);
}

/* --off-cpu: spans whose time is not split, or only in part, and why; waits not drawn. */
static void off_cpu_line(FILE *out, const struct lp_nest_totals *t, const struct lp_loss *l)
{
	if (t->sched_partial || t->sched_unmeasured)
		fprintf(out,
			"Off-CPU: %" PRIu64 " spans split, %" PRIu64 " in part (open before their "
			"thread was tracked: the rest is unmeasured), %" PRIu64 " not (closed at a "
			"thread's exit or the recording's end)\n",
			t->sched_measured, t->sched_partial, t->sched_unmeasured);
	if (l->sched)
		fprintf(out,
			"Off-CPU waits: %" PRIu64 " not in the trace (the ring buffer was full); the "
			"splits are whole. Try a larger --buffer-size.\n",
			l->sched);
}

/*
 * The bounded trace's window on the recording's clock: the spans it holds
 * ended from *start (--trace-last) until *end (--trace-max-size: it was full).
 */
static void bound_window(const struct lp_report *r, uint64_t *start, uint64_t *end)
{
	const struct lp_report_bound *b = &r->bound;

	*start = r->base_ns;
	*end = r->end_ns;
	if (b->last_ns && b->st.from_ns > *start)
		*start = b->st.from_ns;
	if (!b->last_ns && b->st.full && b->st.full_ns < *end)
		*end = b->st.full_ns;
	if (*end < *start)
		*end = *start;
}

/* A size as --trace-max-size takes it: "100M". */
static void fmt_option_size(uint64_t v, char *out, size_t sz)
{
	static const char units[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * (unsigned)i;

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(out, sz, "%" PRIu64 "%c", v >> shift, units[i]);
			return;
		}
	}
	snprintf(out, sz, "%" PRIu64, v);
}

/* --trace-last, --trace-max-size: which spans the trace holds, how many it left out. */
static void bound_line(FILE *out, const struct lp_report *r)
{
	const struct lp_report_bound *b = &r->bound;
	uint64_t start, end;
	char last[32], kept[32], from[32], to[32], size[32], slices[96] = "";

	bound_window(r, &start, &end);
	lp_fmt_duration(b->last_ns, last, sizeof(last));
	lp_fmt_duration(end - start, kept, sizeof(kept));
	lp_fmt_duration(start - r->base_ns, from, sizeof(from));
	lp_fmt_duration(end - r->base_ns, to, sizeof(to));
	fmt_option_size(b->max_bytes, size, sizeof(size));
	if (b->st.inner_left_out)
		snprintf(slices, sizeof(slices), " and %" PRIu64 " off-CPU slices of theirs",
			 b->st.inner_left_out);
	if (b->last_ns && b->st.cut)
		fprintf(out,
			"Trace kept: the spans that ended in the last %s only (from %s to %s of the "
			"recording), not %s: the window passed the trace's memory bound, "
			"--trace-max-size %s; %" PRIu64 " spans, %" PRIu64
			" left out%s (the table has them all)\n",
			kept, from, to, last, size, b->st.spans, b->st.spans_left_out, slices);
	else if (b->last_ns)
		fprintf(out,
			"Trace kept: the spans that ended in the last %s (from %s to %s of the "
			"recording), %" PRIu64 "; %" PRIu64 " left out%s (the table has them all)\n",
			last, from, to, b->st.spans, b->st.spans_left_out, slices);
	else if (b->st.full)
		fprintf(out,
			"Trace kept: the first %" PRIu64 " spans, until the trace was full at "
			"--trace-max-size %s, %s into the recording; %" PRIu64
			" that closed later left out%s (the table has them all)\n",
			b->st.spans, size, to, b->st.spans_left_out, slices);
	else
		fprintf(out, "Trace kept: every span, %" PRIu64 ", within --trace-max-size %s\n",
			b->st.spans, size);
}

/*
 * The table's columns after Name. Each is at least the seed's width and
 * widens, for every row alike, when a cell or its header needs more: a
 * million calls or hours of self time never run into the next column.
 */
enum { COL_SELF, COL_TOTAL, COL_CALLS, COL_MEAN, COL_P95, COL_COUNTER, COL_PCT, COL_CPU,
       COL_STEAL, COL_RUNQ, COL_BLOCKED, NCOLS };

#define LP_CELL_MAX 48

static const struct {
	const char *head;
	int width; /* the seed's; a cell keeps a space before it, a header two */
} cols[NCOLS] = {
	[COL_SELF] = { "Self", 10 },    [COL_TOTAL] = { "Total", 11 }, [COL_CALLS] = { "Calls", 7 },
	[COL_MEAN] = { "Mean", 10 },    [COL_P95] = { "P95", 10 },     [COL_COUNTER] = { NULL, 9 },
	[COL_PCT] = { "%", 7 },         [COL_CPU] = { "CPU%", 7 },     [COL_STEAL] = { "Steal", 10 },
	[COL_RUNQ] = { "Runq", 10 },    [COL_BLOCKED] = { "Blocked", 10 },
};

struct table {
	bool counter;              /* a row has a counter: its column and the header's words */
	struct lp_counter_words words;
	int width[NCOLS];          /* 0: the column is left out */
};

/* Code points of UTF-8 text: the columns a cell takes. */
static int text_cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * The first word of a name of several heads the header ("Lean heartbeats":
 * "Lean profile:"), the rest names the column ("Self heartbeats"), the seed's
 * "Self HB" for Lean's.
 */
void lp_counter_words(const char *name, struct lp_counter_words *w)
{
	struct lp_buf b = { 0 };
	const char *text = "", *rest;
	size_t len = 0, first;

	if (name && !lp_text_display(&b, name, strlen(name)) && b.p) {
		text = b.p;
		len = b.len;
	}
	first = strcspn(text, " ");
	rest = first < len ? text + first + 1 : text;
	if (first < len && first <= 16)
		snprintf(w->profile, sizeof(w->profile), "%c%.*s profile:",
			 text[0] >= 'a' && text[0] <= 'z' ? text[0] - 'a' + 'A' : text[0],
			 (int)first - 1, text + 1);
	else
		snprintf(w->profile, sizeof(w->profile), "Profile:");
	if (name && !strcmp(name, "Lean heartbeats")) {
		snprintf(w->column, sizeof(w->column), "Self HB");
	} else {
		memcpy(w->column, "Self ", 5);
		lp_fit_columns(rest, len - (size_t)(rest - text), LP_COUNTER_LABEL_COLS - 5, false,
			       w->column + 5, sizeof(w->column) - 5);
	}
	lp_buf_free(&b);
}

/* A row's cells, every column's (the left-out ones too). */
static void row_cells(const struct lp_report *r, struct lp_group *g,
		      char cell[NCOLS][LP_CELL_MAX])
{
	const struct lp_nest_totals *t = r->totals;

	lp_fmt_duration(g->self_ns, cell[COL_SELF], LP_CELL_MAX);
	lp_fmt_duration(g->total_ns, cell[COL_TOTAL], LP_CELL_MAX);
	snprintf(cell[COL_CALLS], LP_CELL_MAX, "%" PRIu64, g->calls);
	lp_fmt_duration(g->calls ? g->total_ns / g->calls : 0, cell[COL_MEAN], LP_CELL_MAX);
	cell[COL_P95][0] = '~';
	lp_fmt_duration(lp_group_p95(g), cell[COL_P95] + !lp_group_p95_exact(g), LP_CELL_MAX - 1);
	if (g->counter_calls)
		snprintf(cell[COL_COUNTER], LP_CELL_MAX, "%" PRIu64, g->counter_self);
	else
		snprintf(cell[COL_COUNTER], LP_CELL_MAX, "-");
	if (t->recorded_ns)
		snprintf(cell[COL_PCT], LP_CELL_MAX, "%.1f%%",
			 100.0 * (double)g->self_ns / (double)t->recorded_ns);
	else
		snprintf(cell[COL_PCT], LP_CELL_MAX, "-");
	/*
	 * --off-cpu's columns: the share of the row's time on a CPU, and its
	 * time the hypervisor took, waiting for a CPU and blocked; "-" for a row
	 * nothing of which was split.
	 */
	snprintf(cell[COL_CPU], LP_CELL_MAX, "-");
	snprintf(cell[COL_STEAL], LP_CELL_MAX, "-");
	snprintf(cell[COL_RUNQ], LP_CELL_MAX, "-");
	snprintf(cell[COL_BLOCKED], LP_CELL_MAX, "-");
	if (g->unmeasured_ns < g->total_ns) {
		snprintf(cell[COL_CPU], LP_CELL_MAX, "%.1f%%",
			 100.0 * (double)g->sched.cpu_ns / (double)g->total_ns);
		lp_fmt_duration(g->sched.steal_ns, cell[COL_STEAL], LP_CELL_MAX);
		lp_fmt_duration(g->sched.runq_ns, cell[COL_RUNQ], LP_CELL_MAX);
		lp_fmt_duration(g->sched.blocked_ns, cell[COL_BLOCKED], LP_CELL_MAX);
	}
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* A row shown had time the hypervisor took: the Steal column is shown (else it is noise). */
static bool table_steal(const struct lp_report *r, size_t shown)
{
	for (size_t i = 0; i < shown; i++)
		if (r->groups[i]->sched.steal_ns)
			return true;
	return false;
}

/* Which columns, how wide: from the rows shown, their headers, the seed's widths. */
static void table_layout(const struct lp_report *r, size_t shown, struct table *t)
{
	char cell[NCOLS][LP_CELL_MAX];

	memset(t, 0, sizeof(*t));
	/* A marker passed a counter: in the totals (rows a view left out too), or a row's. */
	t->counter = r->totals->counter_total != 0;
	for (size_t i = 0; i < r->ngroups && !t->counter; i++)
		t->counter = r->groups[i]->counter_calls != 0;
	lp_counter_words(t->counter ? r->counter_name : NULL, &t->words);
	for (int c = 0; c < NCOLS; c++) {
		const char *head = c == COL_COUNTER ? t->words.column : cols[c].head;

		t->width[c] = max_int(cols[c].width, text_cols(head) + 2);
	}
	if (!t->counter)
		t->width[COL_COUNTER] = 0;
	if (!r->off_cpu)
		t->width[COL_CPU] = t->width[COL_RUNQ] = t->width[COL_BLOCKED] = 0;
	if (!r->off_cpu || !table_steal(r, shown))
		t->width[COL_STEAL] = 0;
	for (size_t i = 0; i < shown; i++) {
		row_cells(r, r->groups[i], cell);
		for (int c = 0; c < NCOLS; c++)
			if (t->width[c])
				t->width[c] = max_int(t->width[c], (int)strlen(cell[c]) + 1);
	}
}

/* Cells right-aligned in their columns from column `from` on (ASCII but a counter's header). */
static void put_cells(FILE *out, const struct table *t, const char *const cell[NCOLS], int from)
{
	for (int c = from; c < NCOLS; c++)
		if (t->width[c])
			fprintf(out, "%*s%s", t->width[c] - text_cols(cell[c]), "", cell[c]);
}

/*
 * Says where every unterminated span was closed (the four add up to the count;
 * a summary written before they were counted has none of them).
 */
static void unterminated_line(FILE *out, const struct lp_nest_totals *t)
{
	fprintf(out, "Unterminated spans: %" PRIu64, t->unterminated);
	if (t->unterminated_outer + t->unterminated_pairs + t->unterminated_thread +
	    t->unterminated_end)
		fprintf(out,
			" (%" PRIu64 " closed by the exit of a span around them, %" PRIu64
			" given up by span pairs, %" PRIu64 " at their thread's end, %" PRIu64
			" open when the recording ended)",
			t->unterminated_outer, t->unterminated_pairs, t->unterminated_thread,
			t->unterminated_end);
	fprintf(out,
		", started before recording: %" PRIu64 ", exits without an open span: %" PRIu64
		", enters past depth %d: %" PRIu64 "\n",
		t->started_before, t->unmatched_exits, LP_NEST_MAX_DEPTH, t->too_deep);
}

/*
 * The header row: the seed's own while the columns are the seed's (its
 * "Self" and "Total" stand 4 and 2 columns left of their figures, which
 * users' scripts and the reference run know), else every header over its
 * figures.
 */
static void table_header(FILE *out, const struct table *t, size_t name_cols)
{
	static const char seed[] = "Name                                      Self       Total  Calls"
				   "      Mean       P95  Self HB      %";
	const char *head[NCOLS];
	char name[LP_TABLE_NAME_COLS + 1];
	bool as_seed = t->counter && !strcmp(t->words.column, "Self HB") &&
		       name_cols == LP_TABLE_NAME_COLS;

	for (int c = 0; c <= COL_PCT; c++)
		as_seed = as_seed && t->width[c] == cols[c].width;
	for (int c = 0; c < NCOLS; c++)
		head[c] = c == COL_COUNTER ? t->words.column : cols[c].head;
	if (as_seed) {
		fputs(seed, out);
	} else {
		snprintf(name, sizeof(name), "%-*s", (int)name_cols, "Name");
		fputs(name, out);
	}
	put_cells(out, t, head, as_seed ? COL_PCT + 1 : 0);
	fputc('\n', out);
}

/* The header row and the rows shown, the Name column name_cols wide. */
static void table_body(FILE *out, const struct lp_report *r, size_t shown, const struct table *tab,
		       size_t name_cols)
{
	char name[LP_TABLE_NAME_COLS * 4 + 8];

	table_header(out, tab, name_cols);
	for (size_t i = 0; i < shown; i++) {
		struct lp_group *g = r->groups[i];
		char cell[NCOLS][LP_CELL_MAX], notes[128];
		const char *cells[NCOLS];

		name_cell(r, g, name_cols, name, sizeof(name));
		row_cells(r, g, cell);
		for (int k = 0; k < NCOLS; k++)
			cells[k] = cell[k];
		/* An uncertain row's self time may be wrong: say so on the row. */
		row_notes(g, notes, sizeof(notes));
		fputs(name, out);
		put_cells(out, tab, cells, 0);
		fprintf(out, "%s\n", notes);
	}
}

void lp_report_table(FILE *out, const struct lp_report *r)
{
	const struct lp_nest_totals *t = r->totals;
	uint64_t window = t->spans ? t->last_ns - t->first_ns : 0;
	size_t shown = r->table_rows && r->table_rows < r->ngroups ? r->table_rows : r->ngroups;
	char a[32], b[32], c[32];
	struct table tab;

	lp_fmt_duration(window, a, sizeof(a));
	lp_fmt_duration(t->recorded_ns, b, sizeof(b));
	table_layout(r, shown, &tab);
	fprintf(out, "%s %" PRIu64 " events, %" PRIu32 " threads, window %s,\n", tab.words.profile,
		t->spans, t->threads, a);
	if (tab.counter)
		fprintf(out, "recorded thread time %s, %" PRIu64 " %s\n", b, t->counter_total,
			r->counter_name);
	else
		fprintf(out, "recorded thread time %s\n", b);
	if (r->res.valid) {
		if (r->res.has_peak_rss)
			snprintf(c, sizeof(c), "%" PRIu64 " KiB", r->res.peak_rss_kib);
		else
			snprintf(c, sizeof(c), "not measured");
		fprintf(out,
			"Process resources%s: user CPU %" PRIu64 " ms, system CPU %" PRIu64
			" ms, peak RSS %s, context switches %" PRIu64 "\n",
			resources_scope(r), r->res.user_ns / 1000000, r->res.system_ns / 1000000, c,
			r->res.voluntary_switches + r->res.involuntary_switches);
	} else
		fprintf(out, "Process resources: not measured for %s\n",
			r->mode == LP_MODE_ALL ? "--all-processes"
								    : "this recording");
	if (r->self.valid && r->show_self) {
		fprintf(out,
			"Profiler: user CPU %" PRIu64 " ms, system CPU %" PRIu64
			" ms, peak RSS %" PRIu64 " KiB",
			r->self.user_ns / 1000000, r->self.system_ns / 1000000, r->self.peak_rss_kib);
		if (r->bpf_runs)
			fprintf(out, ", BPF %" PRIu64 " ns per event", r->bpf_run_ns / r->bpf_runs);
		if (r->follow.pauses)
			fprintf(out,
				", paused for new files %" PRIu64 " time%s (%" PRIu64
				" us in all, at most %" PRIu64 " us)",
				r->follow.pauses, r->follow.pauses > 1 ? "s" : "",
				r->follow.pause_total_ns / 1000, r->follow.pause_max_ns / 1000);
		fputc('\n', out);
	}
	if (approximate_rows(r))
		fprintf(out,
			"P95 marked ~ comes from a histogram (within %.1f%%): a row keeps at most "
			"%d durations with --summary-only, a folded row always\n",
			100.0 * LP_HIST_REL_ERROR, LP_SUMMARY_ONLY_DURATIONS);
	if (r->pairs && (r->pairs->unmatched_keyed || r->pairs->too_many_tracks ||
			 r->pairs->too_deep || r->pairs->bad_spec || r->pairs->bad_tid))
		fprintf(out,
			"Span pairs: %" PRIu64 " keyed exits without an open span, %" PRIu64
			" entries past %d tracks, %" PRIu64 " past depth %d, %" PRIu64
			" malformed records\n",
			r->pairs->unmatched_keyed, r->pairs->too_many_tracks, LP_PAIRS_MAX_TRACKS,
			r->pairs->too_deep, LP_PAIRS_MAX_OPEN, r->pairs->bad_spec + r->pairs->bad_tid);
	if (r->pairs && r->pairs->sites_skipped)
		fprintf(out,
			"Span pairs: %" PRIu64 " probe site%s not attached (arguments libbpf cannot "
			"decode, or fewer than the spec uses) while the probe's other sites were: "
			"'record -v' says which\n",
			r->pairs->sites_skipped, r->pairs->sites_skipped > 1 ? "s" : "");
	if (r->pairs && (r->pairs->unwound || r->pairs->aborted || r->pairs->reentry_closed ||
			 r->pairs->enclosed))
		fprintf(out,
			"Span pairs: %" PRIu64 " spans closed unterminated by an enclosing exit of "
			"their name (match=name: their own exits never fired), %" PRIu64
			" given up at an abort= probe, %" PRIu64 " closed by a reentry=close entry, %" PRIu64
			" closed with a span of another spec around them\n",
			r->pairs->unwound, r->pairs->aborted, r->pairs->reentry_closed,
			r->pairs->enclosed);
	if (lost_total(&r->loss))
		fprintf(out,
			"Lost: %" PRIu64 " events (%" PRIu64 " entries, %" PRIu64
			" exits): the ring buffer was full; affected spans are marked uncertain. "
			"Try a larger --buffer-size.\n",
			lost_total(&r->loss), r->loss.enter, r->loss.exit);
	if (t->unterminated || t->unmatched_exits || t->too_deep || t->started_before)
		unterminated_line(out, t);
	input_lines(out, r);
	if (r->off_cpu)
		off_cpu_line(out, t, &r->loss);
	if (r->bound.on)
		bound_line(out, r);
	fputc('\n', out);
	table_body(out, r, shown, &tab, LP_TABLE_NAME_COLS);
	table_footer(out, r, shown);
}

size_t lp_report_figure_cols(const struct lp_report *r)
{
	size_t shown = r->table_rows && r->table_rows < r->ngroups ? r->table_rows : r->ngroups;
	struct table tab;
	size_t n = 0;

	table_layout(r, shown, &tab);
	for (int c = 0; c < NCOLS; c++)
		n += (size_t)tab.width[c];
	return n;
}

void lp_report_rows(FILE *out, const struct lp_report *r, size_t name_cols)
{
	size_t shown = r->table_rows && r->table_rows < r->ngroups ? r->table_rows : r->ngroups;
	struct table tab;

	if (name_cols < 1 || name_cols > LP_TABLE_NAME_COLS)
		name_cols = LP_TABLE_NAME_COLS;
	table_layout(r, shown, &tab);
	table_body(out, r, shown, &tab, name_cols);
}

/* Summary members: the key, then the value. */
static void key(struct jw *w, const char *k)
{
	jw_key(w, k, strlen(k));
}

/* A member of the summary's top level: on a line of its own. */
static void member(struct jw *w, const char *k)
{
	jw_break(w);
	key(w, k);
}

static void member_u64(struct jw *w, const char *k, uint64_t v)
{
	member(w, k);
	jw_u64(w, v);
}

static void put_u64(struct jw *w, const char *k, uint64_t v)
{
	key(w, k);
	jw_u64(w, v);
}

static void put_null(struct jw *w, const char *k)
{
	key(w, k);
	jw_null(w);
}

static void put_str(struct jw *w, const char *k, const char *s)
{
	key(w, k);
	jw_cstr(w, s);
}

static void put_bool(struct jw *w, const char *k, bool v)
{
	key(w, k);
	jw_bool(w, v);
}

static void put_id(struct jw *w, const char *k, const struct strtab *st, uint32_t id)
{
	size_t len;
	const char *s = strtab_str(st, id, &len);

	key(w, k);
	jw_str(w, s, len);
}

static void write_command(struct jw *w, const struct lp_report *r)
{
	key(w, "command");
	jw_arr_begin(w);
	for (char *const *a = r->argv; a && *a; a++)
		jw_cstr(w, *a);
	jw_arr_end(w);
}

static void write_loss(struct jw *w, const struct lp_report *r)
{
	key(w, "lost_events");
	jw_obj_begin(w);
	put_u64(w, "total", lost_total(&r->loss));
	put_u64(w, "enter", r->loss.enter);
	put_u64(w, "exit", r->loss.exit);
	put_u64(w, "string", r->loss.string);
	put_u64(w, "thread_record", r->loss.thread);
	put_u64(w, "no_task_storage", r->loss.no_storage);
	put_u64(w, "process_records", r->loss.task);
	put_u64(w, "off_cpu_waits", r->loss.sched);
	jw_obj_end(w);
}

/* --trace-last, --trace-max-size: what the trace kept (in the summary and the trace's otherData). */
static void write_bound(struct jw *w, const struct lp_report *r)
{
	const struct lp_report_bound *b = &r->bound;
	uint64_t start, end;

	bound_window(r, &start, &end);
	key(w, "trace_bound");
	jw_obj_begin(w);
	put_u64(w, "last_ns", b->last_ns);
	put_u64(w, "max_bytes", b->max_bytes);
	put_u64(w, "spans", b->st.spans);
	put_u64(w, "spans_left_out", b->st.spans_left_out);
	put_u64(w, "off_cpu_slices", b->st.inner);
	put_u64(w, "off_cpu_slices_left_out", b->st.inner_left_out);
	put_u64(w, "bytes", b->st.bytes);
	put_u64(w, "window_start_ns", start);
	put_u64(w, "window_end_ns", end);
	put_bool(w, "cut", b->st.cut);
	put_bool(w, "full", b->st.full);
	if (b->last_ns)
		put_u64(w, "memory_peak_bytes", b->st.peak_bytes);
	jw_obj_end(w);
}

static void write_recording(struct jw *w, const struct lp_report *r)
{
	member(w, "recording");
	jw_obj_begin(w);
	put_u64(w, "start_ns", r->base_ns);
	put_u64(w, "end_ns", r->end_ns);
	if (r->start_unix_ns)
		put_u64(w, "start_unix_ns", r->start_unix_ns);
	put_str(w, "end_reason", lp_end_reason_name(r->end_reason));
	jw_obj_end(w);
	if (!r->window)
		return;
	member(w, "window");
	jw_obj_begin(w);
	put_u64(w, "index", r->window->index);
	put_u64(w, "start_ns", r->window->start_ns);
	put_u64(w, "end_ns", r->window->end_ns);
	put_u64(w, "length_ns", r->window->end_ns - r->window->start_ns);
	if (r->window->start_unix_ns)
		put_u64(w, "start_unix_ns", r->window->start_unix_ns);
	put_u64(w, "spans_began_before", r->window->began_before);
	put_bool(w, "last", r->window->last);
	/* What the figures outside the rows and totals cover (docs/recording.md). */
	put_str(w, "resources", "cumulative");
	put_str(w, "input", "window");
	jw_obj_end(w);
}

static void write_processes(struct jw *w, const struct lp_report *r)
{
	member(w, "processes");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct lp_report_process *p = &r->procs[i];

		jw_break(w);
		jw_obj_begin(w);
		put_u64(w, "pid", p->pid);
		put_u64(w, "ppid", p->ppid);
		put_id(w, "comm", r->st, p->comm);
		put_str(w, "origin", lp_origin_name(p->origin));
		put_bool(w, "alive_at_end", p->alive);
		if (p->privileged)
			put_str(w, "left_recording", "exec of a program that gains privileges");
		jw_obj_end(w);
	}
	jw_break(w);
	jw_arr_end(w);
}

/* The header's figures and the nesting anomalies. */
static void write_totals(struct jw *w, const struct lp_report *r)
{
	const struct lp_nest_totals *t = r->totals;

	member(w, "exit_status");
	jw_i64(w, r->exit_status);
	member(w, "counter_name");
	jw_cstr(w, r->counter_name);
	member_u64(w, "events", t->spans);
	member_u64(w, "threads", t->threads);
	member_u64(w, "window_ns", t->spans ? t->last_ns - t->first_ns : 0);
	member_u64(w, "recorded_thread_time_ns", t->recorded_ns);
	member_u64(w, "counter_total", t->counter_total);
	member_u64(w, "unterminated_spans", t->unterminated);
	member(w, "unterminated_by");
	jw_obj_begin(w);
	put_u64(w, "enclosing_exit", t->unterminated_outer);
	put_u64(w, "span_pairs", t->unterminated_pairs);
	put_u64(w, "thread_end", t->unterminated_thread);
	put_u64(w, "recording_end", t->unterminated_end);
	jw_obj_end(w);
	member_u64(w, "started_before_recording", t->started_before);
	member_u64(w, "uncertain_spans", t->uncertain);
	member_u64(w, "unmatched_exits", t->unmatched_exits);
	member_u64(w, "too_deep_enters", t->too_deep);
	member_u64(w, "max_depth", LP_NEST_MAX_DEPTH);
}

static void write_input(struct jw *w, const struct lp_report *r)
{
	member(w, "events_received");
	jw_obj_begin(w);
	put_u64(w, "enter", r->enters);
	put_u64(w, "exit", r->exits);
	jw_obj_end(w);
	jw_break(w);
	write_loss(w, r);
	member_u64(w, "ring_buffer_bytes", r->buffer_bytes);
	member(w, "input");
	jw_obj_begin(w);
	put_u64(w, "malformed_records", r->malformed);
	put_u64(w, "truncated_strings", r->truncated);
	put_u64(w, "unreadable_strings", r->unreadable);
	put_u64(w, "records_received", r->records);
	put_u64(w, "strings_from_file", r->from_file);
	put_u64(w, "unknown_literals", r->unknown_literal);
	put_u64(w, "abi_mismatch_events", r->abi_mismatch);
	jw_obj_end(w);
}

/* The resources of the targets ("resources") and of leanprofiler ("profiler"). */
static void write_usage(struct jw *w, const struct lp_report *r)
{
	member(w, "resources");
	jw_obj_begin(w);
	put_bool(w, "available", r->res.valid);
	if (r->res.valid) {
		put_str(w, "scope", r->res.scope);
		put_u64(w, "user_cpu_ns", r->res.user_ns);
		put_u64(w, "system_cpu_ns", r->res.system_ns);
		if (r->res.has_peak_rss)
			put_u64(w, "peak_rss_kib", r->res.peak_rss_kib);
		else
			put_null(w, "peak_rss_kib");
		put_u64(w, "voluntary_context_switches", r->res.voluntary_switches);
		put_u64(w, "involuntary_context_switches", r->res.involuntary_switches);
		put_bool(w, "until_exit", r->res.exited);
	}
	jw_obj_end(w);
	member(w, "profiler");
	jw_obj_begin(w);
	put_bool(w, "available", r->self.valid);
	if (r->self.valid) {
		put_u64(w, "user_cpu_ns", r->self.user_ns);
		put_u64(w, "system_cpu_ns", r->self.system_ns);
		put_u64(w, "peak_rss_kib", r->self.peak_rss_kib);
		put_u64(w, "end_to_figures_ns", r->finish_ns);
		put_u64(w, "setup_ns", r->phases.setup_ns);
		put_u64(w, "open_ns", r->phases.open_ns);
		put_u64(w, "load_ns", r->phases.load_ns);
		put_u64(w, "attach_ns", r->phases.attach_ns);
		put_u64(w, "start_to_first_event_ns", r->phases.first_event_ns);
	}
	if (r->bpf_runs) {
		put_u64(w, "bpf_program_runs", r->bpf_runs);
		put_u64(w, "bpf_program_run_time_ns", r->bpf_run_ns);
	}
	put_u64(w, "processes_paused", r->follow.pauses);
	put_u64(w, "paused_total_ns", r->follow.pause_total_ns);
	put_u64(w, "paused_max_ns", r->follow.pause_max_ns);
	put_u64(w, "files_attached_late", r->follow.late_files);
	put_u64(w, "files_deferred", r->follow.deferred_files);
	put_u64(w, "probe_sites", r->probe_sites);
	put_u64(w, "probe_links", r->probe_links);
	put_bool(w, "pid_filtered", r->pid_filtered);
	jw_obj_end(w);
}

static void write_span_pairs(struct jw *w, const struct lp_report *r)
{
	if (!r->pairs)
		return;
	member(w, "span_pairs");
	jw_obj_begin(w);
	put_u64(w, "specs", r->nspecs);
	put_u64(w, "reentry_closed", r->pairs->reentry_closed);
	put_u64(w, "unwound", r->pairs->unwound);
	put_u64(w, "aborted", r->pairs->aborted);
	put_u64(w, "enclosed", r->pairs->enclosed);
	put_u64(w, "continued", r->pairs->continued);
	put_u64(w, "filtered", r->pairs->filtered);
	put_u64(w, "unmatched_keyed_exits", r->pairs->unmatched_keyed);
	put_u64(w, "too_many_tracks", r->pairs->too_many_tracks);
	put_u64(w, "too_deep_entries", r->pairs->too_deep);
	put_u64(w, "malformed_records", r->pairs->bad_spec + r->pairs->bad_tid);
	put_u64(w, "sites_skipped", r->pairs->sites_skipped);
	jw_obj_end(w);
}

static void write_groups(struct jw *w, const struct lp_report *r)
{
	member(w, "groups");
	jw_obj_begin(w);
	put_u64(w, "max", r->fold.max);
	put_u64(w, "kept", r->fold.kept);
	put_u64(w, "overflow_rows", r->fold.overflow_rows);
	put_u64(w, "folded_spans", r->fold.folded_spans);
	put_u64(w, "folded_distinct_estimate", r->fold.folded_distinct);
	jw_obj_end(w);
}

/*
 * A row's name, meta_text and meta. An overflow row's texts are ours, and
 * its "folded" member, not its text, tells it from a row the target named so.
 */
static void write_row_names(struct jw *w, const struct strtab *st, const struct lp_group *g)
{
	size_t len = 0;
	const char *meta = g->meta == LP_META_UNKNOWN ? "" : strtab_str(st, g->meta, &len);

	if (g->overflow == LP_OVERFLOW_NAME)
		put_str(w, "name", LP_OVERFLOW_NAME_TEXT);
	else
		put_id(w, "name", st, g->name);
	/* Spans that began before recording: their metadata is not known, not empty. */
	if (g->meta == LP_META_UNKNOWN && !g->overflow) {
		put_null(w, "meta_text");
		put_null(w, "meta");
		return;
	}
	if (g->overflow == LP_OVERFLOW_META)
		put_str(w, "meta_text", LP_OVERFLOW_META_TEXT);
	else
		put_id(w, "meta_text", st, g->meta);
	key(w, "meta");
	jw_obj_begin(w);
	if (!g->overflow)
		lp_meta_write(w, meta, len, NULL);
	jw_obj_end(w);
}

static void write_folded(struct jw *w, const struct lp_group *g)
{
	key(w, "folded");
	if (!g->overflow) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	put_str(w, "kind", g->overflow == LP_OVERFLOW_META ? "metadata" : "names");
	put_u64(w, "distinct_estimate", lp_group_folded_distinct(g));
	jw_obj_end(w);
}

static void write_buckets(struct jw *w, const char *k, const struct lp_shist *h)
{
	key(w, k);
	jw_arr_begin(w);
	for (uint32_t i = 0; i < h->n; i++) {
		jw_arr_begin(w);
		jw_u64(w, h->b[i].index);
		jw_u64(w, h->b[i].count);
		jw_arr_end(w);
	}
	jw_arr_end(w);
}

/*
 * The row's calls bucketed (lp_hist_index()), by duration and by self time:
 * {"sub_bits":7,"buckets":[[index,count],...],"self_buckets":[...]}, what
 * `diff` compares call by call. null when memory ran short.
 */
static void write_hist(struct jw *w, const struct lp_group *g)
{
	struct lp_shist total = { 0 }, self = { 0 };

	key(w, "hist");
	if (lp_group_hist(g, &total) || lp_group_self_hist(g, &self)) {
		jw_null(w);
	} else {
		jw_obj_begin(w);
		put_u64(w, "sub_bits", LP_HIST_SUB_BITS);
		write_buckets(w, "buckets", &total);
		write_buckets(w, "self_buckets", &self);
		jw_obj_end(w);
	}
	lp_shist_free(&total);
	lp_shist_free(&self);
}

static void write_row(struct jw *w, const struct lp_report *r, struct lp_group *g)
{
	uint64_t recorded = r->totals->recorded_ns;

	jw_break(w);
	jw_obj_begin(w);
	write_row_names(w, r->st, g);
	put_u64(w, "calls", g->calls);
	put_u64(w, "self_ns", g->self_ns);
	put_u64(w, "total_ns", g->total_ns);
	put_u64(w, "mean_ns", g->calls ? g->total_ns / g->calls : 0);
	put_u64(w, "p95_ns", lp_group_p95(g));
	put_bool(w, "p95_exact", lp_group_p95_exact(g));
	put_u64(w, "min_ns", g->calls ? g->min_ns : 0);
	put_u64(w, "max_ns", g->max_ns);
	key(w, "self_counter");
	g->counter_calls ? jw_u64(w, g->counter_self) : jw_null(w);
	key(w, "total_counter");
	g->counter_calls ? jw_u64(w, g->counter_total) : jw_null(w);
	key(w, "self_percent");
	jw_double(w, recorded ? 100.0 * (double)g->self_ns / (double)recorded : 0.0);
	put_u64(w, "unterminated", g->unterminated);
	put_u64(w, "started_before_recording", g->started_before);
	put_u64(w, "uncertain", g->uncertain);
	if (r->off_cpu) {
		put_u64(w, "total_cpu_ns", g->sched.cpu_ns);
		put_u64(w, "total_runq_ns", g->sched.runq_ns);
		put_u64(w, "total_blocked_ns", g->sched.blocked_ns);
		put_u64(w, "total_steal_ns", g->sched.steal_ns);
		put_u64(w, "self_cpu_ns", g->self_sched.cpu_ns);
		put_u64(w, "self_runq_ns", g->self_sched.runq_ns);
		put_u64(w, "self_blocked_ns", g->self_sched.blocked_ns);
		put_u64(w, "self_steal_ns", g->self_sched.steal_ns);
		put_u64(w, "voluntary_switches", g->sched.vcsw);
		put_u64(w, "involuntary_switches", g->sched.ivcsw);
		put_u64(w, "off_cpu_unmeasured_ns", g->unmeasured_ns);
	}
	write_folded(w, g);
	write_hist(w, g);
	jw_obj_end(w);
}

/* --off-cpu: how many spans were split, and how (the rows and threads have the figures). */
static void write_off_cpu(struct jw *w, const struct lp_report *r)
{
	if (!r->off_cpu)
		return;
	member(w, "off_cpu");
	jw_obj_begin(w);
	put_u64(w, "spans_measured", r->totals->sched_measured);
	put_u64(w, "spans_partly_measured", r->totals->sched_partial);
	put_u64(w, "spans_not_measured", r->totals->sched_unmeasured);
	/* Where steal came from: "kvm" (the paravirt steal clock), "none" (it stays in cpu). */
	put_str(w, "steal_clock", r->steal_clock ? "kvm" : "none");
	jw_obj_end(w);
}

static void write_threads(struct jw *w, const struct lp_report *r)
{
	member(w, "thread_list");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct lp_report_thread *th = &r->threads[i];

		jw_break(w);
		jw_obj_begin(w);
		put_u64(w, "pid", th->pid);
		put_u64(w, "tid", th->tid);
		put_id(w, "name", r->st, th->name);
		put_u64(w, "spans", th->spans);
		put_u64(w, "recorded_ns", th->recorded_ns);
		put_u64(w, "lost_events", th->lost);
		put_u64(w, "max_depth", th->max_depth);
		if (r->off_cpu) {
			put_u64(w, "cpu_ns", th->sched.cpu_ns);
			put_u64(w, "runq_ns", th->sched.runq_ns);
			put_u64(w, "blocked_ns", th->sched.blocked_ns);
			put_u64(w, "steal_ns", th->sched.steal_ns);
			put_u64(w, "voluntary_switches", th->sched.vcsw);
			put_u64(w, "involuntary_switches", th->sched.ivcsw);
		}
		jw_obj_end(w);
	}
	jw_break(w);
	jw_arr_end(w);
}

int lp_report_summary_json(FILE *f, const struct lp_report *r)
{
	struct jw w;
	int err;

	errno = 0; /* a failed write of f's leaves its reason there (ENOSPC...) */
	jw_init(&w, f);
	jw_obj_begin(&w);
	member(&w, "schema");
	jw_cstr(&w, LP_SUMMARY_SCHEMA);
	jw_break(&w);
	write_command(&w, r);
	member(&w, "mode");
	jw_cstr(&w, lp_mode_name(r->mode));
	if (r->binary) {
		member(&w, "binary");
		jw_cstr(&w, r->binary);
	}
	member(&w, "pid");
	jw_i64(&w, r->pid);
	write_recording(&w, r);
	write_processes(&w, r);
	write_totals(&w, r);
	write_input(&w, r);
	write_usage(&w, r);
	write_span_pairs(&w, r);
	write_groups(&w, r);
	write_off_cpu(&w, r);
	if (r->bound.on) {
		jw_break(&w);
		write_bound(&w, r);
	}
	member(&w, "rows");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->ngroups; i++)
		write_row(&w, r, r->groups[i]);
	jw_break(&w);
	jw_arr_end(&w);
	write_threads(&w, r);
	member(&w, "files");
	jw_obj_begin(&w);
	if (r->trace_path)
		put_str(&w, "trace", r->trace_path);
	jw_obj_end(&w);
	/* What the table showed that no figure says: `report` prints the same table. */
	member(&w, "table");
	jw_obj_begin(&w);
	put_bool(&w, "profiler_line", r->self.valid && r->show_self);
	put_u64(&w, "rows", r->table_rows);
	jw_obj_end(&w);
	if (r->paths) {
		member(&w, "paths");
		err = lp_paths_write(r->paths, r->st, &w);
		if (err)
			return err;
	}
	jw_break(&w);
	jw_obj_end(&w);
	jw_newline(&w);
	err = jw_error(&w);
	return err == -EIO && errno ? -errno : err;
}

char *lp_report_other_data_json(const struct lp_report *r)
{
	struct lp_buf b = { 0 };
	struct jw w;

	jw_init_buf(&w, &b);
	jw_obj_begin(&w);
	put_str(&w, "generator", "leanprofiler");
	write_command(&w, r);
	put_str(&w, "clock", "CLOCK_MONOTONIC");
	put_u64(&w, "base_ns", r->base_ns);
	write_loss(&w, r);
	put_u64(&w, "end_ns", r->end_ns);
	put_u64(&w, "unterminated_spans", r->totals->unterminated);
	put_u64(&w, "started_before_recording", r->totals->started_before);
	put_u64(&w, "uncertain_spans", r->totals->uncertain);
	put_bool(&w, "off_cpu", r->off_cpu);
	if (r->bound.on)
		write_bound(&w, r);
	jw_obj_end(&w);
	if (jw_error(&w) || lp_buf_putc(&b, '\0')) {
		lp_buf_free(&b);
		errno = ENOMEM;
		return NULL;
	}
	return b.p;
}
