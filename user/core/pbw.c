// SPDX-License-Identifier: MIT
#include "pbw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint8_t *pb_grow(struct pb_buf *b, size_t n)
{
	uint8_t *p;

	if (b->err)
		return NULL;
	if (b->cap - b->len >= n)
		return b->p + b->len;
	p = lp_grow(b->p, &b->cap, b->len + n, 1);
	if (!p) {
		b->err = -ENOMEM;
		return NULL;
	}
	b->p = p;
	return p + b->len;
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	uint8_t *p = pb_room(b, 2 * PB_VARINT_MAX + len);

	if (!p)
		return;
	p += pb_varint(p, pb_tag(field, PB_LEN));
	p += pb_varint(p, len);
	if (len)
		memcpy(p, data, len);
	b->len = (size_t)(p - b->p) + len;
}

void pb_double(struct pb_buf *b, uint32_t field, double v)
{
	uint8_t *p = pb_room(b, PB_VARINT_MAX + 8);
	uint64_t u;

	if (!p)
		return;
	memcpy(&u, &v, 8);
	p += pb_varint(p, pb_tag(field, PB_I64));
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(u >> (8 * i));
	b->len = (size_t)(p - b->p);
}

size_t pb_open(struct pb_buf *b, uint32_t field)
{
	pb_uvarint(b, pb_tag(field, PB_LEN));
	pb_room(b, 1);
	if (b->err)
		return 0;
	b->p[b->len++] = 0;
	return b->len; /* the message's first byte */
}

void pb_close(struct pb_buf *b, size_t mark)
{
	size_t len, n;

	if (b->err)
		return;
	len = b->len - mark;
	n = pb_varint_len(len);
	if (n > 1) {
		/* Rare (a message of 128 bytes or more): its bytes move to make room. */
		if (!pb_room(b, n - 1))
			return;
		memmove(b->p + mark + n - 1, b->p + mark, len);
		b->len += n - 1;
	}
	pb_varint(b->p + mark - 1, len);
}

void pb_buf_free(struct pb_buf *b)
{
	free(b->p);
	*b = (struct pb_buf){ 0 };
}

int pb_read_varint(struct pb_cur *c, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 70 && c->p < c->end; shift += 7) {
		uint8_t byte = *c->p++;

		r |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

int pb_next(struct pb_cur *c, struct pb_field *f)
{
	uint64_t key;

	if (c->p >= c->end)
		return 0;
	if (pb_read_varint(c, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return -EINVAL;
	f->num = (uint32_t)(key >> 3);
	f->wire = (unsigned)(key & 7);
	f->data = c->p; /* never NULL, so that data + len is defined for every field */
	f->len = 0;
	switch (f->wire) {
	case PB_VARINT:
		return pb_read_varint(c, &f->v) ? -EINVAL : 1;
	case PB_I64:
	case PB_I32: {
		size_t n = f->wire == PB_I64 ? 8 : 4;

		if ((size_t)(c->end - c->p) < n)
			return -EINVAL;
		f->v = 0;
		for (size_t i = 0; i < n; i++)
			f->v |= (uint64_t)c->p[i] << (8 * i);
		c->p += n;
		return 1;
	}
	case PB_LEN:
		if (pb_read_varint(c, &f->v) || f->v > (uint64_t)(c->end - c->p))
			return -EINVAL;
		f->data = c->p;
		f->len = (size_t)f->v;
		c->p += f->len;
		return 1;
	default:
		return -EINVAL; /* groups (3, 4) are not in these messages */
	}
}
