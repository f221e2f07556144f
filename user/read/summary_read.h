/* SPDX-License-Identifier: MIT */
/*
 * A recording read back from its summary JSON, for `report` and `diff`: the
 * struct lp_report that record printed its table from, rebuilt, plus what the
 * other views need (per-row histograms, the call paths). The file is
 * untrusted input: every field is checked, and a file that is not a summary
 * this version reads is refused with one line saying why.
 */
#ifndef LP_SUMMARY_READ_H
#define LP_SUMMARY_READ_H

#include "paths.h"
#include "report.h"

#define LP_SUMMARY_FILE "leanprofiler-summary.json"
#define LP_TRACE_FILE "leanprofiler-trace.json"
/*
 * What reading a summary may cost. json-c holds the whole file as objects:
 * 70 to 150 bytes a value (a number, an empty array), whatever few bytes of
 * text the value took, so that a crafted file of small values cost 36x its
 * size (25 MB of "0," took 911 MB). The values are counted before parsing
 * (lp_json_values, an array or object as two) and a file of more is refused:
 * the objects stay within ~0.6 GB, about half the largest documented real recording's cost (a 98 MB summary of
 * 168k rows, 1.1 GiB). Real summaries take 15-35 bytes a value: the 1M-names,
 * 500-byte-metadata recording of test_record (--max-groups 10000) is 16 MB
 * and 457k values. LEANPROFILER_SUMMARY_MAX_VALUES raises it for a recording
 * with a larger --max-groups whose summary is past it.
 */
#define LP_SUMMARY_FILE_MAX (256u << 20)
#define LP_SUMMARY_VALUES_MAX (8u << 20)
#define LP_SUMMARY_VALUES_ENV "LEANPROFILER_SUMMARY_MAX_VALUES"

/*
 * The JSON values of text, counted without parsing it (every ',' and ':'
 * outside strings, every '[' and '{' twice: json-c's array or object costs
 * about twice a number's ~75 bytes; and one), stopping past max.
 */
size_t lp_json_values(const char *text, size_t len, size_t max);
/* LP_SUMMARY_VALUES_MAX, or what LP_SUMMARY_VALUES_ENV says (a number from 1). */
size_t lp_summary_values_max(void);

/* A row with what `diff` compares besides the table's figures. */
struct lp_summary_row {
	struct lp_group g; /* name and meta are ids of the summary's strtab; self_hist filled */
	struct lp_shist hist; /* call durations (inclusive), bucketed */
	bool has_hist;        /* false: the summary has none (written before it existed) */
};

struct lp_summary {
	char *path; /* the summary file read */
	struct strtab *st;
	struct lp_report rep; /* lp_report_table(out, &rep) prints the table record printed */
	struct lp_nest_totals totals;
	struct lp_summary_row *rows;
	struct lp_group **groups; /* the rows' groups in table order: rep.groups */
	size_t nrows;
	struct lp_report_thread *threads;
	struct lp_pairs_stats pairs;
	bool has_paths;
	uint64_t paths_max, paths_kept, folded_spans;
	struct lp_path_node *nodes; /* pre-order, depth filled in */
	size_t nnodes;
};

/*
 * Reads the recording at arg: a directory holding leanprofiler-summary.json,
 * that file, or the trace next to it. 0, or -errno after saying what is wrong
 * on stderr in one line (-ENOENT: nothing there, -EINVAL: not a summary this
 * version reads, -EFBIG, -ENOMEM, or the error reading it); s is then empty.
 */
int lp_summary_read(const char *arg, struct lp_summary *s);
/*
 * The same from text in memory, saying nothing: on failure (-EINVAL, -EFBIG,
 * -ENOMEM) problem holds what is wrong, e.g. "rows[3].calls is negative".
 * file is kept as s->path.
 */
#define LP_SUMMARY_PROBLEM_MAX 256
int lp_summary_parse(const char *text, size_t len, const char *file, struct lp_summary *s,
		     char *problem, size_t size);
/* The same, and the parsed JSON in *root (the caller puts it) when it is read. */
int lp_summary_parse_json(const char *text, size_t len, const char *file, struct lp_summary *s,
			  char *problem, size_t size, json_object **root);
void lp_summary_free(struct lp_summary *s);
/*
 * The bytes of the summary of arg (as lp_summary_read finds it), NUL-terminated,
 * and its path; the caller frees both. 0, or -errno after saying why in one line.
 */
int lp_summary_text(const char *arg, char **path, char **text, size_t *len);

#endif
