// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LP_OUTFILE_BUFFER (1u << 20)

int lp_outfile_open(struct lp_outfile *o, const char *path)
{
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto fail;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	/* mkstemp() makes 0600; the outputs get what open(2) would give them. */
	{
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(fd, 0666 & ~mask)) {
			err = -errno;
			close(fd);
			goto fail;
		}
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

int lp_outfile_give(struct lp_outfile *o, uid_t uid, gid_t gid)
{
	return fchown(fileno(o->f), uid, gid) ? -errno : 0;
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
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
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
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
