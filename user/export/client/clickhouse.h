/* SPDX-License-Identifier: MIT */
/*
 * ClickHouse's HTTP interface through libcurl: one statement per request,
 * its data (INSERT ... FORMAT JSONEachRow rows) as the POST body. TLS by the
 * URL's scheme (https:// verifies the server's certificate, as libcurl does
 * by default); credentials as HTTP basic auth, never in the URL.
 */
#ifndef LP_CLICKHOUSE_H
#define LP_CLICKHOUSE_H

#include <stddef.h>

#include "text.h"

/* The text of a macro's value, for messages and help texts. */
#define LP_STR_CH_(x) #x
#define LP_STR_CH(x) LP_STR_CH_(x)

/* Bytes of the server's answer kept (an error's text, a count). */
#define LP_CH_ANSWER_MAX 4096
/* Seconds to connect, and to wait for a stalled transfer before giving up. */
#define LP_CH_CONNECT_TIMEOUT 10
#define LP_CH_STALL_TIMEOUT 60
/*
 * An error's answer: read until its first line ends (or LP_CH_ANSWER_MAX
 * bytes), and for LP_CH_ERROR_TIMEOUT seconds at most from its status line:
 * a server that streams an endless error body never holds export.
 */
#define LP_CH_ERROR_TIMEOUT 10

struct lp_ch;

/* How a request failed: what main turns into the exit status. */
enum lp_ch_failure {
	LP_CH_OK = 0,
	LP_CH_UNREACHABLE, /* no answer: cannot resolve, connect, TLS, timeout */
	LP_CH_AUTH,        /* the server refused the credentials (401, 403, 516) */
	LP_CH_HTTP,        /* the server answered an error */
};

/*
 * 0 when url can name a server: http:// or https://, no user:password@ (ps
 * shows a command line), no query part; else -EINVAL and one line in problem.
 */
int lp_ch_check_url(const char *url, char *problem, size_t size);
/*
 * A client of the server at url (http:// or https://, no user:password@).
 * user and password may be NULL (the server's default user); ca_file NULL
 * for the system's CAs. NULL with errno and a line in problem on failure.
 */
struct lp_ch *lp_ch_open(const char *url, const char *user, const char *password,
			 const char *ca_file, char *problem, size_t size);
/*
 * Runs sql, with body (may be NULL) as its data, sent with the header
 * Content-Encoding: encoding unless encoding is NULL. 0, or -EIO with
 * failure set and one line in ch's problem (lp_ch_problem). The answer's
 * first LP_CH_ANSWER_MAX bytes are in *answer when it is not NULL (valid
 * until the next call).
 */
int lp_ch_exec(struct lp_ch *ch, const char *sql, const char *body, size_t len,
	       const char *encoding, enum lp_ch_failure *failure,
	       const struct lp_buf **answer);
/* What the last failed request said, one line, escaped for a terminal. */
const char *lp_ch_problem(const struct lp_ch *ch);
/*
 * Why the last request failed, when it failed because its body's
 * Content-Encoding was not taken, and so nothing of it was stored: HTTP 415
 * (RFC 7694: a server or proxy that refuses the coding), or one of
 * ClickHouse's exceptions about it, "Code: 89" (UNKNOWN_COMPRESSION_METHOD:
 * a coding it does not know), "Code: 354" (ZLIB_INFLATE_FAILED: the body is
 * not the gzip it was said to be, e.g. a proxy decoded it and kept the
 * header), or "Code: 27" (cannot parse input) quoting the gzip magic bytes
 * 1f 8b where a row should start (a proxy dropped the header, so the server
 * read the compressed bytes as rows; a JSON row never holds a raw 0x1f).
 * One line; NULL for any other failure, the request's own.
 */
const char *lp_ch_refused_encoding(const struct lp_ch *ch);
/* Request bytes sent so far (bodies). */
unsigned long long lp_ch_sent(const struct lp_ch *ch);
void lp_ch_close(struct lp_ch *ch);

#endif
