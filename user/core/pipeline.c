// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"

struct lp_pipeline {
	struct lp_pipeline_hooks h;
	struct strtab *st;
	struct lp_decoder *dec;
	struct lp_pairs *pairs;
	struct lp_nest *nest;
	struct lp_stats *stats;
	struct lp_paths *paths;
	struct lp_trace *trace; /* NULL: no trace */
	struct lp_pftrace *pftrace; /* the Perfetto trace (NULL: none), besides or instead */
	size_t nspecs;
	struct lp_report_process *procs;
	size_t nprocs, procs_cap;
	size_t live;     /* target processes still running */
	uint64_t end_ns; /* recording ended then (0: not yet) */
	struct lp_report_thread *threads; /* the report's */
	/*
	 * --off-cpu with a trace: each thread's last wait, drawn once the
	 * thread's next event says whether it was inside a span (on_sched).
	 */
	struct pending_wait *waits;
	size_t nwaits, waits_cap, npending;
	struct lp_map waits_of; /* (pid << 32 | tid, 0) -> v1: its waits index + 1 */
	int err;         /* the first error of any stage */
};

struct pending_wait {
	uint32_t pid, tid;
	uint64_t off_ns, wake_ns, on_ns;
	bool pending;
};

static void set_err(struct lp_pipeline *p, int err)
{
	if (err && !p->err)
		p->err = err;
}

/* Nesting -> rows, call paths, trace. */
static void on_span(void *ctx, const struct lp_span *s)
{
	struct lp_pipeline *p = ctx;

	if (p->h.span)
		p->h.span(p->h.ctx, s);
	set_err(p, lp_stats_add(p->stats, s));
	set_err(p, lp_paths_add(p->paths, s));
	if (p->trace)
		lp_trace_span(p->trace, s);
	if (p->pftrace)
		lp_pftrace_span(p->pftrace, s);
}

static bool tracing(const struct lp_pipeline *p)
{
	return p->trace || p->pftrace;
}

/* A wait into the traces, inside the depth spans open on its thread. */
static void trace_wait(struct lp_pipeline *p, uint32_t pid, uint32_t tid, size_t depth,
		       uint64_t off_ns, uint64_t wake_ns, uint64_t on_ns)
{
	if (!depth)
		return;
	if (p->trace)
		lp_trace_off_cpu(p->trace, pid, tid, off_ns, wake_ns, on_ns);
	if (p->pftrace)
		lp_pftrace_off_cpu(p->pftrace, pid, tid, (uint32_t)depth, off_ns, wake_ns, on_ns);
}

/* A span opens: the id of its call path. */
static uint32_t on_open(void *ctx, uint32_t parent, uint32_t name)
{
	return lp_paths_open(((struct lp_pipeline *)ctx)->paths, parent, name);
}

/* A wait of a thread into the trace, if the thread is inside a span now. */
static void draw_wait(struct lp_pipeline *p, struct pending_wait *w)
{
	if (tracing(p))
		trace_wait(p, w->pid, w->tid, lp_nest_depth(p->nest, w->pid, w->tid), w->off_ns,
			   w->wake_ns, w->on_ns);
	w->pending = false;
	p->npending--;
}

static struct pending_wait *wait_of(struct lp_pipeline *p, uint32_t pid, uint32_t tid,
				    bool create)
{
	struct lp_map_ent *e;
	struct pending_wait *w;

	e = lp_map_find(&p->waits_of, (uint64_t)pid << 32 | tid, 0, create);
	if (!e)
		return NULL;
	if (e->v1)
		return &p->waits[e->v1 - 1];
	if (!create)
		return NULL;
	w = lp_grow(p->waits, &p->waits_cap, p->nwaits + 1, sizeof(*w));
	if (!w)
		return NULL; /* the entry stays, v1 0: looked up as absent */
	p->waits = w;
	p->waits[p->nwaits] = (struct pending_wait){ .pid = pid, .tid = tid };
	e->v1 = ++p->nwaits;
	return &p->waits[p->nwaits - 1];
}

/* The thread's pending wait, drawn now (its thread ends, or recording does). */
static void flush_wait(struct lp_pipeline *p, uint32_t pid, uint32_t tid)
{
	struct pending_wait *w = p->npending ? wait_of(p, pid, tid, false) : NULL;

	if (w && w->pending)
		draw_wait(p, w);
}

/* Markers' and span pairs' events -> nesting. */
static int to_nest(void *ctx, const struct lp_event *ev)
{
	struct lp_pipeline *p = ctx;
	/* Only --off-cpu with a trace has waits: the rest never looks one up. */
	struct pending_wait *w = p->npending ? wait_of(p, ev->pid, ev->tid, false) : NULL;
	int err;

	if (p->h.event)
		p->h.event(p->h.ctx, ev);
	/*
	 * A wait that ended before this event lay in the spans open now. One
	 * that ended after it began after it: the thread lost its CPU inside
	 * the kernel half's program for this event, after its timestamp (an
	 * exit's record then comes after the wait's). It lies in the spans
	 * open after this event.
	 */
	if (w && w->pending && w->on_ns <= ev->ts_ns)
		draw_wait(p, w);
	err = lp_nest_event(p->nest, ev);
	if (w && w->pending)
		draw_wait(p, w);
	return err;
}

/*
 * An event outside the recording: before its file's gate opened, or from the
 * stop on. The kernel half drops these itself, exactly when its gate or stop
 * store landed before the moment it names; when one landed late (user space
 * preempted right there), this is the exact cut (session.h).
 */
static bool outside(const struct lp_pipeline *p, uint64_t ts_ns, uint64_t file_since_ns)
{
	return ts_ns < file_since_ns || (p->end_ns && ts_ns >= p->end_ns);
}

static int on_marker(void *ctx, const struct lp_event *ev)
{
	struct lp_pipeline *p = ctx;

	if (outside(p, ev->ts_ns, ev->file_since_ns))
		return 0;
	/*
	 * With no hook and no wait pending, straight to the nesting: the calls
	 * that may happen otherwise made every event save and restore registers
	 * (16 instructions per event, bench row 6).
	 */
	if (!p->h.marker && !p->h.event && !p->npending)
		return lp_nest_event(p->nest, ev);
	if (p->h.marker)
		p->h.marker(p->h.ctx, ev);
	return to_nest(ctx, ev);
}

/* Span-pair probes -> pairs (which send events to the nesting). */
static int on_usdt(void *ctx, const struct lp_usdt_event *ue)
{
	struct lp_pipeline *p = ctx;

	if (outside(p, ue->ts_ns, ue->file_since_ns))
		return 0;
	if (p->h.usdt)
		p->h.usdt(p->h.ctx, ue);
	return lp_pairs_event(p->pairs, ue);
}

static void on_track_end(void *ctx, uint32_t pid, uint32_t track_tid, uint64_t end_ns)
{
	struct lp_pipeline *p = ctx;

	flush_wait(p, pid, track_tid);
	lp_nest_thread_end(p->nest, pid, track_tid, end_ns);
}

static long on_file_text(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf,
			 size_t size)
{
	struct lp_pipeline *p = ctx;

	return p->h.file_text ? p->h.file_text(p->h.ctx, dev, ino, off, buf, size) : -ENOENT;
}

static long on_site_text(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
			 size_t size)
{
	struct lp_pipeline *p = ctx;

	return p->h.site_text ? p->h.site_text(p->h.ctx, file, site, addr, buf, size) : -ENOENT;
}

/*
 * --off-cpu: a thread's time off its CPU, into the trace while it is inside a
 * span (outside, a thread waiting for work would fill the trace with its idle
 * time). Whether it is comes with the thread's next event (to_nest): the
 * record of a wait can come before that of an exit whose time is before it.
 */
static int on_sched(void *ctx, uint32_t pid, uint32_t tid, uint64_t off_ns, uint64_t wake_ns,
		    uint64_t on_ns)
{
	struct lp_pipeline *p = ctx;
	struct pending_wait *w;

	if (!tracing(p))
		return 0;
	w = wait_of(p, pid, tid, true);
	if (!w) {
		/* Out of memory: drawn as the spans stand now. */
		trace_wait(p, pid, tid, lp_nest_depth(p->nest, pid, tid), off_ns, wake_ns, on_ns);
		return -ENOMEM;
	}
	if (w->pending)
		draw_wait(p, w);
	w->off_ns = off_ns;
	w->wake_ns = wake_ns;
	w->on_ns = on_ns;
	w->pending = true;
	p->npending++;
	return 0;
}

static int on_libs(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns)
{
	struct lp_pipeline *p = ctx;

	return p->h.rescan ? p->h.rescan(p->h.ctx, pid, paused, ts_ns, start_ns) : 0;
}

static int on_self_stop(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns)
{
	struct lp_pipeline *p = ctx;

	return p->h.self_stop ? p->h.self_stop(p->h.ctx, pid, sig, ts_ns, start_ns) : 0;
}

static struct lp_report_process *find_proc(struct lp_pipeline *p, uint32_t pid)
{
	for (size_t i = p->nprocs; i-- > 0;)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

static int add_proc(struct lp_pipeline *p, uint32_t pid, uint32_t ppid, enum lp_origin origin,
		    uint32_t comm)
{
	struct lp_report_process *procs = lp_grow(p->procs, &p->procs_cap, p->nprocs + 1,
						  sizeof(*procs));

	if (!procs)
		return -ENOMEM;
	p->procs = procs;
	p->procs[p->nprocs++] = (struct lp_report_process){
		.pid = pid, .ppid = ppid, .origin = origin, .comm = comm, .alive = true,
	};
	p->live++;
	return 0;
}

int lp_pipeline_add_process(struct lp_pipeline *p, uint32_t pid, uint32_t ppid,
			    enum lp_origin origin, const char *comm)
{
	uint32_t id = strtab_intern(p->st, comm, strlen(comm));

	return id == UINT32_MAX ? -ENOMEM : add_proc(p, pid, ppid, origin, id);
}

const struct lp_report_process *lp_pipeline_process(struct lp_pipeline *p, uint32_t pid)
{
	return find_proc(p, pid);
}

/* proc (may be NULL) ended: true when it was still counted alive. */
static bool proc_gone(struct lp_pipeline *p, struct lp_report_process *proc)
{
	if (!proc || !proc->alive)
		return false;
	proc->alive = false;
	p->live--;
	return true;
}

bool lp_pipeline_process_gone(struct lp_pipeline *p, uint32_t pid)
{
	return proc_gone(p, find_proc(p, pid));
}

/* A process ended (its last thread, or its image at an exec). */
static void process_end(struct lp_pipeline *p, const struct lp_task_event *te)
{
	for (size_t i = 0; p->npending && i < p->nwaits; i++)
		if (p->waits[i].pid == te->pid && p->waits[i].pending)
			draw_wait(p, &p->waits[i]);
	lp_pairs_process_end(p->pairs, te->pid);
	lp_nest_process_end(p->nest, te->pid, te->ts_ns);
}

static int on_exit_task(struct lp_pipeline *p, const struct lp_task_event *te)
{
	struct lp_report_process *proc;

	flush_wait(p, te->pid, te->tid);
	lp_pairs_thread_end(p->pairs, te->pid, te->tid, te->ts_ns);
	lp_nest_thread_end(p->nest, te->pid, te->tid, te->ts_ns);
	if (!te->group_dead)
		return 0;
	process_end(p, te);
	proc = find_proc(p, te->pid);
	proc_gone(p, proc);
	if (proc && te->privileged) {
		proc->privileged = true;
		proc->comm = te->comm;
	}
	return 0;
}

static int on_task(void *ctx, const struct lp_task_event *te)
{
	struct lp_pipeline *p = ctx;
	struct lp_report_process *proc;
	int err = 0;

	/*
	 * After the end, nothing happens: a process that exits then was alive
	 * when recording ended, and its open spans end with the recording.
	 */
	if (p->end_ns && te->ts_ns >= p->end_ns)
		return 0;
	switch (te->what) {
	case LP_TASK_FORK:
		/* Spans open in the parent at fork are open in the child too. */
		err = lp_nest_process_begin(p->nest, te->pid, te->ts_ns, true);
		if (!err)
			err = add_proc(p, te->pid, te->ppid, LP_ORIGIN_FORKED, te->comm);
		break;
	case LP_TASK_FOUND:
		err = lp_nest_process_begin(p->nest, te->pid, te->ts_ns, !te->new_image);
		if (!err)
			err = add_proc(p, te->pid, te->ppid, LP_ORIGIN_FOUND, te->comm);
		/*
		 * Found running: attach to what it maps. Found at its exec, it maps
		 * its libraries later, and is paused for them then (lp_dl_state).
		 */
		if (!err && !te->new_image)
			err = on_libs(p, te->pid, false, te->ts_ns, 0);
		break;
	case LP_TASK_THREAD:
		err = lp_nest_thread_begin(p->nest, te->pid, te->tid, te->ts_ns);
		break;
	case LP_TASK_EXEC:
		process_end(p, te);
		/* (A program not examined yet is paused for us: LP_REC_LIBS.) */
		err = lp_nest_process_begin(p->nest, te->pid, te->ts_ns, false);
		proc = find_proc(p, te->pid);
		if (proc)
			proc->comm = te->comm;
		break;
	case LP_TASK_EXIT:
		err = on_exit_task(p, te);
		break;
	}
	if (p->h.task)
		p->h.task(p->h.ctx, te);
	return err;
}

struct lp_pipeline *lp_pipeline_new(const struct lp_pipeline_opts *o,
				    const struct lp_pipeline_hooks *h)
{
	struct lp_pipeline *p = calloc(1, sizeof(*p));
	struct lp_nest_sink nsink = { .span = on_span, .path = on_open, .ctx = p };
	struct lp_decode_sink dsink = { .event = on_marker, .task = on_task, .libs = on_libs,
					.self_stop = on_self_stop, .usdt = on_usdt, .sched = on_sched, .file_text = on_file_text,
					.site_text = on_site_text, .ctx = p };
	struct lp_pairs_sink psink = { .event = to_nest, .track_end = on_track_end, .ctx = p };

	if (!p)
		return NULL;
	if (h)
		p->h = *h;
	p->nspecs = o->nspecs;
	p->st = strtab_new();
	p->stats = lp_stats_new();
	p->paths = lp_paths_new();
	p->nest = lp_nest_new(&nsink);
	p->dec = p->st ? lp_decoder_new(p->st, &dsink) : NULL;
	p->pairs = p->st ? lp_pairs_new(o->specs, o->nspecs, p->st, &psink) : NULL;
	if (!p->st || !p->stats || !p->paths || !p->nest || !p->dec || !p->pairs) {
		lp_pipeline_free(p);
		return NULL;
	}
	lp_stats_set_texts(p->stats, p->st);
	if (o->summary_only)
		lp_stats_set_exact_limit(p->stats, LP_SUMMARY_ONLY_DURATIONS);
	if (o->max_groups)
		lp_stats_set_max_groups(p->stats, o->max_groups);
	return p;
}

void lp_pipeline_free(struct lp_pipeline *p)
{
	if (!p)
		return;
	lp_decoder_free(p->dec);
	lp_pairs_free(p->pairs);
	lp_nest_free(p->nest);
	lp_stats_free(p->stats);
	lp_paths_free(p->paths);
	strtab_free(p->st);
	free(p->procs);
	free(p->threads);
	free(p->waits);
	lp_map_free(&p->waits_of);
	free(p);
}

struct strtab *lp_pipeline_strtab(struct lp_pipeline *p)
{
	return p->st;
}

int lp_pipeline_process_begin(struct lp_pipeline *p, uint32_t pid, uint64_t since_ns,
			      bool open_before)
{
	return lp_nest_process_begin(p->nest, pid, since_ns, open_before);
}

int lp_pipeline_begin(struct lp_pipeline *p, uint64_t since_ns)
{
	int err = 0;

	for (size_t i = 0; !err && i < p->nprocs; i++)
		err = lp_nest_process_begin(p->nest, p->procs[i].pid, since_ns,
					    p->procs[i].origin != LP_ORIGIN_LAUNCHED);
	return err;
}

void lp_pipeline_set_trace(struct lp_pipeline *p, struct lp_trace *t)
{
	p->trace = t;
}

void lp_pipeline_set_pftrace(struct lp_pipeline *p, struct lp_pftrace *t)
{
	p->pftrace = t;
}

void lp_pipeline_gate(struct lp_pipeline *p, uint32_t file, uint64_t since_ns)
{
	lp_decoder_file_since(p->dec, file, since_ns);
	lp_nest_gate(p->nest, since_ns);
}

int lp_pipeline_record(struct lp_pipeline *p, const void *data, size_t size)
{
	struct lp_event ev;
	int err = lp_decode_record(p->dec, data, size, &ev);

	if (err == 1)
		err = on_marker(p, &ev);
	set_err(p, err);
	/*
	 * Between two records every id in use is in a holder. Here, not only
	 * between batches: one drain lasts as long as the targets keep the ring
	 * buffer busy (a fast target's whole run, or the drain after the stop).
	 */
	lp_pipeline_collect(p, false, NULL);
	return err;
}

static void text_freed(void *ctx, uint32_t id)
{
	struct lp_pipeline *p = ctx;

	if (p->trace)
		lp_trace_forget(p->trace, id);
	if (p->pftrace)
		lp_pftrace_forget(p->pftrace, id);
}

/*
 * Frees the texts nothing holds any more once enough new ones came in
 * (strtab_gc_due(): a comparison, cheap enough for every record). Called
 * between records: none is half decoded, so every id in use is in a holder
 * that marks it (docs/internals.md, "Texts").
 */
bool lp_pipeline_collect(struct lp_pipeline *p, bool force, struct strtab_gc_result *out)
{
	struct strtab_gc_result res;

	if (!force && !strtab_gc_due(p->st))
		return false;
	strtab_gc_begin(p->st);
	lp_decoder_mark(p->dec, p->st);
	lp_pairs_mark(p->pairs, p->st);
	lp_nest_mark(p->nest, p->st);
	lp_stats_mark(p->stats, p->st);
	lp_paths_mark(p->paths, p->st);
	if (p->h.mark)
		p->h.mark(p->h.ctx, p->st);
	for (size_t i = 0; i < p->nprocs; i++)
		strtab_mark(p->st, p->procs[i].comm);
	strtab_gc_end(p->st, text_freed, p, &res);
	if (p->trace)
		lp_trace_compact(p->trace);
	if (p->pftrace)
		lp_pftrace_compact(p->pftrace);
	lp_info("texts: %u freed (%zu KiB), %u kept (%zu KiB)", res.freed_ids,
		res.freed_bytes >> 10, res.live_ids, res.live_bytes >> 10);
	if (out)
		*out = res;
	return true;
}

int lp_pipeline_error(const struct lp_pipeline *p)
{
	return p->err;
}

size_t lp_pipeline_live(const struct lp_pipeline *p)
{
	return p->live;
}

const struct lp_report_process *lp_pipeline_processes(const struct lp_pipeline *p, size_t *n)
{
	*n = p->nprocs;
	return p->procs;
}

void lp_pipeline_stop(struct lp_pipeline *p, uint64_t end_ns)
{
	p->end_ns = end_ns;
}

void lp_pipeline_finish(struct lp_pipeline *p, uint64_t end_ns)
{
	for (size_t i = 0; p->npending && i < p->nwaits; i++)
		if (p->waits[i].pending)
			draw_wait(p, &p->waits[i]);
	lp_nest_finish(p->nest, end_ns);
}

static uint32_t intern_cstr(struct lp_pipeline *p, const char *s)
{
	return strtab_intern(p->st, s, strlen(s));
}

/* A thread's name, and its process's, from its first record (else "tid N", "pid N"). */
static void thread_names(struct lp_pipeline *p, const struct lp_thread_info *info,
			 uint32_t *comm, uint32_t *pcomm)
{
	uint32_t tid = LP_TRACK_IS(info->tid) ? LP_TRACK_REAL(info->tid) : info->tid;
	char buf[32];

	if (!lp_decoder_thread_name(p->dec, info->pid, tid, comm, pcomm)) {
		snprintf(buf, sizeof(buf), "tid %u", tid);
		*comm = intern_cstr(p, buf);
		snprintf(buf, sizeof(buf), "pid %u", info->pid);
		*pcomm = intern_cstr(p, buf);
	}
	/* A track of keyed spans is named after its thread. */
	if (LP_TRACK_IS(info->tid)) {
		size_t len;
		const char *c = strtab_str(p->st, *comm, &len);
		char *nm;

		if (asprintf(&nm, "%.*s (%u) keyed spans %u", (int)len, c, tid,
			     LP_TRACK_NO(info->tid)) >= 0) {
			*comm = intern_cstr(p, nm);
			free(nm);
		}
	}
}

/* Thread rows for the report, names into the trace. */
static int collect_threads(struct lp_pipeline *p, struct lp_report *rep)
{
	const struct lp_thread_info *infos;
	size_t n = lp_nest_threads(p->nest, &infos);

	free(p->threads);
	p->threads = calloc(n ? n : 1, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t comm, pcomm;
		bool first_of_pid = true;

		thread_names(p, &infos[i], &comm, &pcomm);
		for (size_t j = 0; j < i; j++)
			first_of_pid &= infos[j].pid != infos[i].pid;
		if (p->trace) {
			struct lp_report_process *proc = find_proc(p, infos[i].pid);

			if (first_of_pid)
				lp_trace_name(p->trace, true, infos[i].pid, infos[i].pid,
					      proc ? proc->comm : pcomm);
			lp_trace_name(p->trace, false, infos[i].pid, infos[i].tid, comm);
		}
		if (p->pftrace) {
			struct lp_report_process *proc = find_proc(p, infos[i].pid);

			if (first_of_pid)
				lp_pftrace_name(p->pftrace, true, infos[i].pid, infos[i].pid,
						proc ? proc->comm : pcomm);
			lp_pftrace_name(p->pftrace, false, infos[i].pid, infos[i].tid, comm);
		}
		p->threads[i] = (struct lp_report_thread){
			.pid = infos[i].pid,
			.tid = infos[i].tid,
			.name = comm,
			.spans = infos[i].spans,
			.recorded_ns = infos[i].recorded_ns,
			.lost = p->h.thread_lost ? p->h.thread_lost(p->h.ctx, infos[i].tid)
						 : infos[i].lost_seen,
			.max_depth = infos[i].max_depth,
			.sched = infos[i].sched,
		};
	}
	rep->threads = p->threads;
	rep->nthreads = n;
	return 0;
}

void lp_pipeline_live_report(struct lp_pipeline *p, struct lp_report *rep)
{
	struct lp_group **groups;

	rep->st = p->st;
	rep->totals = lp_nest_totals(p->nest);
	rep->ngroups = lp_stats_sorted(p->stats, &groups);
	rep->groups = groups;
	lp_stats_folding(p->stats, &rep->fold);
}

int lp_pipeline_report(struct lp_pipeline *p, struct lp_report *rep)
{
	const struct lp_decode_stats *ds = lp_decoder_stats(p->dec);

	lp_pipeline_live_report(p, rep);
	rep->paths = p->paths;
	rep->procs = p->procs;
	rep->nprocs = p->nprocs;
	rep->nspecs = p->nspecs;
	rep->pairs = p->nspecs ? lp_pairs_stats(p->pairs) : NULL;
	rep->records = ds->records;
	rep->from_file = ds->from_file;
	rep->unknown_literal = ds->unknown_literal;
	rep->abi_mismatch = ds->abi_mismatch;
	rep->malformed = ds->malformed;
	rep->truncated = ds->truncated;
	rep->unreadable = ds->unreadable;
	rep->enters = ds->enters;
	rep->exits = ds->exits;
	return collect_threads(p, rep);
}

void lp_pipeline_sites_skipped(struct lp_pipeline *p, uint64_t n)
{
	lp_pairs_set_sites_skipped(p->pairs, n);
}
