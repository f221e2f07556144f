// SPDX-License-Identifier: MIT
/*
 * The consumer's capacity without BPF (issue 5, "writer and builder"): a
 * recorded stream in the real wire format (bpf/wire.h), built in memory, run
 * through the recording pipeline (user/core/pipeline.c, what record runs):
 * decode -> nest -> stats and call paths (+ trace) -> the report's figures.
 *
 *   build/bench/pipeline [SPANS] [ROUNDS] [DIR]   (defaults 2000000, 3, $TMPDIR or /tmp)
 *   build/bench/pipeline --count [SPANS] [DIR]   (default 200000): each pipeline once,
 *     for valgrind --tool=callgrind: count_summary() and count_trace() are the
 *     instructions to read (bench/run.sh, row 6: instructions per span, which
 *     do not depend on the host's noise).
 *   LP_PIPELINE_KEEP=1: keep the last trace (to check it) instead of removing it.
 *   LP_PIPELINE_FORMAT=perfetto: the trace in Perfetto's format (record --format
 *   perfetto, user/core/pftrace.c) instead of the JSON one.
 *
 * Each round runs, in this order so that the machine's noise hits all three:
 *   baseline write: the trace's byte count written with write(2) in 1 MiB
 *     chunks, fsync'ed and closed, as lp_outfile_commit() does;
 *   summary only: the pipeline as --summary-only runs it, no trace;
 *   pipeline: the pipeline with the trace file, committed (fsync + rename).
 * and prints the median of the rounds, one line each. Figures are wall clock
 * (CLOCK_MONOTONIC); "cpu" is the process's user + system time over the same
 * interval. On a shared machine only the ratios of one run mean much.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/wire.h"
#include "pipeline.h"

#define THREADS 4
#define NAMES 50
#define MAX_DEPTH 4
#define PID 7000
#define NAME_BASE 0x400000ull  /* the literals' addresses in the "target" */
#define META_BASE 0x500000ull
#define ABI_FLAGS (1u << LP_EV_ABI_SHIFT)
#define MAX_ROUNDS 15

struct stream {
	char *p;
	size_t len, cap;
	size_t *offs; /* where each record starts: the ring buffer hands out records one by one */
	size_t n, ncap;
};

static char dir[4096]; /* the temporary directory, removed whatever happens */
static bool perfetto;  /* LP_PIPELINE_FORMAT=perfetto */
static struct lp_pftrace_stats pf_stats; /* the last Perfetto trace's */

static void remove_dir(void)
{
	DIR *d = dir[0] ? opendir(dir) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	if (dir[0])
		rmdir(dir);
	dir[0] = '\0';
}

static void die(const char *what, int err)
{
	fprintf(stderr, "pipeline: %s: %s\n", what, strerror(err < 0 ? -err : err));
	remove_dir();
	exit(1);
}

/* Appends a record of size bytes (zeroed), 8-byte aligned like the ring buffer's. */
static void *rec(struct stream *s, size_t size)
{
	size_t at = (s->len + 7) & ~(size_t)7;
	void *r;

	if (!(s->p = lp_grow(s->p, &s->cap, at + size, 1)) ||
	    !(s->offs = lp_grow(s->offs, &s->ncap, s->n + 2, sizeof(*s->offs))))
		die("building the stream", ENOMEM);
	r = s->p + at;
	memset(r, 0, size);
	s->offs[s->n++] = at;
	s->offs[s->n] = at + size; /* the end of the last one */
	s->len = at + size;
	return r;
}

static void put_string(struct stream *s, uint32_t tid, uint64_t addr, bool meta, const char *text)
{
	size_t len = strlen(text);
	struct lp_rec_string *r = rec(s, sizeof(*r) + len);

	r->h = (struct lp_rec_hdr){ .type = LP_REC_STRING, .flags = meta ? LP_STR_META : 0,
				    .pid = PID, .tid = tid };
	r->addr = addr;
	r->len = (__s16)len;
	memcpy(r + 1, text, len);
}

/* splitmix64: a fixed stream, so that every run decodes the same records. */
static uint64_t rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return lp_hash64(*state);
}

/*
 * spans spans over THREADS threads of one process, interleaved as a ring
 * buffer shows them, nesting up to MAX_DEPTH, NAMES literal names each with
 * its literal metadata (sent once, before its first use), every event with a
 * counter.
 */
static void build_stream(struct stream *s, uint64_t spans)
{
	struct {
		uint32_t seq;
		uint64_t counter;
		unsigned depth;
		unsigned stack[MAX_DEPTH];
	} th[THREADS] = { 0 };
	bool sent[THREADS][NAMES] = { { false } };
	uint64_t state = 42, ts = 1000000000, entered = 0, open = 0;
	char text[64];

	for (uint32_t t = 0; t < THREADS; t++) {
		struct lp_rec_thread *r = rec(s, sizeof(*r));

		r->h = (struct lp_rec_hdr){ .type = LP_REC_THREAD, .pid = PID, .tid = PID + t };
		snprintf(r->comm, sizeof(r->comm), "worker-%u", t);
		snprintf(r->pcomm, sizeof(r->pcomm), "pipeline");
	}
	while (entered < spans || open) {
		uint64_t x = rnd(&state);
		unsigned t = x % THREADS;
		bool enter = entered < spans &&
			     (th[t].depth == 0 || (th[t].depth < MAX_DEPTH && (x >> 8) % 2));
		struct lp_rec_event *r;
		unsigned name;

		if (!enter && th[t].depth == 0)
			continue; /* this thread is done; others still have open spans */
		if (enter) {
			name = (unsigned)((x >> 16) % NAMES);
			/* The kernel sends a literal's text with the first event that uses it. */
			if (!sent[t][name]) {
				/* Per address space: once for the whole process. */
				bool first = true;

				for (unsigned u = 0; u < THREADS; u++)
					first &= !sent[u][name];
				if (first) {
					snprintf(text, sizeof(text), "phase.step_%02u", name);
					put_string(s, PID + t, NAME_BASE + name * 64, false, text);
					snprintf(text, sizeof(text), "kind=literal,n=%u,module=enc%u",
						 name % 7, name % 3);
					put_string(s, PID + t, META_BASE + name * 64, true, text);
				}
				sent[t][name] = true;
			}
			th[t].stack[th[t].depth++] = name;
			entered++;
			open++;
		} else {
			name = th[t].stack[--th[t].depth];
			open--;
		}
		ts += 50 + (x >> 40) % 200;
		th[t].counter += (x >> 32) % 16;
		r = rec(s, sizeof(*r));
		r->h = (struct lp_rec_hdr){
			.type = enter ? LP_REC_ENTER : LP_REC_EXIT,
			.flags = ABI_FLAGS | LP_EV_NAME_LITERAL | LP_EV_HAS_COUNTER |
				 (enter ? LP_EV_META_LITERAL : LP_EV_NO_META),
			.pid = PID,
			.tid = PID + t,
			.seq = th[t].seq++,
		};
		r->ts_ns = ts;
		r->counter = th[t].counter;
		r->name = NAME_BASE + name * 64;
		r->meta = enter ? META_BASE + name * 64 : 0;
		r->pad = 0;
	}
}

struct sample {
	double wall, cpu; /* seconds */
	double thread_cpu; /* of the thread that runs the pipeline (a trace may deflate in another) */
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/*
 * The recording pipeline (user/core/pipeline.c), with the trace written to
 * path, or without a trace as `record --summary-only` runs it.
 */
static struct sample run_pipeline(const struct stream *s, uint64_t spans, const char *path,
				  off_t *trace_bytes)
{
	struct lp_pipeline_opts po = { .summary_only = !path };
	struct lp_pipeline *pl;
	struct lp_trace trace;
	struct lp_pftrace *pf = NULL;
	struct lp_report rep = { 0 };
	const struct lp_nest_totals *t;
	struct sample sm;
	double w0, c0, t0;
	int err;

	/*
	 * A new file, as the baseline's: replacing the last round's trace would
	 * time the freeing of its blocks (70 ms for 356 MB here) in the rename.
	 */
	if (path)
		unlink(path);
	w0 = mono();
	c0 = cpu();
	t0 = thread_cpu();
	pl = lp_pipeline_new(&po, NULL);
	if (!pl)
		die("setting up", ENOMEM);
	if (path && perfetto) {
		err = lp_pftrace_open(&pf, path, lp_pipeline_strtab(pl), 1000000000);
		if (err)
			die(path, err);
		lp_pipeline_set_pftrace(pl, pf);
	} else if (path) {
		err = lp_trace_open(&trace, path, lp_pipeline_strtab(pl), 1000000000);
		if (err)
			die(path, err);
		lp_pipeline_set_trace(pl, &trace);
	}
	for (size_t i = 0; i < s->n; i++) {
		err = lp_pipeline_record(pl, s->p + s->offs[i], s->offs[i + 1] - s->offs[i]);
		if (err)
			die("decoding", err);
	}
	lp_pipeline_finish(pl, UINT64_MAX - 1);
	err = lp_pipeline_report(pl, &rep);
	if (err || lp_pipeline_error(pl))
		die("the pipeline", err ? err : lp_pipeline_error(pl));
	t = rep.totals;
	if (t->spans != spans || t->unterminated || t->uncertain || rep.unknown_literal) {
		fprintf(stderr, "pipeline: %llu spans, not %llu (or some flagged)\n",
			(unsigned long long)t->spans, (unsigned long long)spans);
		exit(1);
	}
	if (path) {
		err = perfetto ? lp_pftrace_close(pf, "{\"command\":\"bench/pipeline\"}", &pf_stats)
			       : lp_trace_close(&trace, "{\"command\":\"bench/pipeline\"}");
		if (err)
			die(path, err);
	}
	sm.wall = mono() - w0;
	sm.cpu = cpu() - c0;
	sm.thread_cpu = thread_cpu() - t0;
	if (path) {
		struct stat st;

		if (stat(path, &st))
			die(path, errno);
		*trace_bytes = st.st_size;
	}
	lp_pipeline_free(pl);
	return sm;
}

/* bytes written with write(2) in 1 MiB chunks, then fsync and close: the floor of any writer. */
static struct sample run_baseline(const char *path, off_t bytes)
{
	static char chunk[1 << 20];
	struct sample sm;
	double w0, c0;
	int fd;

	memset(chunk, 'x', sizeof(chunk));
	w0 = mono();
	c0 = cpu();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, errno);
	for (off_t left = bytes; left > 0;) {
		size_t n = left < (off_t)sizeof(chunk) ? (size_t)left : sizeof(chunk);
		ssize_t k = write(fd, chunk, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die(path, k < 0 ? errno : EIO);
		left -= k;
	}
	if (fsync(fd) || close(fd))
		die(path, errno);
	sm.wall = mono() - w0;
	sm.cpu = cpu() - c0;
	unlink(path);
	return sm;
}

static int cmp_sample(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->wall, y = ((const struct sample *)b)->wall;

	return x < y ? -1 : x > y;
}

static struct sample median(struct sample *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_sample);
	return v[n / 2];
}

/*
 * Functions of their own, neither inlined nor ending in a jump to
 * run_pipeline (the barrier after the call): callgrind counts each one's
 * instructions apart (--count).
 */
__attribute__((noinline, noipa)) static void count_summary(const struct stream *s,
							   uint64_t spans)
{
	run_pipeline(s, spans, NULL, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noipa)) static void count_trace(const struct stream *s, uint64_t spans,
							 const char *path)
{
	off_t bytes;

	run_pipeline(s, spans, path, &bytes);
	__asm__ volatile("" ::: "memory");
}

static int count(int argc, char **argv)
{
	uint64_t spans = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	const char *tmp = argc > 3 ? argv[3] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char trace_path[4200];
	struct stream s = { 0 };

	if (spans == 0) {
		fprintf(stderr, "usage: pipeline --count [SPANS > 0] [DIR]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/lp-pipeline.XXXXXX", tmp);
	if (!mkdtemp(dir))
		die(dir, errno);
	snprintf(trace_path, sizeof(trace_path), "%s/trace.json", dir);
	build_stream(&s, spans);
	count_summary(&s, spans);
	count_trace(&s, spans, trace_path);
	remove_dir();
	free(s.p);
	free(s.offs);
	printf("pipeline --count: %llu spans\n", (unsigned long long)spans);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t spans = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
	const char *tmp = argc > 3 ? argv[3] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct sample full[MAX_ROUNDS], summary[MAX_ROUNDS], base[MAX_ROUNDS], f, su, b;
	struct stream s = { 0 };
	char trace_path[4200], base_path[4200];
	off_t bytes = 0;
	double mb;

	perfetto = getenv("LP_PIPELINE_FORMAT") && !strcmp(getenv("LP_PIPELINE_FORMAT"), "perfetto");
	if (argc > 1 && !strcmp(argv[1], "--count"))
		return count(argc, argv);
	if (spans == 0 || rounds == 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: pipeline [SPANS > 0] [ROUNDS 1..%d] [DIR]\n", MAX_ROUNDS);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/lp-pipeline.XXXXXX", tmp);
	if (!mkdtemp(dir))
		die(dir, errno);
	snprintf(trace_path, sizeof(trace_path), "%s/trace.%s", dir, perfetto ? "pftrace" : "json");
	snprintf(base_path, sizeof(base_path), "%s/baseline", dir);
	build_stream(&s, spans);
	fprintf(stderr, "pipeline: stream of %zu records, %.1f MB, %u threads, %u names\n", s.n,
		(double)s.len / 1e6, THREADS, NAMES);
	/* A first trace gives the baseline its byte count. */
	run_pipeline(&s, spans, trace_path, &bytes);
	for (unsigned i = 0; i < rounds; i++) {
		base[i] = run_baseline(base_path, bytes);
		summary[i] = run_pipeline(&s, spans, NULL, NULL);
		full[i] = run_pipeline(&s, spans, trace_path, &bytes);
	}
	if (getenv("LP_PIPELINE_KEEP"))
		fprintf(stderr, "pipeline: trace kept: %s\n", trace_path); /* and its directory */
	else
		remove_dir();
	f = median(full, rounds);
	su = median(summary, rounds);
	b = median(base, rounds);
	mb = (double)bytes / 1e6;
	printf("pipeline: %llu spans, %.2f M spans/s, trace %.1f MB (%s, %.1f bytes/span), %.1f MB/s, "
	       "%.3f s, cpu %.3f s, its thread's cpu %.3f s\n",
	       (unsigned long long)spans, (double)spans / f.wall / 1e6, mb,
	       perfetto ? "perfetto" : "json", (double)bytes / (double)spans, mb / f.wall, f.wall,
	       f.cpu, f.thread_cpu);
	if (perfetto)
		printf("perfetto: %llu packets, %.1f MB before compression (%.1f bytes/span), %llu with "
		       "an absolute time\n", (unsigned long long)pf_stats.packets,
		       (double)pf_stats.raw_bytes / 1e6, (double)pf_stats.raw_bytes / (double)spans,
		       (unsigned long long)pf_stats.absolute);
	printf("summary only: %llu spans, %.2f M spans/s, %.3f s, cpu %.3f s, its thread's cpu %.3f s\n",
	       (unsigned long long)spans, (double)spans / su.wall / 1e6, su.wall, su.cpu,
	       su.thread_cpu);
	printf("baseline write: %.1f MB, %.1f MB/s, %.3f s, cpu %.3f s\n", mb, mb / b.wall, b.wall,
	       b.cpu);
	/* The trace's own time: what the pipeline takes beyond summary only. */
	printf("ratios: pipeline/baseline time %.2f, trace writing (pipeline - summary only)/baseline "
	       "%.2f, trace share of pipeline %.0f%%\n",
	       f.wall / b.wall, (f.wall - su.wall) / b.wall, 100.0 * (f.wall - su.wall) / f.wall);
	/*
	 * The consumer's own thread: what drains the ring buffer. The writer's
	 * thread and the disk take the trace's bytes beside it (user/core/bgwrite.c),
	 * so the wall rate above also follows the disk's (the baseline's MB/s).
	 */
	printf("consumer's thread: with the trace %.2f M spans/s, summary only %.2f M spans/s "
	       "(spans per second of its CPU)\n",
	       (double)spans / f.thread_cpu / 1e6, (double)spans / su.thread_cpu / 1e6);
	free(s.p);
	free(s.offs);
	return 0;
}
