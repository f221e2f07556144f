/* SPDX-License-Identifier: MIT */
/*
 * The way back from a JSON trace's args to the metadata text they were made
 * of (meta.h): "k=v,k2=v2" such that lp_meta_parse() and lp_meta_keys() give
 * exactly the items read, so that a converted trace goes through the
 * writers' own code (report --format perfetto, lp_pftrace_span) and comes out
 * as the recording's. The keys the writers gave ("meta.KEY", "KEY#N") are
 * taken as they are: lp_meta_keys() leaves distinct keys of at most
 * LP_META_KEY_MAX bytes alone; a longer one is a cut key's "#N", given again.
 */
#ifndef LP_META_TEXT_H
#define LP_META_TEXT_H

#include "text.h"

/*
 * The text of the items of blob (trace_read.h's meta blob, in order) into out
 * (replaced, NUL-terminated), checked: 0, -EINVAL when no text gives these
 * items back (a value with ',' or outer blanks, a key with '=': not the
 * writers'), or -ENOMEM. reserved as given to lp_meta_keys().
 */
int lp_meta_text(const char *blob, size_t len, const char *const *reserved, struct lp_buf *out);

#endif
