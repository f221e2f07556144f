/* SPDX-License-Identifier: MIT */
/*
 * report --html: one self-contained page (user/pictures/page.js and user/pictures/page.css
 * inline, pictures drawn as inline SVG by the script; nothing is fetched: its
 * Content-Security-Policy allows no request at all, and only its own script,
 * by a nonce new for every page).
 *
 * The recording travels as one JSON document in <script type="application/json">
 * (docs/formats.md: "The page's data"), escaped so that no text in it can end that
 * element: < > & U+2028 U+2029 are written as \uXXXX. Every text from the
 * target goes through lp_text_picture first, and the script puts texts into
 * the page with textContent only; metadata keys travel as [key, value] pairs,
 * never as object keys.
 *
 * What bounds the page: the timeline's items (LP_HTML_BLOCKS_MAX over all
 * zoom levels, picture.h), the flame graph's nodes, the table's rows and the
 * groups (LP_PICTURE_GROUPS_MAX): a 10M-span recording makes a page of a few MB.
 */
#ifndef LP_HTML_H
#define LP_HTML_H

#include "pictures.h"

#define LP_HTML_ROWS_MAX 2000         /* rows in the page's table: the first by self time */
#define LP_HTML_BARS_MAX 40           /* rows drawn as inclusive and self bars */
#define LP_HTML_FLAME_NODES_MAX 20000 /* flame graph nodes: the widest */

/* Writes the page to path (a new file renamed into place). 0 or -errno (said). */
int lp_html_write(const struct lp_recording *r, const char *path);

/*
 * The JSON text json (len bytes) made safe inside an HTML <script> element:
 * < > & and U+2028, U+2029 as \uXXXX escapes (they only occur inside strings).
 */
int lp_html_safe_json(FILE *f, const char *json, size_t len);

#endif
