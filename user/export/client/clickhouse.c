// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* asprintf */
#include "clickhouse.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct lp_ch {
	CURL *curl;
	char *base;          /* the URL, ending in '/' or '?'-free path */
	struct lp_buf answer; /* the first LP_CH_ANSWER_MAX bytes of the last answer */
	char problem[512];
	unsigned long long sent;
	long code; /* the last answer's HTTP status, 0 without one */
	/* The answer being read is an error's: since when (CLOCK_MONOTONIC ns), how it ended. */
	uint64_t error_since;
	bool cut, timed_out;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the answer's status line said an error (1xx are interim: not yet). */
static bool error_answer(struct lp_ch *ch)
{
	long code = 0;

	if (!ch->error_since && !curl_easy_getinfo(ch->curl, CURLINFO_RESPONSE_CODE, &code) &&
	    code >= 200 && code != 200)
		ch->error_since = mono_ns();
	return ch->error_since != 0;
}

static size_t on_answer(char *p, size_t size, size_t n, void *ctx)
{
	struct lp_ch *ch = ctx;
	struct lp_buf *b = &ch->answer;
	size_t len = size * n, room = b->len < LP_CH_ANSWER_MAX ? LP_CH_ANSWER_MAX - b->len : 0;

	/* The rest is read and dropped: an answer is bounded, whatever the server sends. */
	if (room && lp_buf_put(b, p, len < room ? len : room))
		return 0;
	/* An error's first line is all that is shown: the rest is not waited for (0 aborts). */
	if (error_answer(ch) && (!room || (b->len && memchr(b->p, '\n', b->len)))) {
		ch->cut = true;
		return 0;
	}
	return len;
}

/* Called at least once a second while a transfer runs: an error's answer has its time. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct lp_ch *ch = ctx;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (error_answer(ch) &&
	    mono_ns() - ch->error_since > (uint64_t)LP_CH_ERROR_TIMEOUT * 1000000000ull) {
		ch->cut = ch->timed_out = true;
		return 1; /* aborts the transfer */
	}
	return 0;
}

/* text, cut at its first line and made safe for a terminal, into out. */
static void one_line(char *out, size_t size, const char *text, size_t len)
{
	struct lp_buf b = { 0 };
	const char *nl = memchr(text, '\n', len);

	if (nl)
		len = (size_t)(nl - text);
	if (len > 300)
		len = 300;
	if (lp_text_display(&b, text, len) || !b.p)
		snprintf(out, size, "(unreadable)");
	else
		snprintf(out, size, "%.*s", (int)b.len, b.p);
	lp_buf_free(&b);
}

int lp_ch_check_url(const char *url, char *problem, size_t size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *userinfo = NULL, *query = NULL;
	int err = -EINVAL;

	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0)) {
		snprintf(problem, size, "'%s' is not a URL (e.g. http://127.0.0.1:8123/)", url);
		goto cleanup;
	}
	if (strcmp(scheme, "http") && strcmp(scheme, "https")) {
		snprintf(problem, size, "'%s': the URL's scheme is http or https", url);
		goto cleanup;
	}
	if (!curl_url_get(u, CURLUPART_USER, &userinfo, 0) ||
	    !curl_url_get(u, CURLUPART_PASSWORD, &userinfo, 0)) {
		snprintf(problem, size, "the URL holds credentials, which ps shows to every user: "
					"give them in LEANPROFILER_CLICKHOUSE_USER and _PASSWORD or "
					"--credentials FILE");
		goto cleanup;
	}
	if (!curl_url_get(u, CURLUPART_QUERY, &query, 0)) {
		snprintf(problem, size, "'%s': the URL has a query part; give the server's address "
					"only", url);
		goto cleanup;
	}
	err = 0;
cleanup:
	curl_free(scheme);
	curl_free(userinfo);
	curl_free(query);
	curl_url_cleanup(u);
	return err;
}

struct lp_ch *lp_ch_open(const char *url, const char *user, const char *password,
			 const char *ca_file, char *problem, size_t size)
{
	struct lp_ch *ch = NULL;
	static bool inited;

	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			snprintf(problem, size, "cannot start libcurl");
			errno = ENOMEM;
			return NULL;
		}
		inited = true;
	}
	if (lp_ch_check_url(url, problem, size)) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->base = strdup(url)) || !(ch->curl = curl_easy_init())) {
		snprintf(problem, size, "out of memory");
		lp_ch_close(ch);
		ch = NULL;
		errno = ENOMEM;
		return NULL;
	}
	curl_easy_setopt(ch->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(ch->curl, CURLOPT_CONNECTTIMEOUT, (long)LP_CH_CONNECT_TIMEOUT);
	/* A server that stops answering ends the export, not a hung timer. */
	curl_easy_setopt(ch->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_LOW_SPEED_TIME, (long)LP_CH_STALL_TIMEOUT);
	curl_easy_setopt(ch->curl, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(ch->curl, CURLOPT_WRITEDATA, ch);
	curl_easy_setopt(ch->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(ch->curl, CURLOPT_XFERINFODATA, ch);
	curl_easy_setopt(ch->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(ch->curl, CURLOPT_POST, 1L);
	if (ca_file)
		curl_easy_setopt(ch->curl, CURLOPT_CAINFO, ca_file);
	if (user) {
		curl_easy_setopt(ch->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(ch->curl, CURLOPT_USERNAME, user);
		curl_easy_setopt(ch->curl, CURLOPT_PASSWORD, password ? password : "");
	}
	return ch;
}

int lp_ch_exec(struct lp_ch *ch, const char *sql, const char *body, size_t len,
	       const char *encoding, enum lp_ch_failure *failure,
	       const struct lp_buf **answer)
{
	char *q = curl_easy_escape(ch->curl, sql, 0), *url = NULL, *header = NULL, line[400];
	struct curl_slist *headers = NULL;
	long code = 0;
	CURLcode rc;
	int err = 0;

	*failure = LP_CH_OK;
	ch->answer.len = 0;
	ch->code = 0;
	ch->error_since = 0;
	ch->cut = ch->timed_out = false;
	/* The statement in the URL, so that the body is its data alone. */
	if (!q || asprintf(&url, "%s%squery=%s", ch->base, strchr(ch->base, '?') ? "&" : "?", q) < 0) {
		url = NULL;
		snprintf(ch->problem, sizeof(ch->problem), "out of memory");
		*failure = LP_CH_HTTP;
		err = -ENOMEM;
		goto cleanup;
	}
	if (encoding) {
		if (asprintf(&header, "Content-Encoding: %s", encoding) >= 0) {
			headers = curl_slist_append(NULL, header); /* a copy */
			free(header);
		}
		if (!headers) {
			snprintf(ch->problem, sizeof(ch->problem), "out of memory");
			*failure = LP_CH_HTTP;
			err = -ENOMEM;
			goto cleanup;
		}
	}
	curl_easy_setopt(ch->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(ch->curl, CURLOPT_URL, url);
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	rc = curl_easy_perform(ch->curl);
	/* Cut short by us: an error was answered, its first line (or what came in time) read. */
	if (ch->cut && (rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK))
		rc = CURLE_OK;
	if (rc != CURLE_OK) {
		snprintf(ch->problem, sizeof(ch->problem), "cannot reach %s: %s", ch->base,
			 curl_easy_strerror(rc));
		*failure = LP_CH_UNREACHABLE;
		err = -EIO;
		goto cleanup;
	}
	ch->sent += body ? len : 0;
	curl_easy_getinfo(ch->curl, CURLINFO_RESPONSE_CODE, &code);
	ch->code = code;
	if (code == 200)
		goto cleanup;
	one_line(line, sizeof(line), ch->answer.p ? ch->answer.p : "", ch->answer.len);
	/* 516: ClickHouse's "authentication failed", 401 and 403 from it or a proxy. */
	*failure = code == 401 || code == 403 || code == 516 ? LP_CH_AUTH : LP_CH_HTTP;
	snprintf(ch->problem, sizeof(ch->problem), "%s answered HTTP %ld%s: %s%s", ch->base, code,
		 *failure == LP_CH_AUTH ? " (credentials refused)" : "", line,
		 ch->timed_out ? " (the rest of the answer not read: more than "
				 LP_STR_CH(LP_CH_ERROR_TIMEOUT) " s)" : "");
	err = -EIO;
cleanup:
	if (answer)
		*answer = &ch->answer;
	curl_easy_setopt(ch->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers);
	curl_free(q);
	free(url);
	return err;
}

/* ClickHouse's exception code at the answer's start: "Code: 354, e.displayText() = ..." (18.16),
 * "Code: 354. DB::Exception: ..." (later versions); -1 for any other answer. */
static long exception_code(const struct lp_buf *a)
{
	static const char prefix[] = "Code: ";
	size_t i = sizeof(prefix) - 1;
	long code = 0;

	if (a->len <= i || memcmp(a->p, prefix, i))
		return -1;
	for (; i < a->len && a->p[i] >= '0' && a->p[i] <= '9' && code < 100000; i++)
		code = code * 10 + (a->p[i] - '0');
	return i < a->len && (a->p[i] == ',' || a->p[i] == '.') ? code : -1;
}

/*
 * Whether a "Cannot parse input" answer quotes gzip's first two bytes, 1f 8b, as what it met
 * instead of a row: "expected { before: " and the bytes raw (18.16, as tested), or quoted and
 * escaped, "before: '\x1F\x8B..." (later versions' form, accepted as well, untested here).
 */
static bool quotes_gzip_magic(const struct lp_buf *a)
{
	static const char before[] = "before: ";
	const char *p = a->p, *end = a->p + a->len;

	while ((p = memmem(p, (size_t)(end - p), before, sizeof(before) - 1))) {
		p += sizeof(before) - 1;
		p += p < end && *p == '\'';
		if ((end - p >= 2 && !memcmp(p, "\x1f\x8b", 2)) ||
		    (end - p >= 8 && !strncasecmp(p, "\\x1f\\x8b", 8)))
			return true;
	}
	return false;
}

const char *lp_ch_refused_encoding(const struct lp_ch *ch)
{
	long code;

	if (ch->code == 415)
		return "HTTP 415 Unsupported Media Type";
	if (ch->code < 400 || !ch->answer.p)
		return NULL;
	code = exception_code(&ch->answer);
	if (code == 89)
		return "Code: 89, unknown Content-Encoding";
	if (code == 354)
		return "Code: 354, inflate failed: the body was no longer gzip when it came in "
		       "(a proxy that decodes it?)";
	if (code == 27 && quotes_gzip_magic(&ch->answer))
		return "Code: 27, the gzip bytes were read as rows (a proxy that drops the "
		       "Content-Encoding header?)";
	return NULL;
}

const char *lp_ch_problem(const struct lp_ch *ch)
{
	return ch->problem;
}

unsigned long long lp_ch_sent(const struct lp_ch *ch)
{
	return ch->sent;
}

void lp_ch_close(struct lp_ch *ch)
{
	if (!ch)
		return;
	if (ch->curl)
		curl_easy_cleanup(ch->curl);
	lp_buf_free(&ch->answer);
	free(ch->base);
	free(ch);
}
