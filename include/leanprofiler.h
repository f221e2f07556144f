/* SPDX-License-Identifier: MIT */
/*
 * leanprofiler.h - span markers for the leanprofiler eBPF span profiler.
 *
 * Header-only; nothing to link. Mark a region of a program:
 *
 *     LP_SPAN_ENTER("model.forward", "phase=forward, module=encoder");
 *     ...
 *     LP_SPAN_EXIT("model.forward");
 *
 *     LP_SPAN_ENTER_COUNTER(name, meta, counter);  counter: uint64_t work counter
 *     LP_SPAN_EXIT_COUNTER(name, counter);         (e.g. heartbeats so far)
 *     LP_SPAN_SCOPE(name, meta);                   GCC/Clang: exits when the scope ends
 *     LP_ACTIVE()                                  nonzero while a profiler is attached
 *
 * name and meta may be string literals or runtime strings (also a buffer the
 * program reuses): what is recorded is the text the buffer held at the marker.
 * meta is "key=value, key=value" or NULL. Literals are recognised at compile
 * time and are copied once per process by the profiler, not once per event.
 *
 * How a marker works, and why:
 * - Each marker is a standard USDT probe, provider "leanprofiler", probes
 *   "span_enter" (name, meta, counter, flags) and "span_exit" (name, counter,
 *   flags), visible to `readelf -n`, bpftrace and `perf list sdt`.
 * - Every marker of a binary calls one shared probe function per kind whose
 *   first instruction is the probe site, with the arguments in registers. One
 *   site per kind also keeps attach time independent of the marker count.
 *   The site is a 1-byte nop; -DLP_FAST_PROBES makes it a 5-byte nop, faster
 *   on Linux 6.18 but unsafe in programs that fork (see LP__SITE_INSN below).
 * - The call is guarded by the probes' shared USDT semaphore, which the kernel
 *   raises while a profiler is attached. Not attached, a marker is one load
 *   and one not-taken branch, and its arguments are NOT evaluated (except
 *   LP_SPAN_SCOPE's name, evaluated once when the scope begins).
 * Only x86-64 (LP64) emits real probes; elsewhere, or with -DLP_DISABLE, the
 * markers compile to nothing.
 */
#ifndef LEANPROFILER_H
#define LEANPROFILER_H

#include <stddef.h>
#include <stdint.h>

/* Flag bits passed to the probes. Part of the marker ABI read by the profiler. */
#define LP_MARKER_ABI 1u
#define LP_MARKER_NAME_LITERAL 0x1u /* name is a string literal (immutable) */
#define LP_MARKER_META_LITERAL 0x2u /* meta is a string literal or NULL */
#define LP_MARKER_HAS_COUNTER 0x4u  /* counter argument is meaningful */
#define LP_MARKER_ABI_SHIFT 8

#if defined(__x86_64__) && !defined(__ILP32__) && (defined(__GNUC__) || defined(__clang__)) && \
	!defined(LP_DISABLE)

#ifdef __cplusplus
extern "C" {
#endif

extern volatile unsigned short lp__semaphore __attribute__((visibility("hidden")));
void lp__probe_enter(const char *name, const char *meta, uint64_t counter, uint64_t flags)
	__attribute__((visibility("hidden")));
void lp__probe_exit(const char *name, uint64_t counter, uint64_t flags)
	__attribute__((visibility("hidden")));

/*
 * The probe site: a 1-byte nop by default. With -DLP_FAST_PROBES it is a
 * 5-byte nop, which Linux 6.18 rewrites into a call to a trampoline page
 * (about 25% cheaper per hit) -- but that kernel does not give a forked child
 * the trampoline page, so a child that reaches a marker after fork() without
 * exec() dies of SIGSEGV. Only for programs that never fork while profiled.
 */
#ifdef LP_FAST_PROBES
#define LP__SITE_INSN ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"
#else
#define LP__SITE_INSN "nop"
#endif

/*
 * The probe functions, the semaphore and the notes describing them live in one
 * COMDAT group, so however many translation units include this header, the
 * linker keeps exactly one copy per executable or shared library (hidden, so a
 * library never uses another module's semaphore).
 */
__asm__(
	".ifndef lp__probe_enter\n"
	".pushsection .text.lp__probe,\"axG\",@progbits,lp__probe,comdat\n"
	".weak lp__probe_enter\n"
	".hidden lp__probe_enter\n"
	".type lp__probe_enter, @function\n"
	"lp__probe_enter:\n"
	"991: " LP__SITE_INSN "\n" /* the probe site */
	"ret\n"
	".size lp__probe_enter, .-lp__probe_enter\n"
	".weak lp__probe_exit\n"
	".hidden lp__probe_exit\n"
	".type lp__probe_exit, @function\n"
	"lp__probe_exit:\n"
	"992: " LP__SITE_INSN "\n"
	"ret\n"
	".size lp__probe_exit, .-lp__probe_exit\n"
	/* Same group ("?"), so a discarded duplicate takes its notes with it. */
	".pushsection .probes,\"aw?\",@progbits\n"
	".weak lp__semaphore\n"
	".hidden lp__semaphore\n"
	".type lp__semaphore, @object\n"
	".balign 2\n"
	"lp__semaphore: .2byte 0\n"
	".size lp__semaphore, 2\n"
	".popsection\n"
	".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 994f-993f, 996f-995f, 3\n"
	"993: .asciz \"stapsdt\"\n"
	"994: .balign 4\n"
	"995: .8byte 991b\n"
	".8byte _.stapsdt.base\n"
	".8byte lp__semaphore\n"
	".asciz \"leanprofiler\"\n"
	".asciz \"span_enter\"\n"
	".asciz \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\"\n"
	"996: .balign 4\n"
	".4byte 998f-997f, 9990f-999f, 3\n"
	"997: .asciz \"stapsdt\"\n"
	"998: .balign 4\n"
	"999: .8byte 992b\n"
	".8byte _.stapsdt.base\n"
	".8byte lp__semaphore\n"
	".asciz \"leanprofiler\"\n"
	".asciz \"span_exit\"\n"
	".asciz \"8@%rdi 8@%rsi 8@%rdx\"\n"
	"9990: .balign 4\n"
	".popsection\n"
	".popsection\n"
	".ifndef _.stapsdt.base\n"
	".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n"
	".endif\n"
	".endif\n");

#define LP__FLAGS(name, meta, extra)                                                      \
	((uint64_t)(LP_MARKER_ABI << LP_MARKER_ABI_SHIFT) | (extra) |                     \
	 (__builtin_constant_p(name) ? LP_MARKER_NAME_LITERAL : 0u) |                     \
	 (__builtin_constant_p(meta) ? LP_MARKER_META_LITERAL : 0u))

#define LP_ACTIVE() ((int)__builtin_expect(lp__semaphore != 0, 0))

#define LP__ENTER(name, meta, counter, extra)                                             \
	do {                                                                              \
		if (LP_ACTIVE())                                                          \
			lp__probe_enter((name), (meta), (uint64_t)(counter),              \
					LP__FLAGS(name, meta, extra));                    \
	} while (0)

#define LP__EXIT(name, counter, extra)                                                    \
	do {                                                                              \
		if (LP_ACTIVE())                                                          \
			lp__probe_exit((name), (uint64_t)(counter),                       \
				       LP__FLAGS(name, (const char *)0, extra));           \
	} while (0)

struct lp__scope {
	const char *lp_name;
	uint64_t lp_flags;
};

static inline void lp__scope_end(struct lp__scope *s)
{
	if (LP_ACTIVE())
		lp__probe_exit(s->lp_name, 0, s->lp_flags);
}

#define LP__CAT_(a, b) a##b
#define LP__CAT(a, b) LP__CAT_(a, b)
#define LP__SCOPE_VAR LP__CAT(lp__scope_, __LINE__)

#ifdef __cplusplus
}
#endif

#else /* no probes on this platform: markers vanish, arguments unevaluated */

#define LP_ACTIVE() 0
/* Referenced in dead code, so values used only by markers stay "used". */
#define LP__ENTER(name, meta, counter, extra)                                             \
	do {                                                                              \
		if (0) {                                                                  \
			(void)(name);                                                     \
			(void)(meta);                                                     \
			(void)(counter);                                                  \
		}                                                                         \
	} while (0)
#define LP__EXIT(name, counter, extra)                                                    \
	do {                                                                              \
		if (0) {                                                                  \
			(void)(name);                                                     \
			(void)(counter);                                                  \
		}                                                                         \
	} while (0)
struct lp__scope {
	const char *lp_name;
	uint64_t lp_flags;
};
static inline void lp__scope_end(struct lp__scope *s) { (void)s; }
#define LP__CAT_(a, b) a##b
#define LP__CAT(a, b) LP__CAT_(a, b)
#define LP__SCOPE_VAR LP__CAT(lp__scope_, __LINE__)
#define LP__FLAGS(name, meta, extra) ((uint64_t)0)

#endif

#define LP_SPAN_ENTER(name, meta) LP__ENTER(name, meta, 0, 0u)
#define LP_SPAN_EXIT(name) LP__EXIT(name, 0, 0u)
#define LP_SPAN_ENTER_COUNTER(name, meta, counter)                                        \
	LP__ENTER(name, meta, counter, LP_MARKER_HAS_COUNTER)
#define LP_SPAN_EXIT_COUNTER(name, counter) LP__EXIT(name, counter, LP_MARKER_HAS_COUNTER)

/*
 * One LP_SPAN_SCOPE per line. The exit reuses the name pointer taken at entry,
 * so name is evaluated once, when the scope begins.
 */
#define LP_SPAN_SCOPE(name, meta)                                                         \
	struct lp__scope LP__SCOPE_VAR __attribute__((cleanup(lp__scope_end), unused)) = {   \
		(name), LP__FLAGS(name, (const char *)0, 0u)};                                \
	LP__ENTER(LP__SCOPE_VAR.lp_name, meta, 0,                                          \
		  (LP__SCOPE_VAR.lp_flags & LP_MARKER_NAME_LITERAL))

#endif /* LEANPROFILER_H */
