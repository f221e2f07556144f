/* SPDX-License-Identifier: MIT */
/* report --format perfetto: a recording's JSON trace as Perfetto's, beside it. */
#ifndef LP_PFTRACE_CONVERT_H
#define LP_PFTRACE_CONVERT_H

/*
 * PATH: a recording's directory, its summary or its JSON trace. Writes
 * leanprofiler-trace.pftrace in the trace's directory: the spans (names,
 * metadata, counters, flags), the thread and process names and otherData
 * (the JSON reader's; --off-cpu's waits and splits and span pairs' detail are
 * not read from the JSON trace). *out: the file written. 0, or -errno (said).
 */
int lp_pftrace_convert(const char *path, char **out);

#endif
