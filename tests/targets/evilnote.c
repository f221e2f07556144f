// SPDX-License-Identifier: MIT
/*
 * evilnote: a program with markers and two USDT probes of its own whose notes
 * carry terminal escape sequences where a warning shows them (the argument
 * specs, which libbpf cannot decode), for tests/integration/test_security.c.
 * Runs one span.
 */
#include "leanprofiler.h"

__asm__(".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 2f-1f, 4f-3f, 3\n"
	"1: .asciz \"stapsdt\"\n"
	"2: .balign 4\n"
	"3: .8byte evil_site\n"
	".8byte _.stapsdt.base\n"
	".8byte 0\n"
	".asciz \"evil\"\n"
	".asciz \"enter\"\n"
	/* OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear), U+202E */
	".asciz \"\\033]52;c;cHduZWQ=\\007\\033]0;pwned\\007\\033[2J\\342\\200\\256 8@%rdi\"\n"
	"4: .balign 4\n"
	".4byte 6f-5f, 8f-7f, 3\n"
	"5: .asciz \"stapsdt\"\n"
	"6: .balign 4\n"
	"7: .8byte evil_site\n"
	".8byte _.stapsdt.base\n"
	".8byte 0\n"
	".asciz \"evil\"\n"
	".asciz \"exit\"\n"
	".asciz \"\\033]0;pwned\\007\"\n"
	"8: .balign 4\n"
	".popsection\n"
	".text\n"
	".globl evil_site\n"
	"evil_site: nop\n"
	"ret\n");

int main(void)
{
	LP_SPAN_ENTER("evil.span", NULL);
	LP_SPAN_EXIT("evil.span");
	return 0;
}
