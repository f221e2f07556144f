// SPDX-License-Identifier: MIT
/*
 * libmanyprobes.so: a library with include/leanprofiler.h's markers and 3000
 * more leanprofiler:span_enter notes, each at a site of its own (a crafted
 * file: each site would cost the profiler a uprobe and a descriptor), for
 * tests/integration/test_security.c.
 */
#include "leanprofiler.h"

__asm__(".text\n"
	".rept 3000\n"
	"1: nop\n"
	".pushsection .note.stapsdt,\"\",@note\n"
	".balign 4\n"
	".4byte 3f-2f, 5f-4f, 3\n"
	"2: .asciz \"stapsdt\"\n"
	"3: .balign 4\n"
	"4: .8byte 1b\n"
	".8byte _.stapsdt.base\n"
	".8byte 0\n"
	".asciz \"leanprofiler\"\n"
	".asciz \"span_enter\"\n"
	".asciz \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\"\n"
	"5: .balign 4\n"
	".popsection\n"
	".endr\n"
	"ret\n");

int many_probes_loaded(void)
{
	LP_SPAN_ENTER("many.span", NULL);
	LP_SPAN_EXIT("many.span");
	return 1;
}
