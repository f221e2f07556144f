// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "bpf/wire.h"
#include "corebtf.h"
#include "leanprofiler.skel.h"
#include "links.h"
#include "map.h"
#include "multi.h"
#include "proc.h"
#include "steal.h"
#include "usdt.h"

/* Read-only segments of a file with markers looked at for its texts: real files have 2-4. */
#define LP_SITE_SEGS_MAX 16

/*
 * The uprobe_multi links of a file with probes, in the order a process's
 * are made: span_exit's sites before span_enter's, so that a process that
 * runs meanwhile never has an enter recorded without its exit; then the
 * span-pair probes' sites, all specs in one link, in the order that makes
 * specs sharing a probe nest (attach_specs).
 */
enum lp_plan_kind { LP_PLAN_EXIT, LP_PLAN_ENTER, LP_PLAN_USDT, LP_PLANS };

/*
 * A file with probes, by its index. Where it keeps its literals
 * (LP_STR_AT_SITE): the addresses of its marker sites and its read-only
 * segments, as the ELF file says them (a site's address in a process tells
 * where the file is mapped). And, with uprobe_multi links, the sites of its
 * links (made for every process, or for each target process).
 */
struct lp_site_file {
	uint64_t dev, ino;
	uint64_t sites[LP_MARKER_SITES_MAX];
	struct lp_elf_seg segs[LP_SITE_SEGS_MAX];
	size_t nsites, nsegs;
	uint64_t batch; /* whose opening records it (LP_MARKER_COOKIE) */
	struct lp_plan plans[LP_PLANS];
};

struct lp_session {
	struct leanprofiler_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t nlinks, cap;
	/* The probes' uprobe_multi links (multi.h), when the kernel has them: links.h. */
	struct lp_links *mlinks;
	bool multi;
	/* Links for each target process by itself (lp_session_opts.per_process, where possible). */
	bool per_process;
	struct bpf_link **loader_links; /* the probes that pause (attach_loader) */
	size_t nloader_links, loader_cap;
	int *loader_fds;      /* the same as uprobe_multi links, when the kernel has them */
	size_t nloader_fds, loader_fds_cap;
	pthread_t prober;     /* lp_multi_supported(), while the object is loaded (prepare_uprobe) */
	bool probing;
	int uprobe_handler;   /* libbpf's id of prepare_uprobe's handler, -1: none */
	struct lp_map files; /* (ino, dev) -> v1: probes + 1, once looked at */
	size_t probes;
	uint32_t nfiles;      /* files with probes: their index is the uprobes' cookie */
	struct lp_site_file *site_files; /* by that index */
	size_t site_files_cap;
	uint32_t gates_open;  /* files [0, gates_open) are being recorded */
	uint64_t batches;     /* batches of gates opened (wire.h lp_hot.batch_at) */
	uint64_t gens;        /* process image numbers handed out here (struct lp_target.gen) */
	uint32_t images;      /* program image numbers handed out here (struct lp_target.image) */
	uint64_t stop_ns;     /* the stop stored in the kernel half, 0: none yet */
	size_t kept_fds;      /* files kept open for their texts (keep_fd) */
	uint32_t own_sites;   /* span-pair sites attached without libbpf's USDT support */
	uint64_t sites_skipped; /* sites of span-pair probes not attached while others were */
	uint64_t samples;     /* records read (the lease is renewed every 4096) */
	uint64_t opened_ns, loaded_ns; /* when lp_session_open had the object open, then loaded */
	struct lp_session_opts opts;
	unsigned spec_found[LP_SPEC_MAX];
};

/*
 * The batch that files attached now join: the next one opened
 * (lp_session_open_gates). Their probes carry it in their cookies
 * (LP_MARKER_COOKIE), so the kernel half reads no map to find their gate.
 */
static uint64_t next_batch(const struct lp_session *s)
{
	return s->batches + 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL;
	int n;

	/* Warnings too: our own messages say what failed; -v shows libbpf's detail. */
	(void)level;
	if (!lp_verbose)
		return 0;
	/* Its paths and probe names are the targets': through the display sanitizer. */
	n = vasprintf(&text, fmt, ap);
	if (n < 0)
		return 0;
	while (n > 0 && text[n - 1] == '\n')
		text[--n] = '\0';
	lp_note("%s", text);
	free(text);
	return n;
}

/*
 * Every probe is a descriptor: up to the hard limit, not the usual soft 1024.
 * (A launched command was forked before, with the limits it was given.)
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * How long the kernel half takes the consumer (this process) for alive after
 * it last said so: it pauses a process for new files only meanwhile, so a
 * consumer that stopped reading (stopped itself, or wedged) leaves nobody
 * stopped for long. Refreshed at every drain, every file attached and every
 * few thousand records of a long drain: far more often than this.
 */
#define LP_CONSUMER_LEASE_NS 500000000ULL

static uint64_t mono_ns(void);

/* Tells the kernel half we read its records: it may pause processes until the lease ends. */
static void renew_lease(struct lp_session *s)
{
	__atomic_store_n(&s->skel->bss->lp_consumer_until, mono_ns() + LP_CONSUMER_LEASE_NS,
			 __ATOMIC_RELAXED);
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct lp_session *s = ctx;

	if ((++s->samples & 4095) == 0)
		renew_lease(s);
	return s->opts.on_record(s->opts.ctx, data, size);
}

static void *probe_multi(void *arg)
{
	(void)arg;
	lp_multi_supported(); /* remembered */
	return NULL;
}

static void drop_handler(struct lp_session *s)
{
	if (s->uprobe_handler >= 0)
		libbpf_unregister_prog_handler(s->uprobe_handler);
	s->uprobe_handler = -1;
}

static void join_prober(struct lp_session *s)
{
	if (s->probing)
		pthread_join(s->prober, NULL);
	s->probing = false;
}

/*
 * Whether the kernel makes uprobe_multi links (multi.h), probed by a thread
 * since lp_session_open began: the probe's link is removed in an RCU grace
 * period (8-26 ms here), which the load need not wait for until it comes to
 * the programs that depend on it (prepare_uprobe).
 */
static bool multi_known(struct lp_session *s)
{
	join_prober(s);
	return lp_multi_supported();
}

/* The programs that are uprobe_multi links where the kernel has them: the markers', the loaders'. */
static struct bpf_program *multi_prog(struct lp_session *s, size_t i)
{
	struct bpf_program *progs[] = { s->skel->progs.lp_span_enter, s->skel->progs.lp_span_exit,
					s->skel->progs.lp_dl_state };

	return i < ARRAY_SIZE(progs) ? progs[i] : NULL;
}

/*
 * The markers' sites of a file as two links (multi.h), where the kernel can;
 * the loaders' too: their programs' attach type, into the load's opts too.
 */
static void set_attach_type(struct lp_session *s, struct bpf_program *prog,
			    struct bpf_prog_load_opts *opts)
{
	s->multi = multi_known(s);
	if (!s->multi)
		return;
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)LP_TRACE_UPROBE_MULTI);
	if (opts)
		opts->expected_attach_type = (enum bpf_attach_type)LP_TRACE_UPROBE_MULTI;
}

/*
 * Our SEC("uprobe") handler, registered in libbpf's place while the object
 * lives (open_object to lp_session_close): the same but for the attach type,
 * set as each program is loaded (prog_prepare_load_fn). By then the
 * uprobe_multi probe has finished in its thread, behind the kernel's BTF and
 * the maps (~60 ms), where the object's opening (~4 ms) would wait for it.
 * libbpf 1.1's own SEC("uprobe") sets nothing else (no flags, no auto-attach).
 */
static int prepare_uprobe(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	struct lp_session *s = (struct lp_session *)cookie;

	for (size_t i = 0; multi_prog(s, i); i++)
		if (multi_prog(s, i) == prog)
			set_attach_type(s, prog, opts);
	return 0;
}

/*
 * Opens the BPF object, its CO-RE relocations to be made against btf (NULL:
 * the kernel's own), and sets what the load needs from o. 0 or -errno (said).
 */
static int open_object(struct lp_session *s, const struct lp_session_opts *o, const char *btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf);
	LIBBPF_OPTS(libbpf_prog_handler_opts, ho, .cookie = (long)s,
		    .prog_prepare_load_fn = prepare_uprobe);
	int err;

	/* Before the object is opened: its programs find their handlers there. */
	if (s->uprobe_handler < 0)
		s->uprobe_handler = libbpf_register_prog_handler("uprobe", BPF_PROG_TYPE_KPROBE, 0,
								 &ho);
	s->skel = leanprofiler_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		lp_err("failed to open the BPF programs: %s", strerror(-err));
		return err;
	}
	if (s->skel->rodata->lp_wire_version != LP_WIRE_VERSION) {
		lp_err("the BPF programs send records of format %u, this build reads format %u: "
		       "rebuild leanprofiler (make clean all)",
		       s->skel->rodata->lp_wire_version, LP_WIRE_VERSION);
		return -EPROTO;
	}
	err = bpf_map__set_max_entries(s->skel->maps.rb, (__u32)o->buffer_bytes);
	if (err) {
		lp_err("cannot size the ring buffer to %zu bytes: %s", o->buffer_bytes,
		       strerror(-err));
		return err;
	}
	/* Wake the consumer early only when a burst fills 1/8 of the buffer. */
	s->skel->rodata->wakeup_bytes = o->buffer_bytes / 8 < (1u << 20) ? o->buffer_bytes / 8
									 : (1u << 20);
	s->skel->rodata->all_dev = o->all_dev;
	s->skel->rodata->all_ino = o->all_ino;
	s->skel->rodata->off_cpu = o->off_cpu;
	s->skel->rodata->off_cpu_intervals = o->off_cpu && o->off_cpu_intervals;
	if (o->off_cpu)
		s->skel->rodata->steal_from_rq = lp_steal_from_rq();
	/* Every context switch and wakeup on the host runs them: loaded only when asked for. */
	bpf_program__set_autoload(s->skel->progs.lp_sched_switch, o->off_cpu);
	bpf_program__set_autoload(s->skel->progs.lp_sched_wakeup, o->off_cpu);
	/*
	 * The span-pair probes' program only serves specs (--span, --preset): the
	 * verifier takes ~0.4 s over it here, most of a short recording's cost.
	 */
	bpf_program__set_autoload(s->skel->progs.lp_usdt, o->nspecs > 0);
	/*
	 * Its sites are uprobe_multi links too where the kernel has them (one per
	 * file, and per target process): SEC("usdt") is libbpf's own, decided now.
	 */
	if (o->nspecs > 0)
		set_attach_type(s, s->skel->progs.lp_usdt, NULL);
	/* Without our SEC("uprobe") handler (prepare_uprobe): decided now. */
	for (size_t i = 0; s->uprobe_handler < 0 && multi_prog(s, i); i++)
		set_attach_type(s, multi_prog(s, i), NULL);
	return 0;
}

/*
 * The BTF for CO-RE (corebtf.h) into path, its descriptor into *fd (-1:
 * none): true, or false when the kernel's own is to be used. Said under -v.
 */
static bool core_btf(char *path, size_t size, int *fd)
{
	char why[PATH_MAX + 128];
	struct btf *btf;

	if (lp_core_btf(path, size, fd, why, sizeof(why))) {
		lp_info("CO-RE against the kernel's own BTF: %s", why);
		return false;
	}
	/* Refused here rather than by the load, which would have to start over. */
	btf = btf__parse(path, NULL);
	if (!btf) {
		lp_info("CO-RE against the kernel's own BTF: %s is not BTF libbpf takes (%s)",
			*fd >= 0 ? "the built-in types" : path, strerror(errno));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return false;
	}
	lp_info("CO-RE against %s (%u type%s)",
		*fd >= 0 ? "the built-in types of this kernel" : path, btf__type_cnt(btf) - 1,
		btf__type_cnt(btf) == 2 ? "" : "s");
	btf__free(btf);
	return true;
}

int lp_session_open(struct lp_session **out, const struct lp_session_opts *o)
{
	char btf_path[PATH_MAX];
	struct lp_session *s;
	int err, btf_fd = -1;
	bool core;

	*out = NULL;
	libbpf_set_print(libbpf_print);
	raise_fd_limit();
	s = calloc(1, sizeof(*s));
	if (!s) {
		lp_err("cannot load the BPF programs: out of memory");
		return -ENOMEM;
	}
	s->opts = *o;
	s->uprobe_handler = -1;
	s->probing = pthread_create(&s->prober, NULL, probe_multi, NULL) == 0;
	/* What the kernel must offer, said plainly before libbpf says it obscurely. */
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		err = -ENOTSUP;
		lp_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): leanprofiler needs a "
		       "kernel built with CONFIG_DEBUG_INFO_BTF");
		goto fail;
	}
	if (access("/sys/bus/event_source/devices/uprobe", F_OK)) {
		err = -ENOTSUP;
		lp_err("this kernel has no uprobes (/sys/bus/event_source/devices/uprobe): "
		       "leanprofiler needs CONFIG_UPROBE_EVENTS");
		goto fail;
	}
	core = core_btf(btf_path, sizeof(btf_path), &btf_fd);
	err = open_object(s, o, core ? btf_path : NULL);
	if (err)
		goto fail;
	s->opened_ns = mono_ns();
	err = leanprofiler_bpf__load(s->skel);
	if (err && core && err != -EPERM) {
		/* Types that relocate wrongly fail the verifier: start over against the kernel's own. */
		lp_info("CO-RE against the kernel's own BTF: the load against %s failed (%s)",
			btf_fd >= 0 ? "the built-in types" : btf_path, strerror(-err));
		leanprofiler_bpf__destroy(s->skel);
		s->skel = NULL;
		err = open_object(s, o, NULL);
		if (err)
			goto fail;
		err = leanprofiler_bpf__load(s->skel);
	}
	if (btf_fd >= 0)
		close(btf_fd);
	btf_fd = -1;
	if (err) {
		if (err == -EPERM)
			lp_err("not allowed to load BPF programs: run as root (sudo) or with "
			       "CAP_BPF and CAP_PERFMON");
		else
			lp_err("failed to load the BPF programs: %s (rerun with -v for the "
			       "verifier's log)",
			       strerror(-err));
		goto fail;
	}
	for (size_t i = 0; i < o->nspecs && i < LP_SPEC_MAX; i++) {
		__u32 key = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.usdt_desc), &key,
					&o->specs[i].desc, BPF_ANY)) {
			err = -errno;
			lp_err("failed to set up the span-pair specs: %s", strerror(-err));
			goto fail;
		}
	}
	s->loaded_ns = mono_ns();
	/* Links for each target process by itself (multi.h), where the kernel can. */
	s->multi = multi_known(s);
	s->per_process = o->per_process && s->multi && lp_pid_filter_supported();
	s->skel->bss->lp_per_process = s->per_process;
	lp_info("probes attached as %s%s",
		s->multi ? "uprobe_multi links, one per program and file" : "one uprobe link per site",
		s->per_process ? ", for each target process by itself"
		: o->per_process ? ", for every process (no pid-filtered links here: Linux 6.13 "
				   "and uprobe_multi needed, or " LP_PID_FILTER_ENV "=0)"
				 : "");
	/*
	 * Who consumes: the kernel half pauses nobody once this process exits
	 * (its exit is seen before its descriptors, hence the probes, go), nor
	 * after the lease ends.
	 */
	s->skel->bss->lp_consumer_pid = (__u32)getpid();
	renew_lease(s);
	/* The kernel-side process tracking: forks, execs, exits and new mappings. */
	err = leanprofiler_bpf__attach(s->skel);
	if (err) {
		lp_err("failed to attach the process-tracking BPF programs: %s (needs a kernel "
		       "with BTF and fentry; rerun with -v for details)",
		       strerror(-err));
		goto fail;
	}
	if (s->multi) {
		s->mlinks = lp_links_new(bpf_map__fd(s->skel->maps.linked),
					 bpf_map__fd(s->skel->maps.linked_pids));
		if (!s->mlinks) {
			err = -ENOMEM;
			lp_err("cannot load the BPF programs: out of memory");
			goto fail;
		}
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_sample, s, NULL);
	if (!s->rb) {
		err = -errno;
		lp_err("failed to map the ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (btf_fd >= 0)
		close(btf_fd);
	lp_session_close(s);
	return err;
}

/* Appends l to the links (*links, *n, *cap); 0, or -ENOMEM with l destroyed. */
static int push_link(struct bpf_link ***links, size_t *n, size_t *cap, struct bpf_link *l)
{
	struct bpf_link **grown = lp_grow(*links, cap, *n + 1, sizeof(*grown));

	if (!grown) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	*links = grown;
	grown[(*n)++] = l;
	return 0;
}

/* Keeps l, a probe attached in the file users know as name; 0 or -ENOMEM (said). */
static int add_link(struct lp_session *s, struct bpf_link *l, const char *name)
{
	int err = push_link(&s->links, &s->nlinks, &s->cap, l);

	if (err)
		lp_err("cannot attach to %s: out of memory", name);
	return err;
}

/* The same for a loader's probe, which pauses processes: kept apart (lp_session_detach_pausers). */
static int add_loader_link(struct lp_session *s, struct bpf_link *l, const char *name)
{
	int err = push_link(&s->loader_links, &s->nloader_links, &s->loader_cap, l);

	if (err)
		lp_err("cannot watch %s for dlopen(): out of memory", name);
	return err;
}

/* The same for a loader's uprobe_multi link (multi.h), its descriptor: closed on failure. */
static int add_loader_fd(struct lp_session *s, int fd, const char *name)
{
	int *grown = lp_grow(s->loader_fds, &s->loader_fds_cap, s->nloader_fds + 1, sizeof(*grown));

	if (!grown) {
		close(fd);
		lp_err("cannot watch %s for dlopen(): out of memory", name);
		return -ENOMEM;
	}
	s->loader_fds = grown;
	grown[s->nloader_fds++] = fd;
	return 0;
}

/* The dynamic loader: ld-linux-x86-64.so.2, ld-2.31.so, ld.so ... */
static bool is_loader(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "ld-", 3) == 0 || strncmp(base, "ld.so", 5) == 0;
}

/*
 * The loader tells debuggers of new libraries by calling _dl_debug_state():
 * a probe there lets us attach to what a target dlopen()s before it runs
 * (lp_dl_state). Its cookie is the distance to the loader's _r_debug, whose
 * r_state tells a load from an unload. Best effort: a loader without the
 * symbol only means dlopen'ed libraries go unseen.
 */
static void attach_loader(struct lp_session *s, const char *path, const char *name)
{
	uint64_t fn = 0, rd = 0, off = 0, cookie = 0;
	struct bpf_link *l = NULL;
	int fd = -1;

	if (lp_elf_symbol_at(path, "_dl_debug_state", &fn, &off) == 0) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");

		if (lp_elf_symbol(path, "_r_debug", &rd) == 0)
			cookie = uo.bpf_cookie = rd - fn;
		/*
		 * A uprobe_multi link where the markers have them: removing it waits
		 * one RCU grace period, shared with theirs (lp_session_detach_pausers),
		 * where a perf-event uprobe link waits three in a row (~75 ms here).
		 */
		if (s->multi)
			fd = lp_multi_attach(bpf_program__fd(s->skel->progs.lp_dl_state), path, &off,
					     NULL, &cookie, 1, 0);
		else
			l = bpf_program__attach_uprobe_opts(s->skel->progs.lp_dl_state, -1, path, 0,
							    &uo);
	}
	if (!l && fd < 0) {
		lp_warn("no _dl_debug_state in %s: libraries the targets dlopen() will not be "
			"probed",
			name);
		return;
	}
	if ((l ? add_loader_link(s, l, name) : add_loader_fd(s, fd, name)) == 0)
		lp_info("watching %s for dlopen()%s", name,
			cookie ? "" : " (no _r_debug: every change pauses the process)");
}

/*
 * Whether a site can be attached for a spec: libbpf decodes its arguments,
 * and it has the ones the spec uses; if not, why into why.
 */
static bool site_usable(const struct lp_usdt_note *note, unsigned need_args, char *why,
			size_t whysz)
{
	char bad[LP_USDT_FIELD_MAX * 2];
	int nargs = lp_usdt_args_check(note->args, bad, sizeof(bad));

	if (nargs < 0)
		snprintf(why, whysz, "libbpf cannot decode its argument '%s'", bad);
	else if ((unsigned)nargs < need_args)
		snprintf(why, whysz, "it has %d arguments, the spec uses arg%u", nargs,
			 need_args - 1);
	return nargs >= 0 && (unsigned)nargs >= need_args;
}

static bool is_probe(const struct lp_usdt_note *note, const struct lp_probe_ref *p)
{
	return !strcmp(note->provider, p->provider) && !strcmp(note->name, p->name);
}

/*
 * Which sites of probe (provider, name) in notes can be attached for a spec
 * (site_usable): usable[i] for note i. Returns how many can (0 when the file
 * does not have the probe, or none can: said), *all whether every site can,
 * or -1 (said) when the probe has too many sites. A site that cannot be used
 * while others can is said under -v, and counted in *skipped.
 */
static int probe_usable(const struct lp_usdt_note *notes, size_t n, const struct lp_probe_ref *p,
			unsigned need_args, const char *file, bool *usable, bool *all,
			uint64_t *skipped)
{
	char why[LP_USDT_FIELD_MAX * 3] = "", first_why[sizeof(why)] = "";
	size_t sites = 0, good = 0, at = 0;

	*all = false;
	for (size_t i = 0; i < n; i++)
		sites += is_probe(&notes[i], p);
	if (sites > LP_SPEC_SITES_MAX) {
		lp_warn("skipping %s:%s in %s: %zu sites, at most %d (LP_SPEC_SITES_MAX)", p->provider,
			p->name, file, sites, LP_SPEC_SITES_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		usable[i] = is_probe(&notes[i], p) && site_usable(&notes[i], need_args, why,
								   sizeof(why));
		good += usable[i];
		if (is_probe(&notes[i], p) && !usable[i] && !first_why[0])
			memcpy(first_why, why, sizeof(why));
	}
	if (sites && !good)
		lp_warn("skipping %s:%s in %s: %s", p->provider, p->name, file, first_why);
	*all = sites && good == sites;
	for (size_t i = 0; i < n && good && !*all; i++) {
		if (!is_probe(&notes[i], p))
			continue;
		at++;
		if (usable[i])
			continue;
		site_usable(&notes[i], need_args, why, sizeof(why));
		lp_info("%s:%s in %s: site %zu of %zu (at 0x%" PRIx64 ") not attached: %s; "
			"its other sites are recorded",
			p->provider, p->name, file, at, sites, notes[i].loc_addr, why);
		(*skipped)++;
	}
	return (int)good;
}

/*
 * The argument sizes of the probe's first site that can be attached, for
 * templates ({argN:u} of a 4-byte argument), unless an earlier file gave them.
 */
static void arg_sizes(struct lp_spec *sp, int role, const struct lp_usdt_note *notes, size_t n,
		      const bool *usable)
{
	int8_t sizes[LP_USDT_ARGS] = { 0 };
	size_t got = 0;

	for (size_t i = 0; i < n && !got; i++)
		if (usable[i])
			got = lp_usdt_arg_sizes(notes[i].args, sizes, LP_USDT_ARGS);
	for (size_t i = 0; i < got; i++)
		if (!sp->arg_size[role][i])
			sp->arg_size[role][i] = sizes[i];
}

/*
 * A site of a span-pair probe decoded here (wire.h struct lp_usdt_site): its
 * key in usdt_sites, -ENOSPC past LP_USDT_SITES_MAX (said), or -errno (said).
 */
static int own_site(struct lp_session *s, const struct lp_usdt_note *note, const char *name,
		    __u64 cookie)
{
	struct lp_usdt_site site = { .cookie = cookie };
	__u32 key = s->own_sites;
	int err;

	if (key >= LP_USDT_SITES_MAX) {
		lp_warn("skipping %s:%s in %s: already %d probe sites attached without "
			"libbpf's USDT support (LP_USDT_SITES_MAX)",
			note->provider, note->name, name, LP_USDT_SITES_MAX);
		return -ENOSPC;
	}
	lp_usdt_site_args(note->args, &site);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.usdt_sites), &key, &site, BPF_ANY)) {
		err = -errno;
		lp_err("cannot attach to %s:%s in %s: the kernel refused its arguments' layout: %s",
		       note->provider, note->name, name, strerror(-err));
		return err;
	}
	s->own_sites++;
	return (int)key;
}

/*
 * With uprobe_multi links: the usable sites of a probe join the file's
 * span-pair link (sf's LP_PLAN_USDT), each decoded here. Their number or
 * -errno (said).
 */
static int plan_sites(struct lp_session *s, struct lp_site_file *sf, const char *name,
		      const struct lp_usdt_note *notes, size_t n, const bool *usable, __u64 cookie)
{
	int planned = 0;

	for (size_t i = 0; i < n; i++) {
		int key;

		if (!usable[i])
			continue;
		key = own_site(s, &notes[i], name, cookie);
		if (key == -ENOSPC)
			return planned;
		if (key < 0)
			return key;
		if (lp_plan_add(&sf->plans[LP_PLAN_USDT], notes[i].loc_off, notes[i].sema_off,
				LP_USDT_SITE_COOKIE((__u32)key, 0))) {
			lp_err("cannot attach to %s: out of memory", name);
			return -ENOMEM;
		}
		planned++;
	}
	return planned;
}

/*
 * Attaches the usable sites of a probe libbpf refuses as a whole (it cannot
 * decode another site's arguments), each by itself: its arguments decoded
 * here (wire.h struct lp_usdt_site). Their number or -errno (said).
 */
static int attach_sites(struct lp_session *s, const char *path, const char *name,
			const struct lp_usdt_note *notes, size_t n, const bool *usable,
			__u64 cookie)
{
	int attached = 0;

	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = notes[i].sema_off);
		struct bpf_link *l;
		int err, key;

		if (!usable[i])
			continue;
		key = own_site(s, &notes[i], name, cookie);
		if (key == -ENOSPC)
			return attached;
		if (key < 0)
			return key;
		uo.bpf_cookie = LP_USDT_SITE_COOKIE((__u32)key, 0);
		l = bpf_program__attach_uprobe_opts(s->skel->progs.lp_usdt, -1, path, notes[i].loc_off,
						    &uo);
		if (!l) {
			err = -errno;
			lp_warn("skipping a site of %s:%s in %s: cannot attach to it: %s (rerun with "
				"-v for libbpf's reason)",
				notes[i].provider, notes[i].name, name, strerror(-err));
			continue;
		}
		err = add_link(s, l, name);
		if (err)
			return err;
		attached++;
	}
	return attached;
}

/*
 * Attaches the span-pair probes the file has; their number or -errno. The
 * kernel runs the programs of one probe in the order they were attached (the
 * newest first): the entries are attached in the reverse order of the specs,
 * the exits and aborts in their order, so that specs sharing a probe pair
 * nest (the first spec outermost), the exit of the inner one first.
 */
static int attach_specs(struct lp_session *s, const char *path, const char *name,
			const struct lp_usdt_note *notes, size_t n, struct lp_site_file *sf)
{
	size_t nspecs = s->opts.nspecs < LP_SPEC_MAX ? s->opts.nspecs : LP_SPEC_MAX;
	bool *usable = calloc(n ? n : 1, sizeof(*usable)); /* per note: the site can be attached */
	int attached = 0, err = 0;

	if (!usable) {
		lp_err("cannot attach to %s: out of memory", name);
		return -ENOMEM;
	}

	for (int role = 0; role < LP_USDT_ROLES; role++) {
		for (size_t k_spec = 0; k_spec < nspecs; k_spec++) {
			size_t i = role == LP_USDT_ROLE_ENTRY ? nspecs - 1 - k_spec : k_spec;
			struct lp_spec *sp = &s->opts.specs[i];
			const struct lp_probe_ref *probes = role == LP_USDT_ROLE_ENTRY  ? sp->entry
							    : role == LP_USDT_ROLE_EXIT ? sp->exit
											: sp->abort;
			size_t np = role == LP_USDT_ROLE_ENTRY	? sp->nentry
				    : role == LP_USDT_ROLE_EXIT ? sp->nexit
								: sp->nabort;
			unsigned need = sp->desc.nargs[role];

			for (size_t k = 0; k < np; k++) {
				LIBBPF_OPTS(bpf_usdt_opts, uo,
					    .usdt_cookie = LP_USDT_COOKIE(s->nfiles, sf->batch,
									  (__u64)i, role, k));
				struct bpf_link *l;
				bool all;

				if (probe_usable(notes, n, &probes[k], need, name, usable, &all,
						 &s->sites_skipped) <= 0)
					continue;
				arg_sizes(sp, role, notes, n, usable);
				if (s->multi) {
					/* One link for the file's sites of every spec (LP_PLAN_USDT). */
					err = plan_sites(s, sf, name, notes, n, usable, uo.usdt_cookie);
					if (err < 0)
						goto out;
					if (err)
						s->spec_found[i] |= 1u << role;
					attached += err;
					continue;
				}
				if (!all) {
					err = attach_sites(s, path, name, notes, n, usable,
							   uo.usdt_cookie);
					if (err < 0)
						goto out;
					if (err)
						s->spec_found[i] |= 1u << role;
					attached += err;
					continue;
				}
				l = bpf_program__attach_usdt(s->skel->progs.lp_usdt, -1, path,
							     probes[k].provider, probes[k].name, &uo);
				if (!l) {
					err = -errno;
					lp_warn("skipping %s:%s in %s: libbpf cannot attach to it: %s "
						"(rerun with -v for libbpf's reason)",
						probes[k].provider, probes[k].name, name, strerror(-err));
					continue;
				}
				err = add_link(s, l, name);
				if (err)
					goto out;
				s->spec_found[i] |= 1u << role;
				attached++;
			}
		}
	}
	err = attached;
out:
	free(usable);
	return err;
}

uint64_t lp_session_sites_skipped(const struct lp_session *s)
{
	return s->sites_skipped;
}

unsigned lp_session_spec_found(const struct lp_session *s, size_t i)
{
	return i < LP_SPEC_MAX ? s->spec_found[i] : 0;
}

/*
 * Keeps the descriptor of a file the targets map (in the files map's v2, fd
 * + 1; *fd becomes -1): a text the kernel could not read may lie in it
 * (LP_STR_IN_FILE), also after its process is gone. At most
 * LP_TEXT_FILES_MAX are kept.
 */
static void keep_fd(struct lp_session *s, struct lp_map_ent *known, int *fd)
{
	if (s->kept_fds >= LP_TEXT_FILES_MAX || known->v2)
		return;
	known->v2 = (uint64_t)*fd + 1;
	s->kept_fds++;
	*fd = -1;
}

/* Tells the kernel half that the file was examined: a target exec'ing it is not paused. */
static void mark_known(struct lp_session *s, uint64_t dev, uint64_t ino)
{
	struct lp_file_key k = { .dev = dev, .ino = ino };
	__u8 one = 1;

	/* Best effort: a full map only means more pauses. */
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.known_files), &k, &one, BPF_ANY);
}

/* The markers' program for note i, or NULL when it is not a marker's probe. */
static struct bpf_program *marker_prog(struct lp_session *s, const struct lp_usdt_note *note)
{
	if (strcmp(note->provider, "leanprofiler") != 0)
		return NULL;
	if (strcmp(note->name, "span_enter") == 0)
		return s->skel->progs.lp_span_enter;
	if (strcmp(note->name, "span_exit") == 0)
		return s->skel->progs.lp_span_exit;
	return NULL;
}

/* Whether note i repeats an earlier marker note (same program, same site). */
static bool repeated_site(struct lp_session *s, const struct lp_usdt_note *notes, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (notes[k].loc_off == notes[i].loc_off &&
		    marker_prog(s, &notes[k]) == marker_prog(s, &notes[i]))
			return true;
	return false;
}

/*
 * The file is examined: later calls return its probe count without reading it
 * again. The kernel half stops pausing for it at once if nothing of it is
 * recorded, else only once its gate is open (lp_session_open_gates): a
 * process not paused for it would run its markers while the gate is shut,
 * and lose them. (Its table entry is looked up afresh: a create since may
 * have moved it.)
 */
static void settle(struct lp_session *s, uint64_t dev, uint64_t ino, int probes)
{
	struct lp_map_ent *known = lp_map_find(&s->files, ino, (uint32_t)dev, false);

	if (known)
		known->v1 = ((uint64_t)(probes ? s->nfiles + 1 : 0) << 32) | ((uint32_t)probes + 1);
	if (probes == 0)
		mark_known(s, dev, ino);
}

/*
 * With uprobe_multi links: the markers' sites join the file's two links
 * (LP_PLAN_ENTER, LP_PLAN_EXIT), made by make_links(). At most
 * LP_MARKER_SITES_MAX sites, checked by the caller. Their number, or -ENOMEM.
 */
static int plan_markers(struct lp_session *s, const char *name, const struct lp_usdt_note *notes,
			size_t n, struct lp_site_file *sf)
{
	int planned = 0;

	for (size_t i = 0; i < n; i++) {
		struct bpf_program *prog = marker_prog(s, &notes[i]);
		struct lp_plan *plan = &sf->plans[prog == s->skel->progs.lp_span_enter ? LP_PLAN_ENTER
											: LP_PLAN_EXIT];

		if (!prog || repeated_site(s, notes, i))
			continue;
		if (lp_plan_add(plan, notes[i].loc_off, notes[i].sema_off,
				LP_MARKER_COOKIE(s->nfiles, sf->batch, 0))) {
			lp_err("cannot attach to %s: out of memory", name);
			return -ENOMEM;
		}
		if (sf->nsites < LP_MARKER_SITES_MAX)
			sf->sites[sf->nsites++] = notes[i].loc_addr;
		planned++;
	}
	return planned;
}

/* The program image of target pid (struct lp_target.image): 0, or -ESRCH when not a target. */
static int target_image(struct lp_session *s, uint32_t pid, uint32_t *image)
{
	struct lp_target t;
	__u32 key = pid;

	/* Not a target (any more): it exited, its PID is free or another's. */
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.targets), &key, &t))
		return -ESRCH;
	*image = t.image;
	return 0;
}

/*
 * Makes file's links (its plans) in the file at path for process pid (0:
 * every process). The links made, or -errno (said, but -ESRCH: pid is gone).
 */
static int make_links(struct lp_session *s, uint32_t file, const char *path, const char *name,
		      uint32_t pid)
{
	struct lp_site_file *sf = &s->site_files[file];
	const int progs[LP_PLANS] = {
		[LP_PLAN_EXIT] = bpf_program__fd(s->skel->progs.lp_span_exit),
		[LP_PLAN_ENTER] = bpf_program__fd(s->skel->progs.lp_span_enter),
		[LP_PLAN_USDT] = bpf_program__fd(s->skel->progs.lp_usdt),
	};
	uint32_t image = 0;

	if (pid && target_image(s, pid, &image))
		return -ESRCH;
	return lp_links_make(s->mlinks, progs, sf->plans, LP_PLANS, path, name, file, sf->dev,
			     sf->ino, pid, image);
}

/*
 * Attaches the markers' programs to every leanprofiler probe in notes; their
 * number or -errno. Each site attached is added to sf.
 */
static int attach_markers(struct lp_session *s, const char *path, const char *name,
			  const struct lp_usdt_note *notes, size_t n, struct lp_site_file *sf)
{
	size_t sites = 0;
	int attached = 0;

	/* Each site is a uprobe and a descriptor: the header makes 4 per file. */
	for (size_t i = 0; i < n; i++)
		sites += marker_prog(s, &notes[i]) && !repeated_site(s, notes, i);
	if (sites > LP_MARKER_SITES_MAX) {
		lp_warn("%s not probed: %zu leanprofiler probe sites, at most %d "
			"(LP_MARKER_SITES_MAX; include/leanprofiler.h makes 4 per file)",
			name, sites, LP_MARKER_SITES_MAX);
		return 0;
	}
	if (s->multi)
		return plan_markers(s, name, notes, n, sf);
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = notes[i].sema_off,
			    .bpf_cookie = LP_MARKER_COOKIE(s->nfiles, sf->batch, 0));
		struct bpf_program *prog = marker_prog(s, &notes[i]);
		struct bpf_link *l;
		int err;

		if (!prog || repeated_site(s, notes, i))
			continue;
		/* Every process: targets are chosen in the kernel, so forks are never missed. */
		l = bpf_program__attach_uprobe_opts(prog, -1, path, notes[i].loc_off, &uo);
		if (!l) {
			err = -errno;
			lp_err("failed to attach to %s:%s in %s: %s (rerun with -v for libbpf's "
			       "reason)",
			       notes[i].provider, notes[i].name, name, strerror(-err));
			return err;
		}
		err = add_link(s, l, name);
		if (err)
			return err;
		attached++;
		if (sf->nsites < LP_MARKER_SITES_MAX)
			sf->sites[sf->nsites++] = notes[i].loc_addr;
	}
	return attached;
}

/*
 * The files map's entry of a file examined: v1 holds its probes + 1 (low
 * half) and, for a file with probes, its index + 1 (high half); v2 its
 * descriptor + 1 when kept (keep_fd).
 */
static uint32_t file_probes(const struct lp_map_ent *known)
{
	return (uint32_t)known->v1 - 1;
}

static uint32_t file_index(const struct lp_map_ent *known)
{
	return (uint32_t)(known->v1 >> 32) - 1;
}

bool lp_session_known(struct lp_session *s, uint64_t dev, uint64_t ino, uint32_t pid)
{
	struct lp_map_ent *known = lp_map_find(&s->files, ino, (uint32_t)dev, false);
	uint32_t image;

	if (!known || !known->v1)
		return false;
	/* Pid-filtered, a file with probes is linked for each process by itself. */
	if (!s->per_process || !pid || !file_probes(known))
		return true;
	/* Not a target: nothing to link for it. */
	return target_image(s, pid, &image) || lp_links_have(s->mlinks, pid, image,
							      file_index(known));
}

/* Filesystems whose stat() gives another device than the inode's (the maps line's). */
#define LP_BTRFS_MAGIC 0x9123683EU
#define LP_OVERLAYFS_MAGIC 0x794c7630U

/*
 * Whether fd is the file (dev, ino) of the maps line it was opened for: the
 * process may have mapped another file at the same addresses in between,
 * and that one's probes would be filed under the first one's name. dev is
 * the kernel's encoding (major << 20 | minor), as in maps. On btrfs and
 * overlayfs, stat() reports another device than maps: the inode alone then.
 */
static bool same_file(int fd, uint64_t dev, uint64_t ino)
{
	struct statfs fs;
	struct stat st;

	if (fstat(fd, &st) || (uint64_t)st.st_ino != ino)
		return false;
	if (lp_proc_kdev(st.st_dev) == dev)
		return true;
	return !fstatfs(fd, &fs) && ((uint32_t)fs.f_type == LP_BTRFS_MAGIC ||
				     (uint32_t)fs.f_type == LP_OVERLAYFS_MAGIC);
}

/*
 * Opens the file mapped at path for reading: *fd, or -ESRCH when the mapping
 * or its process is gone or another file is mapped there now (not said), or
 * -errno (said).
 */
static int open_mapped(const char *path, const char *name, uint64_t dev, uint64_t ino, int *fd)
{
	int err;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			return -ESRCH; /* the mapping or its process is gone: nothing to probe */
		lp_err("cannot read %s: %s", name, strerror(-err));
		return err;
	}
	if (!same_file(*fd, dev, ino)) {
		/* Not examined: the process's next pause, or the next process, looks again. */
		lp_info("%s: another file is mapped there now: not attached", name);
		close(*fd);
		*fd = -1;
		return -ESRCH;
	}
	return 0;
}

/* Pid-filtered: the links of a file examined before, for process pid. Sites linked, or -errno. */
static int link_process(struct lp_session *s, const struct lp_map_ent *known, const char *path,
			const char *name, uint64_t dev, uint64_t ino, uint32_t pid)
{
	uint32_t file = file_index(known), image;
	char self[64];
	int fd, err;

	if (target_image(s, pid, &image))
		return -ESRCH;
	if (lp_links_have(s->mlinks, pid, image, file))
		return 0;
	renew_lease(s);
	err = open_mapped(path, name, dev, ino, &fd);
	if (err)
		return err;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	err = make_links(s, file, self, name, pid);
	close(fd);
	return err < 0 ? err : (int)file_probes(known);
}

int lp_session_attach(struct lp_session *s, const char *path, const char *name, uint64_t dev,
		      uint64_t ino, uint32_t pid)
{
	struct lp_map_ent *known = lp_map_find(&s->files, ino, (uint32_t)dev, true);
	struct lp_usdt_note *notes;
	struct lp_site_file *sf;
	char self[64];
	size_t n, first_link;
	int fd, err, attached = 0;
	uint32_t file;

	if (!known) {
		lp_err("cannot attach to %s: out of memory", name);
		return -ENOMEM;
	}
	if (known->v1) {
		if (s->per_process && pid && file_probes(known))
			return link_process(s, known, path, name, dev, ino, pid);
		return 0;
	}
	renew_lease(s); /* a long rescan is still a consumer at work */
	/*
	 * Everything below reads the file through one descriptor: a
	 * /proc/PID/map_files path goes away with its process, the file does not.
	 */
	err = open_mapped(path, name, dev, ino, &fd);
	if (err)
		return err;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (is_loader(name))
		attach_loader(s, self, name);
	first_link = s->nlinks;
	err = lp_usdt_read(self, &notes, &n);
	if (err) {
		if (err == -EFBIG)
			lp_warn("%s not probed: its probe notes exceed %u KiB or %u notes "
				"(LP_USDT_NOTES_BYTES_MAX, LP_USDT_NOTES_MAX)",
				name, LP_USDT_NOTES_BYTES_MAX >> 10, LP_USDT_NOTES_MAX);
		else if (err != -ENOEXEC)
			lp_err("cannot read the probes of %s: %s", name, strerror(-err));
		settle(s, dev, ino, 0); /* not ELF, or unreadable: no markers */
		close(fd);
		return err;
	}
	/* An ELF file the targets map: kept open, texts the kernel could not read may be in it. */
	keep_fd(s, known, &fd);
	if (s->nfiles >= LP_MAX_FILES) {
		lp_warn("%s not probed: already %d files with markers", name, LP_MAX_FILES);
		settle(s, dev, ino, 0);
		free(notes);
		return 0;
	}
	/* The next index's: where its literals lie, looked at when the kernel cannot. */
	sf = lp_grow(s->site_files, &s->site_files_cap, (size_t)s->nfiles + 1, sizeof(*sf));
	if (!sf) {
		lp_err("cannot attach to %s: out of memory", name);
		free(notes);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	s->site_files = sf;
	file = s->nfiles;
	sf = &s->site_files[file];
	memset(sf, 0, sizeof(*sf));
	sf->dev = dev;
	sf->ino = ino;
	sf->batch = next_batch(s);
	/* None read: such texts are then unreadable, as before. */
	lp_elf_ro_segments(self, sf->segs, LP_SITE_SEGS_MAX, &sf->nsegs);
	err = attach_markers(s, self, name, notes, n, sf);
	if (err >= 0) {
		attached = err;
		err = attach_specs(s, self, name, notes, n, sf);
	}
	if (err < 0)
		goto cleanup;
	attached += err;
	err = 0;
	/*
	 * With uprobe_multi links, the sites above are only planned: the links
	 * are made now, for every process or for this one.
	 */
	if (attached && s->multi && (!s->per_process || pid))
		err = make_links(s, file, self, name, s->per_process ? pid : 0);
	if (err < 0 && !(s->per_process && err == -ESRCH))
		goto cleanup;
	if (attached)
		lp_info("attached %d probes in %s", attached, name);
	settle(s, dev, ino, attached);
	s->probes += (size_t)attached;
	if (attached)
		s->nfiles++; /* its gate stays shut until lp_session_open_gates() */
	err = err < 0 ? err : attached;
	free(notes);
	if (fd >= 0)
		close(fd);
	return err;
cleanup:
	/*
	 * A file half attached is not recorded: its probes go, with their
	 * descriptors, and it is not tried again (nor paused for).
	 */
	while (s->nlinks > first_link)
		bpf_link__destroy(s->links[--s->nlinks]);
	for (int i = 0; i < LP_PLANS; i++)
		lp_plan_free(&sf->plans[i]);
	settle(s, dev, ino, 0);
	free(notes);
	if (fd >= 0)
		close(fd);
	return err;
}

long lp_session_file_text(struct lp_session *s, uint64_t dev, uint64_t ino, uint64_t off,
			  char *buf, size_t size)
{
	struct lp_map_ent *e = lp_map_find(&s->files, ino, (uint32_t)dev, false);
	ssize_t n;
	char *nul;

	if (!e || !e->v2 || size == 0)
		return -ENOENT;
	n = pread((int)e->v2 - 1, buf, size - 1, (off_t)off);
	if (n < 0)
		return -errno;
	nul = memchr(buf, '\0', (size_t)n);
	if (nul)
		n = nul - buf;
	buf[n] = '\0';
	return (long)n;
}

long lp_session_site_text(struct lp_session *s, uint32_t file, uint64_t site, uint64_t addr,
			  char *buf, size_t size)
{
	const struct lp_site_file *f;

	if (file >= s->nfiles)
		return -ENOENT;
	f = &s->site_files[file];
	for (size_t i = 0; i < f->nsites; i++) {
		/* The file is mapped at that distance from its addresses: a whole number of pages. */
		uint64_t bias = site - f->sites[i], va = addr - bias;

		if (bias & 4095)
			continue;
		for (size_t k = 0; k < f->nsegs; k++) {
			const struct lp_elf_seg *g = &f->segs[k];

			if (va >= g->vaddr && va - g->vaddr < g->size)
				return lp_session_file_text(s, f->dev, f->ino, g->off + (va - g->vaddr),
							    buf, size);
		}
	}
	return -ENOENT;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * How far ahead a batch's gates open, or the stop is set (ns): longer than
 * the one 8-byte store that sets it takes, so it lands in time unless this
 * process is preempted right there (then the pipeline cuts at the landing:
 * lp_session_open_gates), and than the few hundred instructions a CPU may
 * run a kernel half's read of the store ahead of its clock read. A process
 * paused for a new library waits this long: spun, as a sleep this short
 * would oversleep tenfold.
 */
#define LP_GATE_AHEAD_NS 5000ULL
/* Said under -v when its store landed later than this after it (preempted). */
#define LP_GATE_LATE_NS 1000000ULL

/* Waits until the monotonic clock has passed t (at most LP_GATE_AHEAD_NS). */
static void wait_until(uint64_t t)
{
	while (mono_ns() < t)
		;
}

int lp_session_open_gates(struct lp_session *s, uint64_t *since_ns,
			  void (*fn)(void *ctx, uint32_t file, uint64_t since_ns), void *ctx)
{
	uint32_t first = s->gates_open;
	uint64_t at, landed, b;

	*since_ns = 0;
	if (first == s->nfiles)
		return 0;
	/* At most one batch per file: batch numbers stay below LP_MAX_FILES + 1. */
	b = ++s->batches;
	/*
	 * ONE store opens every gate of the batch, however many files it has.
	 * The kernel half records an event of the batch's files from that time
	 * on (it reads the time after its event's timestamp). Should the store
	 * land late (this process preempted between the two clock reads), events
	 * between `at` and the landing may or may not have been recorded:
	 * recording then begins at `landed`, and the pipeline drops what came
	 * before it (lp_pipeline_gate), so the cut stays exact without a retry.
	 */
	/* The slot's page written once before (it is 0 still): its first write may fault. */
	__atomic_store_n(&s->skel->data_hot->lp_hot.batch_at[b - 1], 0, __ATOMIC_RELAXED);
	at = mono_ns() + LP_GATE_AHEAD_NS;
	__atomic_store_n(&s->skel->data_hot->lp_hot.batch_at[b - 1], at, __ATOMIC_SEQ_CST);
	landed = mono_ns();
	if (landed >= at) {
		if (landed - at > LP_GATE_LATE_NS)
			lp_info("the gates of %u files opened %llu us late: recorded from then on",
				s->nfiles - first, (unsigned long long)(landed - at) / 1000);
		at = landed;
	}
	s->gates_open = s->nfiles;
	*since_ns = at;
	for (uint32_t i = first; fn && i < s->nfiles; i++)
		fn(ctx, i, at);
	wait_until(at);
	/*
	 * Recorded from now on: a process that maps them need not be paused any
	 * more, but pid-filtered, where each process needs links of its own.
	 */
	for (uint32_t i = first; i < s->nfiles && !s->per_process; i++)
		mark_known(s, s->site_files[i].dev, s->site_files[i].ino);
	return 0;
}

static void store_stop(struct lp_session *s, uint64_t at)
{
	/* One 8-byte store: the BPF side sees either the old value or this. */
	__atomic_store_n(&s->skel->data_hot->lp_hot.stop_ns, at, __ATOMIC_SEQ_CST);
	s->stop_ns = at;
}

void lp_session_stop_at(struct lp_session *s, uint64_t at)
{
	store_stop(s, at);
}

uint64_t lp_session_stop(struct lp_session *s)
{
	uint64_t at = mono_ns() + LP_GATE_AHEAD_NS, planned = s->stop_ns;

	/*
	 * One store, no retry: an event before `at` is recorded whichever value
	 * its program read, and one from `at` on that read the old value (the
	 * store landed late) is dropped by the pipeline (lp_pipeline_stop). A
	 * stop planned earlier (--duration) stands: the kernel half ended there,
	 * however late we come.
	 */
	if (planned && planned <= at)
		at = planned;
	else
		store_stop(s, at);
	wait_until(at);
	return at;
}

int lp_session_add_target(struct lp_session *s, pid_t pid, uint64_t since_ns)
{
	struct lp_target t = { .since_ns = since_ns, .gen = LP_GEN_USER | ++s->gens,
			       .dl_state = LP_RT_UNSEEN,
			       .image = LP_IMAGE_USER | (++s->images & (LP_IMAGE_USER - 1)) };
	__u32 key = (__u32)pid;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &key, &t, BPF_ANY)) {
		int err = -errno;

		if (err == -E2BIG)
			lp_err("cannot record PID %d: already %u target processes, the most the "
			       "kernel half follows at once",
			       (int)pid, bpf_map__max_entries(s->skel->maps.targets));
		else
			lp_err("cannot record PID %d: the kernel refused it as a target: %s", (int)pid,
			       strerror(-err));
		return err;
	}
	return 0;
}

void lp_session_load_times(const struct lp_session *s, uint64_t *opened_ns, uint64_t *loaded_ns)
{
	*opened_ns = s->opened_ns;
	*loaded_ns = s->loaded_ns;
}

bool lp_session_steal_clock(const struct lp_session *s)
{
	return s->skel->rodata->steal_from_rq != 0;
}

size_t lp_session_probes(const struct lp_session *s)
{
	return s->probes;
}

size_t lp_session_links(const struct lp_session *s)
{
	return s->nlinks + (s->mlinks ? lp_links_made(s->mlinks) : 0) + s->nloader_links +
	       s->nloader_fds;
}

void lp_session_forget(struct lp_session *s, uint32_t pid)
{
	if (s->per_process)
		lp_links_forget(s->mlinks, pid);
}

bool lp_session_per_process(const struct lp_session *s)
{
	return s->per_process;
}

int lp_session_fd(struct lp_session *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

int lp_session_consume(struct lp_session *s)
{
	int n;

	renew_lease(s);
	n = ring_buffer__consume(s->rb);

	if (n < 0) {
		lp_err("cannot read the ring buffer: %s", strerror(-n));
		return n;
	}
	return 0;
}

int lp_session_loss(struct lp_session *s, struct lp_loss *loss)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.stats), err = 0;
	__u64 sums[LP_STAT_MAX] = { 0 };
	__u64 *vals = NULL;

	if (ncpu < 0)
		err = ncpu;
	else if (!(vals = calloc((size_t)ncpu, sizeof(*vals))))
		err = -ENOMEM;
	for (__u32 k = 0; !err && k < LP_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sums[k] += vals[c];
	}
	free(vals);
	if (err) {
		lp_warn("cannot read the kernel's counts of lost events: %s; the lost-event "
			"figures are 0, which they may not be",
			strerror(-err));
		*loss = (struct lp_loss){ 0 };
		return err;
	}
	loss->enter = sums[LP_STAT_LOST_ENTER];
	loss->exit = sums[LP_STAT_LOST_EXIT];
	loss->string = sums[LP_STAT_LOST_STRING];
	loss->thread = sums[LP_STAT_LOST_THREAD];
	loss->no_storage = sums[LP_STAT_NO_TASK_STORAGE];
	loss->task = sums[LP_STAT_LOST_TASK];
	loss->sched = sums[LP_STAT_LOST_SCHED];
	if (s->opts.off_cpu)
		lp_info("off-cpu: %llu switch-ins not seen, %llu reads of the steal clock failed",
			(unsigned long long)sums[LP_STAT_UNSEEN_IN],
			(unsigned long long)sums[LP_STAT_STEAL_UNREAD]);
	return 0;
}

uint64_t lp_session_thread_loss(struct lp_session *s, uint32_t tid)
{
	struct lp_thread_lost l;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.lost_by_tid), &tid, &l))
		return 0;
	return l.enter + l.exit;
}

int lp_session_prog_time(struct lp_session *s, uint64_t *runs, uint64_t *run_ns)
{
	/* The markers' and the span-pair probes': what runs once per event. */
	const struct bpf_program *progs[] = { s->skel->progs.lp_span_enter,
					      s->skel->progs.lp_span_exit, s->skel->progs.lp_usdt };

	*runs = *run_ns = 0;
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_program__fd(progs[i]) < 0)
			continue; /* not loaded: no specs */
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len)) {
			int err = -errno;

			/* runs 0: no figures rather than some of them. */
			*runs = *run_ns = 0;
			lp_warn("cannot read the BPF programs' run time: %s; the profiler's BPF "
				"figures are left out",
				strerror(-err));
			return err;
		}
		*runs += info.run_cnt;
		*run_ns += info.run_time_ns;
	}
	return 0;
}

/*
 * Detaching a uprobe waits for the kernel's RCU grace periods: ~0.1 s per
 * link on this project's VM, so a recording with hundreds of probes would take
 * long to end. Waits that run at once share their grace periods: the links
 * are destroyed by up to LP_CLOSE_THREADS threads together (links.h). That
 * helps the uprobe_multi links (multi.h: 200 files in 1.0 s); single uprobe
 * links are removed one after another by the kernel whatever the threads
 * (800: 90 s).
 */
struct detach_slice {
	struct bpf_link **links;
	size_t n;
	int *fds; /* uprobe_multi links */
	size_t nfds;
};

/* Links being removed by threads; the arrays are the batch's (freed by detach_join). */
struct detach_batch {
	struct bpf_link **links;
	int *fds;
	struct detach_slice slices[LP_CLOSE_THREADS];
	pthread_t threads[LP_CLOSE_THREADS];
	size_t nthreads;
	uint64_t started; /* bit t: thread t runs */
};

static void *detach_slice(void *arg)
{
	struct detach_slice *d = arg;

	for (size_t i = 0; i < d->n; i++)
		bpf_link__destroy(d->links[i]);
	for (size_t i = 0; i < d->nfds; i++)
		close(d->fds[i]);
	return NULL;
}

/* Slice t of nthreads of an array of n: [*from, *to). */
static void slice_of(size_t n, size_t t, size_t nthreads, size_t *from, size_t *to)
{
	size_t per = (n + nthreads - 1) / nthreads;

	*from = t * per < n ? t * per : n;
	*to = *from + per < n ? *from + per : n;
}

/*
 * Starts removing n links and nfds uprobe_multi links (the arrays become b's)
 * in up to LP_CLOSE_THREADS threads; a thread that cannot start leaves its
 * slice to this one.
 */
static void detach_start(struct detach_batch *b, struct bpf_link **links, size_t n, int *fds,
			 size_t nfds)
{
	size_t most = n > nfds ? n : nfds;

	*b = (struct detach_batch){ .links = links, .fds = fds };
	b->nthreads = most < LP_CLOSE_THREADS ? most : LP_CLOSE_THREADS;
	for (size_t t = 0; t < b->nthreads; t++) {
		size_t lf, lt, mf, mt;

		slice_of(n, t, b->nthreads, &lf, &lt);
		slice_of(nfds, t, b->nthreads, &mf, &mt);
		b->slices[t] = (struct detach_slice){ links + lf, lt - lf, fds + mf, mt - mf };
		if (pthread_create(&b->threads[t], NULL, detach_slice, &b->slices[t]) == 0)
			b->started |= (uint64_t)1 << t;
		else
			detach_slice(&b->slices[t]);
	}
}

/* Waits until every link of b is removed; b may then be started again. */
static void detach_join(struct detach_batch *b)
{
	for (size_t t = 0; t < b->nthreads; t++)
		if (b->started & ((uint64_t)1 << t))
			pthread_join(b->threads[t], NULL);
	free(b->links);
	free(b->fds);
	*b = (struct detach_batch){ 0 };
}

void lp_session_detach_pausers(struct lp_session *s)
{
	struct detach_batch pausers;

	/*
	 * The uprobe_multi links of the markers and span-pair probes go at the
	 * same time, in the background (lp_session_detach waits for them):
	 * they record nothing from the stop on, and removed together with the
	 * loaders' their grace periods are shared. The single links stay until
	 * lp_session_detach: the kernel removes those one after another, a
	 * loader's among them.
	 */
	if (s->mlinks)
		lp_links_close_later(s->mlinks);
	detach_start(&pausers, s->loader_links, s->nloader_links, s->loader_fds, s->nloader_fds);
	s->loader_links = NULL;
	s->loader_fds = NULL;
	s->nloader_links = s->loader_cap = s->nloader_fds = s->loader_fds_cap = 0;
	detach_join(&pausers);
}

void lp_session_detach(struct lp_session *s)
{
	struct detach_batch rest;

	detach_start(&rest, s->links, s->nlinks, NULL, 0);
	s->links = NULL;
	s->nlinks = s->cap = 0;
	lp_session_detach_pausers(s);
	lp_links_close_all(s->mlinks);
	detach_join(&rest);
}

void lp_session_unhold(struct lp_session *s, uint32_t pid, uint64_t start_ns)
{
	int fd = bpf_map__fd(s->skel->maps.held);
	__u64 start;

	/* Not a later process's, paused under the same PID. */
	if (!bpf_map_lookup_elem(fd, &pid, &start) && start == start_ns)
		bpf_map_delete_elem(fd, &pid);
}

void lp_session_close(struct lp_session *s)
{
	if (!s)
		return;
	join_prober(s);
	lp_session_detach(s);
	lp_links_free(s->mlinks);
	for (uint32_t i = 0; s->site_files && i < s->nfiles; i++)
		for (int k = 0; k < LP_PLANS; k++)
			lp_plan_free(&s->site_files[i].plans[k]);
	for (size_t i = 0; i < s->files.cap; i++)
		if (s->files.e && s->files.e[i].used && s->files.e[i].v2)
			close((int)s->files.e[i].v2 - 1);
	lp_map_free(&s->files);
	free(s->site_files);
	ring_buffer__free(s->rb);
	leanprofiler_bpf__destroy(s->skel);
	/* Only now: the object's programs point into libbpf's record of it. */
	drop_handler(s);
	free(s);
}
