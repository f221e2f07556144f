// SPDX-License-Identifier: MIT
/*
 * record --window (window.h). The windows are top's intervals (interval.h):
 * cur is under way, next holds the spans read already that ended at or after
 * cur's end, shown is the one that just closed and is written. With a trace,
 * cur and next have a trace file each, open, and a span goes to the one of
 * the window it counts in.
 */
#define _GNU_SOURCE
#include "window.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_export.h"
#include "interval.h"
#include "recorder.h"

/* "leanprofiler-summary." + 20260106T000000.000Z + ".json" and the like. */
#define LP_WINDOW_NAME_MAX 64
#define LP_STR_(x) #x
#define LP_STR(x) LP_STR_(x)

/* The exports of the windows, one after the other, on a thread of their own. */
struct wexport {
	const char *url;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *queue[LP_WINDOW_EXPORT_QUEUE]; /* the summaries' paths, oldest at head */
	size_t head, n;
	bool stop;
	uint64_t done;   /* windows whose export ended (done or failed), in order */
	uint64_t queued; /* windows handed over */
	bool failed;
};

struct lp_windows {
	struct lp_top_interval iv;
	uint64_t window_ns, index;
	uint64_t since_unix_ns; /* the recording's start by the wall clock */
	bool trace;             /* each window's trace too */
	struct lp_trace traces[2];
	bool open[2];
	int cur; /* the slot of cur's trace; next's is the other */
	/* The figures of the recording when the window before closed: a window has the difference. */
	struct lp_loss loss_before;
	struct lp_report input_before;
	/* --keep: the windows written, by their start (ms of the wall clock), oldest first. */
	uint64_t keep;
	uint64_t *kept;
	size_t kept_head, kept_n, kept_cap;
	uint64_t first_kept_index; /* the index of kept[kept_head] */
	struct wexport ex;
	struct lp_report_thread *threads; /* the last window's thread rows */
};

static uint64_t unix_ms(const struct lp_windows *w, uint64_t mono_ns, uint64_t since)
{
	return (w->since_unix_ns + (mono_ns - since)) / 1000000u;
}

/* NAME.<UTC start>.EXT, e.g. leanprofiler-summary.20260106T101500.250Z.json. */
static void window_name(char *buf, const char *base, uint64_t ms)
{
	time_t s = (time_t)(ms / 1000u);
	struct tm tm;
	char stamp[32];

	gmtime_r(&s, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, LP_WINDOW_NAME_MAX, "leanprofiler-%s.%s.%03uZ.json", base, stamp,
		 (unsigned)(ms % 1000u));
}

/* ---- exports ---- */

static void *export_main(void *arg)
{
	struct wexport *ex = arg;
	char after[] = " (the window's files are kept; recording goes on)";

	pthread_mutex_lock(&ex->mu);
	for (;;) {
		char *path;
		int err;

		while (!ex->n && !ex->stop)
			pthread_cond_wait(&ex->cv, &ex->mu);
		if (!ex->n)
			break;
		path = ex->queue[ex->head];
		pthread_mutex_unlock(&ex->mu);
		err = lp_export_recording(ex->url, path, after);
		free(path);
		pthread_mutex_lock(&ex->mu);
		ex->queue[ex->head] = NULL;
		ex->head = (ex->head + 1) % LP_WINDOW_EXPORT_QUEUE;
		ex->n--;
		ex->done++;
		ex->failed |= err != 0;
		pthread_cond_broadcast(&ex->cv);
	}
	pthread_mutex_unlock(&ex->mu);
	return NULL;
}

static int export_start(struct wexport *ex, const char *url)
{
	int err;

	ex->url = url;
	pthread_mutex_init(&ex->mu, NULL);
	pthread_cond_init(&ex->cv, NULL);
	err = pthread_create(&ex->thread, NULL, export_main, ex);
	if (err) {
		lp_err("cannot start the thread that exports the windows: %s", strerror(err));
		return -err;
	}
	ex->started = true;
	return 0;
}

/* Hands the summary at path over to be exported; a full queue leaves it out (said). */
static void export_window(struct wexport *ex, const char *path)
{
	char *p = strdup(path);

	pthread_mutex_lock(&ex->mu);
	if (!p || ex->n == LP_WINDOW_EXPORT_QUEUE) {
		lp_warn("%s is not exported: %s; export it later with 'leanprofiler export'", path,
			p ? "the exports are " LP_STR(LP_WINDOW_EXPORT_QUEUE) " windows behind "
			    "(LP_WINDOW_EXPORT_QUEUE)" : "out of memory");
		free(p);
		ex->failed = true;
		ex->done++; /* as if it ended: --keep may remove it */
	} else {
		ex->queue[(ex->head + ex->n) % LP_WINDOW_EXPORT_QUEUE] = p;
		ex->n++;
		pthread_cond_broadcast(&ex->cv);
	}
	ex->queued++;
	pthread_mutex_unlock(&ex->mu);
}

static uint64_t export_done(struct wexport *ex)
{
	uint64_t done;

	if (!ex->started)
		return UINT64_MAX;
	pthread_mutex_lock(&ex->mu);
	done = ex->done;
	pthread_mutex_unlock(&ex->mu);
	return done;
}

/* Waits for the exports handed over (stop) and ends the thread: whether one failed. */
static bool export_stop(struct wexport *ex)
{
	bool failed;

	if (!ex->started)
		return ex->failed;
	pthread_mutex_lock(&ex->mu);
	ex->stop = true;
	pthread_cond_broadcast(&ex->cv);
	pthread_mutex_unlock(&ex->mu);
	pthread_join(ex->thread, NULL);
	ex->started = false;
	failed = ex->failed;
	for (size_t i = 0; i < LP_WINDOW_EXPORT_QUEUE; i++)
		free(ex->queue[i]);
	pthread_mutex_destroy(&ex->mu);
	pthread_cond_destroy(&ex->cv);
	return failed;
}

/* ---- --keep ---- */

static int kept_push(struct lp_windows *w, uint64_t ms)
{
	if (w->kept_n == w->kept_cap) {
		size_t cap = w->kept_cap ? 2 * w->kept_cap : 16;
		uint64_t *k = malloc(cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		for (size_t i = 0; i < w->kept_n; i++)
			k[i] = w->kept[(w->kept_head + i) % w->kept_cap];
		free(w->kept);
		w->kept = k;
		w->kept_cap = cap;
		w->kept_head = 0;
	}
	w->kept[(w->kept_head + w->kept_n) % w->kept_cap] = ms;
	w->kept_n++;
	return 0;
}

/*
 * The oldest windows past --keep go: only files this recording wrote, by
 * their names in the output directory (unlinkat removes a link, never what
 * it points to), and none still waiting for its export.
 */
static void prune(struct recorder *r, struct lp_windows *w)
{
	uint64_t exported = export_done(&w->ex);

	while (w->kept_n > w->keep && w->first_kept_index < exported) {
		uint64_t ms = w->kept[w->kept_head];
		char name[LP_WINDOW_NAME_MAX];

		window_name(name, "summary", ms);
		if (unlinkat(r->outdir.fd, name, 0) && errno != ENOENT)
			lp_warn("--keep: cannot remove %s/%s: %s", r->o->out_dir, name,
				strerror(errno));
		window_name(name, "trace", ms);
		if (w->trace && unlinkat(r->outdir.fd, name, 0) && errno != ENOENT)
			lp_warn("--keep: cannot remove %s/%s: %s", r->o->out_dir, name,
				strerror(errno));
		w->kept_head = (w->kept_head + 1) % w->kept_cap;
		w->kept_n--;
		w->first_kept_index++;
	}
}

/* ---- traces ---- */

/* The trace of the window that starts at start_ns, into slot. */
static int trace_open(struct recorder *r, struct lp_windows *w, int slot, uint64_t start_ns)
{
	char name[LP_WINDOW_NAME_MAX], *path;
	int err;

	window_name(name, "trace", unix_ms(w, start_ns, r->since));
	if (asprintf(&path, "%s/%s", r->o->out_dir, name) < 0) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	err = lp_open_output(r, NULL, &w->traces[slot], name, path);
	free(path);
	w->open[slot] = !err;
	return err;
}

static void trace_abort(struct lp_windows *w, int slot)
{
	if (w->open[slot])
		lp_trace_abort(&w->traces[slot]);
	w->open[slot] = false;
}

/* The texts a trace's prebuilt pieces stand for stay (their ids must not name another). */
static void trace_mark(struct lp_trace *t, struct strtab *st)
{
	for (size_t i = 0; i < t->names_cap; i++)
		if (t->names[i].len1)
			strtab_mark(st, (uint32_t)i);
	for (size_t i = 0; i < t->metas_cap; i++)
		if (t->metas[i].len1)
			strtab_mark(st, (uint32_t)i);
}

/* ---- a window's summary ---- */

/* The input figures of a window: the recording's less those when the window before closed. */
static void input_delta(struct lp_report *rep, struct lp_report *before, struct lp_loss *loss_before)
{
	struct lp_report now = *rep;
	struct lp_loss l = rep->loss;

#define DELTA(f) rep->f = now.f - before->f
	DELTA(records);
	DELTA(malformed);
	DELTA(truncated);
	DELTA(unreadable);
	DELTA(from_file);
	DELTA(unknown_literal);
	DELTA(abi_mismatch);
	DELTA(enters);
	DELTA(exits);
#undef DELTA
	*before = now;
	rep->loss.enter -= loss_before->enter;
	rep->loss.exit -= loss_before->exit;
	rep->loss.string -= loss_before->string;
	rep->loss.thread -= loss_before->thread;
	rep->loss.no_storage -= loss_before->no_storage;
	rep->loss.task -= loss_before->task;
	rep->loss.sched -= loss_before->sched;
	*loss_before = l;
}

/* The targets' resources from the start of recording to now (the window's end). */
static void resources_so_far(struct recorder *r, struct lp_resources *res)
{
	*res = (struct lp_resources){ 0 };
	if (r->o->mode == LP_MODE_LAUNCH && r->child.pid > 0 && !r->child.reaped) {
		if (lp_usage_running(r->child.pid, res))
			*res = (struct lp_resources){ 0 };
		res->scope = "launched command, from its start to the window's end (/proc: the "
			     "process alone, not its children)";
	} else if (r->o->mode == LP_MODE_ATTACH) {
		lp_usage_sample(&r->usage, lp_now_ns(), true);
		lp_usage_report(&r->usage, false, res);
		res->scope = "attached PID, from the start of recording to the window's end";
	}
}

/*
 * The window's threads: those of the recording with spans in it, their spans
 * and time the window's; their names into its trace.
 */
static int window_threads(struct lp_windows *w, struct lp_report *rep, struct lp_trace *t)
{
	struct lp_map *m = &w->iv.shown.threads;
	size_t n = 0;

	free(w->threads);
	w->threads = calloc(rep->nthreads ? rep->nthreads : 1, sizeof(*w->threads));
	if (!w->threads)
		return -ENOMEM;
	for (size_t i = 0; i < rep->nthreads; i++) {
		const struct lp_report_thread *th = &rep->threads[i];
		struct lp_map_ent *e = lp_map_find(m, (uint64_t)th->pid << 32 | th->tid, 0, false);
		bool first_of_pid = true;

		if (!e || !e->v1)
			continue;
		for (size_t j = 0; j < n; j++)
			first_of_pid &= w->threads[j].pid != th->pid;
		w->threads[n] = *th;
		w->threads[n].spans = e->v1;
		w->threads[n].recorded_ns = e->v2;
		if (t && first_of_pid) {
			const struct lp_report_process *p = NULL;

			for (size_t k = 0; k < rep->nprocs; k++)
				if (rep->procs[k].pid == th->pid)
					p = &rep->procs[k];
			lp_trace_name(t, true, th->pid, th->pid, p ? p->comm : th->name);
		}
		if (t)
			lp_trace_name(t, false, th->pid, th->tid, th->name);
		n++;
	}
	rep->threads = w->threads;
	rep->nthreads = n;
	return 0;
}

/* The report of the window that closed (shown), pointing into the pipeline and w. */
static int window_report(struct recorder *r, struct lp_windows *w, struct lp_report *rep,
			 struct lp_report_window *win, bool last)
{
	const struct lp_top_window *sw = &w->iv.shown;
	int err = lp_pipeline_report(r->pl, rep);

	lp_session_loss(r->s, &rep->loss);
	input_delta(rep, &w->input_before, &w->loss_before);
	*win = (struct lp_report_window){
		.index = w->index, .start_ns = sw->start_ns, .end_ns = sw->end_ns,
		.start_unix_ns = w->since_unix_ns ? w->since_unix_ns + (sw->start_ns - r->since) : 0,
		.began_before = sw->began_before, .last = last,
	};
	rep->window = win;
	rep->totals = &sw->totals;
	rep->ngroups = lp_stats_sorted(sw->stats, &rep->groups);
	lp_stats_folding(sw->stats, &rep->fold);
	rep->paths = NULL; /* the call paths are the whole recording's: its summary has them */
	rep->table_rows = r->o->table_rows;
	rep->counter_name = r->o->counter_name;
	rep->argv = r->o->mode == LP_MODE_LAUNCH ? r->o->argv : NULL;
	rep->pid = r->o->mode == LP_MODE_LAUNCH ? r->child.pid
		   : r->o->mode == LP_MODE_ATTACH ? r->o->pid : 0;
	rep->exit_status = -1;
	rep->buffer_bytes = r->o->buffer_bytes;
	rep->base_ns = r->since;
	rep->start_unix_ns = w->since_unix_ns;
	rep->end_ns = sw->end_ns;
	rep->end_reason = last ? (r->end_reason ? r->end_reason : LP_END_ERROR) : LP_END_DURATION;
	rep->mode = r->o->mode;
	rep->off_cpu = r->o->off_cpu;
	rep->binary = r->o->binary;
	rep->follow = r->follow;
	resources_so_far(r, &rep->res);
	lp_record_self_usage(&rep->self);
	return err ? err : w->iv.err;
}

/* The window that closed: its trace (in slot), then its summary; --keep, --export. */
static int write_window(struct recorder *r, struct lp_windows *w, int slot, bool last)
{
	struct lp_report rep = { 0 };
	struct lp_report_window win;
	struct lp_outfile of = { 0 };
	char name[LP_WINDOW_NAME_MAX], *spath = NULL, *tpath = NULL;
	uint64_t ms = unix_ms(w, w->iv.shown.start_ns, r->since);
	int err = window_report(r, w, &rep, &win, last), terr = 0;

	if (!err)
		err = window_threads(w, &rep, w->trace && w->open[slot] ? &w->traces[slot] : NULL);
	if (err) {
		lp_err("window %llu: out of memory; its figures are short",
		       (unsigned long long)w->index);
		err = 0; /* written still: what it has */
	}
	if (w->trace && w->open[slot]) {
		char *json = lp_report_other_data_json(&rep);

		window_name(name, "trace", ms);
		if (asprintf(&tpath, "%s/%s", r->o->out_dir, name) < 0)
			tpath = NULL;
		terr = json && tpath ? lp_trace_close(&w->traces[slot], json) : -ENOMEM;
		if (terr) {
			trace_abort(w, slot);
			lp_err("cannot write %s: %s", tpath ? tpath : name, strerror(-terr));
		}
		w->open[slot] = false;
		free(json);
		rep.trace_path = terr ? NULL : tpath;
	}
	window_name(name, "summary", ms);
	if (asprintf(&spath, "%s/%s", r->o->out_dir, name) < 0) {
			free(tpath);
		lp_err("out of memory");
		return -ENOMEM;
	}
	rep.summary_path = spath;
	err = lp_open_output(r, &of, NULL, name, spath);
	if (!err) {
		err = lp_report_summary_json(of.f, &rep);
		if (err)
			lp_outfile_abort(&of);
		else
			err = lp_outfile_commit(&of);
		if (err)
			lp_err("cannot write %s: %s", spath, strerror(-err));
	}
	if (!err && w->keep && kept_push(w, ms))
		lp_warn("--keep: out of memory: %s stays", spath);
	/*
	 * The thread starts with the first window, after recording dropped its
	 * capabilities: a thread keeps those it was made with.
	 */
	if (r->o->window_export_url && !w->ex.started && !w->ex.failed &&
	    export_start(&w->ex, r->o->window_export_url))
		w->ex.failed = true;
	if (!err && w->ex.started)
		export_window(&w->ex, spath);
	else if (w->ex.started)
		export_window(&w->ex, "(not written)"); /* keeps the count in order; fails, said */
	if (w->keep)
		prune(r, w);
	w->index++;
	free(spath);
	free(tpath);
	return err ? err : terr;
}

/* The interval rotated: shown is written; next's trace opens where the new cur ends. */
static int rotated(struct recorder *r, struct lp_windows *w, bool last)
{
	int slot = w->cur, err;

	w->cur = 1 - slot;
	err = write_window(r, w, slot, last);
	if (w->trace && !last) {
		int oerr = trace_open(r, w, slot, w->iv.cur.end_ns);

		err = err ? err : oerr;
	}
	return err;
}

int lp_windows_start(struct recorder *r)
{
	const struct lp_record_opts *o = r->o;
	struct lp_windows *w = calloc(1, sizeof(*w));
	struct timespec m, rt;
	int err;

	if (!w || lp_top_interval_init(&w->iv, o->window_ns, o->max_groups, o->summary_only)) {
		free(w);
		lp_err("out of memory");
		return -ENOMEM;
	}
	r->win = w;
	w->window_ns = o->window_ns;
	w->keep = o->keep;
	w->trace = !o->summary_only;
	if (!clock_gettime(CLOCK_MONOTONIC, &m) && !clock_gettime(CLOCK_REALTIME, &rt)) {
		uint64_t now_m = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
		uint64_t now_r = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;

		w->since_unix_ns = now_r - (now_m - r->since);
	}
	/* cur is the first window, from the start of recording. */
	lp_top_interval_advance(&w->iv, r->since, r->since, false);
	if (w->trace) {
		err = trace_open(r, w, 0, w->iv.cur.start_ns);
		if (!err)
			err = trace_open(r, w, 1, w->iv.cur.end_ns);
		if (err)
			return err;
	}
	return 0;
}

void lp_windows_span(struct lp_windows *w, const struct lp_span *s)
{
	bool later = lp_top_interval_span(&w->iv, s);
	int slot = later ? 1 - w->cur : w->cur;

	if (w->open[slot])
		lp_trace_span(&w->traces[slot], s);
}

void lp_windows_mark(struct lp_windows *w, struct strtab *st)
{
	lp_top_interval_mark(&w->iv, st);
	for (int i = 0; i < 2; i++)
		if (w->open[i])
			trace_mark(&w->traces[i], st);
}

int lp_windows_round(struct recorder *r, uint64_t drained_ns)
{
	struct lp_windows *w = r->win;

	if (!lp_top_interval_advance(&w->iv, r->since, drained_ns, false))
		return 0;
	return rotated(r, w, false);
}

int lp_windows_end(struct recorder *r, bool *export_failed)
{
	struct lp_windows *w = r->win;
	uint64_t end = r->end_ns;
	int err = 0;

	/* Every span ended by end: one advance leaves them all in cur, which the end cuts. */
	if (lp_top_interval_advance(&w->iv, r->since, end + 1, false))
		err = rotated(r, w, false);
	if (end > w->iv.cur.start_ns || w->iv.cur.totals.spans) {
		int cerr = lp_top_interval_cut(&w->iv, end > w->iv.cur.start_ns ? end
									  : w->iv.cur.start_ns);

		if (cerr) {
			lp_err("the last window: out of memory");
			err = err ? err : cerr;
		} else {
			int werr = rotated(r, w, true);

			err = err ? err : werr;
		}
	}
	trace_abort(w, 0);
	trace_abort(w, 1);
	*export_failed = export_stop(&w->ex);
	if (w->keep)
		prune(r, w);
	return err;
}

void lp_windows_free(struct lp_windows *w)
{
	if (!w)
		return;
	trace_abort(w, 0);
	trace_abort(w, 1);
	export_stop(&w->ex);
	if (w->iv.err)
		lp_warn("--window: a window's figures were short of memory: some spans are missing "
			"from them");
	lp_top_interval_free(&w->iv);
	free(w->kept);
	free(w->threads);
	free(w);
}
