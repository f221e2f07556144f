// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "pictures.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"
#include "pftrace.h"
#include "pftrace_read.h"
#include "summary_read.h"
#include "svg.h"

/* ---- options ---- */

enum { OPT_SVG = 2000, OPT_HTML };

static const struct argp_option options[] = {
	{ "svg", OPT_SVG, "DIR", 0,
	  "Write timeline.svg (the spans per thread over time) and rows.svg (inclusive and self "
	  "time per row) into DIR (made if missing)", 0 },
	{ "html", OPT_HTML, "FILE", 0,
	  "Write one self-contained page: the header, the rows (sortable), the timeline (wheel "
	  "zooms, drag pans, hover tells), inclusive and self time per row, a flame graph", 0 },
	{ 0 },
};

error_t lp_pictures_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct lp_pictures_opts *o = state->input;

	switch (key) {
	case OPT_SVG:
		if (!*arg)
			return lp_usage_error(state, "--svg needs a directory");
		o->svg_dir = arg;
		return 0;
	case OPT_HTML:
		if (!*arg)
			return lp_usage_error(state, "--html needs a file");
		o->html_path = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

const struct argp lp_pictures_argp = { options, lp_pictures_parse_opt, NULL, NULL,
				       NULL, NULL, NULL };

bool lp_pictures_wanted(const struct lp_pictures_opts *o)
{
	return o->svg_dir || o->html_path;
}

/* ---- the summary ---- */

json_object *lp_sum_obj(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

uint64_t lp_sum_u64(json_object *o, const char *key)
{
	json_object *v = lp_sum_obj(o, key);

	if (!v || !json_object_is_type(v, json_type_int))
		return 0;
	return json_object_get_int64(v) < 0 ? 0 : json_object_get_uint64(v);
}

const char *lp_sum_str(json_object *o, const char *key)
{
	json_object *v = lp_sum_obj(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static int load_rows(struct lp_recording *r)
{
	json_object *rows = lp_sum_obj(r->summary, "rows");
	size_t n = rows && json_object_is_type(rows, json_type_array) ? json_object_array_length(rows)
									: 0;
	bool counter = lp_sum_u64(r->summary, "counter_total") != 0;

	r->rows = calloc(n ? n : 1, sizeof(*r->rows));
	if (!r->rows) {
		lp_err("cannot read %s: out of memory", r->summary_path);
		return -ENOMEM;
	}
	r->off_cpu = json_object_is_type(lp_sum_obj(r->summary, "off_cpu"), json_type_object);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(rows, i);
		struct lp_pic_row *w = &r->rows[r->nrows];
		json_object *sc = lp_sum_obj(o, "self_counter");

		if (!o || !json_object_is_type(o, json_type_object))
			continue;
		w->name = lp_sum_str(o, "name");
		w->meta_text = lp_sum_str(o, "meta_text");
		w->meta = lp_sum_obj(o, "meta");
		w->calls = lp_sum_u64(o, "calls");
		w->self_ns = lp_sum_u64(o, "self_ns");
		w->total_ns = lp_sum_u64(o, "total_ns");
		w->mean_ns = lp_sum_u64(o, "mean_ns");
		w->p95_ns = lp_sum_u64(o, "p95_ns");
		w->p95_exact = json_object_get_boolean(lp_sum_obj(o, "p95_exact"));
		w->has_counter = sc && json_object_is_type(sc, json_type_int);
		w->self_counter = lp_sum_u64(o, "self_counter");
		w->total_counter = lp_sum_u64(o, "total_counter");
		w->self_percent = json_object_get_double(lp_sum_obj(o, "self_percent"));
		w->has_split = r->off_cpu;
		w->cpu_ns = lp_sum_u64(o, "total_cpu_ns");
		w->runq_ns = lp_sum_u64(o, "total_runq_ns");
		w->blocked_ns = lp_sum_u64(o, "total_blocked_ns");
		w->steal_ns = lp_sum_u64(o, "total_steal_ns"); /* 0 when absent (older summaries) */
		counter |= w->has_counter;
		r->nrows++;
	}
	if (counter) {
		json_object *name = lp_sum_obj(r->summary, "counter_name");

		/* As report reads it: a summary without the name is of Lean's. */
		r->counter_name = name && json_object_is_type(name, json_type_string)
					  ? json_object_get_string(name)
					  : "Lean heartbeats";
	}
	return 0;
}

/* The summary's call paths, when it has them: checked whole before any is taken. */
static int load_paths(struct lp_recording *r)
{
	json_object *nodes = lp_sum_obj(lp_sum_obj(r->summary, "paths"), "nodes");
	size_t n;

	if (!nodes || !json_object_is_type(nodes, json_type_array))
		return 0;
	n = json_object_array_length(nodes);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(nodes, i);
		int64_t parent = json_object_get_int64(lp_sum_obj(o, "parent"));

		if (!o || parent < -1 || parent >= (int64_t)i ||
		    !json_object_is_type(lp_sum_obj(o, "name"), json_type_string)) {
			lp_warn("%s: paths.nodes[%zu] is not a node in pre-order: the flame graph "
				"is built from the trace", r->summary_path, i);
			return 0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(nodes, i);
		json_object *name = lp_sum_obj(o, "name");
		int err = lp_picture_path(&r->pic, json_object_get_int64(lp_sum_obj(o, "parent")),
					  json_object_get_string(name),
					  (size_t)json_object_get_string_len(name),
					  lp_sum_u64(o, "calls"), lp_sum_u64(o, "total_ns"),
					  lp_sum_u64(o, "self_ns"));

		if (err)
			return err;
	}
	return 0;
}

/* ---- finding the files ---- */

/* Whether the file at path begins as a trace does. */
static bool looks_like_trace(const char *path)
{
	char head[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, head, sizeof(head) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	head[n] = '\0';
	return strstr(head, "\"traceEvents\"") || strstr(head, "\"displayTimeUnit\"") ||
	       lp_pftrace_is(path);
}

/* The trace of a recording's directory: the JSON one, else the Perfetto one (--format perfetto). */
static int trace_in(const char *dir, char **out)
{
	char *pf;

	if (asprintf(out, "%s/%s", dir, LP_TRACE_FILE) < 0)
		return -1;
	if (access(*out, F_OK) == 0 || asprintf(&pf, "%s/%s", dir, LP_PFTRACE_FILE) < 0)
		return 0;
	if (access(pf, F_OK) == 0) {
		free(*out);
		*out = pf;
	} else {
		free(pf);
	}
	return 0;
}

static int locate(struct lp_recording *r, const char *path)
{
	struct stat st;
	char *copy, *dir;
	int n;

	if (stat(path, &st)) {
		int err = -errno;

		lp_err("cannot read the recording %s: %s", path, strerror(-err));
		return err;
	}
	copy = strdup(path);
	if (!copy) {
		lp_err("cannot read the recording %s: out of memory", path);
		return -ENOMEM;
	}
	dir = S_ISDIR(st.st_mode) ? copy : dirname(copy);
	if (S_ISDIR(st.st_mode))
		n = trace_in(dir, &r->trace_path) < 0 ||
		    asprintf(&r->summary_path, "%s/%s", dir, LP_SUMMARY_FILE) < 0;
	else if (looks_like_trace(path))
		n = !(r->trace_path = strdup(path)) ||
		    asprintf(&r->summary_path, "%s/%s", dir, LP_SUMMARY_FILE) < 0;
	else
		n = !(r->summary_path = strdup(path)) ||
		    trace_in(dir, &r->trace_path) < 0;
	free(copy);
	if (n) {
		lp_err("cannot read the recording %s: out of memory", path);
		return -ENOMEM;
	}
	return 0;
}

/* The summary's JSON, bounded as report's (LP_SUMMARY_FILE_MAX) and said in one line. */
static int load_summary(struct lp_recording *r)
{
	enum json_tokener_error jerr = json_tokener_success;
	struct json_tokener *tok;
	const char *schema;
	char *path = NULL, *text = NULL;
	size_t len = 0, max;
	int err;

	if (access(r->summary_path, F_OK)) {
		lp_err("cannot read the summary %s: %s (record writes it beside the trace)",
		       r->summary_path, strerror(errno));
		return -errno;
	}
	/* Said: too large, not a file (and registered as an input: lp_outfile). */
	err = lp_summary_text(r->summary_path, &path, &text, &len);
	free(path);
	if (err)
		return err;
	max = lp_summary_values_max();
	if (lp_json_values(text, len, max) > max) {
		free(text);
		lp_err("%s: more than %zu JSON values (LP_SUMMARY_VALUES_MAX): refused, parsing them "
		       "would cost over 0.6 GB; a real recording's (a larger --max-groups)? set "
		       LP_SUMMARY_VALUES_ENV " higher", r->summary_path, max);
		return -EFBIG;
	}
	tok = len <= INT32_MAX ? json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH) : NULL;
	if (tok) {
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		r->summary = json_tokener_parse_ex(tok, text, (int)len);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_success) {
			json_object_put(r->summary);
			r->summary = NULL;
		}
		json_tokener_free(tok);
	}
	free(text);
	if (!r->summary) {
		/* json-c's own texts: one line, no "\n" of json_util_get_last_err(). */
		lp_err("cannot read the summary %s: not JSON (%s)%s", r->summary_path,
		       !tok ? "too large or out of memory"
			    : jerr == json_tokener_continue ? "it ends early: a truncated file?"
							    : json_tokener_error_desc(jerr),
		       jerr == json_tokener_continue ? "" : "; is it a leanprofiler summary?");
		return -EINVAL;
	}
	schema = lp_sum_str(r->summary, "schema");
	if (strncmp(schema, "leanprofiler-summary/", 21)) {
		lp_err("%s is not a leanprofiler summary (schema \"%s\")", r->summary_path, schema);
		return -EINVAL;
	}
	return 0;
}

/* ---- the trace ---- */

struct reading {
	struct lp_recording *r;
	uint64_t extent_ns; /* 0 until known */
	bool scan;          /* the pass that only finds the extent */
};

static int on_other(void *ctx, json_object *other)
{
	struct reading *rd = ctx;
	uint64_t base = lp_sum_u64(other, "base_ns"), end = lp_sum_u64(other, "end_ns");

	if (!rd->extent_ns && end > base)
		rd->extent_ns = end - base;
	if (rd->scan)
		return rd->extent_ns ? -ECANCELED : 0;
	return 0;
}

static int on_span(void *ctx, const struct lp_tr_span *s)
{
	struct reading *rd = ctx;

	if (rd->scan) {
		uint64_t end = s->start_ns + s->dur_ns;

		if (end > rd->extent_ns)
			rd->extent_ns = end;
		return 0;
	}
	return lp_picture_span(&rd->r->pic, s);
}

static int on_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
		   size_t len)
{
	struct reading *rd = ctx;

	return rd->scan ? 0 : lp_picture_thread_name(&rd->r->pic, process, pid, tid, name, len);
}

static int read_trace(struct lp_recording *r, struct reading *rd)
{
	struct lp_tr_sink sink = { .other_data = on_other, .span = on_span, .thread_name = on_name,
				   .ctx = rd };
	int err = lp_read_any_trace(r->trace_path, &sink, &r->trace_stats);

	if (err == -ECANCELED)
		return 0;
	if (err == -E2BIG)
		lp_err("%s: a line longer than %u bytes (LP_TRACE_LINE_MAX): not a trace record "
		       "writes", r->trace_path, LP_TRACE_LINE_MAX);
	else if (err)
		lp_err("cannot read the trace %s: %s", r->trace_path, strerror(-err));
	return err;
}

/*
 * The time axis is the recording (the summary's, else the trace's otherData);
 * a trace without either is read once more to find it.
 */
static int extent_of(struct lp_recording *r, uint64_t *extent)
{
	json_object *rec = lp_sum_obj(r->summary, "recording");
	uint64_t start = lp_sum_u64(rec, "start_ns"), end = lp_sum_u64(rec, "end_ns");
	struct reading rd = { .r = r, .scan = true };
	int err;

	*extent = end > start ? end - start : 0;
	if (*extent || !r->has_trace)
		return 0;
	err = read_trace(r, &rd);
	*extent = rd.extent_ns;
	return err;
}

static int load_trace(struct lp_recording *r)
{
	struct reading rd = { .r = r, .extent_ns = 1 };
	int err = read_trace(r, &rd);

	if (err)
		return err;
	if (r->trace_stats.skipped)
		lp_warn("%s: %" PRIu64 " lines are not events as record writes them: left out",
			r->trace_path, r->trace_stats.skipped);
	if (r->pic.out_of_order)
		lp_warn("%s: %" PRIu64 " spans are not in the order record writes them (children "
			"before their parent): their depth may be wrong", r->trace_path,
			r->pic.out_of_order);
	return 0;
}

int lp_recording_load(struct lp_recording *r, const char *path)
{
	uint64_t extent = 0;
	int err;

	memset(r, 0, sizeof(*r));
	err = locate(r, path);
	if (!err)
		err = load_summary(r);
	if (!err)
		err = load_rows(r);
	if (err)
		return err;
	r->has_trace = access(r->trace_path, F_OK) == 0;
	r->trace_missing = !r->has_trace && lp_sum_obj(lp_sum_obj(r->summary, "files"), "trace");
	if (r->trace_missing)
		lp_warn("the summary names a trace, but %s is not there: no timeline",
			r->trace_path);
	err = extent_of(r, &extent);
	if (err)
		return err; /* said, as reading the trace's */
	err = lp_picture_init(&r->pic, extent);
	if (!err)
		err = load_paths(r);
	if (!err && r->has_trace) {
		err = load_trace(r);
		if (err)
			return err;
	}
	if (!err)
		err = lp_picture_finish(&r->pic);
	for (size_t i = 0; !err && i < r->nrows; i++)
		err = lp_colors_add(&r->colors, r->rows[i].name, strlen(r->rows[i].name));
	if (err) {
		lp_err("cannot draw %s: %s", path, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].color = lp_colors_get(&r->colors, r->rows[i].name,
						 strlen(r->rows[i].name));
	lp_picture_colors(&r->pic, &r->colors);
	return 0;
}

void lp_recording_free(struct lp_recording *r)
{
	free(r->trace_path);
	free(r->summary_path);
	free(r->rows);
	json_object_put(r->summary);
	lp_picture_free(&r->pic);
	lp_colors_free(&r->colors);
	memset(r, 0, sizeof(*r));
}

/* ---- the command ---- */

/* DIR, made if missing (not its parents: a typo should not grow a tree). */
static int open_dir(const char *path, int *fd)
{
	if (mkdir(path, 0777) && errno != EEXIST) {
		int err = -errno;

		lp_err("cannot make the directory %s: %s", path, strerror(-err));
		return err;
	}
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		int err = -errno;

		lp_err("cannot open the directory %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * `report --html r1` takes r1 for the page and the current directory for the
 * recording: when nothing is there, say how the options go instead of only
 * that ./leanprofiler-summary.json is missing.
 */
static bool no_default_recording(const struct lp_pictures_opts *o)
{
	const char *opt = o->html_path ? "--html" : "--svg";
	const char *arg = o->html_path ? o->html_path : o->svg_dir;
	const char *what = o->html_path ? "the page's FILE" : "the DIR to write into";
	struct stat st;

	if (!access("./" LP_SUMMARY_FILE, F_OK) || errno != ENOENT)
		return false;
	if (!stat(arg, &st) && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		lp_err("no recording in the current directory (no ./%s): %s takes %s, then the "
		       "recording's PATH; to draw %s: 'leanprofiler report %s %s %s'",
		       LP_SUMMARY_FILE, opt, what, arg, opt,
		       o->html_path ? "page.html" : "pictures", arg);
	else
		lp_err("no recording in the current directory (no ./%s): %s %s took '%s' as %s; "
		       "give the recording after it: 'leanprofiler report %s %s PATH'",
		       LP_SUMMARY_FILE, opt, o->html_path ? "FILE" : "DIR", arg, what, opt,
		       o->html_path ? "page.html" : "pictures");
	return true;
}

int lp_pictures_run(const struct lp_pictures_opts *o, const char *path)
{
	struct lp_recording r;
	struct stat st;
	int err, dirfd = -1;

	if (!path && no_default_recording(o))
		return -ENOENT;
	if (o->html_path && !stat(o->html_path, &st) && S_ISDIR(st.st_mode)) {
		/* `report --html r1 .`: r1 was meant as the recording, the page's name forgotten. */
		lp_err("cannot write the page %s: it is a directory; --html takes the page's FILE, "
		       "then the recording's PATH, e.g. 'leanprofiler report --html page.html %s'",
		       o->html_path, o->html_path);
		return -EISDIR;
	}
	err = lp_recording_load(&r, path ? path : ".");
	if (!err && o->svg_dir) {
		err = open_dir(o->svg_dir, &dirfd);
		if (!err)
			err = lp_svg_write(&r, dirfd, o->svg_dir);
		if (dirfd >= 0)
			close(dirfd);
	}
	if (!err && o->html_path)
		err = lp_html_write(&r, o->html_path);
	lp_recording_free(&r);
	return err;
}
