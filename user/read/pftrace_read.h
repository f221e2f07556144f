/* SPDX-License-Identifier: MIT */
/*
 * Reads a Perfetto trace as `record --format perfetto` writes it
 * (user/core/pftrace.c) into the sink trace_read.h's JSON reader feeds, in the
 * same order: otherData, the process and thread names, then the spans, a
 * thread's each after the spans that enclose it.
 *
 * Two passes, memory bounded whatever the file's size: the first inflates
 * the packets and pairs each thread's BEGIN and END events (its open slices
 * held, at most LP_PFTRACE_READ_DEPTH of them), writing each span as it ends
 * (children before parents, as the JSON trace has them) to an unlinked
 * temporary file in $TMPDIR (/tmp); the second reads that file from its end.
 */
#ifndef LP_PFTRACE_READ_H
#define LP_PFTRACE_READ_H

#include "trace_read.h"

/* A packet of the file, or the packets one compressed packet holds, at most: larger is refused. */
#define LP_PFTRACE_READ_PACKET_MAX (16u << 20)
/* Interned texts' bytes kept while reading (every sequence's): past it the file is refused. */
#define LP_PFTRACE_READ_INTERN_MAX (256u << 20)
/* Slices open at once on a track; deeper ones are skipped (counted in stats.skipped). */
#define LP_PFTRACE_READ_DEPTH 4096

/* Whether path's first bytes are a protobuf Trace (a JSON trace begins with '{'). */
bool lp_pftrace_is(const char *path);
/*
 * As lp_trace_read(). 0 or -errno: -EBADMSG for a file that is not a trace
 * record writes, -EFBIG past the limits above.
 */
int lp_pftrace_read(const char *path, const struct lp_tr_sink *sink, struct lp_tr_stats *stats);
/* lp_pftrace_read() or lp_trace_read(), by the file's first bytes. */
int lp_read_any_trace(const char *path, const struct lp_tr_sink *sink,
		      struct lp_tr_stats *stats);

#endif
