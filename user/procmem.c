// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "procmem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define PREFAULT_CHUNK (64u << 10)
#define PREFAULT_MAX (256u << 20) /* bytes touched at most per mapping */

int lp_prefault(pid_t pid)
{
	char path[64], perms[8], *line = NULL, *buf;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(PREFAULT_CHUNK);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, off, inode;
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %" SCNu64 " %n", &start,
			   &end, perms, &off, &inode, &name_at) < 5)
			continue;
		/* Literals live in read-only file mappings (.rodata); skip the rest. */
		if (inode == 0 || perms[0] != 'r' || perms[1] == 'w' || perms[2] == 'x')
			continue;
		if (end - start > PREFAULT_MAX)
			end = start + PREFAULT_MAX;
		for (uint64_t a = start; a < end; a += PREFAULT_CHUNK) {
			size_t len = end - a < PREFAULT_CHUNK ? end - a : PREFAULT_CHUNK;
			struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)a, len };

			if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0) {
				err = -errno;
				break;
			}
		}
	}
	free(line);
	free(buf);
	fclose(f);
	return err;
}

long lp_read_target_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (size == 0)
		return -EINVAL;
	/* Page by page: a string may end just before an unmapped page. */
	while (got < size - 1) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		struct iovec local, remote;
		ssize_t n;
		char *nul;

		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		local = (struct iovec){ buf + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)a, chunk };
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return got ? -EFAULT : -errno;
		nul = memchr(buf + got, '\0', (size_t)n);
		if (nul)
			return nul - buf;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (long)got;
}
