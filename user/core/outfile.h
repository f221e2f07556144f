/* SPDX-License-Identifier: MIT */
/*
 * Output files appear whole or not at all: written to a new temporary file in
 * the same directory (never an existing one, never a link, closed on exec),
 * then renamed over the final name.
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

/* name relative to the directory dirfd. 0 or -errno. */
int lp_outfile_openat(struct lp_outfile *o, int dirfd, const char *name);
/* The same relative to the working directory. */
int lp_outfile_open(struct lp_outfile *o, const char *path);
/* Flushes, syncs and renames into place; 0 or -errno (the temp file is removed). */
int lp_outfile_commit(struct lp_outfile *o);
void lp_outfile_abort(struct lp_outfile *o);

#endif
