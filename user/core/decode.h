/* SPDX-License-Identifier: MIT */
/*
 * Turns ring-buffer records (bpf/wire.h) into nesting events: resolves the
 * texts of literals sent once per address, copies inline texts, bounds and
 * flags what was cut or unreadable, and turns per-thread sequence gaps into
 * counts of lost events. Every record is validated: the bytes come from the
 * kernel, but their contents come from the target.
 */
#ifndef LP_DECODE_H
#define LP_DECODE_H

#include <linux/types.h>

#include "bpf/wire.h"
#include "nest.h"
#include "strtab.h"

/* A process or thread began, exec'ed or ended (wire.h enum lp_task_what). */
struct lp_task_event {
	unsigned what;
	uint32_t pid, tid, ppid;
	uint64_t ts_ns;
	bool group_dead; /* LP_TASK_EXIT of the process's last thread */
	bool privileged; /* LP_TASK_EXIT: it exec'ed a program that gains privileges */
	bool new_image;  /* LP_TASK_FOUND at exec: nothing of the program ran before */
	uint32_t comm;   /* string id of its name */
};

/* A probe of a span-pair spec fired (wire.h struct lp_rec_usdt), its strings interned. */
struct lp_usdt_event {
	uint32_t pid, tid;
	uint64_t ts_ns;
	uint32_t spec;
	bool exit;                         /* the exit role, else the entry */
	bool abort;                        /* the abort role (exit is set too) */
	uint32_t alt;                      /* which probe of the role's list fired */
	uint32_t nargs;
	uint64_t args[LP_USDT_ARGS];
	uint32_t nstr;
	uint32_t str[LP_USDT_STR_SLOTS];   /* string ids of the string arguments */
	uint32_t lost_before;              /* this thread's events lost just before this one */
	uint64_t file_since_ns;
	bool has_sched; /* --off-cpu: the thread's snapshot at ts_ns */
	struct lp_sched sched;
};

struct lp_decode_sink {
	int (*event)(void *ctx, const struct lp_event *ev);
	/*
	 * Optional, all three. libs: pid may have mapped files not examined
	 * yet; paused: it is stopped since ts_ns until the sink sends it SIGCONT
	 * (wire.h); start_ns: when that process began, which tells it from a
	 * later one given its PID. self_stop: pid sent itself stop signal sig
	 * at ts_ns (wire.h lp_rec_self_stop).
	 */
	int (*task)(void *ctx, const struct lp_task_event *te);
	int (*libs)(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns);
	int (*self_stop)(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns);
	/* Optional: a probe of a span-pair spec (--span, --preset). */
	int (*usdt)(void *ctx, const struct lp_usdt_event *ue);
	/*
	 * Optional, --off-cpu: thread tid was off its CPU from off_ns to on_ns,
	 * asleep until wake_ns, then runnable (off <= wake <= on).
	 */
	int (*sched)(void *ctx, uint32_t pid, uint32_t tid, uint64_t off_ns, uint64_t wake_ns,
		     uint64_t on_ns);
	/*
	 * Optional: a text the kernel could not read, from the file it lies in
	 * (wire.h LP_STR_IN_FILE): at most size-1 bytes from offset off of file
	 * (dev, ino), up to a NUL, NUL-terminated; its length or -errno.
	 */
	long (*file_text)(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf,
			  size_t size);
	/*
	 * Optional: a text the kernel could not look up (wire.h LP_STR_AT_SITE),
	 * at addr, from the probed file (index) whose marker site ran at address
	 * site; as file_text.
	 */
	long (*site_text)(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
			  size_t size);
	void *ctx;
};

struct lp_decode_stats {
	uint64_t records;
	uint64_t enters, exits;   /* span events received */
	uint64_t malformed;       /* records too short or of unknown type: skipped */
	uint64_t unknown_literal; /* events naming a literal never sent: named "(unknown)" */
	uint64_t truncated;       /* names or metadata cut to LP_NAME_MAX / LP_META_MAX */
	uint64_t unreadable;      /* names or metadata nothing could be read of */
	uint64_t from_file;       /* texts read from the file they lie in (LP_STR_IN_FILE, _AT_SITE) */
	uint64_t abi_mismatch;    /* events from markers of another ABI version */
	uint64_t sched_intervals; /* --off-cpu: intervals off a CPU received */
};

struct lp_decoder;

struct lp_decoder *lp_decoder_new(struct strtab *st, const struct lp_decode_sink *sink);
void lp_decoder_free(struct lp_decoder *d);
/* 0, or the sink's / allocation's -errno. Malformed records are counted, not errors. */
int lp_decode(struct lp_decoder *d, const void *data, size_t size);
/*
 * lp_decode() that hands a marker's event back instead of to sink.event: 1
 * with *ev set, else as lp_decode() (every other record goes to the sink).
 * The consumer's path per event, without a call through a pointer.
 */
int lp_decode_record(struct lp_decoder *d, const void *data, size_t size, struct lp_event *ev);
const struct lp_decode_stats *lp_decoder_stats(const struct lp_decoder *d);
/* Marks every string id the decoder keeps (strtab.h: a collection under way). */
void lp_decoder_mark(const struct lp_decoder *d, struct strtab *st);
/* Recording of file's markers began at since_ns (its gate opened). */
int lp_decoder_file_since(struct lp_decoder *d, uint32_t file, uint64_t since_ns);
/* Names from the thread's first record; false when none arrived. */
bool lp_decoder_thread_name(const struct lp_decoder *d, uint32_t pid, uint32_t tid,
			    uint32_t *comm, uint32_t *pcomm);

#endif
