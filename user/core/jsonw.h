/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer for output too large to build as a tree (the trace).
 * One separator state per nesting level; strings are escaped and made valid
 * UTF-8 whatever bytes they came from. Errors are sticky: check jw_error()
 * once at the end.
 *
 * Text is formatted into the writer's own buffer, never through stdio's
 * per-call machinery, and goes to one of three places:
 *   jw_init_fd:  a file descriptor, written by a thread of its own (bgwrite.h)
 *                a buffer at a time, and at jw_flush() (the trace: hundreds of
 *                MB); with write(2) when a buffer is full if there is no thread;
 *   jw_init:     a stdio stream, written through at the end of every call, so
 *                that callers may mix their own stdio writes in;
 *   jw_init_buf: a growable memory buffer, appended to at every call.
 */
#ifndef LP_JSONW_H
#define LP_JSONW_H

#include <stdio.h>

#include "common.h"
#include "text.h"

#define JW_MAX_DEPTH 16
#define JW_FD_BUFFER (1u << 20)
/* The most jw_room() hands out: enough for any few numbers and keys. */
#define JW_ROOM_MAX 256

struct lp_bgw;

struct jw {
	int fd;             /* jw_init_fd: >= 0 */
	struct lp_bgw *bg;  /* jw_init_fd: the thread that writes, until jw_flush() */
	FILE *f;            /* jw_init */
	struct lp_buf *mem; /* jw_init_buf */
	char *buf;          /* pending output: heap (fd) or small (stream, memory) */
	size_t len, cap;
	/*
	 * Handed on so far: written (with a thread, known at jw_flush()), or for
	 * the stream, given to stdio.
	 */
	uint64_t bytes;
	int depth;
	bool first[JW_MAX_DEPTH];
	bool after_key;
	bool brk; /* jw_break() is pending */
	int err; /* first error, -errno */
	char small[2 * JW_ROOM_MAX];
};

void jw_init(struct jw *w, FILE *f);
/*
 * Needs jw_flush() to write the end, and jw_release(). Without memory for the
 * buffer it works with the small one, only slower.
 */
void jw_init_fd(struct jw *w, int fd);
void jw_init_buf(struct jw *w, struct lp_buf *mem);
/*
 * Writes out what is buffered and waits until it is written (the writing
 * thread ends: later text is written in the caller's thread); returns
 * jw_error().
 */
int jw_flush(struct jw *w);
/* Frees jw_init_fd's buffer (unwritten text is dropped). */
void jw_release(struct jw *w);

void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *key, size_t len);
void jw_str(struct jw *w, const char *s, size_t len);
void jw_cstr(struct jw *w, const char *s);
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/*
 * As json-c writes a double: "%.17g", with ".0" when that reads as an
 * integer (the summary's figures keep their text across writers). NaN and
 * infinities, which JSON has not, as null.
 */
void jw_double(struct jw *w, double v);
/* ns as microseconds with exactly three decimals: exact, no floating point. */
void jw_usec(struct jw *w, uint64_t ns);
void jw_newline(struct jw *w);
/*
 * The next member or element of the current object or array starts a line
 * of its own, after its comma; with none, the closing bracket does.
 */
void jw_break(struct jw *w);
int jw_error(const struct jw *w);

/*
 * Text that is already JSON, for callers that build parts once and reuse
 * them: jw_raw_value() is a whole value of the current array or object (it
 * gets its separator), jw_raw() is copied as is, with no separator.
 */
void jw_raw_value(struct jw *w, const char *json, size_t len);
void jw_raw(struct jw *w, const char *json, size_t len);
/*
 * At least n (<= JW_ROOM_MAX) bytes to format into in place; jw_advance()
 * then says where the text written there ends. Nothing else in between.
 */
char *jw_room(struct jw *w, size_t n);
void jw_advance(struct jw *w, char *end);
/*
 * A new line and the separator of the next value of the current array or
 * object, then at least n more bytes to format the value into in place (as
 * jw_room(), any n the buffer holds); NULL when the buffer is smaller (a
 * stream's or memory's: the caller writes it with the calls above).
 */
char *jw_line_room(struct jw *w, size_t n);

/* Decimal text of v, at most 20 bytes, not NUL-terminated; returns its end. */
char *jw_fmt_u64(char *out, uint64_t v);
/* ns as "US.NNN" (jw_usec's text), at most 24 bytes; returns its end. */
char *jw_fmt_usec(char *out, uint64_t ns);

/* The escaped, valid-UTF-8 JSON string literal of s, quotes included. */
void jw_write_string(FILE *f, const char *s, size_t len);
/* The same, written as is (no separator): for prebuilt parts. */
void jw_string_raw(struct jw *w, const char *s, size_t len);

#endif
