// SPDX-License-Identifier: MIT
/*
 * libopenswap.so: preloaded into leanprofiler by tests/integration/test_security.c
 * to win, every time, a race a hostile target could win by luck: between
 * leanprofiler reading /proc/PID/maps and opening the mapping's
 * /proc/PID/map_files entry, the target maps another file at the same addresses.
 * When leanprofiler opens a path containing $LP_SWAP_MATCH (once), this writes
 * a line to the FIFO $LP_SWAP_REQ and waits for one from $LP_SWAP_ACK (the
 * target has swapped its mapping), then opens.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int swapped;

static void swap_first(const char *path)
{
	const char *match = getenv("LP_SWAP_MATCH"), *req = getenv("LP_SWAP_REQ"),
		   *ack = getenv("LP_SWAP_ACK");
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	char c;
	int fd;

	if (swapped || !match || !req || !ack || !strstr(path, match))
		return;
	swapped = 1;
	fd = real_open(req, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "swap\n", 5) != 5) {
		close(fd);
		return;
	}
	close(fd);
	fd = real_open(ack, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (read(fd, &c, 1) == 1 && c != '\n')
			;
		close(fd);
	}
}

int open(const char *path, int flags, ...)
{
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	swap_first(path);
	return real(path, flags, mode);
}

/* The same function under its other name (x86-64: the same call). */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
