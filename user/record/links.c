// SPDX-License-Identifier: MIT
/* The probes' uprobe_multi links, per process, and their closing (links.h). */
#define _GNU_SOURCE
#include "links.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/wire.h"
#include "common.h"
#include "map.h"
#include "multi.h"

int lp_plan_add(struct lp_plan *p, uint64_t off, uint64_t ref, uint64_t cookie)
{
	size_t cap = p->cap;
	uint64_t *offs = lp_grow(p->offs, &cap, p->n + 1, sizeof(*offs)), *refs, *cookies;

	if (!offs)
		return -ENOMEM;
	p->offs = offs;
	cap = p->cap;
	refs = lp_grow(p->refs, &cap, p->n + 1, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	p->refs = refs;
	cap = p->cap;
	cookies = lp_grow(p->cookies, &cap, p->n + 1, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	p->cookies = cookies;
	p->cap = cap;
	p->offs[p->n] = off;
	p->refs[p->n] = ref;
	p->cookies[p->n++] = cookie;
	return 0;
}

void lp_plan_free(struct lp_plan *p)
{
	free(p->offs);
	free(p->refs);
	free(p->cookies);
	*p = (struct lp_plan){ 0 };
}

/* A file linked for a process: the key of its entry in the kernel half's "linked" map. */
struct linked_file {
	uint32_t file;
	uint64_t dev, ino;
};

/* One process's links (pid 0: the file-wide ones). */
struct proc_links {
	uint32_t pid, image;
	int *fds;
	size_t nfds, fds_cap;
	struct linked_file *files;
	size_t nfiles, files_cap;
};

struct lp_links {
	int linked_fd, linked_pids_fd;
	struct proc_links *procs;
	size_t nprocs, procs_cap;
	struct lp_map index; /* (pid, 0) -> v1: its procs index + 1 */
	size_t made;
	/* The closer: a thread that closes the links of processes gone. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, quit;
	int *dead;
	size_t ndead, dead_cap;
};

struct lp_links *lp_links_new(int linked_fd, int linked_pids_fd)
{
	struct lp_links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->linked_fd = linked_fd;
	l->linked_pids_fd = linked_pids_fd;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	return l;
}

static struct proc_links *proc_of(struct lp_links *l, uint32_t pid, bool create)
{
	struct lp_map_ent *e = lp_map_find(&l->index, pid, 0, create);
	struct proc_links *procs;

	if (!e)
		return NULL;
	if (e->v1)
		return &l->procs[e->v1 - 1];
	if (!create)
		return NULL;
	procs = lp_grow(l->procs, &l->procs_cap, l->nprocs + 1, sizeof(*procs));
	if (!procs)
		return NULL; /* the entry stays, v1 0: looked up as absent */
	l->procs = procs;
	procs[l->nprocs] = (struct proc_links){ .pid = pid };
	e->v1 = ++l->nprocs;
	return &procs[l->nprocs - 1];
}

struct close_slice {
	const int *fds;
	size_t n;
};

static void *close_slice(void *arg)
{
	struct close_slice *c = arg;

	for (size_t i = 0; i < c->n; i++)
		close(c->fds[i]);
	return NULL;
}

void lp_close_parallel(const int *fds, size_t n)
{
	struct close_slice slices[LP_CLOSE_THREADS];
	pthread_t threads[LP_CLOSE_THREADS];
	bool started[LP_CLOSE_THREADS] = { false };
	size_t nthreads = n < LP_CLOSE_THREADS ? n : LP_CLOSE_THREADS;
	size_t per = nthreads ? (n + nthreads - 1) / nthreads : 0;

	for (size_t t = 0; t < nthreads; t++) {
		size_t from = t * per < n ? t * per : n, to = from + per < n ? from + per : n;

		slices[t] = (struct close_slice){ fds + from, to - from };
		/* A thread that cannot start leaves its slice to this one. */
		started[t] = pthread_create(&threads[t], NULL, close_slice, &slices[t]) == 0;
		if (!started[t])
			close_slice(&slices[t]);
	}
	for (size_t t = 0; t < nthreads; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
}

static void *closer(void *arg)
{
	struct lp_links *l = arg;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		int *fds;
		size_t n;

		while (!l->ndead && !l->quit)
			pthread_cond_wait(&l->cv, &l->mu);
		if (!l->ndead)
			break;
		fds = l->dead;
		n = l->ndead;
		l->dead = NULL;
		l->ndead = l->dead_cap = 0;
		pthread_mutex_unlock(&l->mu);
		lp_close_parallel(fds, n);
		free(fds);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* Hands fds [0, n) to the closer; closed here when it cannot take them. */
static void close_later(struct lp_links *l, const int *fds, size_t n)
{
	int *dead;

	if (!n)
		return;
	pthread_mutex_lock(&l->mu);
	if (!l->started && !l->quit)
		l->started = pthread_create(&l->thread, NULL, closer, l) == 0;
	dead = l->started ? lp_grow(l->dead, &l->dead_cap, l->ndead + n, sizeof(*dead)) : NULL;
	if (dead) {
		l->dead = dead;
		memcpy(dead + l->ndead, fds, n * sizeof(*fds));
		l->ndead += n;
		pthread_cond_signal(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	if (!dead)
		lp_close_parallel(fds, n);
}

int lp_links_make(struct lp_links *l, const int *progs, const struct lp_plan *plans, size_t n,
		  const char *path, const char *name, uint32_t file, uint64_t dev, uint64_t ino,
		  uint32_t pid, uint32_t image)
{
	struct proc_links *p = proc_of(l, pid, true);
	size_t first, made = 0;
	struct linked_file *files;
	int err = 0;

	if (!p) {
		lp_err("cannot attach to %s: out of memory", name);
		return -ENOMEM;
	}
	/* Links of an image before (an exec not read yet) record nothing more: they go. */
	if (p->image != image && (p->nfds || p->nfiles))
		lp_links_forget(l, pid);
	p->image = image;
	first = p->nfds;
	files = lp_grow(p->files, &p->files_cap, p->nfiles + 1, sizeof(*files));
	if (!files) {
		lp_err("cannot attach to %s: out of memory", name);
		return -ENOMEM;
	}
	p->files = files;
	for (size_t i = 0; i < n && !err; i++) {
		const struct lp_plan *pl = &plans[i];
		uint64_t *cookies;
		int *fds, fd;

		if (!pl->n)
			continue;
		fds = lp_grow(p->fds, &p->fds_cap, p->nfds + 1, sizeof(*fds));
		cookies = malloc(pl->n * sizeof(*cookies));
		if (!fds || !cookies) {
			free(cookies);
			lp_err("cannot attach to %s: out of memory", name);
			err = -ENOMEM;
			break;
		}
		p->fds = fds;
		for (size_t k = 0; k < pl->n; k++)
			cookies[k] = pl->cookies[k] | (uint64_t)(image & LP_IMAGE_MASK) << 32;
		fd = lp_multi_attach(progs[i], path, pl->offs, pl->refs, cookies, (uint32_t)pl->n,
				     pid);
		free(cookies);
		if (fd < 0) {
			err = fd;
			/* A process gone meanwhile has nothing to probe: not said. */
			if (err != -ESRCH)
				lp_err("failed to attach to the probes of %s%s: %s", name,
				       pid ? " for one process" : "", strerror(-err));
			break;
		}
		p->fds[p->nfds++] = fd;
		made++;
	}
	if (err) {
		close_later(l, p->fds + first, p->nfds - first);
		p->nfds = first;
		return err;
	}
	p->files[p->nfiles++] = (struct linked_file){ .file = file, .dev = dev, .ino = ino };
	l->made += made;
	if (pid) {
		struct lp_linked_key k = { .pid = pid, .image = image, .dev = dev, .ino = ino };
		__u8 one = 1;

		/* Best effort: a file not known as linked only pauses the process at its next dlopen(). */
		bpf_map_update_elem(l->linked_fd, &k, &one, BPF_ANY);
		bpf_map_update_elem(l->linked_pids_fd, &pid, &image, BPF_ANY);
	}
	return (int)made;
}

bool lp_links_have(const struct lp_links *l, uint32_t pid, uint32_t image, uint32_t file)
{
	struct lp_map_ent *e = lp_map_find((struct lp_map *)&l->index, pid, 0, false);
	const struct proc_links *p = e && e->v1 ? &l->procs[e->v1 - 1] : NULL;

	/* Links of another image (the PID's earlier process, its exit record lost) do not count. */
	for (size_t i = 0; p && p->image == image && i < p->nfiles; i++)
		if (p->files[i].file == file)
			return true;
	return false;
}

void lp_links_forget(struct lp_links *l, uint32_t pid)
{
	struct proc_links *p = proc_of(l, pid, false);

	if (!p || !pid)
		return;
	for (size_t i = 0; i < p->nfiles; i++) {
		struct lp_linked_key k = { .pid = pid, .image = p->image, .dev = p->files[i].dev,
					   .ino = p->files[i].ino };

		bpf_map_delete_elem(l->linked_fd, &k);
	}
	if (p->nfiles)
		bpf_map_delete_elem(l->linked_pids_fd, &pid);
	close_later(l, p->fds, p->nfds);
	p->nfds = p->nfiles = 0;
}

void lp_links_close_later(struct lp_links *l)
{
	for (size_t i = 0; i < l->nprocs; i++) {
		close_later(l, l->procs[i].fds, l->procs[i].nfds);
		l->procs[i].nfds = 0;
	}
}

size_t lp_links_made(const struct lp_links *l)
{
	return l->made;
}

void lp_links_close_all(struct lp_links *l)
{
	size_t n = 0, k = 0;
	int *all;

	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->quit = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; i < l->nprocs; i++)
		n += l->procs[i].nfds;
	all = malloc((n ? n : 1) * sizeof(*all));
	for (size_t i = 0; i < l->nprocs; i++) {
		struct proc_links *p = &l->procs[i];

		if (all)
			memcpy(all + k, p->fds, p->nfds * sizeof(*all));
		else
			lp_close_parallel(p->fds, p->nfds); /* out of memory: one process at a time */
		k += p->nfds;
		p->nfds = 0;
	}
	/* While the closer finishes its last batch: their grace periods overlap. */
	if (all)
		lp_close_parallel(all, n);
	free(all);
	if (l->started)
		pthread_join(l->thread, NULL);
	l->started = false;
}

void lp_links_free(struct lp_links *l)
{
	if (!l)
		return;
	lp_links_close_all(l);
	for (size_t i = 0; i < l->nprocs; i++) {
		free(l->procs[i].fds);
		free(l->procs[i].files);
	}
	free(l->procs);
	free(l->dead);
	lp_map_free(&l->index);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l);
}
