// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel half: one program per marker kind, attached as uprobes to the
 * function-entry probe sites that include/leanprofiler.h emits. Arguments are
 * read straight from pt_regs (System V: rdi, rsi, rdx, rcx), which is what the
 * USDT notes describe and saves bpf_usdt_arg()'s 30-60 ns.
 *
 * Cost choices (see shared/notes/uprobe-costs.md):
 * - records are submitted with BPF_RB_NO_WAKEUP; the consumer polls on a short
 *   timer, and a wakeup is forced only when wakeup_bytes are waiting;
 * - a literal name or metadata is sent once per (address space, address) as a
 *   LP_REC_STRING record; events then carry only its address;
 * - runtime strings are copied on every event: the buffer may be reused.
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

/* Set by user space when recording ends: nothing from this time on is recorded. */
__u64 lp_stop_ns = 0;

/*
 * Per probed file (the uprobe's cookie), when recording of its markers begins,
 * 0 while its probes are still being attached: an enter probe working before
 * its exit probe would record spans that never end. Events older than it are
 * not recorded, so "recorded from then on" holds exactly.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_MAX_FILES);
	__type(key, __u32);
	__type(value, __u64);
} file_gate SEC(".maps");

/*
 * The processes being recorded, by tgid. The uprobes fire in every process
 * that maps a probed file; only these are recorded. Children join at fork,
 * in the kernel, so none of their spans can be missed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct lp_target);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* set from --buffer-size before load */
} rb SEC(".maps");

/*
 * Literals this thread knows were sent in its current address space: a small
 * direct-mapped cache, so the common event costs no map lookup at all.
 */
#define LIT_CACHE 16

struct lp_task {
	__u32 seq;
	__u32 announced;
	__u64 mm; /* the cache is valid for this address space (exec changes it) */
	__u64 lit[LIT_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lp_task);
} task_state SEC(".maps");

struct str_key {
	__u64 mm; /* the address space: an exec gets a new one */
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
	__type(key, __u32);
	__type(value, struct lp_thread_lost);
} lost_by_tid SEC(".maps");

#define EVENT_MAX_SIZE (sizeof(struct lp_rec_event) + LP_NAME_BUF + LP_META_BUF)
#define USDT_MAX_SIZE (sizeof(struct lp_rec_usdt) + LP_USDT_STR_SLOTS * LP_USDT_STR_BUF)
#define SCRATCH_SIZE (EVENT_MAX_SIZE > USDT_MAX_SIZE ? EVENT_MAX_SIZE : USDT_MAX_SIZE)

/* What each span-pair spec's entry probe copies (set by user space before attaching). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_SPEC_MAX);
	__type(key, __u32);
	__type(value, struct lp_usdt_desc);
} usdt_desc SEC(".maps");

#define LP_USDT_ARGS_POW2 16 /* a power of two above LP_USDT_ARGS, to bound indexes */

struct scratch {
	char buf[SCRATCH_SIZE];
};

/* Variable-size records are built here, then copied with bpf_ringbuf_output(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline void count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += 1; /* per-CPU: no atomics needed */
}

static __always_inline void count_lost(__u16 type, __u32 pid, __u32 tid)
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

static __always_inline int announce_thread(struct task_struct *task, __u32 pid, __u32 tid,
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

/* Send the text of a literal unless this address space already sent it. */
static __always_inline int intern(__u64 mm, __u64 addr, __u32 pid, __u32 tid, __u32 seq,
				  int is_meta)
{
	struct str_key key = { .mm = mm, .addr = LP_LIT_KEY(addr, is_meta) };
	struct lp_rec_string *r;
	struct scratch *s;
	__u32 zero = 0;
	__u8 one = 1;
	long n;
	__u64 size;

	if (bpf_map_lookup_elem(&interned, &key))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return -1;
	r = (void *)s->buf;
	fill_hdr(&r->h, LP_REC_STRING, is_meta ? LP_STR_META : 0, pid, tid, seq);
	r->addr = addr;
	if (is_meta)
		n = bpf_probe_read_user_str(s->buf + sizeof(*r), LP_META_BUF, (void *)addr);
	else
		n = bpf_probe_read_user_str(s->buf + sizeof(*r), LP_NAME_BUF, (void *)addr);
	r->len = n > 0 ? n - 1 : n;
	size = sizeof(*r) + (n > 1 ? n - 1 : 0);
	if (size > sizeof(*r) + LP_META_BUF)
		return -1; /* cannot happen; bounds the size for the verifier */
	if (bpf_ringbuf_output(&rb, s->buf, size, submit_flags())) {
		count(LP_STAT_LOST_STRING);
		return -1;
	}
	/*
	 * Sent, even when the read failed (a page the process never touched
	 * cannot be faulted in here): user space then reads the text itself.
	 */
	bpf_map_update_elem(&interned, &key, &one, BPF_ANY);
	return 0;
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

static __always_inline int add_target(__u32 pid, __u64 ts)
{
	struct lp_target t = { .since_ns = ts };

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

/* Sends a literal's text unless this thread, or the LRU map, knows it was sent. */
static __always_inline int literal(struct lp_task *st, __u64 mm, __u64 addr, __u32 pid, __u32 tid,
				   __u32 seq, int is_meta)
{
	__u64 key = LP_LIT_KEY(addr, is_meta);
	__u32 slot = (addr ^ (addr >> 6) ^ is_meta) & (LIT_CACHE - 1);

	if (st->lit[slot] == key)
		return 0;
	if (intern(mm, addr, pid, tid, seq, is_meta))
		return -1;
	st->lit[slot] = key;
	return 0;
}

/*
 * Whether this probe hit is recorded: its file's gate is open, recording has
 * not stopped, and the thread is a target's. Returns the thread's state with
 * *ts and *seq set (the thread announced on its first event), or NULL.
 */
static __always_inline struct lp_task *recorded_thread(__u32 file, __u16 type, __u32 pid,
							__u32 tid, struct task_struct *task,
							__u64 *ts, __u32 *seq)
{
	__u64 *gate = bpf_map_lookup_elem(&file_gate, &file);
	struct lp_task *st;

	if (!gate || !*gate)
		return NULL;
	*ts = bpf_ktime_get_ns();
	if (*ts < *gate || (lp_stop_ns && *ts >= lp_stop_ns))
		return NULL;
	/* Only target threads have per-thread state: its presence is the fast check. */
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st) {
		if (!bpf_map_lookup_elem(&targets, &pid) && !adopt(task, pid, *ts, 0))
			return NULL;
		st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			count(LP_STAT_NO_TASK_STORAGE);
			count_lost(type, pid, tid);
			return NULL;
		}
	}
	*seq = st->seq++;
	if (!st->announced)
		st->announced = announce_thread(task, pid, tid, *seq) == 0;
	return st;
}

static __always_inline int record(void *ctx, __u16 type, __u64 name, __u64 meta, __u64 counter,
				  __u64 marker_flags)
{
	__u32 file = (__u32)bpf_get_attach_cookie(ctx);
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task = bpf_get_current_task_btf();
	__u16 flags = (marker_flags & (LP_EV_NAME_LITERAL | LP_EV_META_LITERAL | LP_EV_HAS_COUNTER)) |
		      (((marker_flags >> 8) & 0xf) << LP_EV_ABI_SHIFT);
	struct lp_rec_event *e;
	struct lp_task *st;
	__u64 mm;
	__u32 seq;

	st = recorded_thread(file, type, pid, tid, task, &ts, &seq);
	if (!st)
		return 0;

	mm = (__u64)task->mm;
	if (st->mm != mm) {
		/* A new address space (first event, or after exec): forget its literals. */
		for (int i = 0; i < LIT_CACHE; i++)
			st->lit[i] = 0;
		st->mm = mm;
	}
	if (!name || !(flags & LP_EV_NAME_LITERAL))
		flags |= LP_EV_NAME_INLINE;
	else if (literal(st, mm, name, pid, tid, seq, 0)) {
		count_lost(type, pid, tid);
		return 0;
	}
	if (type == LP_REC_EXIT || !meta) {
		flags |= LP_EV_NO_META;
	} else if (!(flags & LP_EV_META_LITERAL)) {
		flags |= LP_EV_META_INLINE;
	} else if (literal(st, mm, meta, pid, tid, seq, 1)) {
		count_lost(type, pid, tid);
		return 0;
	}

	if (!(flags & (LP_EV_NAME_INLINE | LP_EV_META_INLINE))) {
		/* The common case: a fixed-size record reserved in place. */
		e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
		if (!e) {
			count_lost(type, pid, tid);
			return 0;
		}
	} else {
		__u32 zero = 0;
		struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);

		if (!s)
			return 0;
		e = (void *)s->buf;
	}
	fill_hdr(&e->h, type, flags, pid, tid, seq);
	e->ts_ns = ts;
	e->counter = counter;
	e->name = name;
	e->meta = meta;
	e->pad = 0;
	e->file = (__u16)file;
	e->name_len = 0;
	e->meta_len = 0;
	if (!(flags & (LP_EV_NAME_INLINE | LP_EV_META_INLINE))) {
		bpf_ringbuf_submit(e, submit_flags());
		return 0;
	}

	/* Runtime strings: copy the text now, the buffer may change after the marker. */
	{
		char *text = (char *)(e + 1);
		__u64 nlen = 0, mlen = 0;
		long n;

		if (flags & LP_EV_NAME_INLINE) {
			n = name ? bpf_probe_read_user_str(text, LP_NAME_BUF, (void *)name) : -14;
			e->name_len = n > 0 ? n - 1 : n;
			nlen = n > 1 ? n - 1 : 0;
			if (nlen > LP_NAME_BUF - 1)
				nlen = LP_NAME_BUF - 1;
		}
		if (flags & LP_EV_META_INLINE) {
			n = bpf_probe_read_user_str(text + nlen, LP_META_BUF, (void *)meta);
			e->meta_len = n > 0 ? n - 1 : n;
			mlen = n > 1 ? n - 1 : 0;
			if (mlen > LP_META_BUF - 1)
				mlen = LP_META_BUF - 1;
		}
		if (bpf_ringbuf_output(&rb, e, sizeof(*e) + nlen + mlen, submit_flags()))
			count_lost(type, pid, tid);
	}
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

/* The fixed part of a span-pair probe's record: header, time, spec, the arguments it uses. */
static __always_inline void fill_usdt(struct pt_regs *ctx, struct lp_rec_usdt *r,
				      const struct lp_usdt_desc *d, __u32 role, __u32 pid, __u32 tid,
				      __u32 seq, __u64 ts, __u32 spec, __u32 file)
{
	int n = bpf_usdt_arg_cnt(ctx);

	fill_hdr(&r->h, LP_REC_USDT, role == LP_USDT_ROLE_EXIT ? LP_USDT_EXIT : 0, pid, tid, seq);
	r->ts_ns = ts;
	r->spec = (__u16)spec;
	r->file = (__u16)file;
	r->pad = 0;
	if (n < 0)
		n = 0;
	if (n > LP_USDT_ARGS)
		n = LP_USDT_ARGS;
	/* Each bpf_usdt_arg() costs tens of ns: read only what the spec uses. */
	if (d && d->nargs[role & 1] < n)
		n = d->nargs[role & 1];
	r->nargs = n;
	r->nstr = 0;
	for (int i = 0; i < LP_USDT_ARGS; i++) {
		long v = 0;

		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		r->args[i] = v;
	}
	for (int i = 0; i < LP_USDT_STR_SLOTS; i++)
		r->str_len[i] = 0;
}

/*
 * A probe of a span-pair spec (--span, --preset), attached with libbpf's USDT
 * support. The cookie says which file, spec and role. Every argument is sent;
 * an entry also sends the strings its spec names (lp_usdt_desc), each cut to
 * LP_USDT_STR_MAX bytes.
 */
SEC("usdt")
int lp_usdt(struct pt_regs *ctx)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 file = LP_USDT_COOKIE_FILE(cookie), spec = LP_USDT_COOKIE_SPEC(cookie);
	__u32 role = LP_USDT_COOKIE_ROLE(cookie), zero = 0, nstr = 0;
	__u64 off = 0, size;
	__u16 type = role == LP_USDT_ROLE_EXIT ? LP_REC_EXIT : LP_REC_ENTER;
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid, seq;
	struct task_struct *task = bpf_get_current_task_btf();
	struct lp_usdt_desc *d = NULL;
	struct lp_rec_usdt *r;
	struct scratch *s;
	char *text;

	if (!recorded_thread(file, type, pid, tid, task, &ts, &seq))
		return 0;
	d = bpf_map_lookup_elem(&usdt_desc, &spec);
	if (d && role == LP_USDT_ROLE_ENTRY)
		nstr = d->nstr;
	if (!nstr) {
		/* No strings to copy: a fixed-size record, reserved in place. */
		r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
		if (!r) {
			count_lost(type, pid, tid);
			return 0;
		}
		fill_usdt(ctx, r, d, role, pid, tid, seq, ts, spec, file);
		bpf_ringbuf_submit(r, submit_flags());
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	r = (void *)s->buf;
	fill_usdt(ctx, r, d, role, pid, tid, seq, ts, spec, file);

	r->nstr = nstr < LP_USDT_STR_SLOTS ? nstr : LP_USDT_STR_SLOTS;
	text = (char *)(r + 1);
	for (int i = 0; i < LP_USDT_STR_SLOTS; i++) {
		struct lp_usdt_str *ds;
		__u64 addr, len;
		__u32 a, la;
		long got;

		r->str_len[i] = 0;
		if (!d || i >= nstr)
			continue;
		ds = &d->str[i];
		a = (__u32)ds->arg;
		if (a >= LP_USDT_ARGS)
			continue;
		addr = r->args[a];
		if (ds->deref && bpf_probe_read_user(&addr, sizeof(addr), (void *)(addr + ds->off))) {
			r->str_len[i] = -14; /* -EFAULT */
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
			got = bpf_probe_read_user_str(text + off, LP_USDT_STR_BUF, (void *)addr);
			r->str_len[i] = got > 0 ? got - 1 : got;
			if (got > 1)
				off += got - 1;
		}
	}
	size = sizeof(*r) + off;
	if (size > USDT_MAX_SIZE)
		return 0; /* cannot happen; bounds the size for the verifier */
	if (bpf_ringbuf_output(&rb, r, size, submit_flags()))
		count_lost(type, pid, tid);
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
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	__u64 ts = bpf_ktime_get_ns();
	struct lp_task *st;

	if (!bpf_map_lookup_elem(&targets, &tgid)) {
		/* After exec the thread leads its group: the same as a first hit, but new. */
		adopt(p, tgid, ts, LP_TASK_NEW_IMAGE);
		return 0;
	}
	/* A new program: its name is announced again, its literals are new. */
	st = bpf_task_storage_get(&task_state, p, 0, 0);
	if (st) {
		st->announced = 0;
		st->mm = 0;
	}
	emit_task(LP_TASK_EXEC, tgid, p->pid, 0, p, 0, ts);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lp_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	emit_task(LP_TASK_EXIT, tgid, p->pid, 0, p, group_dead ? LP_TASK_GROUP_DEAD : 0,
		  bpf_ktime_get_ns());
	if (group_dead)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/*
 * The dynamic loader calls _dl_debug_state() whenever its list of libraries
 * changes (at start, around dlopen and dlclose): for a target, user space
 * rescans the process's mappings and attaches to libraries with markers.
 */
SEC("uprobe")
int lp_dl_state(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct lp_rec_libs *r;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(LP_STAT_LOST_TASK);
		return 0;
	}
	fill_hdr(&r->h, LP_REC_LIBS, 0, tgid, (__u32)pid_tgid, 0);
	r->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}
