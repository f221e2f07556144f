/* SPDX-License-Identifier: MIT */
/*
 * SQL text with its constants replaced by $1, $2, ... the way PostgreSQL 15's
 * pg_stat_statements shows a query (its `query` column), from the text alone:
 * no server, no parse analysis. A span's statement is grouped by this text.
 */
#ifndef LP_SQLNORM_H
#define LP_SQLNORM_H

#include "text.h"

/*
 * Appends the normalized form of the SQL text s (len bytes; untrusted: any
 * bytes, never read past len, no NUL needed) to out. What pg_stat_statements 15
 * does, and so this:
 *  - constants become $N, numbered in order of position after the highest $N
 *    the statement already has (those keep their numbers): numbers, a minus
 *    sign the parser folds into the number ("-1", "- 1"), strings in every
 *    form ('', E'', U&'', $tag$$tag$, B'', X'', a string continued on the next
 *    line), TRUE, FALSE, NULL (not after IS), LIMIT ALL, EXTRACT's field;
 *  - kept as written: identifiers, "quoted identifiers", comments, operators,
 *    type modifiers (varchar(10), numeric(10,2), int[3], current_timestamp(0)),
 *    column positions (ORDER BY 1, GROUP BY 1, DISTINCT ON (1)), UESCAPE's
 *    character, and every utility statement as a whole (SET, BEGIN, EXPLAIN,
 *    SELECT INTO, ...: pg_stat_statements 15 compares those by text);
 *  - leading and trailing white space is dropped, and the end of the text from
 *    the last statement's semicolon on.
 * Several statements in one text are each numbered from $1, as
 * pg_stat_statements shows each of them, and stay joined as written. Text that
 * is cut short (an unterminated string or comment) is handled as ending there.
 * Where the parser alone decides (a column named like a keyword before a
 * minus sign), the text's usual reading is taken.
 * Returns 0, or -ENOMEM (out then holds a part of the result).
 */
int lp_sql_normalize(const char *s, size_t len, struct lp_buf *out);

#endif
