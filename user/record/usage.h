/* SPDX-License-Identifier: MIT */
/*
 * The resources a recorded process used: wait4()'s figures for a launched
 * command; for an attached one, the deltas /proc shows over the recording.
 */
#ifndef LP_USAGE_H
#define LP_USAGE_H

#include <sys/resource.h>
#include <sys/types.h>

#include "map.h"
#include "proc.h"
#include "figures.h"

struct lp_usage {
	pid_t pid;
	struct lp_proc_usage first, last; /* CPU time and peak RSS, whole process */
	bool valid;
	/* Context switches, counted per thread by /proc: tid -> v1 voluntary, v2 involuntary. */
	struct lp_map sw_base, sw_last; /* at the start (threads then alive), latest */
	bool sw_started;
	uint64_t sw_sampled_ns;
};

/* Threads' context switches are sampled this often (a file per thread). */
#define LP_SWITCH_SAMPLE_NS 100000000ULL

/* The first sample of pid, at the start of recording. */
void lp_usage_start(struct lp_usage *u, pid_t pid, uint64_t now_ns);
/* Another sample: CPU each time, threads' switches every LP_SWITCH_SAMPLE_NS or when forced. */
void lp_usage_sample(struct lp_usage *u, uint64_t now_ns, bool force);
/* The deltas between the first and the latest sample; exited: the process is gone. */
void lp_usage_report(const struct lp_usage *u, bool exited, struct lp_resources *res);
void lp_usage_free(struct lp_usage *u);
/*
 * A launched command that runs on after the recording (stopped by a second
 * signal): its figures so far, from /proc. 0 or -errno (it is gone).
 */
int lp_usage_running(pid_t pid, struct lp_resources *res);
/* A launched command's figures, from wait4(). */
void lp_usage_from_rusage(const struct rusage *ru, struct lp_resources *res);

#endif
