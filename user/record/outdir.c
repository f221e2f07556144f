// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "outdir.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static void close_fd(struct lp_outdir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

/* Remembers that name was made in the directory parent (a descriptor we keep). */
static int note_made(struct lp_outdir *d, int parent, const char *name, bool as_owner)
{
	struct lp_outdir_made *m = realloc(d->made, (d->nmade + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	d->made = m;
	m[d->nmade].parent = fcntl(parent, F_DUPFD_CLOEXEC, 0);
	m[d->nmade].name = strdup(name);
	m[d->nmade].as_owner = as_owner;
	if (m[d->nmade].parent < 0 || !m[d->nmade].name) {
		int err = m[d->nmade].parent < 0 ? -errno : -ENOMEM;

		if (m[d->nmade].parent >= 0)
			close(m[d->nmade].parent);
		free(m[d->nmade].name);
		return err;
	}
	d->nmade++;
	return 0;
}

/*
 * mkdir -p as whoever we are now (the owner): each missing component, with the
 * mode mkdir(1) gives under the umask, following the links the user's own path
 * may hold, as mkdir -p does; what it makes is noted, to be removed again when
 * nothing gets written (lp_outdir_unmake).
 */
static int make_path(struct lp_outdir *d, const char *path)
{
	char *p = strdup(path), *save = NULL, *c, *next_c;
	int cur, err = 0;

	if (!p)
		return -ENOMEM;
	cur = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		err = -errno;
		free(p);
		return err;
	}
	for (c = strtok_r(p, "/", &save); c && !err; c = next_c) {
		int next;

		next_c = strtok_r(NULL, "/", &save);
		if (mkdirat(cur, c, 0777) == 0)
			err = note_made(d, cur, c, true);
		else if (errno != EEXIST)
			err = -errno;
		if (err || !next_c)
			break; /* the last one is opened by the caller, not through a link */
		next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			err = -errno;
		close(cur);
		cur = next;
	}
	if (cur >= 0)
		close(cur);
	free(p);
	return err;
}

/* Whether group gid has a member other than uid (listed, or by primary group). */
static bool group_shared(gid_t gid, uid_t uid)
{
	struct group *g = getgrgid(gid);
	struct passwd *pw, *me = getpwuid(uid);
	const char *name = me ? me->pw_name : "";
	bool shared = false;

	for (char **m = g ? g->gr_mem : NULL; m && *m && !shared; m++)
		shared = strcmp(*m, name) != 0;
	setpwent();
	while (!shared && (pw = getpwent()))
		shared = pw->pw_gid == gid && pw->pw_uid != uid;
	endpwent();
	return shared;
}

/*
 * Why a directory is not one to write into for uid's outputs, or NULL: it must
 * be uid's or root's, and nobody else may write into it.
 */
static const char *refused(const struct stat *st, uid_t uid)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != uid && st->st_uid != 0)
		return "it belongs to another user";
	if (st->st_mode & S_IWOTH)
		return "every user may write into it";
	if ((st->st_mode & S_IWGRP) && (st->st_uid != uid || uid == 0 || group_shared(st->st_gid, uid)))
		return "other users of its group may write into it";
	return NULL;
}

/*
 * The directory as its user (step 1): 0 with d->fd set, *why set when it is
 * refused, -EACCES when that user may not make it, or -errno.
 */
static int open_as_owner(struct lp_outdir *d, const char *path, const struct lp_creds *owner,
			 uid_t uid, const char **why)
{
	struct lp_fs_saved saved;
	struct stat st;
	int err = lp_creds_fs_enter(owner, &saved);

	if (err)
		return err;
	err = make_path(d, path);
	if (!err) {
		d->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d->fd < 0)
			err = -errno;
	}
	/* The last component a link: O_NOFOLLOW says ELOOP, or ENOTDIR for one to a file. */
	if ((err == -ELOOP || err == -ENOTDIR) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		*why = "it is a symbolic link (give the directory it points to)";
	lp_creds_fs_leave(&saved);
	if (!err && fstat(d->fd, &st))
		err = -errno;
	if (!err)
		*why = refused(&st, uid);
	d->as_owner = true;
	return err;
}

/*
 * The directory as root (step 2), where only root and its user have a say:
 * from the working directory (or /), every directory on the way theirs and
 * writable by nobody else, each component opened without following a link.
 * Missing ones are made, and given to the user when their parent is theirs.
 */
static int open_as_root(struct lp_outdir *d, const char *path, const struct lp_creds *owner,
			const char **why)
{
	static char on_the_way[PATH_MAX + 160];
	char *p = strdup(path), *save = NULL, walked[PATH_MAX] = "";
	int cur = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (!p || cur < 0) {
		err = !p ? -ENOMEM : -errno;
		free(p);
		if (cur >= 0)
			close(cur);
		return err;
	}
	for (char *c = strtok_r(p, "/", &save);; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		bool made = false;
		int next;

		if (fstat(cur, &st)) {
			err = -errno;
			break;
		}
		*why = refused(&st, owner->uid);
		if (*why && c) {
			/* Not the directory asked for: say which one on the way. */
			snprintf(on_the_way, sizeof(on_the_way), "%s, on the way there: %s",
				 walked[0] ? walked : path[0] == '/' ? "/" : ".", *why);
			*why = on_the_way;
		}
		if (*why || !c)
			break;
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "%s%s",
			 walked[0] || path[0] == '/' ? "/" : "", c);
		if (!strcmp(c, "."))
			continue;
		next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && mkdirat(cur, c, 0777) == 0) {
			made = true;
			err = note_made(d, cur, c, false);
			next = err ? -1 : openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
		}
		if (err)
			break;
		if (next < 0) {
			err = -errno;
			if (err == -ELOOP || err == -ENOTDIR)
				*why = "a symbolic link on the way to a directory the user may not "
				       "write";
			break;
		}
		if (made && st.st_uid == owner->uid && fchown(next, owner->uid, owner->gid)) {
			err = -errno;
			close(next);
			break;
		}
		close(cur);
		cur = next;
	}
	free(p);
	if (err || *why) {
		close(cur);
		return err;
	}
	d->fd = cur;
	d->as_owner = false;
	return 0;
}

int lp_outdir_open(struct lp_outdir *d, const char *path, const struct lp_creds *owner)
{
	uid_t uid = owner->set ? owner->uid : geteuid();
	const char *why = NULL;
	struct stat st;
	int err;

	*d = (struct lp_outdir){ .fd = -1 };
	err = open_as_owner(d, path, owner, uid, &why);
	if (!err && !why && fstat(d->fd, &st) == 0 && st.st_uid == uid)
		return 0; /* the user's own */
	if (owner->set && (err == -EACCES || (!err && !why))) {
		/* The user may not write there (a root-owned build/ under sudo make). */
		close_fd(d);
		why = NULL;
		err = open_as_root(d, path, owner, &why);
		if (!err && !why)
			return 0;
	} else if (!err && !why) {
		return 0; /* root's, recording as root */
	}
	if (why)
		lp_err("cannot write to output directory %s: %s", path, why);
	else
		lp_err("cannot write to output directory %s: %s", path, strerror(-err));
	lp_outdir_unmake(d, owner);
	lp_outdir_close(d);
	return err ? err : -EPERM;
}

int lp_outdir_enter(const struct lp_outdir *d, const struct lp_creds *owner,
		    struct lp_fs_saved *s)
{
	if (!d->as_owner) {
		s->set = false;
		return 0;
	}
	return lp_creds_fs_enter(owner, s);
}

void lp_outdir_leave(struct lp_fs_saved *s)
{
	lp_creds_fs_leave(s);
}

int lp_outdir_give(const struct lp_creds *owner, int fd)
{
	if (!owner->set)
		return 0;
	return fchown(fd, owner->uid, owner->gid) ? -errno : 0;
}

/*
 * The new name's predecessor kept as NAME.old, replacing an older .old: the
 * directory is only its user's and root's (lp_outdir_open), and renameat
 * moves the entry itself, a link as a link, never what it points to.
 */
static int keep_old(int dirfd, const char *name, bool *kept)
{
	char old[NAME_MAX + 1];
	struct stat st;

	*kept = false;
	if (snprintf(old, sizeof(old), "%s.old", name) >= (int)sizeof(old))
		return -ENAMETOOLONG;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (renameat(dirfd, name, dirfd, old))
		return -errno;
	*kept = true;
	return 0;
}

int lp_outdir_keep_old(const struct lp_outdir *d, const char *const names[], size_t n)
{
	char old[NAME_MAX + 1];
	bool any = false, kept[8] = { false };
	struct stat st;
	int err = 0;

	if (n > sizeof(kept) / sizeof(kept[0]))
		return -EINVAL;
	for (size_t i = 0; i < n && !any; i++)
		any = fstatat(d->fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!any)
		return 0; /* no previous recording: older .old files stay as they are */
	for (size_t i = 0; i < n && !err; i++)
		err = keep_old(d->fd, names[i], &kept[i]);
	/* The .old files are one recording: a name it did not have leaves no older file. */
	for (size_t i = 0; i < n && !err; i++) {
		if (kept[i] || snprintf(old, sizeof(old), "%s.old", names[i]) >= (int)sizeof(old))
			continue;
		if (unlinkat(d->fd, old, 0) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

/* NAME.tmp. and 6 of lp_outfile's characters: one of our temporary files of a name in names. */
static bool our_tmp_name(const char *entry, const char *const names[], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (strncmp(entry, names[i], len) || strncmp(entry + len, ".tmp.", 5))
			continue;
		entry += len + 5;
		if (strlen(entry) != 6)
			return false;
		for (; *entry; entry++)
			if (!(*entry >= 'a' && *entry <= 'z') && !(*entry >= 'A' && *entry <= 'Z') &&
			    !(*entry >= '0' && *entry <= '9'))
				return false;
		return true;
	}
	return false;
}

/*
 * Whether the file name in dirfd is stale: regular, uid's, its lock free. The
 * lock is taken and kept until the name is gone, so that no writer can start
 * on it meanwhile (none does: lp_outfile only makes new names, O_EXCL).
 */
static bool remove_if_stale(int dirfd, const char *name, uid_t uid)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st, now;
	bool removed = false;

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == uid &&
	    !flock(fd, LOCK_EX | LOCK_NB) &&
	    /* Still the file looked at, under that name. */
	    !fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == st.st_dev &&
	    now.st_ino == st.st_ino)
		removed = unlinkat(dirfd, name, 0) == 0;
	close(fd);
	return removed;
}

size_t lp_outdir_clean_stale(const struct lp_outdir *d, const char *const names[], size_t n,
			     uid_t uid)
{
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	size_t removed = 0;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0; /* nothing cleaned: the recording goes on all the same */
	}
	while ((e = readdir(dir)))
		if (our_tmp_name(e->d_name, names, n) && remove_if_stale(d->fd, e->d_name, uid))
			removed++;
	closedir(dir);
	return removed;
}

void lp_outdir_unmake(struct lp_outdir *d, const struct lp_creds *owner)
{
	/* Newest first: each was made in the one before. rmdir removes only empty ones. */
	while (d->nmade) {
		struct lp_outdir_made *m = &d->made[--d->nmade];
		struct lp_fs_saved saved = { 0 };

		close_fd(d); /* it goes too when it is the last one made */
		if (!m->as_owner || lp_creds_fs_enter(owner, &saved) == 0) {
			unlinkat(m->parent, m->name, AT_REMOVEDIR);
			if (m->as_owner)
				lp_creds_fs_leave(&saved);
		}
		close(m->parent);
		free(m->name);
	}
}

void lp_outdir_close(struct lp_outdir *d)
{
	close_fd(d);
	for (size_t i = 0; i < d->nmade; i++) {
		close(d->made[i].parent);
		free(d->made[i].name);
	}
	free(d->made);
	d->made = NULL;
	d->nmade = 0;
}
