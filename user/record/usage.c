// SPDX-License-Identifier: MIT
#include "usage.h"

#include <string.h>

static void on_thread_switches(void *ctx, pid_t tid, uint64_t vol, uint64_t invol)
{
	struct lp_usage *u = ctx;
	struct lp_map_ent *e;

	if (!u->sw_started) {
		e = lp_map_find(&u->sw_base, (uint64_t)tid, 0, true);
		if (e) {
			e->v1 = vol;
			e->v2 = invol;
		}
	}
	e = lp_map_find(&u->sw_last, (uint64_t)tid, 0, true);
	if (e) {
		e->v1 = vol;
		e->v2 = invol;
	}
}

void lp_usage_sample(struct lp_usage *u, uint64_t now_ns, bool force)
{
	if (lp_proc_usage(u->pid, &u->last) == 0) {
		if (!u->valid)
			u->first = u->last;
		u->valid = true;
	}
	if (!force && now_ns - u->sw_sampled_ns < LP_SWITCH_SAMPLE_NS)
		return;
	if (lp_proc_thread_switches(u->pid, on_thread_switches, u) == 0)
		u->sw_started = true;
	u->sw_sampled_ns = now_ns;
}

void lp_usage_start(struct lp_usage *u, pid_t pid, uint64_t now_ns)
{
	memset(u, 0, sizeof(*u));
	u->pid = pid;
	lp_usage_sample(u, now_ns, true);
}

static uint64_t delta(uint64_t end, uint64_t start)
{
	return end > start ? end - start : 0;
}

void lp_usage_report(const struct lp_usage *u, bool exited, struct lp_resources *res)
{
	if (!u->valid)
		return;
	res->valid = true;
	res->scope = exited ? "attached process, over the recording window until its exit "
			      "(/proc, last sample before the exit)"
			    : "attached process, over the recording window (/proc deltas)";
	res->exited = exited;
	res->user_ns = delta(u->last.user_ns, u->first.user_ns);
	res->system_ns = delta(u->last.system_ns, u->first.system_ns);
	res->peak_rss_kib = u->last.peak_rss_kib;
	res->has_peak_rss = u->last.has_peak;
	/* Threads alive at the start count from their value then; later ones from 0. */
	res->voluntary_switches = res->involuntary_switches = 0;
	for (size_t i = 0; i < u->sw_last.cap; i++) {
		const struct lp_map_ent *e = &u->sw_last.e[i];
		struct lp_map_ent *b;

		if (!e->used)
			continue;
		b = lp_map_find((struct lp_map *)&u->sw_base, e->a, 0, false);
		res->voluntary_switches += delta(e->v1, b ? b->v1 : 0);
		res->involuntary_switches += delta(e->v2, b ? b->v2 : 0);
	}
}

static void add_switches(void *ctx, pid_t tid, uint64_t vol, uint64_t invol)
{
	struct lp_resources *res = ctx;

	res->voluntary_switches += vol;
	res->involuntary_switches += invol;
}

int lp_usage_running(pid_t pid, struct lp_resources *res)
{
	struct lp_proc_usage u = { 0 };
	int err = lp_proc_usage(pid, &u);

	if (err)
		return err;
	*res = (struct lp_resources){
		.valid = true,
		.scope = "launched command, still running at the end (/proc: the process alone, "
			 "not its children)",
		.user_ns = u.user_ns,
		.system_ns = u.system_ns,
		.peak_rss_kib = u.peak_rss_kib,
		.has_peak_rss = u.has_peak,
	};
	/* Threads that exited are not counted: said by the scope's "/proc". */
	lp_proc_thread_switches(pid, add_switches, res);
	return 0;
}

void lp_usage_free(struct lp_usage *u)
{
	lp_map_free(&u->sw_base);
	lp_map_free(&u->sw_last);
}

void lp_usage_from_rusage(const struct rusage *ru, struct lp_resources *res)
{
	res->valid = true;
	res->scope = "launched command and its waited-for children (wait4)";
	res->user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000ULL +
		       (uint64_t)ru->ru_utime.tv_usec * 1000ULL;
	res->system_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000ULL +
			 (uint64_t)ru->ru_stime.tv_usec * 1000ULL;
	res->peak_rss_kib = (uint64_t)ru->ru_maxrss;
	res->has_peak_rss = true;
	res->voluntary_switches = (uint64_t)ru->ru_nvcsw;
	res->involuntary_switches = (uint64_t)ru->ru_nivcsw;
}
