// SPDX-License-Identifier: MIT
#include "pfzout.h"

#include <errno.h>
#include <string.h>

#include "pftrace.h"

/*
 * The packets in in as one TracePacket { compressed_packets: deflate(them) },
 * written; 0 or -errno. What the thread does (or the caller, without one).
 */
static int deflate_out(struct lp_pfz *t, struct pb_buf *in)
{
	/* The packet's header: Trace.packet tag and length, then the field's tag and length. */
	const size_t head_max = 2 * (1 + PB_VARINT_MAX);
	size_t bound = libdeflate_zlib_compress_bound(t->z, in->len);
	uint8_t *room, head[2 * (1 + PB_VARINT_MAX)];
	size_t clen, inner, h = 0;
	int err;

	room = pb_room(&t->zbuf, head_max + bound);
	if (!room)
		return -ENOMEM;
	clen = libdeflate_zlib_compress(t->z, in->p, in->len, room + head_max, bound);
	if (!clen)
		return -EIO; /* not within its own bound: not reached */
	inner = pb_varint_len(pb_tag(PF_TP_COMPRESSED, PB_LEN)) + pb_varint_len(clen) + clen;
	h += pb_varint(head + h, pb_tag(PF_TRACE_PACKET, PB_LEN));
	h += pb_varint(head + h, inner);
	h += pb_varint(head + h, pb_tag(PF_TP_COMPRESSED, PB_LEN));
	h += pb_varint(head + h, clen);
	memcpy(room + head_max - h, head, h);
	err = lp_write_all(t->fd, room + head_max - h, h + clen);
	pthread_mutex_lock(&t->mu);
	t->raw_bytes += in->len;
	t->file_bytes += h + clen;
	pthread_mutex_unlock(&t->mu);
	in->len = 0;
	return err;
}

static void *deflater(void *arg)
{
	struct lp_pfz *t = arg;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		int err;

		while (!t->job_ready && !t->quit)
			pthread_cond_wait(&t->cv, &t->mu);
		if (!t->job_ready)
			break;
		pthread_mutex_unlock(&t->mu);
		err = t->err ? 0 : deflate_out(t, &t->job);
		pthread_mutex_lock(&t->mu);
		if (err && !t->err)
			t->err = err;
		t->job.len = 0;
		t->job_ready = false;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* The chunk goes to the thread (once it is done with the one before), or is deflated here. */
int lp_pfz_flush(struct lp_pfz *t)
{
	struct pb_buf b;
	int err;

	if (!t->th_started) {
		if (!t->err && t->chunk.len)
			t->err = deflate_out(t, &t->chunk);
		return t->err;
	}
	pthread_mutex_lock(&t->mu);
	while (t->job_ready)
		pthread_cond_wait(&t->cv, &t->mu);
	if (!t->err && t->chunk.len) {
		b = t->job;
		t->job = t->chunk;
		t->chunk = b;
		t->job_ready = true;
		pthread_cond_broadcast(&t->cv);
	}
	err = t->err;
	pthread_mutex_unlock(&t->mu);
	return err;
}

/* The thread ends once it has written what it was given. */
static void stop(struct lp_pfz *t)
{
	if (!t->th_started)
		return;
	pthread_mutex_lock(&t->mu);
	t->quit = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	t->th_started = false;
}

int lp_pfz_finish(struct lp_pfz *t)
{
	int err = lp_pfz_flush(t);

	stop(t);
	return err ? err : t->err;
}

int lp_pfz_init(struct lp_pfz *t, int fd)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->z = libdeflate_alloc_compressor(LP_PFTRACE_ZLEVEL);
	if (!t->z)
		return -ENOMEM;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->th_started = !pthread_create(&t->th, NULL, deflater, t);
	return 0;
}

void lp_pfz_release(struct lp_pfz *t)
{
	stop(t);
	if (t->z) {
		libdeflate_free_compressor(t->z);
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv);
		t->z = NULL;
	}
	pb_buf_free(&t->chunk);
	pb_buf_free(&t->job);
	pb_buf_free(&t->zbuf);
}
