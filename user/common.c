// SPDX-License-Identifier: MIT
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int lp_verbose;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "leanprofiler: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
