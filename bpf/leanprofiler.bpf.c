// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel half: one program per marker kind, attached as uprobes to the
 * function-entry probe sites that include/leanprofiler.h emits. Arguments are
 * read straight from pt_regs (System V: rdi, rsi, rdx, rcx), which is what the
 * USDT notes describe and saves bpf_usdt_arg()'s 30-60 ns.
 *
 * Cost choices (docs/internals.md):
 * - records are submitted with BPF_RB_NO_WAKEUP; the consumer polls on a short
 *   timer, and a wakeup is forced only when wakeup_bytes are waiting;
 * - a literal name or metadata is sent once per (process image, address) as a
 *   LP_REC_STRING record; events then carry only its address;
 * - runtime strings are copied on every event: the buffer may be reused.
 * A string in a page the process has not touched yet (a forked child's
 * .rodata, a fresh program's) cannot be read here without a fault: when it
 * lies in a read-only file mapping, the record says where, and
 * user space reads the same bytes from that file (LP_STR_IN_FILE).
 * Every record that cannot be delivered is counted, per CPU and per thread.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "wire.h"
/* libbpf's USDT support (span-pair specs): argument decoding, semaphores. */
#define BPF_USDT_MAX_SPEC_CNT LP_USDT_SPECS_MAX
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

/* Force a consumer wakeup once this much data waits in the ring buffer. */
const volatile __u64 wakeup_bytes = 1 << 20;
/* --all-processes: the binary whose processes become targets (0: not in that mode). */
const volatile __u64 all_dev = 0;
const volatile __u64 all_ino = 0;

/*
 * Pid-filtered recording (wire.h struct lp_linked_key): user space links
 * files to each target process by itself; a child that inherits linked files
 * is paused at its fork until its own links are made. Set after the load
 * (whether the kernel can is known only then), before anything is attached.
 */
bool lp_per_process = false;

/*
 * record --off-cpu: events carry where their thread's time went
 * (struct lp_sched_snap), kept up to date by lp_sched_switch, which user
 * space loads only then.
 */
const volatile bool off_cpu = false;
/* ...and, with a trace to show them in, every interval off a CPU (struct lp_rec_sched). */
const volatile bool off_cpu_intervals = false;
/*
 * --off-cpu on a KVM guest: the hypervisor's steal clock of a CPU (struct
 * kvm_steal_time.steal, ns its vCPU was runnable but not running) lies this
 * far from the CPU's struct rq, both per-CPU variables (their offsets in the
 * kernel's BTF, found by user space: neither is in kallsyms, so no ksym can
 * name them). 0: no steal clock, stolen time stays in cpu.
 */
const volatile __s64 steal_from_rq = 0;

/* The format of the records this object sends: user space checks it is its own. */
const volatile __u32 lp_wire_version = LP_WIRE_VERSION;

/*
 * The stop, the epoch and when each batch of files starts being recorded
 * (wire.h struct lp_hot): one 8-byte store opens the gates of every file of
 * a batch, however many (a batch has at least one file, so LP_MAX_FILES
 * batches at most). A section of its own: every event reads it, and the
 * kernel maps such a section page by page, each page a TLB miss after a
 * trap has flushed the TLB (PTI without PCID); the stop and the first
 * batches share one page.
 */
struct lp_hot lp_hot SEC(".data.hot") = {};
/*
 * The consumer, user space, is alive: a process is paused for new files only
 * while it is, since only it sends the SIGCONT. It renews a lease
 * (lp_consumer_until, CLOCK_MONOTONIC, a few hundred ms ahead) as it reads;
 * and its exit (lp_consumer_pid, its last thread) sets lp_consumer_gone in
 * sched_process_exit, which comes before the exiting process's descriptors
 * are closed: a profiler killed (SIGKILL) with its probes still attached,
 * whose teardown takes an RCU grace period per probe, stops nothing more.
 */
__u64 lp_consumer_until = 0;
__u32 lp_consumer_pid = 0;
__u32 lp_consumer_gone = 0;
/* The last process image number handed out (struct lp_target.gen). */
__u64 lp_last_gen = 0;
/* The last program image number handed out (struct lp_target.image). */
__u64 lp_last_image = 0;

/*
 * The processes being recorded, by tgid. The uprobes fire in every process
 * that maps a probed file; only these are recorded. Children join at fork,
 * in the kernel, so none of their spans can be missed.
 *
 * Not preallocated, as known_files and lost_by_tid: 65536 elements made at
 * load cost every recording 11-14 ms per map here, and a recording uses a
 * few. The limit stays (-E2BIG when full); the programs that add entries
 * (tracing and uprobe programs) allocate from the kernel's per-CPU caches.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct lp_target);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* set from --buffer-size before load */
} rb SEC(".maps");

/*
 * Files user space has examined (and attached to, if they have markers). A
 * target that execs a program not in here is paused until it is.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LP_KNOWN_FILES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* as targets */
	__type(key, struct lp_file_key);
	__type(value, __u8);
} known_files SEC(".maps");

/* Paused processes that only user space may continue (wire.h LP_HELD_MAX). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LP_HELD_MAX);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

/*
 * Pid-filtered recording: the files linked for a process image, and who has
 * any. Written by user space only; not preallocated (as targets), since
 * making 65536 elements at load costs every recording 11-14 ms a map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LP_LINKED_MAX);
	__type(key, struct lp_linked_key);
	__type(value, __u8);
} linked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} linked_pids SEC(".maps");

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/*
 * Literals this thread knows were sent for its process's current image: a
 * small direct-mapped cache, so the common event costs no map lookup at all.
 */
#define LIT_CACHE 16

#define SCRATCH_SIZE \
	(LP_REC_MAX_SIZE > LP_USDT_REC_MAX_SIZE ? LP_REC_MAX_SIZE : LP_USDT_REC_MAX_SIZE)

/* A tracked thread (--off-cpu) runs, or is off its CPU. 0: not tracked yet. */
enum { SCHED_NONE = 0, SCHED_RUNNING, SCHED_OFF };

/*
 * --off-cpu: the thread's time since its first recorded event, in three sums.
 * The switch-outs are what the kernel half relies on: on this project's
 * kernel (6.18) every switch-out of a thread reaches sched_switch, but some
 * of its switch-ins do not (about 1 in 2000 under load; seen with ftrace
 * alone). So a wait is split when the thread is next seen running, whoever
 * sees it: the switch-in, or its own next event or switch-out. The split of
 * a wait comes from the kernel's own account (task_struct.sched_info): the
 * part spent runnable on a run queue (run_delay, last_queued), the rest
 * asleep. Written by the thread's events and by sched_switch on its CPU.
 */
struct lp_sched_state {
	__u64 cpu_ns, runq_ns, blocked_ns;
	__u64 steal_ns;  /* running, but the hypervisor ran something else on its vCPU */
	__u64 in_ns;     /* running: since then (CLOCK_MONOTONIC) */
	__u64 steal_in;  /* running: its CPU's steal clock then */
	__u64 off_ns;    /* off: since then (CLOCK_MONOTONIC) */
	__u64 wake_ns;   /* asleep: when it was woken (sched_wakeup), 0: not seen */
	__u64 rd_off;    /* sched_info.run_delay then */
	__u64 pcount_off; /* sched_info.pcount then: it grows at every switch-in */
	/*
	 * CLOCK_MONOTONIC less sched_clock, from its switch-ins seen (their
	 * time against sched_info.last_arrival): places one not seen.
	 */
	__s64 clk_off;
	__u32 state;
	__u8 runnable;  /* it left runnable (preempted): all of the wait is runq */
	__u8 in_seen;   /* its last switch-in was seen (in_ns is its time) */
	__u8 clk_set;
	__u8 pad;
};

/*
 * The same offset from any thread, for a thread with none of its own yet.
 * Each thread keeps the least it saw, rising at most CLK_DRIFT_NS per sample:
 * sched_info's times come from a run queue's clock as last updated, which
 * can lag (so a sample is never below the truth), and the two clocks drift
 * apart by a few ppm at most.
 */
/*
 * Written at switch-outs of tracked threads: a section (map) of its own, so
 * that those writes do not bounce the cache line of lp_hot, which every
 * marker event reads.
 */
__s64 lp_clk_off SEC(".data.clk") = 0;
__u32 lp_clk_set SEC(".data.clk") = 0;
#define CLK_DRIFT_NS 1000

struct lp_task {
	__u32 seq;
	__u32 announced;
	__u64 mm;    /* the cache is valid for this address space (exec changes it)... */
	__u64 gen;   /* ...and this image of the process (struct lp_target.gen) */
	__u64 epoch; /* lp_hot.epoch when gen was read */
	__u32 image; /* the process's program image then (struct lp_target.image) */
	__u32 pad;
	__u64 lit[LIT_CACHE];
	struct lp_sched_state sched;
	/*
	 * Variable-size records are built here, then copied with
	 * bpf_ringbuf_output(). Per thread, not per CPU: a program that is
	 * preempted (PREEMPT kernels) keeps its half-built record.
	 */
	char buf[SCRATCH_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lp_task);
} task_state SEC(".maps");

struct str_key {
	__u64 gen; /* the process image (struct lp_target.gen) */
	__u64 addr;
};

/* Literals already sent. LRU: an evicted entry only means the text is sent again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct str_key);
	__type(value, __u8);
} interned SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LP_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* as targets */
	__type(key, __u32);
	__type(value, struct lp_thread_lost);
} lost_by_tid SEC(".maps");

/* What each span-pair spec's entry probe copies (set by user space before attaching). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_SPEC_MAX);
	__type(key, __u32);
	__type(value, struct lp_usdt_desc);
} usdt_desc SEC(".maps");

/* Sites of span-pair probes attached by user space itself (wire.h LP_USDT_OWN_SITE). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_USDT_SITES_MAX);
	__type(key, __u32);
	__type(value, struct lp_usdt_site);
} usdt_sites SEC(".maps");

#define LP_USDT_ARGS_POW2 16 /* a power of two above LP_USDT_ARGS, to bound indexes */

#define VM_WRITE_ 0x2ULL /* vm_area_struct.vm_flags */
#define SIGCONT_ 18
#define SIGSTOP_ 19
#define SIGTTOU_ 22 /* SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: the stop signals */

static __always_inline void count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += 1; /* per-CPU: no atomics needed */
}

/* A lost event: rare, so out of line (the hot path's code stays short). */
static __noinline void count_lost(__u16 type, __u32 pid, __u32 tid)
{
	struct lp_thread_lost *l, zero = { .pid = pid };

	count(type == LP_REC_ENTER ? LP_STAT_LOST_ENTER : LP_STAT_LOST_EXIT);
	l = bpf_map_lookup_elem(&lost_by_tid, &tid);
	if (!l) {
		bpf_map_update_elem(&lost_by_tid, &tid, &zero, BPF_NOEXIST);
		l = bpf_map_lookup_elem(&lost_by_tid, &tid);
		if (!l)
			return; /* the per-CPU total above still has it */
	}
	if (type == LP_REC_ENTER)
		__sync_fetch_and_add(&l->enter, 1);
	else
		__sync_fetch_and_add(&l->exit, 1);
}

static __always_inline __u64 submit_flags(void)
{
	return bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_hdr(struct lp_rec_hdr *h, __u16 type, __u16 flags, __u32 pid,
				     __u32 tid, __u32 seq)
{
	h->type = type;
	h->flags = flags;
	h->pid = pid;
	h->tid = tid;
	h->seq = seq;
}

/*
 * A marker's event, as its programs and their cold paths (out of line: the
 * common event runs only the short path) see it.
 */
struct ev {
	struct task_struct *task;
	__u64 name, meta, counter;
	__u64 ts;   /* when the event happened (an enter's may be taken again: enter_time) */
	__u32 pid, tid;
	__u32 seq;  /* the thread's count of marker hits (wire.h lp_rec_hdr) */
	__u32 file; /* the probed file whose marker ran (LP_MARKER_COOKIE) */
	__u16 type; /* LP_REC_ENTER or LP_REC_EXIT */
	__u16 flags; /* the record's (wire.h LP_EV_*) */
};

/* A thread's first event: its names. */
static __noinline int announce_thread(struct task_struct *task, __u32 pid, __u32 tid,
				      __u32 seq)
{
	struct lp_rec_thread *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count(LP_STAT_LOST_THREAD);
		return -1;
	}
	fill_hdr(&r->h, LP_REC_THREAD, 0, pid, tid, seq);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	BPF_CORE_READ_STR_INTO(&r->pcomm, task, group_leader, comm);
	bpf_ringbuf_submit(r, submit_flags());
	return 0;
}

struct file_loc {
	__u64 addr;
	struct lp_rec_string *r; /* gets the file's identity and offset */
	bool found;
};

static long vma_file(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct file_loc *l = ctx;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	/*
	 * A page that is not present in a mapping that may not be written holds
	 * what the file holds (.rodata, text). A writable one's could be a
	 * written page swapped out: not taken. (A forked child's mappings carry
	 * anon_vma even where nothing was written: that cannot tell.)
	 */
	if (!f || (BPF_CORE_READ(vma, vm_flags) & VM_WRITE_))
		return 0;
	l->r->file_dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	l->r->file_ino = BPF_CORE_READ(f, f_inode, i_ino);
	l->r->file_off = (BPF_CORE_READ(vma, vm_pgoff) << 12) + l->addr - BPF_CORE_READ(vma, vm_start);
	l->found = true;
	return 0;
}

/*
 * The bytes at addr could not be read without a fault (a page not present):
 * when they lie in a read-only file mapping, says where in r
 * (LP_STR_IN_FILE), so that user space reads the same bytes from the file.
 * (A uprobe program may not fault; a sleepable one would, but the kernel then
 * skipped all of some threads' hits when the ring buffer overflowed.)
 * bpf_find_vma() only tries the address space's lock, and fails (-EBUSY)
 * while another thread maps or unmaps memory (a thread's stack at
 * pthread_create(), a fork), or waits to: then r says which marker's site ran,
 * in which file (LP_STR_AT_SITE), and user space looks for the text in that
 * file, where a literal lies. (Said unreadable, and remembered as sent, the
 * literal named every later event of that process "(unreadable)", with
 * nothing lost: tests/integration/test_core.c, test_texts_while_mapping.)
 */
static __always_inline bool text_in_file(struct task_struct *task, __u64 addr,
					  struct lp_rec_string *r, __u32 file, __u64 site)
{
	struct file_loc l = { .addr = addr, .r = r };
	long err;

	r->file = 0;
	r->file_dev = r->file_ino = r->file_off = 0;
	if (!addr)
		return false;
	err = bpf_find_vma(task, addr, vma_file, &l, 0);
	if (err == -EBUSY) {
		r->h.flags |= LP_STR_AT_SITE;
		r->file = (__u16)file;
		r->file_off = site;
		return true;
	}
	if (err || !l.found)
		return false;
	r->h.flags |= LP_STR_IN_FILE;
	return true;
}

/*
 * Sends the text of a literal unless this process image already sent it:
 * 1 when sent, 0 when it was already, -1 when it could not be. site: the
 * address of the probe site that ran.
 */
static __noinline int intern(struct lp_task *st, const struct ev *ev, __u64 addr, int is_meta,
			     __u64 site)
{
	struct str_key key = { .gen = st->gen, .addr = LP_LIT_KEY(addr, is_meta) };
	struct lp_rec_string *r = (void *)st->buf;
	__u8 one = 1;
	long n;
	__u64 size;

	if (bpf_map_lookup_elem(&interned, &key))
		return 0;
	if (is_meta)
		n = bpf_probe_read_user_str(st->buf + sizeof(*r), LP_META_BUF, (void *)addr);
	else
		n = bpf_probe_read_user_str(st->buf + sizeof(*r), LP_NAME_BUF, (void *)addr);
	fill_hdr(&r->h, LP_REC_STRING, is_meta ? LP_STR_META : 0, ev->pid, ev->tid, ev->seq);
	r->addr = addr;
	r->len = n > 0 ? n - 1 : n;
	r->file = r->usdt_slot = r->usdt_max = 0;
	r->file_dev = r->file_ino = r->file_off = 0;
	if (n == -EFAULT)
		text_in_file(ev->task, addr, r, ev->file, site);
	size = sizeof(*r) + (n > 1 ? n - 1 : 0);
	if (size > sizeof(*r) + LP_META_BUF)
		return -1; /* cannot happen; bounds the size for the verifier */
	if (bpf_ringbuf_output(&rb, st->buf, size, submit_flags())) {
		count(LP_STAT_LOST_STRING);
		return -1;
	}
	/* Sent, even when unreadable here: the text is in a file (one said), or nowhere. */
	bpf_map_update_elem(&interned, &key, &one, BPF_ANY);
	return 1;
}

static __always_inline void emit_task(__u32 what, __u32 pid, __u32 tid, __u32 ppid,
				      struct task_struct *named, __u16 flags, __u64 ts)
{
	struct lp_rec_task *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count(LP_STAT_LOST_TASK);
		return;
	}
	fill_hdr(&r->h, LP_REC_TASK, flags, pid, tid, 0);
	r->ts_ns = ts;
	r->what = what;
	r->ppid = ppid;
	BPF_CORE_READ_STR_INTO(&r->comm, named, comm);
	/* Rare and decisive for what follows: do not let it wait for the next poll. */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

static __always_inline __u64 new_gen(void)
{
	return __sync_fetch_and_add(&lp_last_gen, 1) + 1;
}

/* A new program image number: never 0, never one of user space's (LP_IMAGE_USER). */
static __always_inline __u32 new_image(void)
{
	__u64 n = __sync_fetch_and_add(&lp_last_image, 1);

	return (__u32)(n % (LP_IMAGE_USER - 1)) + 1;
}

static __always_inline int add_target(__u32 pid, __u64 ts)
{
	struct lp_target t = { .since_ns = ts, .gen = new_gen(), .dl_state = LP_RT_UNSEEN,
			       .image = new_image() };

	return bpf_map_update_elem(&targets, &pid, &t, BPF_ANY);
}

/* --all-processes: a process running the binary becomes a target on its first hit. */
static __always_inline bool runs_binary(struct task_struct *task)
{
	struct inode *inode;

	if (!all_ino)
		return false;
	inode = BPF_CORE_READ(task, mm, exe_file, f_inode);
	return inode && BPF_CORE_READ(inode, i_ino) == all_ino &&
	       BPF_CORE_READ(inode, i_sb, s_dev) == all_dev;
}

static __always_inline bool adopt(struct task_struct *task, __u32 pid, __u64 ts, __u16 flags)
{
	if (!runs_binary(task) || add_target(pid, ts))
		return false;
	emit_task(LP_TASK_FOUND, pid, pid, BPF_CORE_READ(task, real_parent, tgid),
		  BPF_CORE_READ(task, group_leader), flags, ts);
	return true;
}

/*
 * Whether a stop of the process would be seen by anyone else: a debugger
 * (ptrace), or a job-control shell whose job it is (a process with a terminal
 * in another process group than its parent's: the shell would report the job
 * stopped and take the terminal back). Such a process is not paused.
 */
static __always_inline bool pausable(struct task_struct *task)
{
	if (BPF_CORE_READ(task, ptrace))
		return false;
	if (!BPF_CORE_READ(task, signal, tty))
		return true;
	return BPF_CORE_READ(task, signal, pids[PIDTYPE_PGID]) ==
	       BPF_CORE_READ(task, real_parent, signal, pids[PIDTYPE_PGID]);
}

/*
 * Whether user space reads the records now: alive, and its lease not over
 * (lp_consumer_until). Only on the paths that pause, never per event.
 */
static __always_inline bool consumer_alive(__u64 ts)
{
	return !lp_consumer_gone && ts < lp_consumer_until;
}

/* SIGSTOP to the process of task: current's by the helper, another's by the kfunc (6.13+). */
static __always_inline int send_stop(struct task_struct *task, bool current)
{
	if (current)
		return bpf_send_signal(SIGSTOP_);
	if (!bpf_send_signal_task) /* a kfunc since Linux 6.13 */
		return -1;
	return bpf_send_signal_task(task, SIGSTOP_, PIDTYPE_TGID, 0);
}

/*
 * The target may be about to run code of files user space has not examined
 * (or, pid-filtered, not linked for it): tell it, and stop the process
 * (SIGSTOP on return to user mode) until user space has attached to them and
 * sends SIGCONT. task is current, or (other) a child not run yet. Never after
 * the stop, and never without a record that says so: a lost record would
 * leave it stopped.
 */
static __always_inline void new_files(struct task_struct *task, __u32 pid, __u32 tid, __u16 flags,
				      __u64 ts, bool other)
{
	struct lp_rec_libs *r;

	if (lp_hot.stop_ns && ts >= lp_hot.stop_ns)
		return;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(LP_STAT_LOST_TASK);
		return;
	}
	/* Told, but not stopped, when nobody may be there to let it go on. */
	if (consumer_alive(ts) && pausable(task) && send_stop(task, !other) == 0)
		flags |= LP_LIBS_PAUSED;
	fill_hdr(&r->h, LP_REC_LIBS, flags, pid, tid, 0);
	r->ts_ns = ts;
	r->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	if (flags & LP_LIBS_PAUSED)
		bpf_map_update_elem(&held, &pid, &r->start_ns, BPF_ANY);
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/* The thread's literal cache slot of a literal's address. */
static __always_inline __u32 lit_slot(__u64 addr, int is_meta)
{
	return (addr ^ (addr >> 6) ^ is_meta) & (LIT_CACHE - 1);
}

/* Whether this thread knows the literal's text was sent (the common case: no map lookup). */
static __always_inline bool lit_cached(const struct lp_task *st, __u64 addr, int is_meta)
{
	return st->lit[lit_slot(addr, is_meta)] == LP_LIT_KEY(addr, is_meta);
}

/*
 * Sends a literal's text unless this thread, or the LRU map, knows it was
 * sent; *slow when it was sent now. 0, or -1 when it could not be.
 */
static __always_inline int literal(struct lp_task *st, const struct ev *ev, __u64 addr, int is_meta,
				   __u64 site, bool *slow)
{
	int sent;

	if (lit_cached(st, addr, is_meta))
		return 0;
	sent = intern(st, ev, addr, is_meta, site);
	if (sent < 0)
		return -1;
	if (sent)
		*slow = true;
	st->lit[lit_slot(addr, is_meta)] = LP_LIT_KEY(addr, is_meta);
	return 0;
}

/*
 * The steal clock of the CPU t runs on (t is current there): what the
 * hypervisor has taken from that vCPU so far. The host writes it only while
 * the vCPU is not running, so a running vCPU reads it whole. 0 without one.
 */
static __always_inline __u64 steal_clock(struct task_struct *t)
{
	__u64 steal = 0;
	char *rq;

	if (!steal_from_rq)
		return 0;
	rq = (char *)BPF_CORE_READ(t, se.cfs_rq, rq); /* see rq_clock_of() */
	if (!rq || bpf_probe_read_kernel(&steal, sizeof(steal), rq + steal_from_rq))
		count(LP_STAT_STEAL_UNREAD);
	return steal;
}

/*
 * The literal caches belong to one image of the process: after an exec (a
 * new address space) or a library unload (lp_hot.epoch moved), forget them and
 * take the image's numbers again. Rare, so out of line.
 */
static __noinline void refresh_image(struct lp_task *st, __u64 mm, __u64 epoch, __u32 pid)
{
	struct lp_target *t;

	for (int i = 0; i < LIT_CACHE; i++)
		st->lit[i] = 0;
	st->mm = mm;
	st->epoch = epoch;
	t = bpf_map_lookup_elem(&targets, &pid);
	/* Not a target any more (it is exiting): numbers no image has. */
	st->gen = t ? t->gen : 0;
	st->image = t ? t->image : 0;
}

static __always_inline void check_image(struct lp_task *st, struct task_struct *task, __u32 pid)
{
	__u64 mm = (__u64)task->mm, epoch = lp_hot.epoch;

	if (st->mm != mm || st->epoch != epoch)
		refresh_image(st, mm, epoch, pid);
}

/*
 * A thread with no state yet hit a probe: 0 when it is a target's (its state
 * made, tracked from ts on with --off-cpu), else -1 (not recorded). Once per
 * thread, so out of line.
 */
static __noinline int join_thread(struct task_struct *task, __u32 pid, __u32 tid, __u16 type,
				  __u64 ts)
{
	struct lp_task *st;

	if (!bpf_map_lookup_elem(&targets, &pid) && !adopt(task, pid, ts, 0))
		return -1;
	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(LP_STAT_NO_TASK_STORAGE);
		count_lost(type, pid, tid);
		return -1;
	}
	if (off_cpu && st->sched.state == SCHED_NONE) {
		/* Tracked from now on: running (this very event). */
		st->sched.in_ns = ts;
		st->sched.steal_in = steal_clock(task);
		st->sched.state = SCHED_RUNNING;
	}
	return 0;
}

/*
 * Whether this probe hit is recorded: the gates of its batch are open (the
 * cookie's: LP_MARKER_COOKIE), recording has not stopped, and the thread is
 * a target's. Returns the thread's state with *ts and *seq set (the thread
 * announced on its first event), or NULL. The common hit reads the clock
 * once, one page of globals (lp_hot) and its thread's state.
 */
static __always_inline struct lp_task *recorded_thread(__u32 batch, __u32 image, __u16 type,
							__u32 pid, __u32 tid,
							struct task_struct *task, __u64 *ts,
							__u32 *seq, bool *slow)
{
	struct lp_task *st;
	__u64 at;

	*ts = bpf_ktime_get_ns();
	/* Read after the timestamp: an event after the store that opened it sees it. */
	at = batch ? lp_hot.batch_at[(batch - 1) & (LP_MAX_FILES - 1)] : 0;
	if (!at || *ts < at || (lp_hot.stop_ns && *ts >= lp_hot.stop_ns))
		return NULL;
	/* Only target threads have per-thread state: its presence is the fast check. */
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st) {
		if (join_thread(task, pid, tid, type, *ts))
			return NULL;
		st = bpf_task_storage_get(&task_state, task, 0, 0);
		if (!st)
			return NULL;
		*slow = true;
	}
	check_image(st, task, pid);
	/*
	 * A link made for an earlier image of the process, which exec'ed a
	 * program mapping the same file: the new image's own link records the
	 * hit (one hit, one count: before the sequence number).
	 */
	if (image && image != st->image)
		return NULL;
	*seq = st->seq++;
	if (!st->announced)
		st->announced = announce_thread(task, pid, tid, *seq) == 0;
	return st;
}

/*
 * A runtime string the kernel could not read, in a read-only file mapping:
 * says where it is (a STRING record just before the event, not
 * remembered as sent), and the event names it by address; or which marker's
 * site ran, when the mapping could not be looked up (user space finds it if
 * it lies in that marker's file). False when it is not in such a file (the
 * event then says it is unreadable).
 */
static __always_inline bool runtime_in_file(const struct ev *ev, __u64 addr, int is_meta,
					     __u64 site)
{
	struct lp_rec_string *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count(LP_STAT_LOST_STRING);
		return false;
	}
	fill_hdr(&r->h, LP_REC_STRING, is_meta ? LP_STR_META : 0, ev->pid, ev->tid, ev->seq);
	r->addr = addr;
	r->len = -EFAULT;
	r->usdt_slot = r->usdt_max = 0;
	if (!text_in_file(ev->task, addr, r, ev->file, site)) {
		bpf_ringbuf_discard(r, 0);
		return false;
	}
	bpf_ringbuf_submit(r, submit_flags());
	return true;
}

/*
 * A string argument of a span-pair probe the kernel could not read, in a
 * read-only file mapping: a STRING record says where (LP_STR_USDT, for slot
 * of the probe's record that follows, at most max bytes), and the slot says
 * LP_USDT_STR_IN_FILE. False when it is not in such a file, or the mapping
 * could not be looked up (another thread maps memory): its marker's file is
 * no guide to where a probe's argument lies, so it stays unreadable.
 */
static __always_inline bool usdt_str_in_file(struct task_struct *task, __u64 addr, __u32 pid,
					     __u32 tid, __u32 seq, __u32 slot, __u32 max)
{
	struct lp_rec_string *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count(LP_STAT_LOST_STRING);
		return false;
	}
	fill_hdr(&r->h, LP_REC_STRING, LP_STR_USDT, pid, tid, seq);
	r->addr = addr;
	r->len = -EFAULT;
	r->usdt_slot = (__u16)slot;
	r->usdt_max = (__u16)max;
	if (!text_in_file(task, addr, r, 0, 0) || !(r->h.flags & LP_STR_IN_FILE)) {
		bpf_ringbuf_discard(r, 0);
		return false;
	}
	bpf_ringbuf_submit(r, submit_flags());
	return true;
}

/*
 * The clock of the run queue the task is on (sched_clock, by the ns; updated
 * at every schedule), the one sched_info's times are in. Reached through the
 * task's CFS run queue: the per-CPU runqueues are not in this kernel's
 * kallsyms, so a ksym cannot name them.
 */
static __always_inline __u64 rq_clock_of(struct task_struct *t)
{
	return BPF_CORE_READ(t, se.cfs_rq, rq, clock);
}

/*
 * A tracked thread leaves its CPU, or is seen running there, at now: the
 * time since it got the CPU is its, less what the hypervisor took meanwhile.
 * It stayed on that CPU all along (a thread moves only while off a CPU), so
 * the CPU's steal clock gives that exactly.
 */
static __always_inline void ran_until(struct task_struct *task, struct lp_task *st, __u64 now,
				      __u64 steal)
{
	__u64 ran = now > st->sched.in_ns ? now - st->sched.in_ns : 0;
	__u64 stolen = steal > st->sched.steal_in ? steal - st->sched.steal_in : 0;

	if (stolen > ran)
		stolen = ran;
	st->sched.cpu_ns += ran - stolen;
	st->sched.steal_ns += stolen;
}

/*
 * A tracked thread that was off its CPU since off_ns got it back at in_ns
 * (CLOCK_MONOTONIC). Preempted, it waited for a CPU all along: runq. Asleep,
 * it waited for a CPU from its wakeup on: from when sched_wakeup saw it, else
 * for what the kernel counted it runnable on a run queue (queued, ns by
 * sched_clock, at most the wait); the rest is blocked. The interval goes to
 * the trace too (--off-cpu with one).
 */
static __always_inline void end_wait(struct task_struct *task, struct lp_task *st, __u64 in_ns,
				     __u64 queued, __u64 steal)
{
	__u64 wait = in_ns > st->sched.off_ns ? in_ns - st->sched.off_ns : 0, runq;
	struct lp_rec_sched *r;

	/* Woken at a time seen: runnable since, by the same clock (the kernel's can lag). */
	if (!st->sched.runnable && st->sched.wake_ns >= st->sched.off_ns &&
	    st->sched.wake_ns <= in_ns)
		queued = in_ns - st->sched.wake_ns;
	runq = queued < wait && !st->sched.runnable ? queued : wait;

	st->sched.runq_ns += runq;
	st->sched.blocked_ns += wait - runq;
	st->sched.in_ns = in_ns > st->sched.off_ns ? in_ns : st->sched.off_ns;
	st->sched.steal_in = steal;
	st->sched.state = SCHED_RUNNING;
	if (!off_cpu_intervals || (lp_hot.stop_ns && in_ns >= lp_hot.stop_ns))
		return;
	/* Never a wakeup of the consumer from inside the scheduler: it polls. */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(LP_STAT_LOST_SCHED);
		return;
	}
	fill_hdr(&r->h, LP_REC_SCHED, 0, task->tgid, task->pid, 0);
	/* Asleep first, then runnable: a wakeup puts a thread on a run queue. */
	r->off_ns = st->sched.off_ns;
	r->wake_ns = st->sched.off_ns + (wait - runq);
	r->on_ns = st->sched.in_ns;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * The thread runs (its own event, or it is leaving its CPU) but its switch-in
 * was not seen: the kernel has done its account of that switch-in since
 * (sched_info: run_delay grew by the wait on the run queue, last_arrival is
 * when, by sched_clock). Preempted, it got its CPU back when that wait ended;
 * asleep, at last_arrival (CLOCK_MONOTONIC by the offset of the switch-ins
 * seen). Ends the wait there; with nothing to go by, now.
 */
static __always_inline void unseen_switch_in(struct task_struct *task, struct lp_task *st,
					     __u64 now)
{
	/* All read first: the compiler would otherwise merge loads the verifier must tell apart. */
	__s64 queued = (__s64)(task->sched_info.run_delay - st->sched.rd_off);
	__u64 arrival = task->sched_info.last_arrival, off_ns = st->sched.off_ns, in_ns = now;
	bool arrived = task->sched_info.pcount != st->sched.pcount_off;
	__s64 off = st->sched.clk_set ? st->sched.clk_off : lp_clk_off;
	bool known = st->sched.clk_set || lp_clk_set;

	if (queued < 0)
		queued = 0;
	if (st->sched.runnable)
		in_ns = off_ns + (__u64)queued;
	else if (arrived && known)
		in_ns = (__u64)((__s64)arrival + off);
	if (in_ns < off_ns)
		in_ns = off_ns;
	if (in_ns > now)
		in_ns = now;
	st->sched.in_seen = 0;
	count(LP_STAT_UNSEEN_IN);
	/* What was stolen from in_ns to now is not known: it stays in cpu (docs/internals.md). */
	end_wait(task, st, in_ns, (__u64)queued, steal_clock(task));
}

/* A sample of the offset: a switch-in seen at in_ns, which the kernel noted at arrival. */
static __always_inline void clock_sample(struct lp_task *st, __u64 in_ns, __u64 arrival)
{
	__s64 sample = (__s64)(in_ns - arrival);

	if (!st->sched.clk_set || sample < st->sched.clk_off + CLK_DRIFT_NS)
		st->sched.clk_off = sample;
	else
		st->sched.clk_off += CLK_DRIFT_NS;
	st->sched.clk_set = 1;
	lp_clk_off = st->sched.clk_off;
	lp_clk_set = 1;
}

/*
 * Where the thread's time went from its first event up to ts, an event's
 * time: it runs (this event), so the time since it last got a CPU is CPU
 * time. A program preempted after taking ts got its CPU back after ts: the
 * time past ts, counted as waiting already, comes off the waits.
 */
static __always_inline void sched_snap(struct lp_task *st, struct task_struct *task, __u64 ts,
				       struct lp_sched_snap *s)
{
	__u64 in, cpu, runq, blocked, steal;

	if (st->sched.state == SCHED_OFF)
		unseen_switch_in(task, st, ts);
	in = st->sched.in_ns;
	cpu = st->sched.cpu_ns;
	runq = st->sched.runq_ns;
	blocked = st->sched.blocked_ns;
	steal = st->sched.steal_ns;
	if (ts >= in) {
		__u64 now = steal_clock(task);
		__u64 stolen = now > st->sched.steal_in ? now - st->sched.steal_in : 0;

		/* Read after ts: what was taken since ts is not the span's. */
		if (stolen > ts - in)
			stolen = ts - in;
		cpu += ts - in - stolen;
		steal += stolen;
	} else {
		__u64 over = in - ts, r = over < runq ? over : runq;

		runq -= r;
		over -= r;
		r = over < blocked ? over : blocked;
		blocked -= r;
		over -= r;
		cpu -= over < cpu ? over : cpu;
	}
	s->cpu_ns = cpu;
	s->runq_ns = runq;
	s->blocked_ns = blocked;
	s->steal_ns = steal;
	s->nvcsw = task->nvcsw;
	s->nivcsw = task->nivcsw;
}

/*
 * An enter that did more than the common work (its thread's first event, a
 * literal's text sent, runtime strings copied) is
 * timestamped again when that work is done: the span measures the program's
 * code after the marker, not the profiler's one-time costs. ts: the time the
 * gates were checked against; a span never begins after the stop.
 */
static __always_inline __u64 enter_time(__u64 ts)
{
	__u64 now = bpf_ktime_get_ns();

	return lp_hot.stop_ns && now >= lp_hot.stop_ns ? ts : now;
}

/* The fixed part of a marker's record. */
static __always_inline void fill_event(struct lp_rec_event *e, const struct ev *ev)
{
	fill_hdr(&e->h, ev->type, ev->flags, ev->pid, ev->tid, ev->seq);
	e->ts_ns = ev->ts;
	e->counter = ev->counter;
	e->name = ev->name;
	e->meta = ev->meta;
	e->pad = 0;
	e->file = (__u16)ev->file;
	e->name_len = 0;
	e->meta_len = 0;
}

/*
 * Everything but the common event: a literal's text to send, runtime
 * strings to copy (the buffer may change after the marker), or a thread's
 * first event. Out of line. slow: the event did more than the common work
 * already (an enter is then timestamped again: enter_time()).
 */
static __noinline int record_slow(void *ctx, struct lp_task *st, struct ev *ev, bool slow)
{
	/* The probe site that ran: where its file is mapped (LP_STR_AT_SITE). */
	__u64 site = PT_REGS_IP((struct pt_regs *)ctx);
	__u64 snap = off_cpu ? sizeof(struct lp_sched_snap) : 0, nlen = 0, mlen = 0;
	__u16 flags = ev->flags;
	struct lp_rec_event *e;
	char *text;
	long n;

	if (!ev->name || !(flags & LP_EV_NAME_LITERAL))
		flags |= LP_EV_NAME_INLINE;
	else if (literal(st, ev, ev->name, 0, site, &slow))
		goto lost;
	if (ev->type == LP_REC_EXIT || !ev->meta) {
		flags |= LP_EV_NO_META;
	} else if (!(flags & LP_EV_META_LITERAL)) {
		flags |= LP_EV_META_INLINE;
	} else if (literal(st, ev, ev->meta, 1, site, &slow)) {
		goto lost;
	}
	if (off_cpu)
		flags |= LP_EV_SCHED;
	ev->flags = flags;

	if (!(flags & (LP_EV_NAME_INLINE | LP_EV_META_INLINE))) {
		/* No runtime string: a fixed-size record reserved in place. */
		if (off_cpu)
			e = bpf_ringbuf_reserve(&rb, sizeof(*e) + sizeof(struct lp_sched_snap), 0);
		else
			e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
		if (!e)
			goto lost;
		fill_event(e, ev);
		if (slow && ev->type == LP_REC_ENTER)
			e->ts_ns = enter_time(ev->ts);
		if (off_cpu)
			sched_snap(st, ev->task, e->ts_ns, (struct lp_sched_snap *)(e + 1));
		bpf_ringbuf_submit(e, submit_flags());
		return 0;
	}

	/* Runtime strings: copy the text now, the buffer may change after the marker. */
	e = (void *)st->buf;
	fill_event(e, ev);
	text = st->buf + sizeof(*e) + snap;
	if (flags & LP_EV_NAME_INLINE) {
		n = ev->name ? bpf_probe_read_user_str(text, LP_NAME_BUF, (void *)ev->name) : -EFAULT;
		if (n == -EFAULT && runtime_in_file(ev, ev->name, 0, site)) {
			flags &= ~LP_EV_NAME_INLINE;
			n = 0;
		}
		e->name_len = n > 0 ? n - 1 : n;
		nlen = n > 1 ? n - 1 : 0;
		if (nlen > LP_NAME_BUF - 1)
			nlen = LP_NAME_BUF - 1;
	}
	if (flags & LP_EV_META_INLINE) {
		n = bpf_probe_read_user_str(text + nlen, LP_META_BUF, (void *)ev->meta);
		if (n == -EFAULT && runtime_in_file(ev, ev->meta, 1, site)) {
			flags &= ~LP_EV_META_INLINE;
			n = 0;
		}
		e->meta_len = n > 0 ? n - 1 : n;
		mlen = n > 1 ? n - 1 : 0;
		if (mlen > LP_META_BUF - 1)
			mlen = LP_META_BUF - 1;
	}
	e->h.flags = flags;
	if (ev->type == LP_REC_ENTER)
		e->ts_ns = enter_time(ev->ts);
	if (off_cpu)
		sched_snap(st, ev->task, e->ts_ns, (struct lp_sched_snap *)(e + 1));
	if (bpf_ringbuf_output(&rb, st->buf, sizeof(*e) + snap + nlen + mlen, submit_flags()))
		goto lost;
	return 0;
lost:
	count_lost(ev->type, ev->pid, ev->tid);
	return 0;
}

/*
 * A marker's hit. The common event (literal name and metadata this thread
 * has sent already, not its thread's first) takes the short path: the
 * clock, one page of globals, its thread's state, and one record reserved
 * in the ring buffer and written in place.
 */
static __always_inline int record(void *ctx, __u16 type, __u64 name, __u64 meta, __u64 counter,
				  __u64 marker_flags)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct task_struct *task = bpf_get_current_task_btf();
	struct ev ev = {
		.task = task, .name = name, .meta = meta, .counter = counter,
		.pid = task->tgid, .tid = task->pid, .file = LP_COOKIE_FILE(cookie), .type = type,
		.flags = (marker_flags & (LP_EV_NAME_LITERAL | LP_EV_META_LITERAL |
					  LP_EV_HAS_COUNTER)) |
			 (((marker_flags >> LP_MARKER_ABI_BITS_SHIFT) & LP_MARKER_ABI_BITS_MASK)
			  << LP_EV_ABI_SHIFT),
	};
	struct lp_rec_event *e;
	struct lp_task *st;
	bool slow = false;

	st = recorded_thread(LP_COOKIE_BATCH(cookie), LP_COOKIE_IMAGE(cookie), type, ev.pid, ev.tid,
			     task, &ev.ts, &ev.seq, &slow);
	if (!st)
		return 0;
	if (slow || off_cpu || !name || !(ev.flags & LP_EV_NAME_LITERAL) ||
	    !lit_cached(st, name, 0))
		return record_slow(ctx, st, &ev, slow);
	if (type == LP_REC_EXIT || !meta)
		ev.flags |= LP_EV_NO_META;
	else if (!(ev.flags & LP_EV_META_LITERAL) || !lit_cached(st, meta, 1))
		return record_slow(ctx, st, &ev, slow);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count_lost(type, ev.pid, ev.tid);
		return 0;
	}
	fill_event(e, &ev);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(lp_span_enter, const char *name, const char *meta, __u64 counter, __u64 flags)
{
	if (flags & LP_EV_WARMUP)
		return 0; /* the marker's first hit in a process: not a span */
	return record(ctx, LP_REC_ENTER, (__u64)name, (__u64)meta, counter, flags);
}

SEC("uprobe")
int BPF_KPROBE(lp_span_exit, const char *name, __u64 counter, __u64 flags)
{
	if (flags & LP_EV_WARMUP)
		return 0;
	return record(ctx, LP_REC_EXIT, (__u64)name, 0, counter, flags);
}

/*
 * Argument i of a site user space attached itself (LP_USDT_OWN_SITE), decoded
 * as libbpf's bpf_usdt_arg() decodes its own: 0 or -errno, *res 0 then.
 */
static __noinline long own_usdt_arg(struct pt_regs *ctx, const struct lp_usdt_site *site, __u32 i,
				    long *res)
{
	const struct lp_usdt_arg *a;
	unsigned long val = 0;
	__u32 shift;

	*res = 0;
	if (i >= LP_USDT_ARGS || i >= site->nargs)
		return -ENOENT;
	a = &site->args[i];
	shift = a->bitshift & 63;
	switch (a->kind) {
	case LP_USDT_ARG_CONST:
		val = a->val_off;
		break;
	case LP_USDT_ARG_REG:
		if (bpf_probe_read_kernel(&val, sizeof(val), (void *)ctx + a->reg_off))
			return -EFAULT;
		break;
	case LP_USDT_ARG_DEREF:
		if (bpf_probe_read_kernel(&val, sizeof(val), (void *)ctx + a->reg_off) ||
		    bpf_probe_read_user(&val, sizeof(val), (void *)val + a->val_off))
			return -EFAULT;
		break;
	default:
		return -EINVAL;
	}
	val <<= shift;
	val = a->is_signed ? (unsigned long)((long)val >> shift) : val >> shift;
	*res = (long)val;
	return 0;
}

/* The fixed part of a span-pair probe's record: header, time, spec, the arguments it uses. */
static __always_inline void fill_usdt(struct pt_regs *ctx, struct lp_rec_usdt *r,
				      const struct lp_usdt_desc *d, __u32 role, __u32 pid, __u32 tid,
				      __u32 seq, __u64 ts, __u32 spec, __u32 file, __u32 alt,
				      const struct lp_usdt_site *own)
{
	int n = own ? (int)own->nargs : bpf_usdt_arg_cnt(ctx);
	__u16 flags = role == LP_USDT_ROLE_EXIT	   ? LP_USDT_EXIT
		      : role == LP_USDT_ROLE_ABORT ? LP_USDT_EXIT | LP_USDT_ABORT
						   : 0;

	fill_hdr(&r->h, LP_REC_USDT, flags, pid, tid, seq);
	r->ts_ns = ts;
	r->spec = (__u16)spec;
	r->file = (__u16)file;
	r->alt = (__u16)alt;
	if (n < 0)
		n = 0;
	if (n > LP_USDT_ARGS)
		n = LP_USDT_ARGS;
	/* Each bpf_usdt_arg() costs tens of ns: read only what the spec uses. */
	if (d && role < LP_USDT_ROLES && d->nargs[role] < n)
		n = d->nargs[role];
	r->nargs = n;
	r->nstr = 0;
	for (int i = 0; i < LP_USDT_ARGS; i++) {
		long v = 0;

		if (i < n && own)
			own_usdt_arg(ctx, own, i, &v);
		else if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		r->args[i] = v;
	}
	for (int i = 0; i < LP_USDT_STR_SLOTS; i++)
		r->str_len[i] = 0;
}

/*
 * A probe of a span-pair spec (--span, --preset), attached with libbpf's USDT
 * support. The cookie says which file, spec and role. The arguments the spec
 * uses at that role are sent, and the strings it reads there (lp_usdt_desc:
 * a slot of another role is sent empty), each cut to LP_USDT_STR_MAX bytes.
 */
SEC("usdt")
int lp_usdt(struct pt_regs *ctx)
{
	/* libbpf's own cookie is its spec's index; a site user space attached has its own. */
	__u64 bpf_cookie = bpf_get_attach_cookie(ctx);
	__u32 own_key = LP_USDT_SITE_INDEX(bpf_cookie);
	const struct lp_usdt_site *own = bpf_cookie & LP_USDT_OWN_SITE
						 ? bpf_map_lookup_elem(&usdt_sites, &own_key)
						 : NULL;
	__u64 cookie = own ? own->cookie : bpf_usdt_cookie(ctx);
	__u32 file = LP_USDT_COOKIE_FILE(cookie), spec = LP_USDT_COOKIE_SPEC(cookie);
	__u32 role = LP_USDT_COOKIE_ROLE(cookie), alt = LP_USDT_COOKIE_ALT(cookie), nstr = 0;
	__u64 off = 0, size, snap = 0, ts;
	__u16 type = role == LP_USDT_ROLE_ENTRY ? LP_REC_ENTER : LP_REC_EXIT;
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid, tid = task->pid, seq;
	struct lp_usdt_desc *d = NULL;
	struct lp_rec_usdt *r;
	struct lp_task *st;
	char *text;

	bool slow = false;

	st = recorded_thread(LP_USDT_COOKIE_BATCH(cookie), own ? LP_COOKIE_IMAGE(bpf_cookie) : 0,
			     type, pid, tid, task, &ts, &seq, &slow);
	if (!st)
		return 0;
	d = bpf_map_lookup_elem(&usdt_desc, &spec);
	if (d) {
		for (int i = 0; i < LP_USDT_STR_SLOTS; i++)
			if (i < d->nstr && (d->str[i].roles & (1u << role)))
				nstr = i + 1;
	}
	if (!nstr) {
		/* No strings to copy: a fixed-size record, reserved in place. */
		if (off_cpu)
			r = bpf_ringbuf_reserve(&rb, sizeof(*r) + sizeof(struct lp_sched_snap), 0);
		else
			r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
		if (!r) {
			count_lost(type, pid, tid);
			return 0;
		}
		fill_usdt(ctx, r, d, role, pid, tid, seq, ts, spec, file, alt, own);
		if (off_cpu) {
			r->h.flags |= LP_USDT_SCHED;
			sched_snap(st, task, ts, (struct lp_sched_snap *)(r + 1));
		}
		bpf_ringbuf_submit(r, submit_flags());
		return 0;
	}
	r = (void *)st->buf;
	fill_usdt(ctx, r, d, role, pid, tid, seq, ts, spec, file, alt, own);
	if (off_cpu) {
		r->h.flags |= LP_USDT_SCHED;
		sched_snap(st, task, ts, (struct lp_sched_snap *)(r + 1));
		snap = sizeof(struct lp_sched_snap);
	}

	r->nstr = nstr < LP_USDT_STR_SLOTS ? nstr : LP_USDT_STR_SLOTS;
	text = st->buf + sizeof(*r) + snap;
	for (int i = 0; i < LP_USDT_STR_SLOTS; i++) {
		struct lp_usdt_str *ds;
		__u64 addr, len;
		__u32 a, la;
		long got;

		r->str_len[i] = 0;
		if (!d || i >= nstr)
			continue;
		ds = &d->str[i];
		if (!(ds->roles & (1u << role)))
			continue;
		a = (__u32)ds->arg;
		if (a >= LP_USDT_ARGS)
			continue;
		addr = r->args[a];
		if (ds->deref && bpf_probe_read_user(&addr, sizeof(addr), (void *)(addr + ds->off))) {
			r->str_len[i] = -EFAULT;
			continue;
		}
		if (off > (LP_USDT_STR_SLOTS - 1) * LP_USDT_STR_BUF)
			off = (LP_USDT_STR_SLOTS - 1) * LP_USDT_STR_BUF;
		if (ds->len_arg >= 0) {
			/* Counted, not NUL-terminated: read the count, or one more than the limit. */
			la = (__u32)ds->len_arg;
			len = la < LP_USDT_ARGS ? r->args[la & (LP_USDT_ARGS_POW2 - 1)] : 0;
			if ((__s64)len < 0)
				len = 0;
			if (len > LP_USDT_STR_MAX + 1)
				len = LP_USDT_STR_MAX + 1;
			got = len ? bpf_probe_read_user(text + off, len, (void *)addr) : 0;
			r->str_len[i] = got ? got : (__s16)len;
			if (!got)
				off += len;
		} else {
			len = LP_USDT_STR_MAX + 1;
			got = bpf_probe_read_user_str(text + off, LP_USDT_STR_BUF, (void *)addr);
			r->str_len[i] = got > 0 ? got - 1 : got;
			if (got > 1)
				off += got - 1;
		}
		/* A page not touched yet: the text is the file's (as the markers' texts). */
		if (got == -EFAULT && usdt_str_in_file(task, addr, pid, tid, seq, i, len))
			r->str_len[i] = LP_USDT_STR_IN_FILE;
	}
	size = sizeof(*r) + snap + off;
	if (size > LP_USDT_REC_MAX_SIZE)
		return 0; /* cannot happen; bounds the size for the verifier */
	if (bpf_ringbuf_output(&rb, st->buf, size, submit_flags()))
		count_lost(type, pid, tid);
	return 0;
}

/*
 * --off-cpu: every context switch on the host runs this, so a thread that is
 * not tracked costs the program call, two loads and two tests. A tracked
 * thread leaving its CPU adds the time it ran; one getting it back ends its
 * wait (end_wait), split by the kernel's account of it.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(lp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct lp_task *st;
	__u64 now = 0, steal = 0;

	if (prev->bpf_storage) {
		st = bpf_task_storage_get(&task_state, prev, 0, 0);
		if (st && st->sched.state != SCHED_NONE) {
			now = bpf_ktime_get_ns();
			steal = steal_clock(prev);
			if (st->sched.state == SCHED_OFF)
				unseen_switch_in(prev, st, now);
			else if (st->sched.in_seen)
				clock_sample(st, st->sched.in_ns, prev->sched_info.last_arrival);
			ran_until(prev, st, now, steal);
			st->sched.off_ns = now;
			st->sched.wake_ns = 0;
			st->sched.rd_off = prev->sched_info.run_delay;
			st->sched.pcount_off = prev->sched_info.pcount;
			/* Still runnable (TASK_RUNNING is 0), or preempted before it could sleep. */
			st->sched.runnable = preempt || !prev_state;
			st->sched.state = SCHED_OFF;
		}
	}
	if (next->bpf_storage) {
		st = bpf_task_storage_get(&task_state, next, 0, 0);
		if (st && st->sched.state == SCHED_OFF) {
			__u64 queued = next->sched_info.run_delay - st->sched.rd_off;
			__u64 since = next->sched_info.last_queued, clock = rq_clock_of(next);

			if (!now) {
				now = bpf_ktime_get_ns();
				steal = steal_clock(next); /* the same CPU's */
			}
			/* The kernel adds the wait under way to run_delay just after this. */
			if (since && clock > since)
				queued += clock - since;
			end_wait(next, st, now, (__s64)queued > 0 ? queued : 0, steal);
			st->sched.in_seen = 1;
		}
	}
	return 0;
}

/*
 * A tracked thread asleep is woken: the rest of its wait is for a CPU. Like
 * lp_sched_switch, it runs for every wakeup on the host and returns after
 * two loads for a thread not tracked. A wakeup not seen leaves the split of
 * that wait to the kernel's account (end_wait).
 */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(lp_sched_wakeup, struct task_struct *p)
{
	struct lp_task *st;

	if (!p->bpf_storage)
		return 0;
	st = bpf_task_storage_get(&task_state, p, 0, 0);
	if (st && st->sched.state == SCHED_OFF && !st->sched.runnable && !st->sched.wake_ns)
		st->sched.wake_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(lp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u64 ts;

	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	ts = bpf_ktime_get_ns();
	if (ctgid == ptgid) {
		emit_task(LP_TASK_THREAD, ptgid, child->pid, ptgid, child, 0, ts);
		return 0;
	}
	/* Before the child runs: none of its spans can slip by. */
	if (add_target(ctgid, ts))
		return 0;
	emit_task(LP_TASK_FORK, ctgid, child->pid, ptgid, child, 0, ts);
	/*
	 * Pid-filtered: the child has its parent's breakpoints but none of its
	 * links, so it is paused until its own are made. (A child that shares
	 * its parent's memory, vfork()'s, runs nothing of its own before it
	 * exec's: not paused.)
	 */
	if (lp_per_process && child->mm != parent->mm) {
		struct lp_target *pt = bpf_map_lookup_elem(&targets, &ptgid);
		__u32 *linked_image = bpf_map_lookup_elem(&linked_pids, &ptgid);

		if (pt && linked_image && *linked_image == pt->image)
			new_files(child, ctgid, child->pid, LP_LIBS_FORK, ts, true);
	}
	return 0;
}

/* Whether user space has examined the file of inode (none: nothing to examine). */
static __always_inline bool inode_known(struct inode *inode)
{
	struct lp_file_key k;

	if (!inode)
		return true;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(inode, i_ino);
	return bpf_map_lookup_elem(&known_files, &k) != NULL;
}

/* Whether user space has examined the program the task runs. */
static __always_inline bool exe_known(struct task_struct *task)
{
	return inode_known(BPF_CORE_READ(task, mm, exe_file, f_inode));
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	__u64 ts = bpf_ktime_get_ns();
	struct lp_target *t = bpf_map_lookup_elem(&targets, &tgid);
	struct lp_task *st;

	if (!t) {
		/* After exec the thread leads its group: the same as a first hit, but new. */
		adopt(p, tgid, ts, LP_TASK_NEW_IMAGE);
		return 0;
	}
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec)) {
		/*
		 * A target that gains privileges (setuid, setgid, file capabilities)
		 * leaves the recording: what that program holds is not its user's to
		 * read. Its other threads are gone (exec); this one's state goes too.
		 */
		bpf_map_delete_elem(&targets, &tgid);
		bpf_task_storage_delete(&task_state, p);
		emit_task(LP_TASK_EXIT, tgid, p->pid, 0, p, LP_TASK_GROUP_DEAD | LP_TASK_PRIVILEGED,
			  ts);
		return 0;
	}
	/* A new program: its name is announced again, its literals are new, its links too. */
	t->gen = new_gen();
	t->image = new_image();
	t->dl_state = LP_RT_UNSEEN;
	st = bpf_task_storage_get(&task_state, p, 0, 0);
	if (st) {
		st->announced = 0;
		st->mm = 0;
		/*
		 * A thread that exec'ed took its leader's id, whose count user space
		 * ended at the leader's exit: this thread's count starts again (seq 0),
		 * or its next event looks like a gap (spans marked uncertain).
		 */
		if (old_pid != p->pid)
			st->seq = 0;
	}
	emit_task(LP_TASK_EXEC, tgid, p->pid, 0, p, 0, ts);
	/*
	 * A program not examined yet may have markers that run before user space
	 * gets to it. (Its libraries are mapped later, by the loader: lp_dl_state.)
	 */
	if (!exe_known(p))
		new_files(p, tgid, p->pid, LP_LIBS_EXEC, ts, false);
	return 0;
}

/*
 * A SIGCONT to a process paused and held (map "held") comes from someone
 * else (user space removes the entry before its own): a relay continuing
 * its child, say, before the child's new files are attached. The process
 * stops again. (The signal is sent once the lock held here is released,
 * before the process, which needs that lock to go on, gets to run its code.)
 */
static __always_inline void hold_on(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u64 *start = bpf_map_lookup_elem(&held, &tgid);

	if (!start)
		return;
	/* Nobody left to continue it (consumer_alive): the SIGCONT is the one that does. */
	if (!consumer_alive(bpf_ktime_get_ns())) {
		bpf_map_delete_elem(&held, &tgid);
		return;
	}
	if (*start == BPF_CORE_READ(task, group_leader, start_boottime) &&
	    bpf_send_signal_task) /* a kfunc since Linux 6.13 */
		bpf_send_signal_task(task, SIGSTOP_, PIDTYPE_TGID, 0);
}

/*
 * Signals that concern a pause. A process stops itself: a relay (sudo, su,
 * runuser) does so when it sees its child stop, and the child may be one we
 * paused. User space decides whether it was (follow.c) and continues it
 * then; nothing else would. And a SIGCONT to a held process (hold_on).
 */
SEC("tp_btf/signal_generate")
int BPF_PROG(lp_self_stop, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int type, int result)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct lp_rec_self_stop *r;
	__u64 ts;

	if (!task)
		return 0;
	/* Whatever the result: a SIGCONT nobody handles continues, then is "ignored". */
	if (sig == SIGCONT_) {
		hold_on(task);
		return 0;
	}
	if (sig < SIGSTOP_ || sig > SIGTTOU_ || result != 0 || task->tgid != cur->tgid)
		return 0;
	ts = bpf_ktime_get_ns();
	if (lp_hot.stop_ns && ts >= lp_hot.stop_ns)
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(LP_STAT_LOST_TASK);
		return 0;
	}
	fill_hdr(&r->h, LP_REC_SELF_STOP, (__u16)sig, task->tgid, task->pid, 0);
	r->ts_ns = ts;
	r->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lp_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;

	/* The consumer's last thread: no pause from now on (consumer_alive). */
	if (group_dead && tgid == lp_consumer_pid)
		lp_consumer_gone = 1;
	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	emit_task(LP_TASK_EXIT, tgid, p->pid, 0, p, group_dead ? LP_TASK_GROUP_DEAD : 0,
		  bpf_ktime_get_ns());
	if (group_dead)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* The loader's struct r_debug_extended and the public head of struct link_map (<link.h>). */
struct lp_r_debug {
	int r_version;
	int pad;
	__u64 r_map;
	__u64 r_brk;
	int r_state;
	int pad2;
	__u64 r_ldbase;
	__u64 r_next; /* r_version 2: the next namespace's (dlmopen) */
};

struct lp_link_map {
	__u64 l_addr, l_name, l_ld, l_next, l_prev;
};

/* Objects on the loader's list looked at before a pause is sent anyway. */
#define LP_LINK_MAP_MAX 512

struct vma_known {
	bool known;
	__u32 pid, image; /* pid-filtered: the process image whose links count */
};

/* Pid-filtered: whether user space linked the file of inode to this process image. */
static __always_inline bool inode_linked(struct inode *inode, __u32 pid, __u32 image)
{
	struct lp_linked_key k = { .pid = pid, .image = image };

	if (!lp_per_process)
		return false;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(inode, i_ino);
	return bpf_map_lookup_elem(&linked, &k) != NULL;
}

static long vma_known(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct vma_known *c = ctx;
	struct file *f = BPF_CORE_READ(vma, vm_file);
	struct inode *inode;

	/* No file (the vDSO): nothing to examine. */
	if (!f) {
		c->known = true;
		return 0;
	}
	inode = BPF_CORE_READ(f, f_inode);
	c->known = inode_known(inode) || inode_linked(inode, c->pid, c->image);
	return 0;
}

struct walk {
	struct task_struct *task;
	__u64 lm;     /* the next object, 0 at the end of the list */
	__u32 pid, image;
	bool unknown; /* an object not known, or not readable */
};

/* One object of the loader's list (bpf_loop: verified once, not once per object). */
static long walk_one(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	struct vma_known c = { .pid = w->pid, .image = w->image };
	struct lp_link_map m;

	if (!w->lm)
		return 1;
	if (bpf_probe_read_user(&m, sizeof(m), (void *)w->lm) ||
	    (m.l_ld && (bpf_find_vma(w->task, m.l_ld, vma_known, &c, 0) || !c.known))) {
		w->unknown = true;
		return 1;
	}
	w->lm = m.l_next;
	return 0;
}

/*
 * Whether every object on the loader's list lives in a file user space has
 * examined (each object's dynamic section, l_ld, lies in a mapping of it).
 * Then nothing new can run and the process is not paused. The list is the
 * target's own memory: a list it corrupts only costs it its own spans.
 */
static __always_inline bool all_known(struct task_struct *task, const struct lp_r_debug *rd,
				      const struct lp_target *t)
{
	struct walk w = { .task = task, .lm = rd->r_map, .pid = task->tgid, .image = t->image };

	if (rd->r_version >= 2 && rd->r_next)
		return false; /* other namespaces (dlmopen): not walked */
	bpf_loop(LP_LINK_MAP_MAX, walk_one, &w, 0);
	return !w.unknown && !w.lm;
}

/*
 * The dynamic loader calls _dl_debug_state() whenever its list of libraries
 * changes: with r_debug.r_state RT_ADD before it maps a dlopen()'s libraries
 * (or a program's at its start), RT_DELETE before a dlclose() unmaps them,
 * RT_CONSISTENT once done, before any constructor of a new library runs. The
 * cookie is the distance from _dl_debug_state to the loader's _r_debug (0:
 * unknown, then every call is taken for a change to files not examined).
 */
SEC("uprobe")
int lp_dl_state(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts;
	__s64 delta = (__s64)bpf_get_attach_cookie(ctx);
	__u32 tgid = pid_tgid >> 32, prev;
	struct lp_target *t = bpf_map_lookup_elem(&targets, &tgid);
	struct task_struct *task = bpf_get_current_task_btf();
	struct lp_r_debug rd;
	int state = -1;

	if (!t)
		return 0;
	if (delta && !bpf_probe_read_user(&rd, sizeof(rd), (void *)(PT_REGS_IP(ctx) + delta)) &&
	    (rd.r_version == 1 || rd.r_version == 2) && rd.r_state >= LP_RT_CONSISTENT &&
	    rd.r_state <= LP_RT_DELETE)
		state = rd.r_state;
	prev = t->dl_state;
	t->dl_state = state < 0 ? LP_RT_UNSEEN : (__u32)state;
	if (state == LP_RT_ADD || state == LP_RT_DELETE || (state == LP_RT_CONSISTENT &&
							     prev == LP_RT_CONSISTENT))
		return 0; /* the change is under way, or nothing changed */
	if (state < 0 || prev == LP_RT_DELETE || prev == LP_RT_UNSEEN) {
		/*
		 * Libraries were unmapped: an address may hold another text now.
		 * The process's literals get a new image number, which every thread
		 * picks up on its next event (lp_hot.epoch).
		 */
		t->gen = new_gen();
		__sync_fetch_and_add(&lp_hot.epoch, 1);
		if (state == LP_RT_CONSISTENT && prev == LP_RT_DELETE)
			return 0;
	}
	if (state == LP_RT_CONSISTENT && all_known(task, &rd, t))
		return 0;
	ts = bpf_ktime_get_ns();
	new_files(task, tgid, (__u32)pid_tgid, 0, ts, false);
	return 0;
}
