/* SPDX-License-Identifier: MIT */
/*
 * The span log of the process-family targets (family.c, famexec.c, libfam.c,
 * famlinked.c), the truth tests/integration/test_follow.c judges a recording
 * against. Every marker is logged right after it runs, one write(2) per line
 * to a file opened O_APPEND (all processes of a family write to the same one):
 *   E pid tid name<TAB>meta     an enter (meta empty for NULL)
 *   X pid tid name              its exit
 * A marker's text is read here only after the marker ran: the first read of a
 * literal's page in a process is the profiler's, as in a program that never
 * reads its span names itself. (Not including leanprofiler.h here keeps
 * famlinked free of markers: the header puts probe sites in every object.)
 */
#ifndef FAMLOG_H
#define FAMLOG_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fam_log_fd = -1;

static inline void fam_log_open(const char *path)
{
	fam_log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fam_log_fd < 0) {
		perror(path);
		exit(2);
	}
}

static inline void fam_log(int fd, char kind, const char *name, const char *meta)
{
	char buf[512];
	int n;

	if (kind == 'E')
		n = snprintf(buf, sizeof(buf), "E %d %d %s\t%s\n", getpid(), gettid(), name,
			     meta ? meta : "");
	else
		n = snprintf(buf, sizeof(buf), "X %d %d %s\n", getpid(), gettid(), name);
	if (n <= 0 || n >= (int)sizeof(buf) || write(fd, buf, (size_t)n) != n)
		abort();
}

/* A span around body, logged to fd (include leanprofiler.h first). */
#define FAM_SPAN(fd, name, meta, body)                                                    \
	do {                                                                              \
		LP_SPAN_ENTER(name, meta);                                                \
		fam_log(fd, 'E', name, meta);                                             \
		body;                                                                     \
		LP_SPAN_EXIT(name);                                                       \
		fam_log(fd, 'X', name, NULL);                                             \
	} while (0)

#endif
