/* SPDX-License-Identifier: MIT */
/*
 * Interned byte strings. Id 0 is the empty string. Other tables key on ids
 * instead of on text: an id is the same text for as long as it lives.
 *
 * Texts nobody holds any more are collected, so that memory follows what is
 * live, not every text a target ever sent (docs/internals.md, "Texts"):
 * between strtab_gc_begin() and strtab_gc_end() every holder marks the ids it
 * keeps (strtab_mark(), or its module's *_mark()); the others are freed and
 * their ids handed out again by later interns. An id a holder did not mark may
 * read as another text after the collection: marking must be complete. Id 0
 * and the texts interned during the collection always survive it.
 */
#ifndef LP_STRTAB_H
#define LP_STRTAB_H

#include "common.h"

/*
 * Bytes interned since the last collection before the next one is due, at
 * the least; more when more is live (strtab_gc_due()).
 */
#define LP_STRTAB_GC_FLOOR ((size_t)16 << 20)

/*
 * Builds with LP_STRTAB_POISON (the sanitizer builds, the fuzzers) overwrite
 * a freed text with this byte before freeing it, read a freed id as
 * LP_STRTAB_POISON_LEN of them (invalid UTF-8: a writer shows U+FFFD, never
 * a plausible name), and abort when a freed id is marked (its holder missed
 * an earlier collection).
 */
#define LP_STRTAB_POISON_BYTE 0xa5
#define LP_STRTAB_POISON_LEN 8

struct strtab;

/* What a collection freed, and what it left. */
struct strtab_gc_result {
	uint32_t freed_ids, live_ids; /* live: id 0 included */
	size_t freed_bytes, live_bytes; /* as strtab_bytes() counts them */
};

struct strtab *strtab_new(void);
void strtab_free(struct strtab *t);
/* Returns the id of the text (len bytes, any bytes), or UINT32_MAX on ENOMEM. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
/*
 * The text of id, NUL-terminated; valid until the next collection. An id
 * never handed out reads as the empty string, a freed one too (poison with
 * LP_STRTAB_POISON).
 */
const char *strtab_str(const struct strtab *t, uint32_t id, size_t *len);
/* One past the highest id in use: ids below it may be free. */
uint32_t strtab_count(const struct strtab *t);
/* Ids in use, id 0 included. */
uint32_t strtab_live(const struct strtab *t);
bool strtab_is_live(const struct strtab *t, uint32_t id);
/*
 * A hash of id's text (0 for an id not in use): the same text has the same
 * hash under any id, as ids are reused after a collection.
 */
uint64_t strtab_hash(const struct strtab *t, uint32_t id);
/* What the texts in use cost: their bytes and the table's own per id. */
size_t strtab_bytes(const struct strtab *t);

/*
 * Whether a collection is due: more bytes were interned since the last one
 * than max(LP_STRTAB_GC_FLOOR, what was live after it), so that collecting
 * costs O(1) per byte interned.
 */
bool strtab_gc_due(const struct strtab *t);
void strtab_gc_begin(struct strtab *t);
/* id is held: it survives the collection under way. Ids out of range are ignored. */
void strtab_mark(struct strtab *t, uint32_t id);
/*
 * Frees every id not marked since strtab_gc_begin() (but id 0), calling
 * on_freed (when not NULL; it must not intern) for each, so that caches keyed
 * by id forget them. res (when not NULL) says what was freed and what is left.
 */
void strtab_gc_end(struct strtab *t, void (*on_freed)(void *ctx, uint32_t id), void *ctx,
		   struct strtab_gc_result *res);

#endif
