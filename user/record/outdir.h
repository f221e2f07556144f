/* SPDX-License-Identifier: MIT */
/*
 * The output directory, made and opened once. leanprofiler runs as root over
 * other users' files: it writes only where the user the outputs are for could
 * write (acting as that user), or into a directory only root controls; never
 * into one another user controls, and never through a link that user planted.
 */
#ifndef LP_OUTDIR_H
#define LP_OUTDIR_H

#include "creds.h"

#include <stddef.h>

/* A directory lp_outdir_open made: its name in its parent, which stays open. */
struct lp_outdir_made {
	int parent;
	char *name;
	bool as_owner; /* made as the owner (else as root) */
};

struct lp_outdir {
	int fd;        /* O_CLOEXEC; -1 when not open */
	bool as_owner; /* files are created as the owner (else as root, then given to it) */
	struct lp_outdir_made *made; /* what it made, oldest first */
	size_t nmade;
};

/*
 * Makes path (and missing parents) and opens it, as owner's user (as
 * ourselves when owner is not set): the directory must belong to that user or
 * root, and nobody else may write into it (writable by all, or by a group
 * with other members). A symbolic link as the directory itself is refused.
 * When it is not the user's (a root-owned build/ under sudo make) or the user
 * may not make it, it is made and opened as root instead, but only along a
 * path where nobody else has a say: every directory from the working
 * directory (or /) on root's or the user's and writable by nobody else, and
 * no symbolic link at all. Says why on stderr. 0 or -errno.
 */
int lp_outdir_open(struct lp_outdir *d, const char *path, const struct lp_creds *owner);
/* Around the creation of a file in d: as its owner, or as root (lp_creds_fs_enter). */
int lp_outdir_enter(const struct lp_outdir *d, const struct lp_creds *owner,
		    struct lp_fs_saved *s);
void lp_outdir_leave(struct lp_fs_saved *s);
/* Gives a file created in d to owner (fchown on the descriptor only). 0 or -errno. */
int lp_outdir_give(const struct lp_creds *owner, int fd);
/*
 * Before the new files appear under names[]: when any of them exists (the
 * previous recording), each becomes NAME.old, replacing an older one; a name
 * the previous recording did not have loses its NAME.old, so that the .old
 * files are one recording's. As whoever we are (root, once recording ran).
 * 0 or -errno.
 */
int lp_outdir_keep_old(const struct lp_outdir *d, const char *const names[], size_t n);
/*
 * Removes what a recording killed before its end (SIGKILL) left in d: files
 * NAME.tmp.XXXXXX of names[] (lp_outfile's temporary names), regular, owned
 * by uid, whose writer's lock is free (a recording that is still writing one,
 * in this directory, holds it: its files stay). The count removed.
 */
size_t lp_outdir_clean_stale(const struct lp_outdir *d, const char *const names[], size_t n,
			     uid_t uid);
/*
 * Removes the directories lp_outdir_open made, when nothing was written into
 * them (only empty ones go); d is closed. As they were made: as owner, or root.
 */
void lp_outdir_unmake(struct lp_outdir *d, const struct lp_creds *owner);
void lp_outdir_close(struct lp_outdir *d);

#endif
