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
 *   The site is a 5-byte nop, which Linux 6.18+ turns into a call to a
 *   trampoline (~4x cheaper than the int3 trap); a forked child uses a second
 *   site, a 1-byte nop, instead (see LP__SITE_INSN below). -DLP_SDT_SITES
 *   keeps only the 1-byte nop site, as <sys/sdt.h> does.
 * - The call is guarded by the probes' shared USDT semaphore, which the kernel
 *   raises while a profiler is attached. Not attached, a marker is one load
 *   and one not-taken branch, and its arguments are NOT evaluated.
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
#define LP_MARKER_WARMUP 0x8u       /* not a span: a process's first probe hits (see below) */
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
 * The probe site is a 5-byte nop at the entry of its function (never inside a
 * function body: the kernel's rewrite into a call would clobber the red zone).
 * Linux 6.18 rewrites a hit nop5 into a call to a [uprobes-trampoline] page
 * of the process, ~4x cheaper than the int3 trap every other site takes. A
 * forked child shares that rewritten page but, on some 6.18 kernels, not the
 * trampoline (a marker run between fork() and exec() then dies of SIGSEGV),
 * so after fork() the child's markers call a second pair of sites, plain
 * 1-byte nops: lp__state is set to LP__FORKED by a pthread_atfork() child
 * handler that each binary registers once, from .init_array. (A child made by
 * a raw clone() without CLONE_VM skips the handler: build such programs with
 * -DLP_SDT_SITES, one 1-byte nop site per probe, as <sys/sdt.h> makes.)
 *
 * The kernel's rewrite costs ~0.1-0.2 ms on a site's first hit, after the
 * event's timestamp: it would land in the first span of every process. So the
 * first marker that runs while attached (lp__state still LP__COLD) first hits
 * both sites once with LP_MARKER_WARMUP, a flag that tells the profiler to
 * ignore the hit (tools reading the probes directly should too).
 */
#if defined(LP_SDT_SITES)
#define LP__SITE_INSN "nop"
#define LP__FORK_SITES ""
#define LP__CALL(kind, ...) lp__probe_##kind(__VA_ARGS__)
#else
#define LP__SITE_INSN ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"
#define LP__COLD 0   /* the sites were not hit yet in this process */
#define LP__WARM 1   /* they were: the kernel has rewritten them */
#define LP__FORKED 2 /* a forked child: the 1-byte nop sites */
extern volatile unsigned char lp__state __attribute__((visibility("hidden")));
void lp__probe_enter_forked(const char *name, const char *meta, uint64_t counter, uint64_t flags)
	__attribute__((visibility("hidden")));
void lp__probe_exit_forked(const char *name, uint64_t counter, uint64_t flags)
	__attribute__((visibility("hidden")));

/* Both sites hit once, so the kernel rewrites them before a span is recorded. */
static inline void lp__warm_up(void)
{
	lp__probe_enter((const char *)0, (const char *)0, 0, LP_MARKER_WARMUP);
	lp__probe_exit((const char *)0, 0, LP_MARKER_WARMUP);
	lp__state = LP__WARM;
}

/* The first hits of a process, or a forked child's: off the common path. */
static inline void lp__enter_slow(const char *name, const char *meta, uint64_t counter,
				  uint64_t flags)
{
	if (lp__state == LP__FORKED) {
		lp__probe_enter_forked(name, meta, counter, flags);
		return;
	}
	lp__warm_up();
	lp__probe_enter(name, meta, counter, flags);
}

static inline void lp__exit_slow(const char *name, uint64_t counter, uint64_t flags)
{
	if (lp__state == LP__FORKED) {
		lp__probe_exit_forked(name, counter, flags);
		return;
	}
	lp__warm_up();
	lp__probe_exit(name, counter, flags);
}

/* Only reached while attached. */
#define LP__CALL(kind, ...)                                                               \
	do {                                                                              \
		if (__builtin_expect(lp__state == LP__WARM, 1))                           \
			lp__probe_##kind(__VA_ARGS__);                                    \
		else                                                                      \
			lp__##kind##_slow(__VA_ARGS__);                                   \
	} while (0)
/* The child's sites, their notes, the flag and its atfork handler (one per binary). */
#define LP__FORK_SITES                                                                    \
	".weak lp__probe_enter_forked\n"                                                 \
	".hidden lp__probe_enter_forked\n"                                               \
	".type lp__probe_enter_forked, @function\n"                                      \
	"lp__probe_enter_forked:\n"                                                      \
	"981: nop\n"                                                                     \
	"ret\n"                                                                          \
	".size lp__probe_enter_forked, .-lp__probe_enter_forked\n"                       \
	".weak lp__probe_exit_forked\n"                                                  \
	".hidden lp__probe_exit_forked\n"                                                \
	".type lp__probe_exit_forked, @function\n"                                       \
	"lp__probe_exit_forked:\n"                                                       \
	"982: nop\n"                                                                     \
	"ret\n"                                                                          \
	".size lp__probe_exit_forked, .-lp__probe_exit_forked\n"                         \
	".weak lp__atfork_child\n"                                                       \
	".hidden lp__atfork_child\n"                                                     \
	".type lp__atfork_child, @function\n"                                            \
	"lp__atfork_child:\n"                                                            \
	"endbr64\n" /* called indirectly: a landing pad where CET enforces one */       \
	"movb $2, lp__state(%rip)\n"                                                    \
	"ret\n"                                                                          \
	".size lp__atfork_child, .-lp__atfork_child\n"                                   \
	".weak lp__init\n"                                                               \
	".hidden lp__init\n"                                                             \
	".type lp__init, @function\n"                                                    \
	"lp__init:\n"                                                                    \
	"endbr64\n"                                                                      \
	"xorl %edi, %edi\n"                                                              \
	"xorl %esi, %esi\n"                                                              \
	"leaq lp__atfork_child(%rip), %rdx\n"                                            \
	"jmp pthread_atfork@PLT\n"                                                       \
	".size lp__init, .-lp__init\n"                                                   \
	".pushsection .init_array,\"aw?\",@init_array\n"                                 \
	".balign 8\n"                                                                    \
	".8byte lp__init\n"                                                              \
	".popsection\n"                                                                  \
	".pushsection .data.lp__state,\"aw?\",@progbits\n"                               \
	".weak lp__state\n"                                                              \
	".hidden lp__state\n"                                                            \
	".type lp__state, @object\n"                                                     \
	"lp__state: .byte 0\n"                                                           \
	".size lp__state, 1\n"                                                           \
	".popsection\n"                                                                  \
	".pushsection .note.stapsdt,\"?\",\"note\"\n"                                    \
	".balign 4\n"                                                                    \
	".4byte 9712f-9711f, 9714f-9713f, 3\n"                                           \
	"9711: .asciz \"stapsdt\"\n"                                                     \
	"9712: .balign 4\n"                                                              \
	"9713: .8byte 981b\n"                                                            \
	".8byte _.stapsdt.base\n"                                                        \
	".8byte lp__semaphore\n"                                                         \
	".asciz \"leanprofiler\"\n"                                                      \
	".asciz \"span_enter\"\n"                                                        \
	".asciz \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\"\n"                                       \
	"9714: .balign 4\n"                                                              \
	".4byte 9716f-9715f, 9718f-9717f, 3\n"                                           \
	"9715: .asciz \"stapsdt\"\n"                                                     \
	"9716: .balign 4\n"                                                              \
	"9717: .8byte 982b\n"                                                            \
	".8byte _.stapsdt.base\n"                                                        \
	".8byte lp__semaphore\n"                                                         \
	".asciz \"leanprofiler\"\n"                                                      \
	".asciz \"span_exit\"\n"                                                         \
	".asciz \"8@%rdi 8@%rsi 8@%rdx\"\n"                                              \
	"9718: .balign 4\n"                                                              \
	".popsection\n"
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
	LP__FORK_SITES
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
			LP__CALL(enter, (name), (meta), (uint64_t)(counter),              \
				 LP__FLAGS(name, meta, extra));                           \
	} while (0)

#define LP__EXIT(name, counter, extra)                                                    \
	do {                                                                              \
		if (LP_ACTIVE())                                                          \
			LP__CALL(exit, (name), (uint64_t)(counter),                       \
				 LP__FLAGS(name, (const char *)0, extra));                \
	} while (0)

/*
 * A scope keeps its own copy of a runtime name: the exit comes when the scope
 * ends, after a temporary the name pointed into (std::string(...).c_str())
 * is gone. LP__SCOPE_NAME_BUF is the kernel's read of a name (256 bytes, one
 * more to mark a cut, and the NUL): a copy is cut exactly where a read is.
 */
#define LP__SCOPE_NAME_BUF 258

struct lp__scope {
	const char *lp_name; /* what the exit passes; 0: no exit (not attached at the beginning) */
	uint64_t lp_flags;   /* the exit's */
	char lp_copy[LP__SCOPE_NAME_BUF];
};

/* Attached: the enter, while a temporary name still lives, with the copy the exit will use. */
static inline void lp__scope_begin(struct lp__scope *s, const char *name, const char *meta,
				   uint64_t flags)
{
	s->lp_name = name;
	if (name && !(flags & LP_MARKER_NAME_LITERAL)) {
		unsigned i;

		for (i = 0; i + 1 < sizeof(s->lp_copy) && name[i]; i++)
			s->lp_copy[i] = name[i];
		s->lp_copy[i] = '\0';
		s->lp_name = s->lp_copy;
	}
	LP__CALL(enter, s->lp_name, meta, 0, flags);
}

static inline void lp__scope_end(struct lp__scope *s)
{
	if (s->lp_name && LP_ACTIVE())
		LP__CALL(exit, s->lp_name, 0, s->lp_flags);
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
static inline void lp__scope_begin(struct lp__scope *s, const char *name, const char *meta,
				   uint64_t flags)
{
	(void)s;
	(void)name;
	(void)meta;
	(void)flags;
}
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
 * One LP_SPAN_SCOPE per line. Attached when the scope begins, name and meta
 * are evaluated once, then; a runtime name is copied (up to 257 bytes, the
 * most a name keeps) into the scope's variable on the stack, so the name may
 * be a temporary: LP_SPAN_SCOPE((std::string("job.") + n).c_str(), nullptr)
 * works. The program itself reads that name then: it must be a valid string,
 * as for any marker. Not attached, a runtime name is not evaluated and the
 * scope ends without an exit (it has no enter either), even if a profiler
 * attaches meanwhile; a literal name's scope still exits, so that a profiler
 * that attached meanwhile sees the span (as "started before recording").
 */
#define LP_SPAN_SCOPE(name, meta)                                                         \
	struct lp__scope LP__SCOPE_VAR __attribute__((cleanup(lp__scope_end), unused));      \
	LP__SCOPE_VAR.lp_flags = LP__FLAGS(name, (const char *)0, 0u);                      \
	if (LP_ACTIVE())                                                                  \
		lp__scope_begin(&LP__SCOPE_VAR, (name), (meta), LP__FLAGS(name, meta, 0u));   \
	else                                                                              \
		LP__SCOPE_VAR.lp_name = LP__SCOPE_VAR.lp_flags & LP_MARKER_NAME_LITERAL      \
						? (name)                                      \
						: (const char *)0

#endif /* LEANPROFILER_H */
