// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define LP_OUTFILE_BUFFER (1u << 20)
#define LP_OUTFILE_TRIES 100 /* temporary names tried before giving up */

/* The files read so far (lp_outfile_input_fd): two or three, export's two per PATH. */
static struct lp_input {
	dev_t dev;
	ino_t ino;
	char *path;
} *inputs;
static size_t ninputs, cap_inputs;
static const char *refused; /* the input the last refused output was */

int lp_outfile_input_fd(int fd, const char *path)
{
	struct lp_input *p;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0; /* a pipe cannot be written over */
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
			return 0;
	p = lp_grow(inputs, &cap_inputs, ninputs + 1, sizeof(*inputs));
	if (!p)
		return -ENOMEM;
	inputs = p;
	inputs[ninputs].path = strdup(path);
	if (!inputs[ninputs].path)
		return -ENOMEM;
	inputs[ninputs].dev = st.st_dev;
	inputs[ninputs].ino = st.st_ino;
	ninputs++;
	return 0;
}

static const char *input_of(const struct stat *st)
{
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
			return inputs[i].path;
	return NULL;
}

const char *lp_outfile_input_at_fd(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? NULL : input_of(&st);
}

/*
 * Whether name (or the file a link there leads to) is an input: the rename
 * would replace the name, the link's file is refused too, as what was meant.
 */
static const char *output_is_input(int dirfd, const char *name)
{
	struct stat st;
	const char *p = NULL;

	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		p = input_of(&st);
	if (!p && !fstatat(dirfd, name, &st, 0))
		p = input_of(&st);
	return p;
}

int lp_outfile_check(int dirfd, const char *name)
{
	refused = output_is_input(dirfd, name);
	return refused ? -LP_OUTFILE_EINPUT : 0;
}

const char *lp_outfile_strerror(int err)
{
	static char msg[4200];

	if (err != -LP_OUTFILE_EINPUT)
		return strerror(-err);
	snprintf(msg, sizeof(msg), "it is %s, which this command reads: nothing written; give the "
		 "output another name", refused ? refused : "an input");
	return msg;
}

/*
 * A new file NAME.tmp.XXXXXX next to name: created, never opened if it
 * exists (O_EXCL, O_NOFOLLOW), not inherited by a launched command
 * (O_CLOEXEC), with the mode open(2) gives a new file under the umask.
 */
static int create_tmp(struct lp_outfile *o)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len = strlen(o->tmp);

	for (int i = 0; i < LP_OUTFILE_TRIES; i++) {
		unsigned char rnd[6];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		for (size_t k = 0; k < sizeof(rnd); k++)
			o->tmp[len - 6 + k] = chars[rnd[k] % (sizeof(chars) - 1)];
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0666);
		/*
		 * Locked while it is written: the lock goes with the writer, SIGKILL
		 * too, so that a later recording tells a stale file from a live one
		 * (lp_outdir_clean_stale). A file system without flock: no lock.
		 */
		if (fd >= 0)
			flock(fd, LOCK_EX | LOCK_NB);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int lp_outfile_openat(struct lp_outfile *o, int dirfd, const char *name)
{
	int fd, err;

	memset(o, 0, sizeof(*o));
	err = lp_outfile_check(dirfd, name);
	if (err)
		return err;
	o->dirfd = dirfd;
	o->path = strdup(name);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", name) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto fail;
	}
	fd = create_tmp(o);
	if (fd < 0) {
		err = fd;
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	/* Large writes: the trace can be hundreds of MB. */
	o->buf = malloc(LP_OUTFILE_BUFFER);
	if (o->buf)
		setvbuf(o->f, o->buf, _IOFBF, LP_OUTFILE_BUFFER);
	return 0;
fail:
	lp_outfile_abort(o);
	return err;
}

int lp_outfile_open(struct lp_outfile *o, const char *path)
{
	return lp_outfile_openat(o, AT_FDCWD, path);
}

int lp_outfile_commit(struct lp_outfile *o)
{
	int err = 0;

	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = -(errno ? errno : EIO);
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	free(o->buf);
	o->buf = NULL;
	/* A rename never follows a link at either name: one planted there is replaced. */
	if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->path))
		err = -errno;
	if (err)
		unlinkat(o->dirfd, o->tmp, 0);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return err;
}

void lp_outfile_abort(struct lp_outfile *o)
{
	if (o->f)
		fclose(o->f);
	free(o->buf);
	if (o->tmp)
		unlinkat(o->dirfd, o->tmp, 0);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
