// SPDX-License-Identifier: MIT
/*
 * offcpu: spans whose time is known to be on a CPU, waiting for one, or asleep,
 * for tests/integration/test_offcpu.c (record --off-cpu).
 * Usage: offcpu LOG SCENARIO=COUNT...   run in the order given:
 *   sleep=N     N spans "off.sleep": nanosleep 3 ms
 *   burn=N      N spans "off.burn": 3 ms of the thread's CPU time (a spin on
 *               CLOCK_THREAD_CPUTIME_ID, so preemption only makes them longer)
 *   mixed=N     N spans "off.mixed": 1 ms of CPU, a child span "off.mixed.nap"
 *               around a 3 ms nanosleep, 1 ms of CPU
 *   contend=N   4 threads pinned to the same 2 CPUs (the first two this process may
 *               use; one if it may use only one) start together, each runs N spans
 *               "off.contend" of 10 ms of its CPU time
 *   pingpong=N  8 threads in 4 pairs, pinned as contend's, pass a byte back and forth
 *               through pipes: each of N spans "off.pong" burns 100 us of its CPU time,
 *               writes to its partner, burns 100 us more and reads its partner's byte
 *               (the first of a pair writes first): every wakeup makes a thread
 *               runnable on 2 CPUs that 8 share, while its waker still runs
 *   attach=N    the attach protocol (stdin and stdout, one line each step):
 *     - starts "open-blocked" (enters "off.open" then waits on a condition variable),
 *       "open-busy" (enters "off.open.busy" then spins) and "idle" (waits, no span);
 *       prints "ready pid=P" once all three are there, then reads one line:
 *     - "go": waits (at most 10 s) until LP_ACTIVE(), notes the time (a G line),
 *       releases the three: the open ones run a span "off.open.inner" of 1 ms of
 *       CPU, burn 2 ms and sleep 3 ms more in their span and leave it; starts "late" and "dying" ("dying" enters "off.dying",
 *       burns 1 ms and returns with the span open); then every thread but
 *       "dying" (main too) runs N rounds of one sleep, burn and mixed span;
 *     - prints "done" once all are joined, enters "off.hang" and reads a line
 *       (any, or EOF), leaves "off.hang" and exits 0.
 *   "error ..." on stdout and exit 3 when something cannot be done (pinning, a
 *   timeout); 2 on bad usage.
 *
 * The log (O_APPEND, one write(2) per line) has one line per span, written when it
 * is over:
 *   S pid tid depth name sleep_ns loop_ns gap_ns N R0 R1 R2 R3
 * sleep_ns: the nanosleep inside the span (0: none; for a parent, its children's
 * too); N: "wall cpu run_delay" of the clock_nanosleep calls inside (summed), read
 * right before and after each call (as R0..R3; run_delay -1: not known): under
 * load the thread can wait for a CPU or run inside the call, so it is asleep for
 * less than sleep_ns, but for no less than wall - cpu - run_delay; loop_ns: the CLOCK_MONOTONIC time of its CPU burning loops, gap_ns: the part
 * of it the thread was surely off its CPU (10 us or more between two readings of the
 * clock in the loop, whose iterations take 1-3 us: it waited for a CPU, or served an
 * interrupt); R0..R3: what the thread had before the enter marker, after it, before the
 * exit marker and after it, each "wall cpu nvcsw nivcsw run_delay": CLOCK_MONOTONIC
 * (leanprofiler's clock) and CLOCK_THREAD_CPUTIME_ID in ns, voluntary and
 * involuntary context switches (getrusage(RUSAGE_THREAD)), the scheduler's own
 * sum of the thread's waits for a CPU (run_delay in /proc/thread-self/schedstat, ns;
 * -1: not known). So R0..R3 hold the
 * whole span, markers included, and R1..R2 lie inside it: a marker's one-time
 * costs (a thread's first, a literal's first) are before its timestamp, in R0..R1
 * but not in the span.
 *   U pid tid depth name wall_before wall_after     a span left open (its thread
 *                                                   exits inside it): readings around
 *                                                   its enter only
 *   G pid t                                         "go" was acted on at t
 *   P pid cpu_a cpu_b                               contend's pinning (cpu_b -1: one CPU)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"
#include "target.h"

#define MS 1000000ULL
#define SLEEP_NS (3 * MS)
#define BURN_NS (3 * MS)
#define MIXED_BURN_NS (1 * MS)
#define CONTEND_THREADS 4
#define CONTEND_NS (10 * MS)
#define OPEN_BURN_NS (2 * MS)
#define WAIT_S 60 /* the longest any wait of the protocol lasts */
#define GAP_NS 10000 /* a loop's iteration takes 1-3 us: a longer one was off the CPU */

static int logfd = -1;

static void fail(const char *what)
{
	printf("error %s\n", what);
	fflush(stdout);
	exit(3);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The thread's burn loops so far: their CLOCK_MONOTONIC time, and the part of it
 * in gaps (GAP_NS or more between two readings of the clock in the loop), when
 * the thread was surely off its CPU: waiting for it, or in an interrupt.
 */
static __thread uint64_t loop_total, gap_total;

/*
 * The thread's clock_nanosleep calls so far: their CLOCK_MONOTONIC time, the CPU
 * time and the run_delay (-1 once unknown) it had in them.
 */
static __thread uint64_t nap_wall, nap_cpu;
static __thread int64_t nap_delay;

/*
 * The scheduler's own count of the thread's time waiting for a CPU (sched_info's
 * run_delay, the second figure of /proc/thread-self/schedstat), ns; -1 if unknown
 * (a kernel without CONFIG_SCHED_INFO).
 */
static int64_t run_delay_ns(void)
{
	static __thread int fd = -1;
	unsigned long long exec, delay;
	char buf[96];
	ssize_t n;

	if (fd < 0)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", &exec, &delay) == 2 ? (int64_t)delay : -1;
}

/* Runs until the thread has had ns more of CPU time, however long that takes. */
static void burn_ns(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns, start = now_ns(), prev = start;

	for (;;) {
		uint64_t t = now_ns();

		if (t - prev >= GAP_NS)
			gap_total += t - prev;
		prev = t;
		if (thread_cpu_ns() >= end)
			break;
	}
	loop_total += prev - start;
}

/*
 * Asleep for ns of CLOCK_MONOTONIC (an absolute deadline: EINTR cannot shorten it).
 * The wall clock is read last before the call and first after it, so the CPU time
 * and run_delay read around it cover at least the call; the deadline is taken from
 * that last reading, or a preemption during the others could make it past before
 * the call.
 */
static void sleep_ns(uint64_t ns)
{
	uint64_t end, w0, w1, c0, c1;
	struct timespec d;
	int64_t d0, d1;

	d0 = run_delay_ns();
	c0 = thread_cpu_ns();
	w0 = now_ns();
	end = w0 + ns;
	d.tv_sec = (time_t)(end / 1000000000ULL);
	d.tv_nsec = (long)(end % 1000000000ULL);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
		;
	w1 = now_ns();
	c1 = thread_cpu_ns();
	d1 = run_delay_ns();
	nap_wall += w1 - w0;
	nap_cpu += c1 - c0;
	nap_delay = d0 < 0 || d1 < 0 || nap_delay < 0 ? -1 : nap_delay + (d1 - d0);
}

/* --- spans with their readings ------------------------------------------------ */

struct thr {
	pid_t pid, tid;
	int depth;
};

/* What the thread had at one moment. */
struct reading {
	uint64_t wall, cpu;
	int64_t run_delay;
	long vol, invol;
};

/* Readings before the enter marker, after it, before the exit marker, after it. */
struct span {
	const char *name;
	int depth;
	uint64_t sleep;
	uint64_t loop, gap; /* loop_total and gap_total at the beginning */
	uint64_t nwall, ncpu; /* nap_wall, nap_cpu and nap_delay at the beginning */
	int64_t ndelay;
	struct reading r[4];
};

static void thr_init(struct thr *t, const char *comm)
{
	t->pid = getpid();
	t->tid = gettid();
	t->depth = 0;
	if (comm)
		prctl(PR_SET_NAME, comm);
}

/*
 * Before a marker, the clocks last (closest to it); after one, first. The
 * switches are counted by getrusage(RUSAGE_THREAD) (the kernel's nvcsw, nivcsw).
 */
static void read_before(struct reading *r)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	r->vol = ru.ru_nvcsw;
	r->invol = ru.ru_nivcsw;
	r->run_delay = run_delay_ns();
	r->wall = now_ns();
	r->cpu = thread_cpu_ns();
}

static void read_after(struct reading *r)
{
	struct rusage ru;

	r->cpu = thread_cpu_ns();
	r->wall = now_ns();
	r->run_delay = run_delay_ns();
	getrusage(RUSAGE_THREAD, &ru);
	r->vol = ru.ru_nvcsw;
	r->invol = ru.ru_nivcsw;
}

/* The enter marker between two readings (NAME: a literal, so its text travels once). */
#define SPAN_BEGIN(t, s, NAME)                                                            \
	do {                                                                              \
		(s)->name = NAME;                                                         \
		(s)->depth = (t)->depth++;                                                \
		(s)->sleep = 0;                                                           \
		(s)->loop = loop_total;                                                   \
		(s)->gap = gap_total;                                                     \
		(s)->nwall = nap_wall;                                                    \
		(s)->ncpu = nap_cpu;                                                      \
		(s)->ndelay = nap_delay;                                                  \
		read_before(&(s)->r[0]);                                                  \
		LP_SPAN_ENTER(NAME, NULL);                                                \
		read_after(&(s)->r[1]);                                                   \
	} while (0)

#define SPAN_END(t, s, NAME)                                                              \
	do {                                                                              \
		read_before(&(s)->r[2]);                                                  \
		LP_SPAN_EXIT(NAME);                                                       \
		read_after(&(s)->r[3]);                                                   \
		span_log(t, s);                                                           \
	} while (0)

static void span_log(struct thr *t, struct span *s)
{
	char buf[480];
	int64_t ndelay = s->ndelay < 0 || nap_delay < 0 ? -1 : nap_delay - s->ndelay;
	int n = snprintf(buf, sizeof(buf), "S %d %d %d %s %llu %llu %llu %llu %llu %lld", t->pid,
			 t->tid, s->depth, s->name, (unsigned long long)s->sleep,
			 (unsigned long long)(loop_total - s->loop),
			 (unsigned long long)(gap_total - s->gap),
			 (unsigned long long)(nap_wall - s->nwall),
			 (unsigned long long)(nap_cpu - s->ncpu), (long long)ndelay);

	t->depth--;
	for (int i = 0; i < 4; i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %llu %llu %ld %ld %lld",
			      (unsigned long long)s->r[i].wall, (unsigned long long)s->r[i].cpu,
			      s->r[i].vol, s->r[i].invol, (long long)s->r[i].run_delay);
	log_to(logfd, "%s\n", buf);
}

static void span_sleep(struct thr *t)
{
	struct span s;

	SPAN_BEGIN(t, &s, "off.sleep");
	sleep_ns(SLEEP_NS);
	s.sleep = SLEEP_NS;
	SPAN_END(t, &s, "off.sleep");
}

static void span_burn(struct thr *t)
{
	struct span s;

	SPAN_BEGIN(t, &s, "off.burn");
	burn_ns(BURN_NS);
	SPAN_END(t, &s, "off.burn");
}

static void span_mixed(struct thr *t)
{
	struct span s, c;

	SPAN_BEGIN(t, &s, "off.mixed");
	burn_ns(MIXED_BURN_NS);
	SPAN_BEGIN(t, &c, "off.mixed.nap");
	sleep_ns(SLEEP_NS);
	c.sleep = SLEEP_NS;
	SPAN_END(t, &c, "off.mixed.nap");
	burn_ns(MIXED_BURN_NS);
	s.sleep = SLEEP_NS;
	SPAN_END(t, &s, "off.mixed");
}

/* --- contend: 4 CPU-bound threads on 2 CPUs ------------------------------------- */

static pthread_barrier_t contend_start;
static cpu_set_t contend_cpus;
static int contend_spans;

static void *contend_main(void *arg)
{
	struct thr t;
	struct span s;
	char comm[16];

	snprintf(comm, sizeof(comm), "contend-%d", (int)(intptr_t)arg);
	thr_init(&t, comm);
	if (sched_setaffinity(0, sizeof(contend_cpus), &contend_cpus))
		fail("sched_setaffinity");
	pthread_barrier_wait(&contend_start);
	for (int i = 0; i < contend_spans; i++) {
		SPAN_BEGIN(&t, &s, "off.contend");
		burn_ns(CONTEND_NS);
		SPAN_END(&t, &s, "off.contend");
	}
	return NULL;
}

/* The first two CPUs this process may use (one if only one) into contend_cpus, logged. */
static void contend_pin(void)
{
	cpu_set_t allowed;
	int picked[2] = { -1, -1 }, k = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		fail("sched_getaffinity");
	CPU_ZERO(&contend_cpus);
	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &allowed)) {
			CPU_SET(c, &contend_cpus);
			picked[k++] = c;
		}
	if (k == 0)
		fail("no CPU allowed");
	log_to(logfd, "P %d %d %d\n", (int)getpid(), picked[0], picked[1]);
}

static void contend(int n)
{
	pthread_t th[CONTEND_THREADS];

	contend_pin();
	contend_spans = n;
	pthread_barrier_init(&contend_start, NULL, CONTEND_THREADS);
	for (int i = 0; i < CONTEND_THREADS; i++)
		if (pthread_create(&th[i], NULL, contend_main, (void *)(intptr_t)i))
			fail("pthread_create");
	for (int i = 0; i < CONTEND_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&contend_start);
}

/* --- pingpong: 8 threads in pairs waking each other through pipes ---------------- */

#define PONG_PAIRS 4
#define PONG_BURN_NS 200000

struct pong {
	int id;
	int in, out; /* its end to read, its partner's to write */
};

static pthread_barrier_t pong_start;
static int pong_spans;

static void *pong_main(void *arg)
{
	struct pong *p = arg;
	struct thr t;
	struct span s;
	char comm[16], c = 'x';

	snprintf(comm, sizeof(comm), "pong-%d", p->id);
	thr_init(&t, comm);
	if (sched_setaffinity(0, sizeof(contend_cpus), &contend_cpus))
		fail("sched_setaffinity");
	pthread_barrier_wait(&pong_start);
	/* The second of a pair waits for the first's byte before its first span. */
	if (p->id % 2 && read(p->in, &c, 1) != 1)
		fail("read");
	for (int i = 0; i < pong_spans; i++) {
		SPAN_BEGIN(&t, &s, "off.pong");
		burn_ns(PONG_BURN_NS / 2);
		if (write(p->out, &c, 1) != 1)
			fail("write");
		/* The partner is woken while this one still runs: it may preempt it. */
		burn_ns(PONG_BURN_NS / 2);
		/* The last byte of a pair's second thread is never read: nothing waits. */
		if ((i < pong_spans - 1 || !(p->id % 2)) && read(p->in, &c, 1) != 1)
			fail("read");
		SPAN_END(&t, &s, "off.pong");
	}
	return NULL;
}

static void pingpong(int n)
{
	pthread_t th[2 * PONG_PAIRS];
	struct pong p[2 * PONG_PAIRS];
	int ab[2], ba[2];

	contend_pin();
	pong_spans = n;
	pthread_barrier_init(&pong_start, NULL, 2 * PONG_PAIRS);
	for (int i = 0; i < PONG_PAIRS; i++) {
		if (pipe2(ab, O_CLOEXEC) || pipe2(ba, O_CLOEXEC))
			fail("pipe2");
		p[2 * i] = (struct pong){ .id = 2 * i, .in = ba[0], .out = ab[1] };
		p[2 * i + 1] = (struct pong){ .id = 2 * i + 1, .in = ab[0], .out = ba[1] };
	}
	for (int i = 0; i < 2 * PONG_PAIRS; i++)
		if (pthread_create(&th[i], NULL, pong_main, &p[i]))
			fail("pthread_create");
	for (int i = 0; i < 2 * PONG_PAIRS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2 * PONG_PAIRS; i++) {
		close(p[i].in);
		close(p[i].out);
	}
	pthread_barrier_destroy(&pong_start);
}

/* --- attach: threads before and after a profiler attaches ------------------------ */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond; /* on CLOCK_MONOTONIC; any change of `present` or `go` */
static int present;         /* threads that reached their place before "go" */
static atomic_int go;
static int rounds;

static void rounds_of(struct thr *t)
{
	for (int i = 0; i < rounds; i++) {
		span_sleep(t);
		span_burn(t);
		span_mixed(t);
	}
}

static struct timespec deadline(void)
{
	struct timespec d;

	clock_gettime(CLOCK_MONOTONIC, &d);
	d.tv_sec += WAIT_S;
	return d;
}

/* Counts the caller as present (at its place for the attach). */
static void arrive(void)
{
	pthread_mutex_lock(&mu);
	present++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mu);
}

/* Counts the caller as present, then waits for "go" on the condition variable (asleep). */
static void wait_go(void)
{
	struct timespec d = deadline();

	arrive();
	pthread_mutex_lock(&mu);
	while (!atomic_load(&go))
		if (pthread_cond_timedwait(&cond, &mu, &d) == ETIMEDOUT)
			fail("timeout waiting for go");
	pthread_mutex_unlock(&mu);
}

/* Counts the caller as present, then spins until "go": on a CPU, or waiting for one. */
static void spin_go(void)
{
	uint64_t end = now_ns() + WAIT_S * 1000000000ULL;

	arrive();
	while (!atomic_load(&go))
		if (now_ns() > end)
			fail("timeout waiting for go");
}

/* "open-blocked" (arg NULL: asleep in its span at the attach) or "open-busy" (spinning). */
static void *open_main(void *arg)
{
	int busy = arg != NULL;
	struct thr t;
	struct span s, c;

	thr_init(&t, busy ? "open-busy" : "open-blocked");
	if (busy)
		SPAN_BEGIN(&t, &s, "off.open.busy");
	else
		SPAN_BEGIN(&t, &s, "off.open");
	if (busy)
		spin_go();
	else
		wait_go();
	/* The thread's first event since the attach: followed from there on. */
	SPAN_BEGIN(&t, &c, "off.open.inner");
	burn_ns(MS);
	SPAN_END(&t, &c, "off.open.inner");
	burn_ns(OPEN_BURN_NS);
	sleep_ns(SLEEP_NS);
	s.sleep = SLEEP_NS;
	if (busy)
		SPAN_END(&t, &s, "off.open.busy");
	else
		SPAN_END(&t, &s, "off.open");
	rounds_of(&t);
	return NULL;
}

/* "idle" (waits for "go" asleep, no span open) or "late" (started after it): rounds. */
static void *rounds_main(void *arg)
{
	struct thr t;

	thr_init(&t, arg);
	if (!strcmp(arg, "idle"))
		wait_go();
	rounds_of(&t);
	return NULL;
}

static void *dying_main(void *arg)
{
	struct thr t;
	struct span s;

	(void)arg;
	thr_init(&t, "dying");
	SPAN_BEGIN(&t, &s, "off.dying");
	log_to(logfd, "U %d %d %d off.dying %llu %llu\n", t.pid, t.tid, s.depth,
	       (unsigned long long)s.r[0].wall, (unsigned long long)s.r[1].wall);
	burn_ns(MS);
	return NULL; /* the span stays open: it ends with the thread */
}

static int wait_active(void)
{
	uint64_t end = now_ns() + 10000 * MS;

	while (!LP_ACTIVE()) {
		if (now_ns() > end)
			return -1;
		sleep_ns(MS / 5);
	}
	return 0;
}

static void attach(int n)
{
	void *(*early[])(void *) = { open_main, open_main, rounds_main };
	void *early_arg[] = { NULL, &go, "idle" }; /* open_main: blocked, then busy */
	pthread_t th[5];
	struct timespec d = deadline();
	struct thr t;
	struct span s;
	char line[64];
	uint64_t t_go;

	rounds = n;
	thr_init(&t, NULL);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, early[i], early_arg[i]))
			fail("pthread_create");
	while (present < 3)
		if (pthread_cond_timedwait(&cond, &mu, &d) == ETIMEDOUT)
			fail("timeout waiting for the threads");
	pthread_mutex_unlock(&mu);
	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || strncmp(line, "go", 2))
		fail("expected go");
	if (wait_active())
		fail("no profiler attached within 10 s");
	t_go = now_ns();
	log_to(logfd, "G %d %llu\n", (int)getpid(), (unsigned long long)t_go);
	pthread_mutex_lock(&mu);
	atomic_store(&go, 1);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mu);
	if (pthread_create(&th[3], NULL, rounds_main, "late") ||
	    pthread_create(&th[4], NULL, dying_main, NULL))
		fail("pthread_create");
	rounds_of(&t);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	SPAN_BEGIN(&t, &s, "off.hang");
	printf("done\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	SPAN_END(&t, &s, "off.hang");
}

int main(int argc, char **argv)
{
	pthread_condattr_t ca;
	struct thr t;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LOG SCENARIO=COUNT...\n", argv[0]);
		return 2;
	}
	logfd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		perror(argv[1]);
		return 2;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &ca);
	thr_init(&t, NULL);
	for (int i = 2; i < argc; i++) {
		char what[16];
		int n;

		if (sscanf(argv[i], "%15[a-z]=%d", what, &n) != 2 || n < 0) {
			fprintf(stderr, "bad scenario %s\n", argv[i]);
			return 2;
		}
		for (int k = 0; !strcmp(what, "sleep") && k < n; k++)
			span_sleep(&t);
		for (int k = 0; !strcmp(what, "burn") && k < n; k++)
			span_burn(&t);
		for (int k = 0; !strcmp(what, "mixed") && k < n; k++)
			span_mixed(&t);
		if (!strcmp(what, "contend"))
			contend(n);
		else if (!strcmp(what, "pingpong"))
			pingpong(n);
		else if (!strcmp(what, "attach"))
			attach(n);
		else if (strcmp(what, "sleep") && strcmp(what, "burn") && strcmp(what, "mixed")) {
			fprintf(stderr, "unknown scenario %s\n", what);
			return 2;
		}
	}
	return 0;
}
