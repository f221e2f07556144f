/* SPDX-License-Identifier: MIT */
/*
 * The probes' uprobe_multi links (multi.h): the sites of one program in one
 * file as one link, made for every process (file-wide) or for one target
 * process (pid-filtered: the kernel then writes the breakpoints into that
 * process's memory only, and no other process of the file takes them).
 * A process's links go when it exits or exec's, closed by a thread of their
 * own: each close waits for the kernel's grace periods, which the recording
 * must not wait for.
 */
#ifndef LP_RECORD_LINKS_H
#define LP_RECORD_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sites of one program in one file: what one link holds. */
struct lp_plan {
	uint64_t *offs, *refs; /* file offsets of the sites and of their semaphores (0: none) */
	uint64_t *cookies;     /* without the image (LP_MARKER_COOKIE, LP_USDT_SITE_COOKIE) */
	size_t n, cap;
};

/* Adds a site: 0 or -ENOMEM. */
int lp_plan_add(struct lp_plan *p, uint64_t off, uint64_t ref, uint64_t cookie);
void lp_plan_free(struct lp_plan *p);

struct lp_links;

/*
 * linked_fd, linked_pids_fd: the kernel half's maps of what is linked
 * (wire.h struct lp_linked_key). NULL when out of memory.
 */
struct lp_links *lp_links_new(int linked_fd, int linked_pids_fd);
/*
 * Makes the links of plans [0, n) (programs progs[i]) in the file at path
 * (the file (dev, ino), index file), for process pid at program image
 * image, or for every process (pid 0, image 0): in the plans' order, each
 * site's cookie with the image added. A plan without sites makes no link.
 * The links made, or -errno (said; what was made is undone).
 */
int lp_links_make(struct lp_links *l, const int *progs, const struct lp_plan *plans, size_t n,
		  const char *path, const char *name, uint32_t file, uint64_t dev, uint64_t ino,
		  uint32_t pid, uint32_t image);
/*
 * Whether file has links for process pid at program image image (made
 * since its last lp_links_forget).
 */
bool lp_links_have(const struct lp_links *l, uint32_t pid, uint32_t image, uint32_t file);
/*
 * Process pid exited or exec'ed: its links are closed in the background and
 * the kernel half no longer counts its files as linked.
 */
void lp_links_forget(struct lp_links *l, uint32_t pid);
/* Links made so far (all processes, closed ones included). */
size_t lp_links_made(const struct lp_links *l);
/* Hands every link to the closer (the recording ended): lp_links_close_all waits for it. */
void lp_links_close_later(struct lp_links *l);
/* Closes every link (in parallel: their grace periods overlap) and waits for the closer. */
void lp_links_close_all(struct lp_links *l);
void lp_links_free(struct lp_links *l);

/*
 * Closes n descriptors with up to LP_CLOSE_THREADS threads at once: closes
 * of uprobe links that run together share the kernel's grace periods.
 */
#define LP_CLOSE_THREADS 32
void lp_close_parallel(const int *fds, size_t n);

#endif
