/* SPDX-License-Identifier: MIT */
/*
 * uprobe_multi links (Linux 6.6+): all the sites of one program in one file
 * as one link. The kernel serializes the removal of single uprobe links (an
 * RCU grace period each, one after another: 800 sites took 90 s here), while
 * uprobe_multi links removed together share their grace periods (200 files,
 * 32 threads: 0.5 s). Debian's libbpf 1.1 predates them: the link is made
 * with the bpf(2) call itself.
 */
#ifndef LP_RECORD_MULTI_H
#define LP_RECORD_MULTI_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel's attach type for them (enum bpf_attach_type, uapi 6.6). */
#define LP_TRACE_UPROBE_MULTI 48

/* Set to 0: single links only (as on a kernel without uprobe_multi). */
#define LP_MULTI_ENV "LEANPROFILER_UPROBE_MULTI"

/* Whether this kernel makes uprobe_multi links (probed once, without touching any code). */
bool lp_multi_supported(void);

/* Set to 0: links for every process even where one target's would do (record -p, -- COMMAND). */
#define LP_PID_FILTER_ENV "LEANPROFILER_PID_FILTER"

/*
 * Whether a recording of chosen processes can link each target process by
 * itself (uprobe_multi links with a pid, and the kfunc that pauses a forked
 * child: Linux 6.13), unless LP_PID_FILTER_ENV says 0.
 */
bool lp_pid_filter_supported(void);
/*
 * One link of program prog_fd (loaded with LP_TRACE_UPROBE_MULTI) at the n
 * file offsets of path, with their semaphores (refs, 0: none) and cookies,
 * for process pid only (its tgid; 0: every process): its descriptor, or
 * -errno (-ESRCH: no process pid).
 */
int lp_multi_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *refs,
		    const uint64_t *cookies, uint32_t n, uint32_t pid);

#endif
