/* SPDX-License-Identifier: MIT */
/*
 * Protocol buffers' wire format, the little of it the Perfetto trace needs
 * (user/core/pftrace.c writes it, user/read/pftrace_read.c reads it): varints,
 * tags, length-delimited fields. No schema, no reflection: the callers know
 * their field numbers (tests/perfetto/trace.proto lists them).
 */
#ifndef LP_PBW_H
#define LP_PBW_H

#include <string.h>

#include "common.h"
#include "text.h" /* struct lp_buf */

/* Wire types. */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* The most bytes a varint takes (a uint64). */
#define PB_VARINT_MAX 10

/* Writes v as a varint at out (room for PB_VARINT_MAX); returns the bytes written. */
static inline __attribute__((always_inline)) size_t pb_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* The bytes pb_varint() writes for v. */
static inline size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t pb_tag(uint32_t field, unsigned wire)
{
	return (uint64_t)field << 3 | wire;
}

/*
 * Appending to a growable buffer. Out of memory is sticky: the first failure
 * sets err, later calls do nothing, and the caller checks err once.
 */
struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	int err; /* the first -ENOMEM */
};

/* pb_room() when the buffer must grow first (or err is set). */
uint8_t *pb_grow(struct pb_buf *b, size_t n);

/*
 * Room for n more bytes at p + len, or NULL (err set). This and the writers
 * below are inline: called for every field of every span, out of line they
 * were half the Perfetto trace's instructions (bench row 18), and inline a
 * field's tag is a constant.
 */
static inline __attribute__((always_inline)) uint8_t *pb_room(struct pb_buf *b, size_t n)
{
	if (__builtin_expect(!b->err && b->cap - b->len >= n, 1))
		return b->p + b->len;
	return pb_grow(b, n);
}

static inline __attribute__((always_inline)) void pb_bytes_raw(struct pb_buf *b, const void *data,
								 size_t len)
{
	uint8_t *p = pb_room(b, len);

	if (p && len) {
		memcpy(p, data, len);
		b->len += len;
	}
}

static inline __attribute__((always_inline)) void pb_uvarint(struct pb_buf *b, uint64_t v)
{
	uint8_t *p = pb_room(b, PB_VARINT_MAX);

	if (p)
		b->len += pb_varint(p, v);
}

/* Field field as a varint. */
static inline __attribute__((always_inline)) void pb_uint(struct pb_buf *b, uint32_t field,
							    uint64_t v)
{
	uint8_t *p = pb_room(b, 2 * PB_VARINT_MAX);

	if (!p)
		return;
	p += pb_varint(p, pb_tag(field, PB_VARINT));
	p += pb_varint(p, v);
	b->len = (size_t)(p - b->p);
}
/* Field field, length-delimited: len bytes of data (a string, bytes, or an encoded message). */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* Field field as a double (wire type I64, little endian). */
void pb_double(struct pb_buf *b, uint32_t field, double v);
/*
 * A nested message: pb_open() writes the tag and keeps one byte for its
 * length; pb_close() fills it in, moving the message's bytes when the length
 * needs more than one. Returns the mark to give pb_close().
 */
size_t pb_open(struct pb_buf *b, uint32_t field);
void pb_close(struct pb_buf *b, size_t mark);
void pb_buf_free(struct pb_buf *b);

/* ---- reading ---- */

struct pb_cur {
	const uint8_t *p, *end;
};

/* One field: its number and wire type; varint's value, or LEN's bytes. */
struct pb_field {
	uint32_t num;
	unsigned wire;
	uint64_t v;          /* PB_VARINT, PB_I64 (the raw 8 bytes), PB_I32 */
	const uint8_t *data; /* PB_LEN (elsewhere where the value begins, len 0) */
	size_t len;
};

/* The varint at c (advanced past it): 0, or -EINVAL (cut short or over 10 bytes). */
int pb_read_varint(struct pb_cur *c, uint64_t *v);
/* The next field of c: 1, 0 at its end, -EINVAL when malformed (groups are). */
int pb_next(struct pb_cur *c, struct pb_field *f);

#endif
