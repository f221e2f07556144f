/* SPDX-License-Identifier: MIT */
/*
 * Pictures of a recording, without root: `report --svg DIR PATH` writes
 * timeline.svg and rows.svg into DIR, `report --html FILE PATH` one
 * self-contained page. PATH is a recording's directory or either of its two
 * files. The options are an argp parser of their own (lp_pictures_argp), so
 * that `report`'s parser can take them as a child.
 */
#ifndef LP_PICTURES_H
#define LP_PICTURES_H

#include <argp.h>
#include <json-c/json.h>

#include "picture.h"

#define LP_TRACE_FILE "leanprofiler-trace.json"
#define LP_SUMMARY_FILE "leanprofiler-summary.json"

struct lp_pictures_opts {
	const char *svg_dir;   /* --svg DIR, or NULL */
	const char *html_path; /* --html FILE, or NULL */
};

/* --svg and --html; the parser's input is a struct lp_pictures_opts. */
extern const struct argp lp_pictures_argp;
error_t lp_pictures_parse_opt(int key, char *arg, struct argp_state *state);
/* Whether any picture was asked for. */
bool lp_pictures_wanted(const struct lp_pictures_opts *o);
/*
 * Writes the pictures o asks for of the recording at path (NULL: none given, the current
 * directory). 0 or -errno (said on stderr).
 */
int lp_pictures_run(const struct lp_pictures_opts *o, const char *path);

/* A row of the summary (rows[]), its texts as the summary has them. */
struct lp_pic_row {
	const char *name, *meta_text;
	json_object *meta; /* the object of metadata items: untrusted keys */
	uint64_t calls, self_ns, total_ns, mean_ns, p95_ns;
	bool p95_exact, has_counter;
	uint64_t self_counter, total_counter;
	double self_percent;
	int color;
	/* --off-cpu: the row's totals (has_split: the summary has them) */
	bool has_split;
	uint64_t cpu_ns, runq_ns, blocked_ns, steal_ns;
};

/* A recording as the pictures see it. */
struct lp_recording {
	char *trace_path;      /* NULL: no trace (--summary-only, or missing) */
	char *summary_path;
	json_object *summary;  /* the whole summary */
	struct lp_pic_row *rows;
	size_t nrows;
	bool off_cpu; /* recorded with --off-cpu: the summary has "off_cpu" */
	/*
	 * The summary's counter_name when a marker passed a counter (a row has
	 * one, or the total is not 0), as the table decides; NULL: none did.
	 */
	const char *counter_name;
	bool has_trace;
	bool trace_missing;    /* the summary names a trace that is not there */
	struct lp_tr_stats trace_stats;
	struct lp_picture pic;
	struct lp_colors colors;
};

/* Loads the summary and reads the trace into r->pic. 0 or -errno (said on stderr). */
int lp_recording_load(struct lp_recording *r, const char *path);
void lp_recording_free(struct lp_recording *r);

/* Summary members, 0 / "" / NULL when absent. */
uint64_t lp_sum_u64(json_object *o, const char *key);
const char *lp_sum_str(json_object *o, const char *key);
json_object *lp_sum_obj(json_object *o, const char *key);

#endif
