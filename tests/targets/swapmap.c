// SPDX-License-Identifier: MIT
/*
 * swapmap: a target that swaps the file mapped at one address, for
 * tests/integration/test_security.c (with libopenswap.so in the profiler).
 * Usage: swapmap A.so B.so REQ ACK LOG K
 *   maps A.so whole, readable and executable, at SWAP_AT (a file leanprofiler
 *   finds in /proc/PID/maps), prints "ready", and when a line comes from the
 *   FIFO REQ maps B.so (a copy: the same size) over it at the same addresses,
 *   and writes a line to the FIFO ACK. Then, on a line from stdin, dlopen()s
 *   A.so and runs K of its spans (libmany.c) inside one of its own, logged to
 *   LOG, and prints "done".
 * Exits 0; 2 when something cannot be done.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "leanprofiler.h"
#include "famlog.h"

#define SWAP_AT ((void *)0x7e0000000000UL)

typedef void many_work_fn(int fd, int k);

static int map_at(const char *path, int extra)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	p = mmap(SWAP_AT, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | extra, fd, 0);
	close(fd);
	return p == SWAP_AT ? 0 : -1;
}

static int line_from(const char *fifo)
{
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	char c;

	if (fd < 0)
		return -1;
	while (read(fd, &c, 1) == 1 && c != '\n')
		;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char line[16];
	many_work_fn *fn;
	void *h;
	int fd;

	if (argc < 7)
		return 1;
	fam_log_open(argv[5]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (map_at(argv[1], MAP_FIXED_NOREPLACE))
		return 2;
	printf("ready\n");
	if (line_from(argv[3]) || map_at(argv[2], MAP_FIXED))
		return 2;
	fd = open(argv[4], O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "ok\n", 3) != 3)
		return 2;
	close(fd);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	fn = h ? (many_work_fn *)dlsym(h, "many_work") : NULL;
	if (!fn)
		return 2;
	/* A marker of its own: `record -p` needs one to begin. */
	FAM_SPAN(fam_log_fd, "swapmap.run", NULL, fn(fam_log_fd, atoi(argv[6])));
	printf("done\n");
	return 0;
}
