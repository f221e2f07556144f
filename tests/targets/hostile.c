// SPDX-License-Identifier: MIT
/*
 * hostile: spans whose names and metadata are everything a profiled program
 * may hand the markers: text past LP_NAME_MAX / LP_META_MAX, UTF-8 cut by the
 * limit, invalid UTF-8, control characters, quotes and backslashes, '=' and
 * ',' in awkward places, keys that collide with the profiler's own, empty
 * strings, NULL, pointers to unmapped memory; then an exit that does not match
 * the open span, an exit without entry, recursion past the user side's depth
 * limit (LP_NEST_MAX_DEPTH), and a span still open at exit. Every case goes
 * through the real markers, both as string literals (sent once by address) and
 * as runtime buffers (copied at each marker).
 *
 * tests/integration/test_hostile.c derives what the outputs must show from the
 * documented rules; keep the two in step. Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leanprofiler.h"

#define DEEP 1100 /* nested enters on one thread; the user side keeps 1024 open */

/* String literals of 2^k copies of s (concatenated at compile time). */
#define R2(s) s s
#define R4(s) R2(s) R2(s)
#define R8(s) R4(s) R4(s)
#define R16(s) R8(s) R8(s)
#define R32(s) R16(s) R16(s)
#define R64(s) R32(s) R32(s)
#define R128(s) R64(s) R64(s)
#define R256(s) R128(s) R128(s)
#define R512(s) R256(s) R256(s)
#define R1024(s) R512(s) R512(s)

/* 300-byte literals: longer than a name may be, shorter than metadata may be. */
#define SHARED_X R256("X") R32("X") R8("X") R4("X")
#define SHARED_Y R256("Y") R32("Y") R8("Y") R4("Y")

/* A span through literal markers: name and meta must be literals (or NULL). */
#define SPAN_LIT(name, meta)                                                              \
	do {                                                                              \
		LP_SPAN_ENTER(name, meta);                                                \
		LP_SPAN_EXIT(name);                                                       \
	} while (0)

/*
 * The same through runtime markers. Never inlined or specialised, so the
 * compiler cannot see a constant argument (__builtin_constant_p stays 0).
 */
#if defined(__clang__)
#define OPAQUE __attribute__((noinline))
#else
#define OPAQUE __attribute__((noipa))
#endif

static OPAQUE void span_rt(const char *name, const char *meta)
{
	LP_SPAN_ENTER(name, meta);
	LP_SPAN_EXIT(name);
}

/* A heap copy of len bytes (may hold any byte but NUL), NUL-terminated. */
static char *dup_bytes(const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (!p)
		exit(1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* A heap copy of a string literal, its every byte (sizeof, not strlen). */
#define DUP(lit) dup_bytes(lit, sizeof(lit) - 1)

/* prefix + n copies of c + suffix, on the heap. */
static char *fill(const char *prefix, char c, size_t n, const char *suffix)
{
	size_t a = strlen(prefix), b = strlen(suffix);
	char *p = malloc(a + n + b + 1);

	if (!p)
		exit(1);
	memcpy(p, prefix, a);
	memset(p + a, c, n);
	memcpy(p + a + n, suffix, b + 1);
	return p;
}

static OPAQUE void recurse(int level)
{
	LP_SPAN_ENTER("deep.recurse", NULL);
	if (level + 1 < DEEP)
		recurse(level + 1);
	LP_SPAN_EXIT("deep.recurse");
}

static void *deep_thread(void *arg)
{
	(void)arg;
	/* The thread's name comes from the target too: an escape, a stray byte, a quote. */
	pthread_setname_np(pthread_self(), "deep\x1b\xff\"\\");
	recurse(0);
	return NULL;
}

int main(void)
{
	const char *volatile vnull = NULL;
	const char *volatile vone = (const char *)1;
	pthread_t th;
	char *p;
	long page = sysconf(_SC_PAGESIZE);

	/* Recursion 1100 deep on a thread of its own, with nothing else open. */
	if (pthread_create(&th, NULL, deep_thread, NULL) || pthread_join(th, NULL))
		return 1;

	/* Longer than the limits: 1000-byte names, 2000-byte metadata. */
	SPAN_LIT(R512("L") R256("L") R128("L") R64("L") R32("L") R8("L"), "case=long-name-literal");
	span_rt(fill("", 'R', 1000, ""), "case=long-name-runtime");
	SPAN_LIT("long.meta.literal",
		 "m=" R1024("M") R512("M") R256("M") R128("M") R64("M") R8("M") R4("M") R2("M"));
	span_rt("long.meta.runtime", fill("r=", 'N', 1998, ""));

	/* Exactly the limit (kept whole) and one byte more (cut). */
	SPAN_LIT(R256("E"), "case=exact-literal");
	span_rt(fill("", 'e', 256, ""), "case=exact-runtime");
	SPAN_LIT(R256("F") "F", "case=over-literal");
	span_rt(fill("", 'f', 257, ""), "case=over-runtime");

	/* Multi-byte characters across the cut at byte 256. */
	span_rt(fill("s2.", 'a', 252, "\xc3\xa9" "tail"), "case=cut-2byte");          /* é at 255..256 */
	span_rt(fill("s3.", 'a', 251, "\xe2\x82\xac" "tail"), "case=cut-3byte");      /* € at 254..256 */
	span_rt(fill("s4.", 'a', 250, "\xf0\x9f\x98\x80" "tail"), "case=cut-4byte");  /* 😀 at 253..256 */
	span_rt(fill("s5.", 'a', 251, "\xf0\x9f\x98\x80" "tail"), "case=cut-4byte-late"); /* 254..257 */
	span_rt(fill("s6.", 'a', 251, "\xc3\xa9" "tail"), "case=cut-after-2byte");    /* é at 254..255 */
	span_rt(fill("s7.", 'a', 251, "\xc3\xa9"), "case=exact-2byte");               /* 256 bytes */
	SPAN_LIT("s8." R128("a") R64("a") R32("a") R16("a") R8("a") R2("a") "a" "\xe2\x82\xac" "tail",
		 "case=cut-3byte-literal"); /* 3 + 251 ASCII, € at 254..256 */
	span_rt("meta.cut.2byte", fill("u=", 'b', 509, "\xc3\xa9" "tail")); /* é at 511..512 */

	/*
	 * One literal used as metadata and as a name (the same address): each use
	 * has its own limit, 512 bytes as metadata, 256 as a name.
	 */
	SPAN_LIT("shared.meta.first", SHARED_X);
	SPAN_LIT(SHARED_X, "case=shared-meta-first");
	SPAN_LIT(SHARED_Y, "case=shared-name-first");
	SPAN_LIT("shared.name.first", SHARED_Y);

	/* Invalid UTF-8, as literals and as runtime copies. */
	SPAN_LIT("inv.lone[\x80]", "case=literal");
	SPAN_LIT("inv.overlong[\xc0\x80]", "case=literal");
	SPAN_LIT("inv.surrogate[\xed\xa0\x80]", "case=literal");
	SPAN_LIT("inv.truncseq[\xe2\x82" "]", "case=literal");
	SPAN_LIT("inv.truncend\xe2\x82", "case=literal");
	SPAN_LIT("inv.toobig[\xf4\x90\x80\x80]", "case=literal");
	SPAN_LIT("inv.ff[\xff\xfe]", "case=literal");
	span_rt(DUP("inv.lone[\x80]"), "case=runtime");
	span_rt(DUP("inv.overlong[\xc0\x80]"), "case=runtime");
	span_rt(DUP("inv.surrogate[\xed\xa0\x80]"), "case=runtime");
	span_rt(DUP("inv.truncseq[\xe2\x82" "]"), "case=runtime");
	span_rt(DUP("inv.truncend\xe2\x82"), "case=runtime");
	span_rt(DUP("inv.toobig[\xf4\x90\x80\x80]"), "case=runtime");
	span_rt(DUP("inv.ff[\xff\xfe]"), "case=runtime");
	SPAN_LIT("inv.meta", "bad=[\x80], \xff=k, sur=\xed\xa0\x80");

	/* Every C0 control character and DEL, in a name and in metadata. */
	SPAN_LIT("ctl:\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"
		 "\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f",
		 "case=literal");
	p = fill("ctl.rt:", 'x', 32, "");
	for (int c = 1; c < 32; c++)
		p[7 + c - 1] = (char)c;
	p[7 + 31] = 0x7f;
	span_rt(p, "case=runtime");
	SPAN_LIT("c1[\xc2\x9b\xc2\x85]", "case=c1"); /* C1 controls CSI and NEL, valid UTF-8 */
	SPAN_LIT("ctl.meta", "c=\x01\x1b[31m\x7f, t=a\tb, n=line1\nline2");

	/* Quotes and backslashes. */
	SPAN_LIT("q\"uote\\back\\\\slash\"", "path=C:\\dir\\, say=\"hi\"");
	span_rt(DUP("rt\"q\\\""), "case=runtime");

	/* Metadata that stresses the documented rules. */
	SPAN_LIT("meta.tricky", "k=v=w, x=,=y, ,,  , a#2=1, a=1, a=2, counter=5");
	span_rt("meta.tricky.rt", DUP("k=v=w, x=,=y, ,,  , a#2=1, a=1, a=2, counter=5"));
	LP_SPAN_ENTER_COUNTER("meta.reserved",
			      "counter=5, self_counter=6, unterminated=7, uncertain=8, "
			      "started_before_recording=9, meta.counter=10",
			      100);
	LP_SPAN_EXIT_COUNTER("meta.reserved", 142);
	{
		char many[512];
		size_t m = 0;

		for (int i = 0; i < 70; i++)
			m += (size_t)snprintf(many + m, sizeof(many) - m, "%sk%d", i ? "," : "", i);
		span_rt("meta.many", dup_bytes(many, m));
	}

	/* Empty strings and NULL. */
	SPAN_LIT("", "case=empty-name-literal");
	span_rt(DUP(""), "case=empty-name-runtime");
	SPAN_LIT("empty.meta.literal", "");
	span_rt("empty.meta.runtime", DUP(""));
	SPAN_LIT("null.meta", NULL);
	LP_SPAN_ENTER((const char *)0, "case=null-literal");
	LP_SPAN_EXIT((const char *)0);
	span_rt(vnull, "case=null-runtime");

	/* Pointers that cannot be read. */
	LP_SPAN_ENTER((const char *)1, "case=addr1-literal");
	LP_SPAN_EXIT((const char *)1);
	span_rt(vone, "case=addr1-runtime");
	LP_SPAN_ENTER("unreadable.meta.literal", (const char *)1);
	LP_SPAN_EXIT("unreadable.meta.literal");
	{
		const char *meta = DUP("case=munmapped");
		char *gone = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (gone == MAP_FAILED || none == MAP_FAILED)
			return 1;
		memcpy(gone, "readable", 9);
		munmap(gone, (size_t)page);
		/* Nothing is mapped between here and the markers. */
		span_rt(gone, meta);
		span_rt("unreadable.meta.runtime", gone);
		span_rt(none, "case=prot-none");
		/* Text with no NUL before the end of its mapping. */
		gone = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (gone == MAP_FAILED)
			return 1;
		munmap(gone + page, (size_t)page);
		memset(gone + page - 10, 'z', 10);
		span_rt(gone + page - 10, "case=runs-into-unmapped");
	}

	/* Nesting anomalies. */
	LP_SPAN_ENTER("mm.outer", NULL);
	LP_SPAN_ENTER("mm.inner", NULL);
	LP_SPAN_EXIT("mm.wrong");    /* no open span of that name: counted, ignored */
	LP_SPAN_EXIT("mm.outer");    /* closes mm.inner as unterminated */
	LP_SPAN_EXIT("never.entered"); /* exit without entry */
	LP_SPAN_ENTER("left.open", "state=open"); /* closed at exit, unterminated */
	return 0;
}
