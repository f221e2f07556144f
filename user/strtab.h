/* SPDX-License-Identifier: MIT */
/*
 * Interned byte strings. Id 0 is the empty string. Ids are dense and stable
 * for the table's life, so other tables key on them instead of on text.
 */
#ifndef LP_STRTAB_H
#define LP_STRTAB_H

#include "common.h"

struct strtab;

struct strtab *strtab_new(void);
void strtab_free(struct strtab *t);
/* Returns the id of the text (len bytes, any bytes), or UINT32_MAX on ENOMEM. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
const char *strtab_str(const struct strtab *t, uint32_t id, size_t *len);
uint32_t strtab_count(const struct strtab *t);

#endif
