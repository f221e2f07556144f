/* SPDX-License-Identifier: MIT */
/*
 * Output files appear whole or not at all: written to a temporary file in the
 * same directory, then renamed over the final name.
 */
#ifndef LP_OUTFILE_H
#define LP_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

struct lp_outfile {
	FILE *f;
	char *path;
	char *tmp;
	char *buf; /* the stream's buffer (glibc ignores a size without one) */
};

/* 0 or -errno. */
int lp_outfile_open(struct lp_outfile *o, const char *path);
/* The file will belong to uid:gid (the user who ran sudo). 0 or -errno. */
int lp_outfile_give(struct lp_outfile *o, uid_t uid, gid_t gid);
/* Flushes, syncs and renames into place; 0 or -errno (the temp file is removed). */
int lp_outfile_commit(struct lp_outfile *o);
void lp_outfile_abort(struct lp_outfile *o);

#endif
