// SPDX-License-Identifier: MIT
/* uprobe_multi links through bpf(2) (multi.h). */
#define _GNU_SOURCE
#include "multi.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* BPF_LINK_CREATE's attributes for uprobe_multi, as the kernel's union bpf_attr lays them out. */
struct multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
	uint32_t pad;
};

_Static_assert(offsetof(struct multi_attr, path) == 16, "union bpf_attr: link_create's union");
_Static_assert(offsetof(struct multi_attr, cnt) == 48, "union bpf_attr: uprobe_multi.cnt");

int lp_multi_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *refs,
		    const uint64_t *cookies, uint32_t n, uint32_t pid)
{
	struct multi_attr a = {
		.prog_fd = (uint32_t)prog_fd,
		.attach_type = LP_TRACE_UPROBE_MULTI,
		.path = (uint64_t)(uintptr_t)path,
		.offsets = (uint64_t)(uintptr_t)offsets,
		.ref_ctr_offsets = (uint64_t)(uintptr_t)refs,
		.cookies = (uint64_t)(uintptr_t)cookies,
		.cnt = n,
		.pid = pid,
	};
	int fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : fd;
}

bool lp_multi_supported(void)
{
	static int known; /* 0: not probed, 1: yes, 2: no */
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	uint64_t off = 0;
	int prog, link;

	if (known)
		return known == 1;
	/* LEANPROFILER_UPROBE_MULTI=0: one link per site, as on kernels without them. */
	if (getenv(LP_MULTI_ENV) && !strcmp(getenv(LP_MULTI_ENV), "0")) {
		known = 2;
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.expected_attach_type = LP_TRACE_UPROBE_MULTI;
	prog = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (prog < 0) {
		known = 2;
		return false;
	}
	/* Offset 0 of our own file: its ELF header, mapped without exec, so no breakpoint is set. */
	link = lp_multi_attach(prog, "/proc/self/exe", &off, NULL, NULL, 1, 0);
	known = link >= 0 ? 1 : 2;
	if (link >= 0)
		close(link);
	close(prog);
	return known == 1;
}

bool lp_pid_filter_supported(void)
{
	const char *env = getenv(LP_PID_FILTER_ENV);
	struct utsname u;
	int major = 0, minor = 0;

	if (env && !strcmp(env, "0"))
		return false;
	/*
	 * A child forked with its parent's breakpoints is paused by the kfunc
	 * bpf_send_signal_task() (Linux 6.13): without it, pid-filtered links
	 * would lose a child's spans until its own links are made.
	 */
	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2 ||
	    major * 1000 + minor < 6013)
		return false;
	return lp_multi_supported();
}
