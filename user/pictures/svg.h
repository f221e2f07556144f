/* SPDX-License-Identifier: MIT */
/*
 * report --svg: two standalone SVG files, valid XML whatever the target named
 * its spans (every text through lp_text_picture, then XML-escaped):
 *   timeline.svg: the spans per thread and depth over the recording, a time
 *                 axis, a legend of the names drawn; spans narrower than a
 *                 pixel are drawn merged;
 *   rows.svg:     the summary's rows, each with its inclusive (total) and
 *                 self time as two horizontal bars on one time axis.
 */
#ifndef LP_SVG_H
#define LP_SVG_H

#include "pictures.h"

#define LP_SVG_WIDTH 1200       /* pixels, both pictures */
#define LP_SVG_THREADS_MAX 16   /* timeline lanes: the threads with the most spans */
#define LP_SVG_DEPTH_MAX 16     /* depths drawn per thread */
#define LP_SVG_ROWS_MAX 24      /* rows.svg: the first rows of the summary (by self time) */
#define LP_SVG_LEGEND_MAX 12    /* names in the timeline's legend */

/* Writes DIR/timeline.svg (when there is a trace) and DIR/rows.svg. 0 or -errno (said). */
int lp_svg_write(const struct lp_recording *r, int dirfd, const char *dir);

/* The XML character data of untrusted text: lp_text_picture, then & < > " ' escaped. */
int lp_xml_text(struct lp_buf *out, const char *s, size_t len);

#endif
