// SPDX-License-Identifier: MIT
/*
 * spanpairs: USDT probes of provider "t", their notes written by hand, for the
 * span-pair tests of tests/integration/test_presets.c and test_list.c.
 * Usage: spanpairs MODE N
 *
 *   texts N   N times t:req_start(i, NAME) then t:req_done(i), NAME one of "get",
 *             "put", "del" in turn: literals each on a page of its own, in a 2 MiB
 *             block of the file nothing else lies in, that the program never reads. Prints
 *             "texts=N present=P": P of the 3 pages the process had mapped in
 *             before the first probe (/proc/self/pagemap), 0 for the test to mean it
 *   twice N   N times t:sz_in, 200 us, t:sz_out. Prints "twice=N"
 *   sites N   t:two_in has two sites: the first's argument is 8@%rdi, the
 *             second's 8@32(%rsp,%rax,8), an indexed operand libbpf 1.1 cannot
 *             decode. N times the first site, 100 us, t:two_out(i); then N times the
 *             second site alone. Prints "sites=N"
 *
 * Each site is a function's first instruction: the arguments are still in their registers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stapsdt.h"
#include "target.h"

#define SITE(sym, name, args) STAPSDT_SITE(sym, "t", name, args)

SITE("req_start_site", "req_start", "8@%rdi 8@%rsi");
SITE("req_done_site", "req_done", "8@%rdi");
SITE("sz_in_site", "sz_in", "");
SITE("sz_out_site", "sz_out", "");
SITE("two_in_good", "two_in", "8@%rdi");
SITE("two_in_indexed", "two_in", "8@32(%rsp,%rax,8)");
SITE("two_out_site", "two_out", "8@%rdi");

void req_start_site(long key, const char *name);
void req_done_site(long key);
void sz_in_site(void);
void sz_out_site(void);
void two_in_good(long i);
void two_in_indexed(long i);
void two_out_site(long i);

/*
 * The names, each on a page of its own, alone in a 2 MiB block of the file: the
 * kernel maps in a program's pages in folios of the page cache (up to 2 MiB,
 * naturally aligned) and 64 KiB around a fault, so nothing the program touches
 * brings them in. Read by nothing but the probe.
 */
__asm__(".pushsection .rodata.spanpairs_far,\"a\",@progbits\n"
	".balign 0x200000\n"
	"far_get: .asciz \"get\"\n"
	".balign 4096\n"
	"far_put: .asciz \"put\"\n"
	".balign 4096\n"
	"far_del: .asciz \"del\"\n"
	".balign 0x200000\n"
	".popsection\n");
extern const char far_get[], far_put[], far_del[];

/* Whether the page at p is mapped in the process (pagemap bit 63); -1 if that cannot be read. */
static int present(const void *p)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t at = (off_t)((uintptr_t)p / 4096 * sizeof(entry));
	ssize_t n = fd < 0 ? -1 : pread(fd, &entry, sizeof(entry), at);

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(entry) ? (int)(entry >> 63) : -1;
}

static int texts(long n)
{
	const char *names[] = { far_get, far_put, far_del };
	int pages = 0;

	for (int i = 0; i < 3; i++) {
		int p = present(names[i]);

		if (p < 0)
			return 1;
		pages += p;
	}
	for (long i = 0; i < n; i++) {
		req_start_site(i, names[i % 3]);
		req_done_site(i);
	}
	printf("texts=%ld present=%d\n", n, pages);
	return 0;
}

static int twice(long n)
{
	for (long i = 0; i < n; i++) {
		sz_in_site();
		spin_us(200);
		sz_out_site();
	}
	printf("twice=%ld\n", n);
	return 0;
}

static int sites(long n)
{
	for (long i = 0; i < n; i++) {
		two_in_good(i);
		spin_us(100);
		two_out_site(i);
	}
	for (long i = 0; i < n; i++)
		two_in_indexed(i);
	printf("sites=%ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc == 3 ? atol(argv[2]) : 0;

	if (n > 0 && !strcmp(argv[1], "texts"))
		return texts(n);
	if (n > 0 && !strcmp(argv[1], "twice"))
		return twice(n);
	if (n > 0 && !strcmp(argv[1], "sites"))
		return sites(n);
	fprintf(stderr, "usage: spanpairs texts N | twice N | sites N\n");
	return 2;
}
