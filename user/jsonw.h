/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer for output too large to build as a tree (the trace).
 * One separator state per nesting level; strings are escaped and made valid
 * UTF-8 whatever bytes they came from. Errors are sticky: check jw_error()
 * once at the end.
 */
#ifndef LP_JSONW_H
#define LP_JSONW_H

#include <stdio.h>

#include "common.h"

#define JW_MAX_DEPTH 16

struct jw {
	FILE *f;
	int depth;
	bool first[JW_MAX_DEPTH];
	bool after_key;
	int err; /* first error, -errno */
};

void jw_init(struct jw *w, FILE *f);
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
/* ns as microseconds with exactly three decimals: exact, no floating point. */
void jw_usec(struct jw *w, uint64_t ns);
void jw_newline(struct jw *w);
int jw_error(const struct jw *w);

/* The escaped, valid-UTF-8 JSON string literal of s, quotes included. */
void jw_write_string(FILE *f, const char *s, size_t len);

#endif
