/* SPDX-License-Identifier: MIT */
#ifndef LP_COMMON_H
#define LP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Messages: "leanprofiler: what failed: why". Warnings go to stderr too. */
void lp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void lp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same as "WHO: what failed" ("leanprofiler record: ..."). */
void lp_err_from(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Only under -v. */
void lp_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Said always, without "warning:" (progress the user waits for). */
void lp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int lp_verbose;

/* A decimal number from min to max and nothing else (no sign, space or suffix): 0 or -EINVAL. */
int lp_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A size in bytes: a decimal number, optionally followed by K, M or G (binary: KiB, MiB,
 * GiB) and "B" or "iB", from min to max. A value whose bytes do not fit in 64 bits is out of
 * range, never wrapped. 0 or -EINVAL (bad syntax), -ERANGE (outside min..max or overflow).
 */
int lp_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* The longest duration of the command line (--duration, --trace-last): 10^7 s, 115 days. */
#define LP_SECONDS_MAX 10000000

/*
 * A duration of the command line: seconds ("2.5"), or a number and its unit
 * ("500ms", "5s", "2m", "1h"); digits and a point only (no sign, exponent or
 * space); at least 1 ns, at most LP_SECONDS_MAX seconds. 0 or -EINVAL.
 */
int lp_parse_seconds(const char *s, uint64_t *ns);

/* All of p to fd (write(2) again after a short write or EINTR). 0 or -errno (-EIO: wrote 0). */
int lp_write_all(int fd, const void *p, size_t len);

/* Allocation that cannot fail silently: NULL and errno=ENOMEM on failure. */
void *lp_grow(void *ptr, size_t *cap, size_t need, size_t elem);

static inline uint64_t lp_hash64(uint64_t x)
{
	/* splitmix64 finaliser: cheap and good enough for open addressing. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif
