/* SPDX-License-Identifier: MIT */
/*
 * A USDT probe site written by hand, for the targets that need a note
 * libsystemtap's sys/sdt.h would not write (an argument of a given size, an
 * operand libbpf cannot decode): STAPSDT_SITE(sym, provider, name, args) puts
 * a .note.stapsdt entry for PROVIDER:NAME with the argument string ARGS at
 * the function SYM, a nop and a ret. Each site is the function's first
 * instruction, so the arguments are still in their registers. Include once
 * per program: it also defines the .stapsdt.base section the notes refer to.
 */
#ifndef LP_TARGET_STAPSDT_H
#define LP_TARGET_STAPSDT_H

#define STAPSDT_SITE(sym, provider, name, args)                                              \
	__asm__(".pushsection .note.stapsdt,\"\",@note\n"                                     \
		".balign 4\n"                                                                  \
		".4byte 2f-1f, 4f-3f, 3\n"                                                     \
		"1: .asciz \"stapsdt\"\n"                                                      \
		"2: .balign 4\n"                                                               \
		"3: .8byte " sym "\n"                                                          \
		".8byte _.stapsdt.base\n"                                                      \
		".8byte 0\n"                                                                   \
		".asciz \"" provider "\"\n"                                                    \
		".asciz \"" name "\"\n"                                                        \
		".asciz \"" args "\"\n"                                                        \
		"4: .balign 4\n"                                                               \
		".popsection\n"                                                                \
		".text\n"                                                                      \
		".globl " sym "\n"                                                             \
		".type " sym ", @function\n"                                                   \
		sym ": nop\n"                                                                  \
		"ret\n")

__asm__(".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n");

#endif
