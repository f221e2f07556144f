// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

int lp_verbose;

/*
 * Messages name what targets send (paths they map, probe names from their
 * notes, process names): each goes through the display sanitizer, so that
 * none can write escape sequences to the operator's terminal.
 */
static void vmsg_from(const char *who, const char *prefix, const char *fmt, va_list ap)
{
	struct lp_buf b = { 0 };
	char *text = NULL;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vasprintf(&text, fmt, ap);
	if (n < 0 || lp_text_display(&b, text, (size_t)n)) {
		/*
		 * Memory is short (often what the message says): formatted on
		 * the stack, cut to a line, every byte but printable ASCII as '?'.
		 */
		char line[512];

		vsnprintf(line, sizeof(line), fmt, again);
		for (unsigned char *c = (unsigned char *)line; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?';
		fprintf(stderr, "%s: %s%s\n", who, prefix, line);
	} else {
		fprintf(stderr, "%s: %s%.*s\n", who, prefix, (int)b.len, b.p);
	}
	va_end(again);
	free(text);
	lp_buf_free(&b);
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	vmsg_from("leanprofiler", prefix, fmt, ap);
}

void lp_err_from(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg_from(who, "", fmt, ap);
	va_end(ap);
}

void lp_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void lp_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void lp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void lp_info(const char *fmt, ...)
{
	va_list ap;

	if (!lp_verbose)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int lp_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() would take spaces, a sign (and negate), "0x"... */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int lp_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	/* strtoull() would take spaces, a sign (and negate "-1" to 2^64-1), "0x"... */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end && strcmp(end, "B") && (!shift || strcmp(end, "iB")))
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	/* A shift that loses bits would wrap (17179869185G is 2^64 + 1 GiB). */
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int lp_parse_seconds(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "m", 60e9 }, { "h", 3600e9 } };
	/* strtod() would take spaces, a sign, "inf", "0x1p3", "1e3"... */
	size_t n = strspn(s, "0123456789.");
	char *end;
	double v;

	if (!n)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + n)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		double x = v * units[i].ns;

		if (strcmp(end, units[i].unit))
			continue;
		if (!(x >= 1) || x > LP_SECONDS_MAX * 1e9)
			return -EINVAL;
		*ns = (uint64_t)x;
		return 0;
	}
	return -EINVAL;
}

void *lp_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return ptr;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem) {
			errno = ENOMEM;
			return NULL;
		}
		n *= 2;
	}
	p = realloc(ptr, n * elem);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	*cap = n;
	return p;
}

int lp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
