/* SPDX-License-Identifier: MIT */
/* What /proc tells of a process: name, parent, mapped files, resource usage. */
#ifndef LP_PROC_H
#define LP_PROC_H

#include <limits.h>
#include <sys/types.h>

#include "common.h"

struct lp_proc_usage {
	uint64_t user_ns, system_ns; /* the whole process, exited threads too (clock ticks) */
	/*
	 * VmHWM; kept as it was when the status has none (a zombie's: the
	 * last sample before the exit holds), has_peak once one was read.
	 */
	uint64_t peak_rss_kib;
	bool has_peak;
};

struct lp_proc_file {
	char open_path[64];    /* /proc/PID/map_files/START-END: the mapped file itself */
	char path[PATH_MAX];   /* as /proc/PID/maps shows it */
	uint64_t dev, ino;     /* dev in the kernel's encoding: major << 20 | minor */
};

/* 0 or -errno (-ESRCH: no such process). */
int lp_proc_comm(pid_t pid, char *buf, size_t size);
int lp_proc_ppid(pid_t pid, pid_t *ppid);
struct lp_proc_state {
	char state;           /* 'R', 'S', 'T' (stopped), ... */
	pid_t ppid;
	uint64_t start_ticks; /* when it began, in clock ticks since boot (field 22) */
};

int lp_proc_state(pid_t pid, struct lp_proc_state *s);
/* A start time of the kernel's (start_boottime, ns) in /proc/PID/stat's clock ticks. */
uint64_t lp_proc_start_ticks(uint64_t start_ns);
/* The process (thread group) thread id tid belongs to: *tgid == tid for a process. */
int lp_proc_tgid(pid_t tid, pid_t *tgid);
int lp_proc_usage(pid_t pid, struct lp_proc_usage *u);
/*
 * Calls fn with the context switches (voluntary, involuntary) of each live
 * thread of pid: /proc counts them per thread only. 0 or -errno.
 */
int lp_proc_thread_switches(pid_t pid,
			    void (*fn)(void *ctx, pid_t tid, uint64_t vol, uint64_t invol),
			    void *ctx);
/*
 * Calls fn for each distinct executable file pid maps (once per file); stops
 * at fn's first non-zero return and returns it. 0 or -errno.
 */
int lp_proc_exec_files(pid_t pid, int (*fn)(void *ctx, const struct lp_proc_file *f), void *ctx);
/* The mapping of file (dev, ino) in pid: 0, -ENOENT (not mapped), or -errno. */
int lp_proc_find_file(pid_t pid, uint64_t dev, uint64_t ino, struct lp_proc_file *f);
/* Calls fn for every process whose executable is (dev, ino). 0 or -errno. */
int lp_proc_each_running(uint64_t dev, uint64_t ino, int (*fn)(void *ctx, pid_t pid), void *ctx);
/* The kernel's dev_t encoding of a stat(2) st_dev. */
uint64_t lp_proc_kdev(dev_t dev);

#endif
