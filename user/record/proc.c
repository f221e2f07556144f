// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

uint64_t lp_proc_kdev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

static int read_file(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[400];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n ? 0 : -ESRCH;
}

int lp_proc_comm(pid_t pid, char *buf, size_t size)
{
	int err = read_file(pid, "comm", buf, size);

	if (!err)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* The fields of /proc/PID/stat after "(comm)": comm may hold spaces and ')'. */
static char *stat_fields(char *buf)
{
	char *p = strrchr(buf, ')');

	return p ? p + 2 : NULL;
}

int lp_proc_ppid(pid_t pid, pid_t *ppid)
{
	char buf[1024], *f;
	int err = read_file(pid, "stat", buf, sizeof(buf)), pp;

	if (err)
		return err;
	f = stat_fields(buf);
	if (!f || sscanf(f, "%*c %d", &pp) != 1)
		return -EINVAL;
	*ppid = pp;
	return 0;
}

int lp_proc_state(pid_t pid, struct lp_proc_state *s)
{
	char buf[1024], *f;
	unsigned long long start;
	int err = read_file(pid, "stat", buf, sizeof(buf)), pp;

	if (err)
		return err;
	f = stat_fields(buf);
	/* state ppid, 17 fields, starttime (field 22) */
	if (!f || sscanf(f, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			    "%*d %*d %llu", &s->state, &pp, &start) != 3)
		return -EINVAL;
	s->ppid = pp;
	s->start_ticks = start;
	return 0;
}

uint64_t lp_proc_start_ticks(uint64_t start_ns)
{
	long tick = sysconf(_SC_CLK_TCK);

	/* The kernel's nsec_to_clock_t(): rounded down. */
	return start_ns / (1000000000ULL / (uint64_t)(tick > 0 ? tick : 100));
}

int lp_proc_usage(pid_t pid, struct lp_proc_usage *u)
{
	char buf[4096], *f, *line;
	unsigned long long ut, st;
	long tick = sysconf(_SC_CLK_TCK);
	int err = read_file(pid, "stat", buf, sizeof(buf));

	if (err)
		return err;
	f = stat_fields(buf);
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EINVAL;
	u->user_ns = ut * (1000000000ULL / (uint64_t)tick);
	u->system_ns = st * (1000000000ULL / (uint64_t)tick);
	err = read_file(pid, "status", buf, sizeof(buf));
	if (err)
		return err;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long v;

		if (sscanf(line, "VmHWM: %llu", &v) == 1) {
			u->peak_rss_kib = v;
			u->has_peak = true;
		}
	}
	return 0;
}

int lp_proc_tgid(pid_t tid, pid_t *tgid)
{
	char buf[4096], *line;
	int err = read_file(tid, "status", buf, sizeof(buf));

	if (err)
		return err;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		int v;

		if (sscanf(line, "Tgid: %d", &v) == 1 && v > 0) {
			*tgid = v;
			return 0;
		}
	}
	return -EINVAL;
}

int lp_proc_thread_switches(pid_t pid,
			    void (*fn)(void *ctx, pid_t tid, uint64_t vol, uint64_t invol),
			    void *ctx)
{
	char path[64], buf[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		unsigned long long vol = 0, invol = 0, v;
		char what[300];
		char *line;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(what, sizeof(what), "task/%s/status", de->d_name);
		if (read_file(pid, what, buf, sizeof(buf)))
			continue; /* exited meanwhile */
		for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				vol = v;
			else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				invol = v;
		}
		fn(ctx, (pid_t)atoi(de->d_name), vol, invol);
	}
	closedir(d);
	return 0;
}

/* One line of /proc/PID/maps, if it maps a file executable. */
static bool parse_exec_line(pid_t pid, const char *line, struct lp_proc_file *f)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int name_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &name_at) < 7 ||
	    ino == 0 || perms[2] != 'x' || !name_at || line[name_at] != '/')
		return false;
	snprintf(f->open_path, sizeof(f->open_path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 start, end);
	snprintf(f->path, sizeof(f->path), "%s", line + name_at);
	f->path[strcspn(f->path, "\n")] = '\0';
	f->dev = ((uint64_t)maj << 20) | min;
	f->ino = ino;
	return true;
}

static FILE *open_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return fopen(path, "re");
}

int lp_proc_exec_files(pid_t pid, int (*fn)(void *ctx, const struct lp_proc_file *f), void *ctx)
{
	struct lp_proc_file f, *seen = NULL;
	size_t nseen = 0, cap = 0, len = 0;
	char *line = NULL;
	FILE *m = open_maps(pid);
	int err = 0;

	if (!m)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && getline(&line, &len, m) > 0) {
		bool dup = false;

		if (!parse_exec_line(pid, line, &f))
			continue;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = seen[i].dev == f.dev && seen[i].ino == f.ino;
		if (dup)
			continue;
		seen = lp_grow(seen, &cap, nseen + 1, sizeof(*seen));
		if (!seen) {
			err = -ENOMEM;
			break;
		}
		seen[nseen++] = f;
		err = fn(ctx, &f);
	}
	free(line);
	free(seen);
	fclose(m);
	return err;
}

int lp_proc_find_file(pid_t pid, uint64_t dev, uint64_t ino, struct lp_proc_file *f)
{
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_maps(pid);
	int err = -ENOENT;

	if (!m)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &len, m) > 0) {
		if (parse_exec_line(pid, line, f) && f->dev == dev && f->ino == ino) {
			err = 0;
			break;
		}
	}
	free(line);
	fclose(m);
	return err;
}

int lp_proc_each_running(uint64_t dev, uint64_t ino, int (*fn)(void *ctx, pid_t pid), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char path[300];
		struct stat st;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
		if (stat(path, &st) == 0 && (uint64_t)st.st_ino == ino &&
		    lp_proc_kdev(st.st_dev) == dev)
			err = fn(ctx, (pid_t)atoi(de->d_name));
	}
	closedir(d);
	return err;
}
