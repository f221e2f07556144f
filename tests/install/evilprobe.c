// SPDX-License-Identifier: MIT
// A marked program whose own USDT probes are named to run commands in a shell that
// expands them ($(...), `...`), for tests/install/run.sh to complete `record --span` on:
// the completion must offer only the safe one and run nothing. Prints "ready", then
// reads its standard input until it closes.
#include <stdio.h>
#include <unistd.h>

#include "leanprofiler.h"

#define NOTE(n, provider, name)                                                          \
	".balign 4\n"                                                                    \
	".4byte " #n "2f-" #n "1f, " #n "4f-" #n "3f, 3\n"                               \
	#n "1: .asciz \"stapsdt\"\n"                                                     \
	#n "2: .balign 4\n"                                                              \
	#n "3: .8byte evil_probe_site\n"                                                 \
	".8byte _.stapsdt.base\n"                                                        \
	".8byte 0\n"                                                                     \
	".asciz \"" provider "\"\n"                                                      \
	".asciz \"" name "\"\n"                                                          \
	".asciz \"\"\n"                                                                  \
	#n "4: .balign 4\n"

__asm__(".pushsection .note.stapsdt,\"?\",\"note\"\n"
	NOTE(1, "p$(touch${IFS}pwned)", "enter")
	NOTE(5, "ok", "n`touch${IFS}pwned2`")
	NOTE(9, "ok", "safe_probe")
	".popsection\n"
	".text\n"
	".globl evil_probe_site\n"
	"evil_probe_site: nop\n"
	"ret\n");

int main(void)
{
	char c;

	LP_SPAN_ENTER("install.evil", NULL);
	puts("ready");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	LP_SPAN_EXIT("install.evil");
	return 0;
}
