// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"
#include "launch.h"
#include "nest.h"
#include "outfile.h"
#include "procmem.h"
#include "report.h"
#include "session.h"
#include "stats.h"
#include "trace.h"

/* How often the ring buffer is drained when the kernel does not wake us. */
#define LP_POLL_MS 10

struct recorder {
	struct strtab *st;
	struct lp_decoder *dec;
	struct lp_nest *nest;
	struct lp_stats *stats;
	struct lp_trace trace;
	bool trace_open;
	int err; /* first pipeline error */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* The clock bpf_ktime_get_ns() reads. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_span(void *ctx, const struct lp_span *s)
{
	struct recorder *r = ctx;
	int err = lp_stats_add(r->stats, s);

	if (err && !r->err)
		r->err = err;
	if (r->trace_open)
		lp_trace_span(&r->trace, s);
}

static int on_event(void *ctx, const struct lp_event *ev)
{
	struct recorder *r = ctx;

	return lp_nest_event(r->nest, ev);
}

static long read_str(void *ctx, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	return lp_read_target_str((pid_t)pid, addr, buf, size);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;
	int err = lp_decode(r->dec, data, size);

	if (err && !r->err)
		r->err = err;
	return 0; /* keep draining: a record we could not use is still consumed */
}

static char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

static int ensure_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Waits for the child to exit, draining the ring buffer; forwards termination signals. */
static int run_loop(struct lp_session *s, struct lp_child *c, int sigfd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), err = 0;
	struct epoll_event ev = { .events = EPOLLIN };

	if (ep < 0)
		return -errno;
	ev.data.fd = lp_session_fd(s);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto fail;
	ev.data.fd = c->pidfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto fail;
	ev.data.fd = sigfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto fail;
	for (;;) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, LP_POLL_MS);

		if (n < 0 && errno != EINTR)
			goto fail;
		for (int i = 0; i < n; i++) {
			struct signalfd_siginfo si;

			if (evs[i].data.fd != sigfd)
				continue;
			while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				/*
				 * A terminal's Ctrl-C already reached the command (same
				 * process group); a signal sent to us alone is passed on.
				 */
				if (si.ssi_code != SI_KERNEL)
					kill(c->pid, (int)si.ssi_signo);
			}
		}
		err = lp_session_consume(s);
		if (err)
			break;
		err = lp_launch_reap(c, false);
		if (err < 0)
			break;
		if (err == 1) {
			err = 0;
			break;
		}
	}
	close(ep);
	return err;
fail:
	err = -errno;
	close(ep);
	return err;
}

static void fill_resources(struct lp_resources *res, const struct lp_child *c)
{
	res->valid = true;
	res->scope = "launched command and its waited-for children (wait4)";
	res->user_ns = (uint64_t)c->ru.ru_utime.tv_sec * 1000000000ULL +
		       (uint64_t)c->ru.ru_utime.tv_usec * 1000ULL;
	res->system_ns = (uint64_t)c->ru.ru_stime.tv_sec * 1000000000ULL +
			 (uint64_t)c->ru.ru_stime.tv_usec * 1000ULL;
	res->peak_rss_kib = (uint64_t)c->ru.ru_maxrss;
	res->voluntary_switches = (uint64_t)c->ru.ru_nvcsw;
	res->involuntary_switches = (uint64_t)c->ru.ru_nivcsw;
}

/* Thread rows for the report, names into the trace. */
static struct lp_report_thread *collect_threads(struct recorder *r, struct lp_session *s,
						size_t *count)
{
	const struct lp_thread_info *infos;
	size_t n = lp_nest_threads(r->nest, &infos);
	struct lp_report_thread *out = calloc(n ? n : 1, sizeof(*out));
	char buf[32];

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t comm, pcomm;
		bool first_of_pid = true;

		if (!lp_decoder_thread_name(r->dec, infos[i].pid, infos[i].tid, &comm, &pcomm)) {
			snprintf(buf, sizeof(buf), "tid %u", infos[i].tid);
			comm = strtab_intern(r->st, buf, strlen(buf));
			snprintf(buf, sizeof(buf), "pid %u", infos[i].pid);
			pcomm = strtab_intern(r->st, buf, strlen(buf));
		}
		for (size_t j = 0; j < i; j++)
			first_of_pid &= infos[j].pid != infos[i].pid;
		if (r->trace_open) {
			if (first_of_pid)
				lp_trace_name(&r->trace, true, infos[i].pid, infos[i].pid, pcomm);
			lp_trace_name(&r->trace, false, infos[i].pid, infos[i].tid, comm);
		}
		out[i] = (struct lp_report_thread){
			.pid = infos[i].pid,
			.tid = infos[i].tid,
			.name = comm,
			.spans = infos[i].spans,
			.recorded_ns = infos[i].recorded_ns,
			.lost = lp_session_thread_loss(s, infos[i].tid),
			.max_depth = infos[i].max_depth,
		};
	}
	*count = n;
	return out;
}

int lp_record(const struct lp_record_opts *o, struct lp_record_result *res)
{
	struct recorder r = { 0 };
	struct lp_nest_sink nsink = { .span = on_span, .ctx = &r };
	struct lp_decode_sink dsink = { .event = on_event, .read_str = read_str, .ctx = &r };
	struct lp_session_opts so = { .buffer_bytes = o->buffer_bytes, .on_record = on_record,
				      .ctx = &r };
	struct lp_session *s = NULL;
	struct lp_child c = { .pid = -1, .pidfd = -1 };
	struct lp_outfile summary = { 0 };
	struct lp_report rep = { 0 };
	struct lp_report_thread *threads = NULL;
	struct lp_group **groups;
	const struct lp_decode_stats *ds;
	char *trace_path = NULL, *summary_path = NULL, *json = NULL, exe[64];
	sigset_t block, old;
	int err, sigfd = -1, attached;
	uint64_t base_ns, end_ns;

	memset(res, 0, sizeof(*res));
	res->stage = LP_STAGE_SETUP;
	r.st = strtab_new();
	r.stats = lp_stats_new();
	r.nest = r.st ? lp_nest_new(&nsink) : NULL;
	r.dec = r.st ? lp_decoder_new(r.st, &dsink) : NULL;
	trace_path = path_join(o->out_dir, "leanprofiler-trace.json");
	summary_path = path_join(o->out_dir, "leanprofiler-summary.json");
	if (!r.st || !r.stats || !r.nest || !r.dec || !trace_path || !summary_path) {
		err = -ENOMEM;
		lp_err("out of memory");
		goto cleanup;
	}

	/* Output first: a bad directory must fail before the command runs, not after. */
	err = ensure_dir(o->out_dir);
	if (!err)
		err = lp_outfile_open(&summary, summary_path);
	if (err) {
		lp_err("cannot write to output directory %s: %s", o->out_dir, strerror(-err));
		goto cleanup;
	}

	/* Our terminating signals arrive through a signalfd; the command gets the old mask. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigfd = signalfd(-1, &block, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0) {
		err = -errno;
		lp_err("signalfd: %s", strerror(-err));
		goto cleanup;
	}

	err = lp_launch(&c, o->argv, &old);
	if (err) {
		if (err != -ECHILD) {
			res->stage = LP_STAGE_EXEC;
			lp_err("cannot run %s: %s", o->argv[0], strerror(-err));
		} else {
			lp_err("%s exited before recording could start", o->argv[0]);
		}
		goto cleanup;
	}
	/*
	 * BPF is loaded only now: the child was forked while this process was
	 * small, and its peak RSS (which counts the pre-exec copy of us) stays its own.
	 */
	err = lp_session_open(&s, &so);
	if (err) {
		lp_launch_kill(&c);
		goto cleanup;
	}
	/* The exec'ed file itself, even if its path has changed since. */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c.pid);
	attached = lp_session_attach(s, c.pid, exe);
	if (attached <= 0) {
		err = attached ? attached : -ENOENT;
		if (attached == 0)
			lp_err("no leanprofiler markers in %s: nothing to record (is it built with "
			       "include/leanprofiler.h?)",
			       o->argv[0]);
		else if (attached != -ENOEXEC)
			lp_err("cannot attach to %s: %s", o->argv[0], strerror(-attached));
		else
			lp_err("%s is not an ELF executable this build can probe", o->argv[0]);
		lp_launch_kill(&c);
		goto cleanup;
	}
	err = lp_prefault(c.pid);
	if (err)
		lp_info("could not prefault the literals of PID %d: %s", (int)c.pid, strerror(-err));
	err = lp_trace_open(&r.trace, trace_path, r.st, base_ns = now_ns());
	if (err) {
		lp_err("cannot write %s: %s", trace_path, strerror(-err));
		lp_launch_kill(&c);
		goto cleanup;
	}
	r.trace_open = true;
	err = lp_launch_resume(&c);
	if (err) {
		lp_err("cannot resume %s: %s", o->argv[0], strerror(-err));
		lp_launch_kill(&c);
		goto cleanup;
	}
	res->stage = LP_STAGE_RUN;

	err = run_loop(s, &c, sigfd);
	if (err) {
		lp_err("recording failed: %s; writing what was recorded", strerror(-err));
		lp_launch_reap(&c, true);
	}
	end_ns = now_ns();
	/* Everything the command emitted was submitted before it exited: drain it all. */
	lp_session_consume(s);
	res->exit_code = lp_launch_exit_code(&c);
	lp_nest_finish(r.nest, end_ns);

	rep.st = r.st;
	rep.totals = lp_nest_totals(r.nest);
	lp_session_loss(s, &rep.loss);
	threads = collect_threads(&r, s, &rep.nthreads);
	rep.threads = threads;
	rep.ngroups = lp_stats_sorted(r.stats, &groups);
	rep.groups = groups;
	fill_resources(&rep.res, &c);
	ds = lp_decoder_stats(r.dec);
	rep.malformed = ds->malformed;
	rep.truncated = ds->truncated;
	rep.unreadable = ds->unreadable;
	rep.counter_name = o->counter_name;
	rep.argv = o->argv;
	rep.pid = c.pid;
	rep.exit_status = res->exit_code;
	rep.buffer_bytes = o->buffer_bytes;
	rep.base_ns = base_ns;
	rep.trace_path = trace_path;
	rep.summary_path = summary_path;
	if (r.err) {
		err = r.err;
		lp_err("processing records failed: %s; the results are incomplete", strerror(-err));
	}

	json = lp_report_other_data_json(&rep);
	{
		int terr = lp_trace_close(&r.trace, json);

		r.trace_open = false;
		free(json);
		if (terr) {
			lp_err("cannot write %s: %s", trace_path, strerror(-terr));
			rep.trace_path = NULL;
			err = err ? err : terr;
		}
	}
	json = lp_report_summary_json(&rep);
	if (!json || fputs(json, summary.f) < 0) {
		err = err ? err : -ENOMEM;
		lp_outfile_abort(&summary);
		summary_path = (free(summary_path), NULL);
	} else {
		int serr = lp_outfile_commit(&summary);

		if (serr) {
			lp_err("cannot write %s: %s", summary_path, strerror(-serr));
			free(summary_path);
			summary_path = NULL;
			err = err ? err : serr;
		}
	}
	free(json);

	lp_report_table(stdout, &rep);
	fputc('\n', stdout);
	if (rep.trace_path)
		printf("Trace: %s\n", rep.trace_path);
	if (summary_path)
		printf("Summary: %s\n", summary_path);
	fflush(stdout);
	if (rep.loss.enter + rep.loss.exit)
		lp_warn("%llu events were lost because the ring buffer was full; "
			"rerun with a larger --buffer-size (now %zu bytes)",
			(unsigned long long)(rep.loss.enter + rep.loss.exit), o->buffer_bytes);

cleanup:
	if (r.trace_open)
		lp_trace_abort(&r.trace);
	if (summary.f)
		lp_outfile_abort(&summary);
	if (c.pidfd >= 0)
		close(c.pidfd);
	if (sigfd >= 0)
		close(sigfd);
	lp_session_close(s);
	free(threads);
	lp_decoder_free(r.dec);
	lp_nest_free(r.nest);
	lp_stats_free(r.stats);
	strtab_free(r.st);
	free(trace_path);
	free(summary_path);
	return err;
}
