// SPDX-License-Identifier: MIT
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/wire.h"
#include "leanprofiler.skel.h"
#include "usdt.h"

struct lp_session {
	struct leanprofiler_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t nlinks, cap;
	struct lp_session_opts opts;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Warnings too: our own messages say what failed; -v shows libbpf's detail. */
	(void)level;
	if (!lp_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct lp_session *s = ctx;

	return s->opts.on_record(s->opts.ctx, data, size);
}

int lp_session_open(struct lp_session **out, const struct lp_session_opts *o)
{
	struct lp_session *s;
	int err;

	*out = NULL;
	libbpf_set_print(libbpf_print);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *o;
	s->skel = leanprofiler_bpf__open();
	if (!s->skel) {
		err = -errno;
		lp_err("failed to open the BPF programs: %s", strerror(-err));
		goto fail;
	}
	err = bpf_map__set_max_entries(s->skel->maps.rb, (__u32)o->buffer_bytes);
	if (err)
		goto fail;
	/* Wake the consumer early only when a burst fills 1/8 of the buffer. */
	s->skel->rodata->wakeup_bytes = o->buffer_bytes / 8 < (1u << 20) ? o->buffer_bytes / 8
									 : (1u << 20);
	err = leanprofiler_bpf__load(s->skel);
	if (err) {
		lp_err("failed to load the BPF programs: %s (needs root or CAP_BPF+CAP_PERFMON, "
		       "and a kernel with BTF; rerun with -v for the verifier's log)",
		       strerror(-err));
		goto fail;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_sample, s, NULL);
	if (!s->rb) {
		err = -errno;
		lp_err("failed to map the ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	lp_session_close(s);
	return err;
}

static int add_link(struct lp_session *s, struct bpf_link *l)
{
	struct bpf_link **links = lp_grow(s->links, &s->cap, s->nlinks + 1, sizeof(*links));

	if (!links) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	s->links = links;
	s->links[s->nlinks++] = l;
	return 0;
}

int lp_session_attach(struct lp_session *s, pid_t pid, const char *path)
{
	struct lp_usdt_note *notes;
	size_t n;
	int err, attached = 0;

	err = lp_usdt_read(path, &notes, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = notes[i].sema_off);
		struct bpf_program *prog;
		struct bpf_link *l;

		if (strcmp(notes[i].provider, "leanprofiler") != 0)
			continue;
		if (strcmp(notes[i].name, "span_enter") == 0)
			prog = s->skel->progs.lp_span_enter;
		else if (strcmp(notes[i].name, "span_exit") == 0)
			prog = s->skel->progs.lp_span_exit;
		else
			continue;
		l = bpf_program__attach_uprobe_opts(prog, pid, path, notes[i].loc_off, &uo);
		if (!l) {
			err = -errno;
			lp_err("failed to attach to %s:%s in %s (PID %d): %s", notes[i].provider,
			       notes[i].name, path, (int)pid, strerror(-err));
			goto cleanup;
		}
		err = add_link(s, l);
		if (err)
			goto cleanup;
		attached++;
	}
	lp_info("attached %d probes in %s to PID %d", attached, path, (int)pid);
	err = attached;
cleanup:
	free(notes);
	return err;
}

int lp_session_fd(struct lp_session *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

int lp_session_consume(struct lp_session *s)
{
	int n = ring_buffer__consume(s->rb);

	return n < 0 ? n : 0;
}

int lp_session_loss(struct lp_session *s, struct lp_loss *loss)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.stats);
	__u64 sums[LP_STAT_MAX] = { 0 };
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < LP_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sums[k] += vals[c];
	}
	free(vals);
	loss->enter = sums[LP_STAT_LOST_ENTER];
	loss->exit = sums[LP_STAT_LOST_EXIT];
	loss->string = sums[LP_STAT_LOST_STRING];
	loss->thread = sums[LP_STAT_LOST_THREAD];
	loss->no_storage = sums[LP_STAT_NO_TASK_STORAGE];
	return 0;
}

uint64_t lp_session_thread_loss(struct lp_session *s, uint32_t tid)
{
	struct lp_thread_lost l;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.lost_by_tid), &tid, &l))
		return 0;
	return l.enter + l.exit;
}

void lp_session_close(struct lp_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	ring_buffer__free(s->rb);
	leanprofiler_bpf__destroy(s->skel);
	free(s);
}
