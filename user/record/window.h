/* SPDX-License-Identifier: MIT */
/*
 * record --window: the recording cut into windows of a fixed length, each
 * written as it closes into a summary of its own (and a trace, unless
 * --summary-only) named by its start by the wall clock, the oldest removed
 * past --keep, each exported as it closes with --export. A span counts in the
 * window where it ends, by its end time (user/top/interval.h, as top's
 * intervals); docs/recording.md says what else a window's summary holds.
 */
#ifndef LP_RECORD_WINDOW_H
#define LP_RECORD_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/* --window: from 0.1 s (the files' names tell windows apart by the millisecond). */
#define LP_WINDOW_MIN_NS 100000000ULL
/* --keep: the window files kept at most (the names of those kept are held in memory). */
#define LP_WINDOW_KEEP_MAX 1000000
/* --export: windows written and waiting for their export; past it, one is not exported (said). */
#define LP_WINDOW_EXPORT_QUEUE 64

struct recorder;
struct lp_span;
struct strtab;
struct lp_windows;

/* Recording began at r->since: the first window starts. 0 or -errno (said). */
int lp_windows_start(struct recorder *r);
/* Every span, as it ends (the pipeline's span hook), and the texts it keeps of them. */
void lp_windows_span(struct lp_windows *w, const struct lp_span *s);
void lp_windows_mark(struct lp_windows *w, struct strtab *st);
/*
 * After a round of the loop (every span that ended before drained_ns was
 * handed over): the windows that ended are written. 0 or -errno (said).
 */
int lp_windows_round(struct recorder *r, uint64_t drained_ns);
/*
 * The recording ended at r->end_ns and every span was handed over: the
 * windows up to it are written, the last one cut short there. Then the
 * exports are waited for. 0 or -errno (said); *export_failed: a window's
 * export failed (said).
 */
int lp_windows_end(struct recorder *r, bool *export_failed);
/* Removes what is not written yet (temporary files), stops the exports, frees. */
void lp_windows_free(struct lp_windows *w);

#endif
