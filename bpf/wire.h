/* SPDX-License-Identifier: MIT */
/*
 * The records the BPF half sends to the user half through the ring buffer.
 * Included by bpf/leanprofiler.bpf.c and by user/; the only definition of the
 * format. Every record starts with struct lp_rec_hdr; dispatch on .type.
 */
#ifndef LP_WIRE_H
#define LP_WIRE_H

/*
 * The format's version: the kernel half carries it (lp_wire_version in its
 * .rodata) and user space refuses a BPF object of another one.
 */
#define LP_WIRE_VERSION 8

/*
 * The marker ABI of include/leanprofiler.h (LP_MARKER_ABI, LP_MARKER_ABI_SHIFT):
 * the version a marker passes in bits 8-11 of its flags. Repeated here, not
 * included (that header emits probe code); tests/unit/test_wire.c checks both agree.
 */
#define LP_MARKER_ABI_VERSION 1u
#define LP_MARKER_ABI_BITS_SHIFT 8
#define LP_MARKER_ABI_BITS_MASK 0xfu

/*
 * Limits on strings read from the target. Longer text is cut to the limit and
 * flagged as truncated; the user side shows the cut with "…".
 */
#define LP_NAME_MAX 256 /* bytes of a span name */
#define LP_META_MAX 512 /* bytes of a span's metadata */
/*
 * Read buffers: limit + one more character + NUL, so that text of exactly the
 * limit and longer text differ.
 */
#define LP_NAME_BUF (LP_NAME_MAX + 2)
#define LP_META_BUF (LP_META_MAX + 2)
#define LP_COMM_LEN 16

enum lp_rec_type {
	LP_REC_ENTER = 1,  /* struct lp_rec_event, optionally followed by strings */
	LP_REC_EXIT = 2,   /* struct lp_rec_event, optionally followed by a name */
	LP_REC_STRING = 3, /* struct lp_rec_string: text of a literal at an address */
	LP_REC_THREAD = 4, /* struct lp_rec_thread: first event of a thread */
	LP_REC_TASK = 5,   /* struct lp_rec_task: a target process or thread began, exec'ed, ended */
	LP_REC_LIBS = 6,   /* struct lp_rec_libs: a target may have mapped files not examined yet */
	LP_REC_USDT = 7,   /* struct lp_rec_usdt: a probe of a span-pair spec (--span, --preset) fired */
	LP_REC_SCHED = 8,  /* struct lp_rec_sched: --off-cpu: a tracked thread got a CPU back */
	LP_REC_SELF_STOP = 9, /* struct lp_rec_self_stop: a process sent itself a stop signal */
};

/* lp_rec_event.flags: the marker's own flags (leanprofiler.h) in the low byte... */
#define LP_EV_NAME_LITERAL 0x0001u
#define LP_EV_META_LITERAL 0x0002u
#define LP_EV_HAS_COUNTER 0x0004u
#define LP_EV_WARMUP 0x0008u /* LP_MARKER_WARMUP: the site's first hit, never recorded */
/* ...and what the kernel half did, above it. */
#define LP_EV_NAME_INLINE 0x0100u /* name text follows the record (name_len bytes) */
#define LP_EV_META_INLINE 0x0200u /* meta text follows the name text */
#define LP_EV_NO_META 0x0400u     /* meta was NULL */
#define LP_EV_SCHED 0x0800u       /* struct lp_sched_snap follows the record, before its texts */
/* The marker ABI version the target was built with, in the top 4 bits. */
#define LP_EV_ABI_SHIFT 12
#define LP_EV_ABI(flags) ((flags) >> LP_EV_ABI_SHIFT)

/*
 * Files with markers one recording can attach to. Each has a gate: its events
 * are recorded only once both its probes are attached. Files attached between
 * two openings of gates form a batch, opened by one store (struct lp_hot).
 */
#define LP_MAX_FILES 4096

/*
 * A marker probe's cookie: which probed file (its index, < LP_MAX_FILES), the
 * batch whose opening records it (1, 2, ...; lp_hot.batch_at[batch - 1]) and,
 * for a link made for one process (pid-filtered), the image of that process
 * it was made for (struct lp_target.image; 0: a link for every process).
 * Known when the probe is attached, so an event reads no map to find its gate;
 * an event through a link of an earlier image (the process exec'ed) is not
 * recorded: the link made for the new image records it.
 */
#define LP_MARKER_COOKIE(file, batch, image) \
	(((__u64)(image) << 32) | ((__u64)(batch) << 16) | (__u16)(file))
#define LP_COOKIE_FILE(c) ((__u32)(c) & 0xffff)
#define LP_COOKIE_BATCH(c) ((__u32)((c) >> 16) & 0xffff)
#define LP_COOKIE_IMAGE(c) ((__u32)((c) >> 32) & LP_IMAGE_MASK)
/* Image numbers: 30 bits (the cookie's bits 32-61); user space's have bit 29 set. */
#define LP_IMAGE_MASK 0x3fffffffu
#define LP_IMAGE_USER 0x20000000u

/*
 * What every event reads besides its thread's state, written by user space
 * through the mapped section (one 8-byte store each), in one place: the
 * section is its own map, and the first batches share a page with the stop.
 */
struct lp_hot {
	__u64 stop_ns; /* nothing from this time on is recorded (0: not set) */
	/*
	 * Bumped whenever a running process gets a new image number without an
	 * exec (a library unloaded): threads then look their process's number up again.
	 */
	__u64 epoch;
	__u64 batch_at[LP_MAX_FILES]; /* batch b opens at [b - 1], 0 until then */
};

/*
 * String length fields carry bpf_probe_read_user_str()'s result minus the NUL:
 * 0..LIMIT is the exact text length, LIMIT+1 means "cut, the text was longer",
 * and a negative value is the -errno of a failed read (NULL or unmapped pointer).
 */
#define LP_STR_TRUNCATED(len, limit) ((len) > (limit))

struct lp_rec_hdr {
	__u16 type;
	__u16 flags;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 seq; /* per-thread count of every marker hit, kept or lost */
};

struct lp_rec_event {
	struct lp_rec_hdr h;
	__u64 ts_ns;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 counter; /* the marker's work counter (valid with LP_EV_HAS_COUNTER) */
	__u64 name;    /* address of the name in the target */
	__u64 meta;    /* address of the metadata in the target, 0 for NULL */
	__u16 pad;     /* 0 */
	__s16 name_len; /* with LP_EV_NAME_INLINE */
	__s16 meta_len; /* with LP_EV_META_INLINE */
	__u16 file;     /* which probed file (index, < LP_MAX_FILES) the marker is in */
	/* char text[]: the inline strings, not NUL-terminated */
};

#define LP_STR_META 0x1u /* lp_rec_string.h.flags: metadata (LP_META_MAX), else a name */
/*
 * The kernel could not read the bytes (a page the process has not touched
 * yet: a forked child's .rodata, a fresh program's), but they lie in a
 * read-only file mapping, where a page not present is the file's: the text is the file's,
 * at file_off of file (file_dev, file_ino). Also sent, just before its event,
 * for a runtime string found so, which the event then names by address.
 */
#define LP_STR_IN_FILE 0x2u
/*
 * The kernel could not read the bytes, nor look up what is mapped there:
 * bpf_find_vma() only tries the address space's lock, which fails while
 * another thread of the process maps or unmaps memory (or waits to). A
 * literal lies in the file of its marker: that file (its index, file) and the
 * address of the probe site that ran (file_off) say where the file is mapped,
 * and user space reads the text from the file's readable, not writable segments. Sent for
 * a runtime string too, which the event then names by address; user space
 * finds it only if it lies in that file.
 */
#define LP_STR_AT_SITE 0x4u
/*
 * A string argument of a span-pair probe (LP_REC_USDT) the kernel could not
 * read, found in a file as above (with LP_STR_IN_FILE): for string slot
 * usdt_slot of the probe's record, which follows with the same h.seq and
 * says LP_USDT_STR_IN_FILE in that slot; at most usdt_max bytes of it.
 */
#define LP_STR_USDT 0x8u
/*
 * A literal is known by its address plus this bit for metadata: one literal
 * used as a name and as metadata is read with both limits. (User addresses
 * never have bit 63 set.)
 */
#define LP_LIT_META_BIT (1ULL << 63)
#define LP_LIT_KEY(addr, is_meta) ((addr) | ((is_meta) ? LP_LIT_META_BIT : 0))

struct lp_rec_string {
	struct lp_rec_hdr h;
	__u64 addr; /* address in process h.pid whose text this is */
	__s16 len;
	__u16 file;     /* with LP_STR_AT_SITE: the probed file (index) whose site ran */
	__u16 usdt_slot; /* with LP_STR_USDT: the string slot, and the bytes wanted at most */
	__u16 usdt_max;
	__u64 file_dev; /* with LP_STR_IN_FILE, where the text is (dev: major << 20 | minor) */
	__u64 file_ino;
	__u64 file_off; /* with LP_STR_AT_SITE: the probe site's address in the process */
	/* char text[len > 0 ? len : 0] */
};

struct lp_rec_thread {
	struct lp_rec_hdr h;
	char comm[LP_COMM_LEN];  /* thread name */
	char pcomm[LP_COMM_LEN]; /* process (thread group leader) name */
};

enum lp_task_what {
	LP_TASK_FORK = 1,   /* h.pid is a new process, child of ppid: now a target */
	LP_TASK_THREAD = 2, /* h.tid is a new thread of target h.pid */
	LP_TASK_EXEC = 3,   /* h.pid exec'ed a new program (comm is the new name) */
	LP_TASK_EXIT = 4,   /* thread h.tid exited; h.flags & LP_TASK_GROUP_DEAD: the last one */
	LP_TASK_FOUND = 5,  /* --all-processes: h.pid runs the binary: now a target */
};

#define LP_TASK_GROUP_DEAD 0x1u
#define LP_TASK_NEW_IMAGE 0x2u /* LP_TASK_FOUND at exec: nothing of it ran before */
/*
 * LP_TASK_EXIT at an exec that gained privileges (setuid, setgid, file
 * capabilities: AT_SECURE): the process leaves the recording, as if it ended.
 * Its user could not read that program's memory; neither do we.
 */
#define LP_TASK_PRIVILEGED 0x4u

struct lp_rec_task {
	struct lp_rec_hdr h; /* h.flags: LP_TASK_GROUP_DEAD */
	__u64 ts_ns;
	__u32 what; /* enum lp_task_what */
	__u32 ppid;
	char comm[LP_COMM_LEN];
};

/*
 * lp_rec_libs.h.flags. A target is paused (SIGSTOP, sent by the kernel half)
 * when it may be about to run code of a file user space has not examined: at
 * the loader's notice that a dlopen() mapped new libraries, and at the exec of
 * a program not seen before. User space attaches to the file's markers, opens
 * their gates, then sends SIGCONT: nothing of the new code runs unrecorded.
 */
#define LP_LIBS_PAUSED 0x1u /* the process is stopped until user space sends SIGCONT */
#define LP_LIBS_EXEC 0x2u   /* an exec of a program not examined yet, else the loader */
#define LP_LIBS_FORK 0x4u   /* pid-filtered: a child forked with files its parent had linked */

struct lp_rec_libs {
	struct lp_rec_hdr h;
	__u64 ts_ns;
	/*
	 * When the process began (its leader's start_boottime, ns): what
	 * /proc/PID/stat's starttime is made of. User space continues h.pid
	 * only while that PID is still this process: a PID freed during the
	 * pause may be another process's by then.
	 */
	__u64 start_ns;
};

/*
 * A process sent itself a stop signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU):
 * what a relay (sudo, su, runuser) does when it sees its child stop, which
 * our pause is. User space continues it when a process it paused is its
 * descendant and the stop came while, or just after, that pause (follow.c).
 * Sent for any process: such stops are rare.
 */
struct lp_rec_self_stop {
	struct lp_rec_hdr h; /* h.flags: the signal */
	__u64 ts_ns;
	__u64 start_ns; /* as in lp_rec_libs */
};

/* The loader's r_debug.r_state (<link.h>), and "none seen yet". */
#define LP_RT_CONSISTENT 0
#define LP_RT_ADD 1
#define LP_RT_DELETE 2
#define LP_RT_UNSEEN 0xffu

/* What the kernel half knows of a target process (map "targets", key tgid). */
struct lp_target {
	__u64 since_ns; /* became a target: attach, fork or found */
	/*
	 * Which image of the process its literals belong to: new at every fork,
	 * exec and library unload (an address may then hold another text).
	 * Unique in the recording: the kernel half counts up from 1, user space
	 * from LP_GEN_USER.
	 */
	__u64 gen;
	__u32 dl_state; /* the loader's last r_state, LP_RT_UNSEEN before the first */
	/*
	 * Which program image the process runs: new at its fork and at every
	 * exec (not at an unload). Links made for the process carry it in their
	 * cookies (LP_MARKER_COOKIE). The kernel half counts up from 1, user
	 * space from LP_IMAGE_USER; both within LP_IMAGE_MASK.
	 */
	__u32 image;
};

/*
 * Pid-filtered recording (record -p, record -- COMMAND): probes are attached
 * for each target process by itself, so that no other process takes their
 * breakpoints. User space says which files it linked for a process image
 * (map "linked"), and which processes have any (map "linked_pids": tgid ->
 * image): a child forked by one of those is paused until its own links are
 * made, and a process whose loader adds a file not linked for it is paused.
 */
struct lp_linked_key {
	__u32 pid; /* tgid */
	__u32 image;
	__u64 dev, ino;
};

#define LP_LINKED_MAX 65536

#define LP_GEN_USER (1ULL << 63)

/* A file user space has examined (map "known_files"): its markers are attached if it has any. */
struct lp_file_key {
	__u64 dev; /* the kernel's encoding: major << 20 | minor */
	__u64 ino;
};

#define LP_KNOWN_FILES_MAX 65536

/*
 * Processes paused and not continued yet (map "held": tgid -> the process's
 * start_ns, as in lp_rec_libs). A SIGCONT another process sends one (a relay
 * that continues its child, a user) stops it again: nothing of a file runs
 * before its probes are attached. User space removes the entry, then sends
 * its SIGCONT. Past this many at once, a pause is not held so.
 */
#define LP_HELD_MAX 4096

/* Counters the kernel half keeps in the per-CPU array "stats". */
enum lp_stat {
	LP_STAT_LOST_ENTER = 0, /* enter records not delivered (ring buffer full) */
	LP_STAT_LOST_EXIT,      /* exit records not delivered */
	LP_STAT_LOST_STRING,    /* literal texts not delivered (their event is lost too) */
	LP_STAT_LOST_THREAD,    /* thread records not delivered (name falls back to tid) */
	LP_STAT_NO_TASK_STORAGE,/* per-thread state unavailable: event lost */
	LP_STAT_LOST_TASK,      /* process/thread/map records not delivered */
	LP_STAT_LOST_SCHED,     /* --off-cpu intervals not delivered (the trace lacks them) */
	LP_STAT_UNSEEN_IN,      /* --off-cpu: switch-ins of tracked threads not seen */
	LP_STAT_STEAL_UNREAD,   /* --off-cpu: reads of the steal clock that failed */
	LP_STAT_MAX,
};

/* Per-thread losses, map "lost_by_tid", updated only when a reserve fails. */
struct lp_thread_lost {
	__u64 enter;
	__u64 exit;
	__u32 pid;
	__u32 pad;
};

/*
 * Span-pair specs (--span, --preset): any USDT probe, attached with libbpf's
 * USDT support. The usdt_cookie says which file and batch (for its gate, as
 * LP_MARKER_COOKIE), which spec and which role: LP_USDT_COOKIE(file, batch,
 * spec, role, alt).
 */
#define LP_SPEC_MAX 64        /* span-pair specs per recording */
#define LP_USDT_ARGS 12       /* arguments of a probe (libbpf's maximum) */
#define LP_USDT_STR_SLOTS 4   /* string arguments a spec's probes read */
#define LP_USDT_STR_MAX 512   /* bytes of one string argument; longer ones are cut */
#define LP_USDT_STR_BUF (LP_USDT_STR_MAX + 2)
#define LP_USDT_SPECS_MAX 1024 /* libbpf USDT specs (site argument layouts x cookies) */

#define LP_USDT_ROLE_ENTRY 0
#define LP_USDT_ROLE_EXIT 1
#define LP_USDT_ROLE_ABORT 2 /* abort=: gives up the spec's open span */
#define LP_USDT_ROLES 3
/* alt: which probe of the role's list (a spec's ENTRY "a|b": 0 for a, 1 for b) */
#define LP_USDT_COOKIE(file, batch, spec, role, alt) \
	(((__u64)(batch) << 48) | ((__u64)(file) << 32) | ((__u64)(alt) << 16) | ((spec) << 2) | \
	 (role))
#define LP_USDT_COOKIE_FILE(c) ((__u32)((c) >> 32) & 0xffff)
#define LP_USDT_COOKIE_BATCH(c) ((__u32)((c) >> 48))
#define LP_USDT_COOKIE_SPEC(c) ((__u32)(c) >> 2 & 0x3fff)
#define LP_USDT_COOKIE_ROLE(c) ((__u32)(c) & 3)
#define LP_USDT_COOKIE_ALT(c) ((__u32)(c) >> 16 & 0xff)

/*
 * A site of a span-pair probe attached by leanprofiler itself (map
 * "usdt_sites"), not through libbpf's USDT support: where the kernel has
 * uprobe_multi links, every site (a file's sites of all specs are one link),
 * else the sites of a probe libbpf refuses as a whole because it cannot
 * decode the arguments of one of them, each by itself. Their arguments are
 * decoded here (as libbpf's struct __bpf_usdt_spec); the uprobe's cookie is
 * LP_USDT_SITE_COOKIE(index, image), image as in LP_MARKER_COOKIE.
 */
#define LP_USDT_SITES_MAX 4096
#define LP_USDT_OWN_SITE (1ULL << 62)
#define LP_USDT_SITE_COOKIE(index, image) \
	(LP_USDT_OWN_SITE | ((__u64)(image) << 32) | (__u16)(index))
#define LP_USDT_SITE_INDEX(c) ((__u32)(c) & 0xffff)

enum lp_usdt_arg_kind {
	LP_USDT_ARG_CONST = 0, /* $N: val_off is the value */
	LP_USDT_ARG_REG = 1,   /* %reg: the register at reg_off in struct pt_regs */
	LP_USDT_ARG_DEREF = 2, /* N(%reg): the 8 bytes at that register + val_off */
};

struct lp_usdt_arg {
	__u64 val_off;
	__u32 kind;      /* enum lp_usdt_arg_kind */
	__s16 reg_off;
	__u8 is_signed;  /* -N@: sign-extended */
	__u8 bitshift;   /* 64 - 8 x its size: the bits above it cleared (or the sign copied) */
};

struct lp_usdt_site {
	struct lp_usdt_arg args[LP_USDT_ARGS];
	__u64 cookie; /* LP_USDT_COOKIE(file, batch, spec, role, alt) */
	__u32 nargs;
	__u32 pad;
};

/* One string argument to copy: at address args[arg], or at the pointer stored there + off. */
struct lp_usdt_str {
	__s8 arg;     /* argument index holding the address */
	__s8 len_arg; /* argument holding the length (not NUL-terminated), -1: NUL-terminated */
	__u8 deref;   /* 1: the string's address is the pointer at args[arg] + off */
	__u8 roles;   /* read at these probes: 1 << LP_USDT_ROLE_ENTRY | 1 << LP_USDT_ROLE_EXIT */
	__s32 off;
};

/* What the kernel reads for a spec's probes (map "usdt_desc", key spec). */
struct lp_usdt_desc {
	__u32 nstr;
	/* Arguments read at each role's probes (LP_USDT_ROLE_*): only what the spec uses. */
	__u8 nargs[LP_USDT_ROLES];
	__u8 pad;
	struct lp_usdt_str str[LP_USDT_STR_SLOTS];
};

/* lp_rec_usdt.str_len: the text is in a file, see the LP_STR_USDT record before (below -MAX_ERRNO). */
#define LP_USDT_STR_IN_FILE (-4096)

/* lp_rec_usdt.h.flags */
#define LP_USDT_EXIT 0x1u /* the exit role; else the entry */
#define LP_USDT_ABORT 0x4u /* the abort role (with LP_USDT_EXIT) */
#define LP_USDT_SCHED 0x2u /* struct lp_sched_snap follows the record, before its strings */

struct lp_rec_usdt {
	struct lp_rec_hdr h; /* h.seq: shared with the markers' events of the thread */
	__u64 ts_ns;
	__u16 spec; /* index in the recording's spec list */
	__u16 file; /* which probed file (index, < LP_MAX_FILES) */
	__u16 alt;  /* which probe of its role's list fired */
	__u8 nargs; /* arguments read (args[nargs..] are 0) */
	__u8 nstr;  /* string slots that follow */
	__u64 args[LP_USDT_ARGS];
	/*
	 * per slot: bytes read (no NUL), LP_USDT_STR_MAX+1 when cut, -errno when
	 * unreadable, LP_USDT_STR_IN_FILE when a LP_STR_USDT string record just
	 * before says where the text is (no bytes here)
	 */
	__s16 str_len[LP_USDT_STR_SLOTS];
	/* char text[]: the slots' bytes one after another, max(len, 0) each, capped */
};

/*
 * record --off-cpu: where the thread's time went since the kernel half began
 * to track it (its first recorded event), up to the event's ts_ns. Every
 * nanosecond of that is in exactly one of the four, so a span's split is
 * the difference of its exit's snapshot and its enter's, and adds up to its
 * duration. Context switches are the kernel's own counts (task_struct nvcsw,
 * nivcsw), from the thread's start.
 */
struct lp_sched_snap {
	__u64 cpu_ns;     /* on a CPU */
	__u64 runq_ns;    /* runnable, waiting for a CPU (preempted, or woken) */
	__u64 blocked_ns; /* asleep: I/O, a lock, a futex, a sleep, stopped */
	__u64 nvcsw;      /* voluntary context switches */
	__u64 nivcsw;     /* involuntary (preempted) */
	/*
	 * Current on a CPU whose vCPU the hypervisor did not run (its steal
	 * clock): 0 without one. Last, so older fields keep their offsets.
	 */
	__u64 steal_ns;
};

/*
 * --off-cpu with a trace: a tracked thread was off its CPU from off_ns to
 * on_ns; asleep until wake_ns, then runnable (wake_ns = off_ns when it was
 * preempted, on_ns when it got the CPU back without a wakeup seen). h.seq is
 * 0: these are not the thread's marker events.
 */
struct lp_rec_sched {
	struct lp_rec_hdr h;
	__u64 off_ns, wake_ns, on_ns;
};

#define LP_REC_MAX_SIZE \
	(sizeof(struct lp_rec_event) + sizeof(struct lp_sched_snap) + LP_NAME_BUF + LP_META_BUF)
#define LP_USDT_REC_MAX_SIZE \
	(sizeof(struct lp_rec_usdt) + sizeof(struct lp_sched_snap) + \
	 LP_USDT_STR_SLOTS * LP_USDT_STR_BUF)

/*
 * The layout both compilers must agree on (clang for BPF, gcc for user
 * space): checked in each, so a field that moves in one fails the build.
 */
#define LP_WIRE_CHECK(what, cond) _Static_assert(cond, "wire.h: " what)
LP_WIRE_CHECK("header size", sizeof(struct lp_rec_hdr) == 16);
LP_WIRE_CHECK("event size", sizeof(struct lp_rec_event) == 56);
LP_WIRE_CHECK("event ts_ns offset", __builtin_offsetof(struct lp_rec_event, ts_ns) == 16);
LP_WIRE_CHECK("event name_len offset", __builtin_offsetof(struct lp_rec_event, name_len) == 50);
LP_WIRE_CHECK("event file offset", __builtin_offsetof(struct lp_rec_event, file) == 54);
LP_WIRE_CHECK("string size", sizeof(struct lp_rec_string) == 56);
LP_WIRE_CHECK("string file_dev offset", __builtin_offsetof(struct lp_rec_string, file_dev) == 32);
LP_WIRE_CHECK("thread size", sizeof(struct lp_rec_thread) == 48);
LP_WIRE_CHECK("task size", sizeof(struct lp_rec_task) == 48);
LP_WIRE_CHECK("libs size", sizeof(struct lp_rec_libs) == 32);
LP_WIRE_CHECK("self stop size", sizeof(struct lp_rec_self_stop) == 32);
LP_WIRE_CHECK("usdt args offset", __builtin_offsetof(struct lp_rec_usdt, args) == 32);
LP_WIRE_CHECK("usdt size", sizeof(struct lp_rec_usdt) == 136);
LP_WIRE_CHECK("target size", sizeof(struct lp_target) == 24);
LP_WIRE_CHECK("linked key size", sizeof(struct lp_linked_key) == 24);
LP_WIRE_CHECK("file key size", sizeof(struct lp_file_key) == 16);
LP_WIRE_CHECK("usdt desc size", sizeof(struct lp_usdt_desc) == 40);
LP_WIRE_CHECK("usdt site size", sizeof(struct lp_usdt_site) == 208);
LP_WIRE_CHECK("thread lost size", sizeof(struct lp_thread_lost) == 24);
LP_WIRE_CHECK("hot stop first", __builtin_offsetof(struct lp_hot, stop_ns) == 0);
LP_WIRE_CHECK("files fit a cookie", LP_MAX_FILES <= 0x10000);
LP_WIRE_CHECK("sites fit a cookie", LP_USDT_SITES_MAX <= 0x10000);
LP_WIRE_CHECK("images below the own-site bit", ((__u64)LP_IMAGE_MASK << 32) < LP_USDT_OWN_SITE);
LP_WIRE_CHECK("sched snapshot size", sizeof(struct lp_sched_snap) == 48);
LP_WIRE_CHECK("sched interval size", sizeof(struct lp_rec_sched) == 40);
/* Records are 8-byte aligned in the ring buffer, and the text after them starts right there. */
LP_WIRE_CHECK("event alignment", sizeof(struct lp_rec_event) % 8 == 0);
LP_WIRE_CHECK("usdt alignment", sizeof(struct lp_rec_usdt) % 8 == 0);
LP_WIRE_CHECK("name length fits", LP_NAME_BUF < 32767 && LP_META_BUF < 32767);
LP_WIRE_CHECK("record fits the u16 length", LP_REC_MAX_SIZE < 0x8000);

#endif /* LP_WIRE_H */
