/* SPDX-License-Identifier: MIT */
/*
 * What a recording measures besides the spans: the targets' resources, what
 * the kernel could not deliver, the pauses for files the targets mapped. The
 * recorder fills them (user/record), the report writes them (report.h).
 */
#ifndef LP_FIGURES_H
#define LP_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

struct lp_resources {
	bool valid;
	const char *scope; /* what the figures cover */
	bool exited;       /* attached: the process exited during the recording */
	uint64_t user_ns, system_ns;
	uint64_t peak_rss_kib;
	bool has_peak_rss; /* false: peak_rss_kib was not measured (shown as such, never 0) */
	uint64_t voluntary_switches, involuntary_switches;
};

struct lp_loss {
	uint64_t enter, exit;  /* events the kernel could not deliver */
	uint64_t string;       /* literal texts not delivered (counted in enter/exit too) */
	uint64_t thread;       /* thread records not delivered */
	uint64_t no_storage;   /* events lost for want of per-thread state */
	uint64_t task;         /* process, thread and mapping records not delivered */
	uint64_t sched;        /* --off-cpu intervals not delivered (not in the trace) */
};

/* Following processes: pauses for the files they mapped (bpf/wire.h lp_rec_libs). */
struct lp_follow {
	uint64_t pauses, pause_total_ns, pause_max_ns;
	uint64_t late_files; /* files with markers attached while a process mapping them ran on */
	/* New files left to a later batch by the bound on one batch (LP_BATCH_FILES_MAX). */
	uint64_t deferred_files;
};

#endif
