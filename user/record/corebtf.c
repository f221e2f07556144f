// SPDX-License-Identifier: MIT
/* The built-in kernel types for CO-RE (corebtf.h). */
#define _GNU_SOURCE
#include "corebtf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_btf.h"

/*
 * The running kernel as scripts/embed-btf.sh describes the build's: its BTF's
 * size and its image's notes (the build id) in hex. Into buf; 0 or -errno.
 */
static int kernel_id(char *buf, size_t size)
{
	unsigned char notes[4096];
	struct stat st;
	ssize_t n = 0;
	size_t len;
	int fd;

	if (stat("/sys/kernel/btf/vmlinux", &st))
		return -errno;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, notes, sizeof(notes));
		close(fd);
	}
	if (n < 0 || (size_t)n == sizeof(notes))
		return -EIO;
	len = (size_t)snprintf(buf, size, "btf %lld notes ", (long long)st.st_size);
	for (ssize_t i = 0; i < n && len + 2 < size; i++, len += 2)
		snprintf(buf + len, size - len, "%02x", notes[i]);
	return len + 1 < size ? 0 : -ENAMETOOLONG;
}

/* The built-in types as a file libbpf can open: a memfd, by its /proc/self/fd path. */
static int built_in(char *path, size_t size, int *fd, char *why, size_t whysz)
{
	char id[sizeof(lp_core_btf_kernel) + 64];
	ssize_t n;
	int err;

	if (LP_CORE_BTF_SIZE == 0) {
		snprintf(why, whysz, "this build has none (bpftool gen min_core_btf failed at make)");
		return -ENOENT;
	}
	err = kernel_id(id, sizeof(id));
	if (err || strcmp(id, lp_core_btf_kernel)) {
		snprintf(why, whysz, "the built-in types are of the kernel leanprofiler was built on, "
				     "not of this one (make on this machine builds them for it)");
		return -ESTALE;
	}
	*fd = memfd_create("leanprofiler-core-btf", MFD_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		snprintf(why, whysz, "cannot hold the built-in types: memfd_create: %s", strerror(-err));
		return err;
	}
	n = write(*fd, lp_core_btf_data, LP_CORE_BTF_SIZE);
	if (n != LP_CORE_BTF_SIZE) {
		err = n < 0 ? -errno : -EIO;
		snprintf(why, whysz, "cannot hold the built-in types: write: %s", strerror(-err));
		close(*fd);
		*fd = -1;
		return err;
	}
	snprintf(path, size, "/proc/self/fd/%d", *fd);
	return 0;
}

int lp_core_btf(char *path, size_t size, int *fd, char *why, size_t whysz)
{
	const char *env = getenv(LP_CORE_BTF_ENV);

	*fd = -1;
	if (!env)
		return built_in(path, size, fd, why, whysz);
	if (!strcmp(env, "0")) {
		snprintf(why, whysz, "%s=0", LP_CORE_BTF_ENV);
		return -ENOENT;
	}
	if (access(env, R_OK)) {
		int err = -errno;

		snprintf(why, whysz, "cannot read %s (%s): %s", env, LP_CORE_BTF_ENV, strerror(-err));
		return err;
	}
	if ((size_t)snprintf(path, size, "%s", env) >= size) {
		snprintf(why, whysz, "%s (%s) is too long a path", env, LP_CORE_BTF_ENV);
		return -ENAMETOOLONG;
	}
	return 0;
}
