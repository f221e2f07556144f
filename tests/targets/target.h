/* SPDX-License-Identifier: MIT */
/*
 * Helpers the test targets share (header only, C and C++): the clock their
 * logs use, busy waits on it, a log line in one write(2), and a marker
 * bracketed by clock and LP_ACTIVE() readings. It does not include
 * leanprofiler.h (see famlog.h): TARGET_MARK needs it where it is used.
 */
#ifndef LP_TARGET_H
#define LP_TARGET_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in ns: the clock of the targets' logs and of leanprofiler's timestamps. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Runs on the CPU for ns nanoseconds (of CLOCK_MONOTONIC). */
static inline void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static inline void spin_us(unsigned us)
{
	spin_ns(us * 1000ULL);
}

/* A formatted line (at most 511 bytes) to fd in one write(2); aborts if the write falls short. */
static inline __attribute__((format(printf, 2, 3))) void log_to(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n) != n)
		abort();
}

/*
 * A marker between two clock readings and two LP_ACTIVE() readings (of the
 * module it expands in), handed to log(ctx, is_exit, name, meta, t_before,
 * t_after, active_before, active_after).
 */
#define TARGET_MARK(log, ctx, is_exit, name, meta, marker)                                        \
	do {                                                                                       \
		uint64_t t0_ = now_ns();                                                           \
		int a0_ = LP_ACTIVE();                                                             \
		marker;                                                                            \
		int a1_ = LP_ACTIVE();                                                             \
		uint64_t t1_ = now_ns();                                                           \
		log(ctx, is_exit, name, meta, t0_, t1_, a0_, a1_);                                 \
	} while (0)

#endif
