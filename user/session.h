/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of a recording: loads the programs, attaches them to the
 * leanprofiler markers of a binary for one process, and drains the ring
 * buffer into a callback. The only file that knows libbpf.
 */
#ifndef LP_SESSION_H
#define LP_SESSION_H

#include <sys/types.h>

#include "common.h"
#include "report.h"

#define LP_BUFFER_DEFAULT (16u << 20) /* ring buffer bytes */
#define LP_BUFFER_MIN (1u << 16)
#define LP_BUFFER_MAX (1u << 30)

typedef int (*lp_record_fn)(void *ctx, const void *data, size_t size);

struct lp_session_opts {
	size_t buffer_bytes; /* power of two, LP_BUFFER_MIN..LP_BUFFER_MAX */
	lp_record_fn on_record;
	void *ctx;
};

struct lp_session;

/* Loads the BPF programs. 0 or -errno; *s is NULL on failure. */
int lp_session_open(struct lp_session **s, const struct lp_session_opts *o);
/*
 * Attaches to the leanprofiler markers of the ELF file at path, for process
 * pid only. Returns the number of probes attached (0: no markers) or -errno.
 */
int lp_session_attach(struct lp_session *s, pid_t pid, const char *path);
/* An fd that becomes readable when the kernel forces a wakeup. */
int lp_session_fd(struct lp_session *s);
/* Hands every waiting record to on_record; 0 or -errno. */
int lp_session_consume(struct lp_session *s);
/* Kernel-side loss counters, summed over CPUs. */
int lp_session_loss(struct lp_session *s, struct lp_loss *loss);
/* Lost events of one thread as counted by the kernel. */
uint64_t lp_session_thread_loss(struct lp_session *s, uint32_t tid);
void lp_session_close(struct lp_session *s);

#endif
