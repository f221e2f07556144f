/* SPDX-License-Identifier: MIT */
/*
 * Ready span-pair specs for runtimes that ship USDT probes (docs/presets.md).
 * Each preset is a list of spec strings in the --span grammar (spec.h), parsed
 * by the same parser: a preset is exactly what a user could have typed.
 */
#ifndef LP_PRESETS_H
#define LP_PRESETS_H

#include "common.h"

struct lp_preset {
	const char *name;
	const char *what;          /* one line: the program and what it records */
	const char *const *specs;  /* NULL-terminated */
};

extern const struct lp_preset lp_presets[];
extern const size_t lp_npresets;

/* The preset called name, or NULL. */
const struct lp_preset *lp_preset_find(const char *name);
/* "a, b, c": the names of every preset, for messages. */
const char *lp_preset_names(void);
/*
 * Writes into buf the comma-separated names of the presets that use probe
 * (provider, name); returns how many.
 */
size_t lp_presets_using(const char *provider, const char *name, char *buf, size_t size);

#endif
