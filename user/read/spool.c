// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* O_TMPFILE */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lp_spool_open(struct lp_spool *s)
{
	const char *dir = getenv("TMPDIR");

	memset(s, 0, sizeof(*s));
	s->fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return s->fd < 0 ? -errno : 0;
}

static int flush(struct lp_spool *s)
{
	int err = lp_write_all(s->fd, s->out.p, s->out.len);

	if (err)
		return err;
	s->len += s->out.len;
	s->out.len = 0;
	return 0;
}

int lp_spool_put(struct lp_spool *s, const void *rec, size_t len)
{
	uint32_t n = (uint32_t)len;

	if (len > UINT32_MAX)
		return -EFBIG;
	/* The record, then its length: read back, the length comes first. */
	if (lp_buf_put(&s->out, rec, len) || lp_buf_put(&s->out, (const char *)&n, sizeof(n)))
		return -ENOMEM;
	return s->out.len >= LP_SPOOL_CHUNK ? flush(s) : 0;
}

int lp_spool_rewind(struct lp_spool *s)
{
	int err = flush(s);

	s->pos = s->len;
	s->lo = s->len;
	s->win.len = 0;
	return err;
}

/* The window holds the file's bytes [from, end): a chunk's worth, at least. */
static int window(struct lp_spool *s, uint64_t from, uint64_t end)
{
	size_t n;
	char *p;
	ssize_t got;

	if (end - from < LP_SPOOL_CHUNK)
		from = end > LP_SPOOL_CHUNK ? end - LP_SPOOL_CHUNK : 0;
	n = (size_t)(end - from);
	p = lp_grow(s->win.p, &s->win.cap, n, 1);
	if (!p)
		return -ENOMEM;
	s->win.p = p;
	got = pread(s->fd, p, n, (off_t)from);
	if (got != (ssize_t)n)
		return got < 0 ? -errno : -EIO;
	s->lo = from;
	s->win.len = n;
	return 0;
}

int lp_spool_prev(struct lp_spool *s, const void **rec, size_t *len)
{
	uint32_t n;
	int err;

	if (s->pos == 0)
		return 0;
	if (s->pos < sizeof(n))
		return -EIO;
	if (s->pos - sizeof(n) < s->lo && (err = window(s, s->pos - sizeof(n), s->pos)))
		return err;
	memcpy(&n, s->win.p + (s->pos - sizeof(n) - s->lo), sizeof(n));
	if (n > s->pos - sizeof(n))
		return -EIO;
	if (s->pos - sizeof(n) - n < s->lo && (err = window(s, s->pos - sizeof(n) - n, s->pos)))
		return err;
	s->pos -= sizeof(n) + n;
	*rec = s->win.p + (s->pos - s->lo);
	*len = n;
	return 1;
}

void lp_spool_close(struct lp_spool *s)
{
	if (s->fd >= 0)
		close(s->fd);
	lp_buf_free(&s->out);
	lp_buf_free(&s->win);
	s->fd = -1;
}
