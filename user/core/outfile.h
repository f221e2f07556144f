/* SPDX-License-Identifier: MIT */
/*
 * Output files appear whole or not at all: written to a new temporary file in
 * the same directory (never an existing one, never a link, closed on exec),
 * then renamed over the final name. The temporary file is locked (flock)
 * until then: one whose lock is free was left by a writer that is gone.
 */
#ifndef LP_OUTFILE_H
#define LP_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

struct lp_outfile {
	FILE *f;
	int dirfd;  /* names are relative to it (AT_FDCWD: to the working directory) */
	char *path; /* the final name */
	char *tmp;
	char *buf; /* the stream's buffer (glibc ignores a size without one) */
};

/*
 * The files this command reads: an output with the same st_dev and st_ino as
 * one of them (by its name, or by what a link there points to) is refused
 * before anything is written, with -LP_OUTFILE_EINPUT (issue: `report --html
 * leanprofiler-summary.json` in a recording's directory wrote the page over the
 * summary it had read). path is how messages name it. 0, or -ENOMEM.
 */
#define LP_OUTFILE_EINPUT ENOTUNIQ /* never from openat or renameat on a local file */
int lp_outfile_input_fd(int fd, const char *path);
/* The input fd (e.g. stdout) is, or NULL. */
const char *lp_outfile_input_at_fd(int fd);
/* Whether name in dirfd may be an output: 0 or -LP_OUTFILE_EINPUT (before writing any of several). */
int lp_outfile_check(int dirfd, const char *name);
/* strerror(-err), or for -LP_OUTFILE_EINPUT which input the output would have replaced. */
const char *lp_outfile_strerror(int err);

/* name relative to the directory dirfd. 0 or -errno (-LP_OUTFILE_EINPUT: see above). */
int lp_outfile_openat(struct lp_outfile *o, int dirfd, const char *name);
/* The same relative to the working directory. */
int lp_outfile_open(struct lp_outfile *o, const char *path);
/* Flushes, syncs and renames into place; 0 or -errno (the temp file is removed). */
int lp_outfile_commit(struct lp_outfile *o);
void lp_outfile_abort(struct lp_outfile *o);

#endif
