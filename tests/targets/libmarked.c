// SPDX-License-Identifier: MIT
/*
 * libmarked.so: span markers that live in a shared library, with the library's
 * own probe sites and semaphore (lp__semaphore is hidden: one per module).
 * Linked into build/tests/targets/svc-linked, dlopen'ed by `svc` ("dlopen K").
 *
 * The library does not log by itself: around each marker it reads
 * CLOCK_MONOTONIC and ITS OWN LP_ACTIVE() and hands both readings to the
 * caller's log function, which writes them the way svc.c does.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "leanprofiler.h"
#include "target.h"

typedef void marked_log_fn(void *ctx, int is_exit, const char *name, const char *meta,
			   uint64_t t_before, uint64_t t_after, int active_before, int active_after);

int marked_active(void)
{
	return LP_ACTIVE();
}

const volatile unsigned short *marked_semaphore(void)
{
	return &lp__semaphore;
}

/*
 * A probe site is a nop (1 or 5 bytes, see the header) until the kernel patches it
 * with an int3 (0xcc), or on Linux 6.18 rewrites a nop5 into a call (0xe8).
 */
static int site_patched(void (*site)(void))
{
	unsigned char b = *(const volatile unsigned char *)(void *)site;

	return b == 0xcc || b == 0xe8;
}

/*
 * Waits until this library is probed: its semaphore is raised AND both probe
 * sites carry the kernel's breakpoint (the kernel raises the semaphore just
 * before it writes each breakpoint). Polls every 100 us, at most timeout_ms.
 */
int marked_wait_probed(int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	const struct timespec poll_interval = { 0, 100000 };

	while (!(LP_ACTIVE() && site_patched((void (*)(void))lp__probe_enter) &&
		 site_patched((void (*)(void))lp__probe_exit))) {
		if (now_ns() > end)
			return 0;
		nanosleep(&poll_interval, NULL);
	}
	return 1;
}

/* k spans "lib.span [i=N]" (runtime metadata, N = 0..15), each around "lib.leaf [from=lib]". */
void marked_spans(int k, marked_log_fn *log, void *ctx)
{
	char meta[32];

	for (int i = 0; i < k; i++) {
		snprintf(meta, sizeof(meta), "i=%d", i % 16);
		TARGET_MARK(log, ctx, 0, "lib.span", meta, LP_SPAN_ENTER("lib.span", meta));
		TARGET_MARK(log, ctx, 0, "lib.leaf", "from=lib",
			    LP_SPAN_ENTER("lib.leaf", "from=lib"));
		spin_us(20);
		TARGET_MARK(log, ctx, 1, "lib.leaf", NULL, LP_SPAN_EXIT("lib.leaf"));
		TARGET_MARK(log, ctx, 1, "lib.span", NULL, LP_SPAN_EXIT("lib.span"));
	}
}
