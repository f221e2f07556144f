// SPDX-License-Identifier: MIT
/*
 * svc: a long-running service to attach to, for tests/integration/test_attach.c.
 * Usage: svc LOG
 * Built twice: build/tests/targets/svc, and svc-linked with libmarked.so linked in.
 *
 * Prints "pid=N sem=0xADDR libsem=0xADDR" (the addresses of its own lp__semaphore
 * and of libmarked.so's, 0 when not linked), then reads one command per line on
 * stdin and answers each with exactly one line on stdout:
 *   ping           pong
 *   workers N      starts N workers; "ok" once each is inside its first span.
 *                  A worker loops: "worker.outer [worker=I]" around 20
 *                  "worker.inner [kind=inner]" (50 us of CPU, then 300 us asleep).
 *   thread         starts one more worker: "ok tid=T"
 *   wait-outer K   "ok" once every worker has completed K more outer spans
 *   freeze         "ok" once every worker is parked inside a worker.inner span
 *   spans K        the main thread runs K "main.span [i=N]", each around "main.leaf"
 *   fork K         a child process runs K "fork.child [i=N]" around "fork.leaf", then
 *                  exits; "ok pid=P status=S" once it is reaped
 *   exec K         a child process execs build/tests/targets/second LOG K;
 *                  "ok pid=P status=S" once it is reaped
 *   dlopen K       dlopens libmarked.so, waits (at most 5 s) until it is probed, then
 *                  runs its K spans: "ok probed=0|1"
 *   lib K          the same with the linked libmarked.so (svc-linked only)
 *   dying          a thread "dying" enters "dying.outer" and "dying.inner" and exits
 *                  without leaving them; "ok tid=T gone=NS" once the thread is joined
 *                  and gone from /proc (NS: CLOCK_MONOTONIC after that)
 *   burn MS        spins MS milliseconds of CPU: "ok"
 *   touch MB       allocates and touches MB MiB (kept): "ok"
 *   sites          "sites enter=0xA exit=0xB enter_forked=0xC exit_forked=0xD": the
 *                  addresses of its own probe sites (the header's probe functions)
 *   wait-active    "active" once every known semaphore is nonzero (svc's own, and
 *                  libmarked's when loaded), "timeout" after 10 s
 *   wait-inactive  "inactive" once all are 0, "timeout" after 10 s
 *   quit           stops the workers (each leaves its spans), "bye", exits 0
 * EOF on stdin is a quit without the answer.
 *
 * Every marker is bracketed by CLOCK_MONOTONIC readings and LP_ACTIVE() readings
 * and logged to LOG (O_APPEND, one write(2) per line; forked children and
 * `second` write to the same file):
 *   N pid tid comm                          the thread's name (comm) from now on
 *   E pid tid id parent depth t_before t_after active_before active_after name<TAB>meta
 *   X pid tid id t_before t_after active_before active_after
 *   T pid tid t                             the thread exits with spans still open
 * id numbers a thread's spans, parent is the id of the enclosing span or -1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leanprofiler.h"
#include "target.h"

#define MAX_WORKERS 32
#define MAX_DEPTH 16
#define WAIT_MS 10000

/* --- the span log ---------------------------------------------------------------- */

static int logfd = -1;
static const char *log_path;

/* One thread's open spans. */
struct ctx {
	pid_t pid, tid;
	int next_id, depth;
	int stack[MAX_DEPTH];
};

static void ctx_init(struct ctx *c, const char *comm)
{
	memset(c, 0, sizeof(*c));
	c->pid = getpid();
	c->tid = gettid();
	if (comm)
		prctl(PR_SET_NAME, comm);
	{
		char name[32] = "";

		prctl(PR_GET_NAME, name);
		log_to(logfd, "N %d %d %s\n", c->pid, c->tid, name);
	}
}

static void log_mark(void *arg, int is_exit, const char *name, const char *meta, uint64_t t0,
		     uint64_t t1, int a0, int a1)
{
	struct ctx *c = arg;

	if (!is_exit) {
		int id = c->next_id++;

		if (c->depth == MAX_DEPTH)
			abort();
		log_to(logfd, "E %d %d %d %d %d %llu %llu %d %d %s\t%s\n", c->pid, c->tid, id,
		       c->depth ? c->stack[c->depth - 1] : -1, c->depth, (unsigned long long)t0,
		       (unsigned long long)t1, a0, a1, name, meta ? meta : "");
		c->stack[c->depth++] = id;
	} else {
		if (c->depth == 0)
			abort();
		log_to(logfd, "X %d %d %d %llu %llu %d %d\n", c->pid, c->tid, c->stack[--c->depth],
		       (unsigned long long)t0, (unsigned long long)t1, a0, a1);
	}
}

/* A marker between two clock readings and two LP_ACTIVE() readings, then logged. */
#define MARK(c, is_exit, name, meta, marker) TARGET_MARK(log_mark, c, is_exit, name, meta, marker)
#define ENTER(c, name, meta) MARK(c, 0, name, meta, LP_SPAN_ENTER(name, meta))
#define EXIT(c, name) MARK(c, 1, name, NULL, LP_SPAN_EXIT(name))

static void nap_us(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000L };

	nanosleep(&ts, NULL);
}

/* --- workers ------------------------------------------------------------------- */

struct worker {
	pthread_t th;
	int index;
	pid_t tid;
	int started, parked;
	long outers; /* completed outer spans */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond; /* any change of the fields above, or of `frozen` */
static struct worker workers[MAX_WORKERS];
static int nworkers;
static atomic_int stopping, frozen;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctx c;
	char comm[16], meta[32];

	snprintf(comm, sizeof(comm), "worker-%d", w->index);
	ctx_init(&c, comm);
	snprintf(meta, sizeof(meta), "worker=%d", w->index);
	while (!atomic_load(&stopping)) {
		ENTER(&c, "worker.outer", meta);
		pthread_mutex_lock(&mu);
		if (!w->started) {
			w->tid = c.tid;
			w->started = 1;
			pthread_cond_broadcast(&cond);
		}
		pthread_mutex_unlock(&mu);
		for (int i = 0; i < 20 && !atomic_load(&stopping); i++) {
			ENTER(&c, "worker.inner", "kind=inner");
			spin_us(50);
			if (atomic_load(&frozen)) {
				pthread_mutex_lock(&mu);
				w->parked = 1;
				pthread_cond_broadcast(&cond);
				while (atomic_load(&frozen))
					pthread_cond_wait(&cond, &mu);
				w->parked = 0;
				pthread_mutex_unlock(&mu);
			}
			nap_us(300);
			EXIT(&c, "worker.inner");
		}
		EXIT(&c, "worker.outer");
		pthread_mutex_lock(&mu);
		w->outers++;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

/* Waits on `cond` until done(arg) holds; mu held. 0 on success, -1 after WAIT_MS. */
static int wait_until(int (*done)(void *), void *arg)
{
	struct timespec dl;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += WAIT_MS / 1000;
	while (!done(arg))
		if (pthread_cond_timedwait(&cond, &mu, &dl) == ETIMEDOUT)
			return done(arg) ? 0 : -1;
	return 0;
}

static int all_started(void *arg)
{
	(void)arg;
	for (int i = 0; i < nworkers; i++)
		if (!workers[i].started)
			return 0;
	return 1;
}

static int all_parked(void *arg)
{
	(void)arg;
	for (int i = 0; i < nworkers; i++)
		if (!workers[i].parked)
			return 0;
	return 1;
}

static int all_progressed(void *arg)
{
	const long *goal = arg;

	for (int i = 0; i < nworkers; i++)
		if (workers[i].outers < goal[i])
			return 0;
	return 1;
}

static int start_workers(int n)
{
	int err = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < n && nworkers < MAX_WORKERS; i++) {
		struct worker *w = &workers[nworkers];

		w->index = nworkers;
		if (pthread_create(&w->th, NULL, worker_main, w))
			break;
		nworkers++;
	}
	err = wait_until(all_started, NULL);
	pthread_mutex_unlock(&mu);
	return err;
}

/* --- libmarked.so, linked in or dlopen'ed ----------------------------------------- */

typedef void marked_log_fn(void *ctx, int is_exit, const char *name, const char *meta,
			   uint64_t t_before, uint64_t t_after, int active_before, int active_after);

static struct {
	int (*active)(void);
	int (*wait_probed)(int timeout_ms);
	void (*spans)(int k, marked_log_fn *log, void *ctx);
	const volatile unsigned short *(*semaphore)(void);
} lib;

static int lib_bind(void *handle)
{
	lib.active = (int (*)(void))dlsym(handle, "marked_active");
	lib.wait_probed = (int (*)(int))dlsym(handle, "marked_wait_probed");
	lib.spans = (void (*)(int, marked_log_fn *, void *))dlsym(handle, "marked_spans");
	lib.semaphore = (const volatile unsigned short *(*)(void))dlsym(handle, "marked_semaphore");
	return lib.active && lib.wait_probed && lib.spans && lib.semaphore ? 0 : -1;
}

/* build/tests/targets/NAME, next to this executable. */
static const char *sibling(const char *name)
{
	static char path[PATH_MAX];
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return name;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, name);
	return path;
}

/* Every known semaphore is nonzero (want 1) or zero (want 0). */
static int semaphores_are(int want)
{
	if (!!LP_ACTIVE() != want)
		return 0;
	return !lib.active || !!lib.active() == want;
}

static int wait_semaphores(int want)
{
	uint64_t end = now_ns() + WAIT_MS * 1000000ULL;

	while (!semaphores_are(want)) {
		if (now_ns() > end)
			return -1;
		nap_us(200);
	}
	return 0;
}

/* --- the dying thread ------------------------------------------------------------ */

static void *dying_main(void *arg)
{
	struct ctx c;

	ctx_init(&c, "dying");
	*(pid_t *)arg = c.tid;
	ENTER(&c, "dying.outer", "kind=dying");
	ENTER(&c, "dying.inner", "kind=dying");
	spin_us(100);
	log_to(logfd, "T %d %d %llu\n", c.pid, c.tid, (unsigned long long)now_ns());
	return NULL; /* both spans left open */
}

/* Waits until /proc/self/task/TID is gone: the kernel has finished the thread's exit. */
static int wait_task_gone(pid_t tid)
{
	char p[64];
	uint64_t end = now_ns() + WAIT_MS * 1000000ULL;

	snprintf(p, sizeof(p), "/proc/self/task/%d", (int)tid);
	while (access(p, F_OK) == 0) {
		if (now_ns() > end)
			return -1;
		nap_us(100);
	}
	return 0;
}

/* --- commands ------------------------------------------------------------------ */

static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void fork_child(int k)
{
	struct ctx c;
	char meta[32];

	ctx_init(&c, NULL);
	for (int i = 0; i < k; i++) {
		snprintf(meta, sizeof(meta), "i=%d", i);
		ENTER(&c, "fork.child", meta);
		ENTER(&c, "fork.leaf", NULL);
		spin_us(50);
		EXIT(&c, "fork.leaf");
		EXIT(&c, "fork.child");
	}
	_exit(0);
}

static void run_children(int exec_second, int k)
{
	char kbuf[16];
	pid_t pid;
	int st = -1;

	snprintf(kbuf, sizeof(kbuf), "%d", k);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		reply("error fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		if (!exec_second)
			fork_child(k);
		execl(sibling("second"), "second", log_path, kbuf, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	reply("ok pid=%d status=%d", (int)pid, st);
}

static void stop_workers(void)
{
	atomic_store(&stopping, 1);
	pthread_mutex_lock(&mu);
	atomic_store(&frozen, 0);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].th, NULL);
}

int main(int argc, char **argv)
{
	pthread_condattr_t ca;
	struct ctx main_ctx;
	char line[256];
	int linked;

	if (argc != 2) {
		fprintf(stderr, "usage: %s LOG\n", argv[0]);
		return 2;
	}
	log_path = argv[1];
	logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		perror(log_path);
		return 2;
	}
	/* `second` gets the path, not the descriptor. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &ca);
	ctx_init(&main_ctx, NULL);
	/* svc-linked: libmarked.so is already mapped (RTLD_DEFAULT is a null handle). */
	linked = dlsym(RTLD_DEFAULT, "marked_spans") != NULL;
	if (linked && lib_bind(RTLD_DEFAULT))
		return 2;
	printf("pid=%d sem=%p libsem=%p\n", (int)getpid(), (void *)&lp__semaphore,
	       linked ? (void *)lib.semaphore() : NULL);
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32] = "";
		int n = 0;

		if (sscanf(line, "%31s %d", cmd, &n) < 1)
			continue;
		if (!strcmp(cmd, "ping")) {
			reply("pong");
		} else if (!strcmp(cmd, "workers") || !strcmp(cmd, "thread")) {
			int before = nworkers;

			if (start_workers(!strcmp(cmd, "thread") ? 1 : n))
				reply("timeout");
			else if (!strcmp(cmd, "thread"))
				reply("ok tid=%d", (int)workers[before].tid);
			else
				reply("ok");
		} else if (!strcmp(cmd, "wait-outer")) {
			long goal[MAX_WORKERS];
			int err;

			pthread_mutex_lock(&mu);
			for (int i = 0; i < nworkers; i++)
				goal[i] = workers[i].outers + n;
			err = wait_until(all_progressed, goal);
			pthread_mutex_unlock(&mu);
			reply(err ? "timeout" : "ok");
		} else if (!strcmp(cmd, "freeze")) {
			int err;

			pthread_mutex_lock(&mu);
			atomic_store(&frozen, 1);
			err = wait_until(all_parked, NULL);
			pthread_mutex_unlock(&mu);
			reply(err ? "timeout" : "ok");
		} else if (!strcmp(cmd, "spans")) {
			char meta[32];

			for (int i = 0; i < n; i++) {
				snprintf(meta, sizeof(meta), "i=%d", i);
				ENTER(&main_ctx, "main.span", meta);
				ENTER(&main_ctx, "main.leaf", NULL);
				spin_us(20);
				EXIT(&main_ctx, "main.leaf");
				EXIT(&main_ctx, "main.span");
			}
			reply("ok");
		} else if (!strcmp(cmd, "fork") || !strcmp(cmd, "exec")) {
			run_children(!strcmp(cmd, "exec"), n);
		} else if (!strcmp(cmd, "dlopen") || !strcmp(cmd, "lib")) {
			int probed;

			if (!strcmp(cmd, "dlopen")) {
				void *h = dlopen(sibling("libmarked.so"), RTLD_NOW | RTLD_LOCAL);

				if (!h || lib_bind(h)) {
					reply("error dlopen: %s", dlerror());
					continue;
				}
			} else if (!linked) {
				reply("error: libmarked.so is not linked in");
				continue;
			}
			probed = lib.wait_probed(5000);
			lib.spans(n, log_mark, &main_ctx);
			reply("ok probed=%d", probed);
		} else if (!strcmp(cmd, "dying")) {
			pthread_t th;
			pid_t tid = 0;

			pthread_create(&th, NULL, dying_main, &tid);
			pthread_join(th, NULL);
			if (wait_task_gone(tid))
				reply("timeout");
			else
				reply("ok tid=%d gone=%llu", (int)tid, (unsigned long long)now_ns());
		} else if (!strcmp(cmd, "burn")) {
			spin_us((unsigned)n * 1000u);
			reply("ok");
		} else if (!strcmp(cmd, "touch")) {
			size_t bytes = (size_t)n << 20;
			char *p = malloc(bytes);

			if (p)
				memset(p, 1, bytes);
			reply(p ? "ok" : "error: out of memory");
		} else if (!strcmp(cmd, "sites")) {
			/* Where its own probe sites are: a test reads what is written there. */
			reply("sites enter=%p exit=%p enter_forked=%p exit_forked=%p",
			      (void *)lp__probe_enter, (void *)lp__probe_exit,
			      (void *)lp__probe_enter_forked, (void *)lp__probe_exit_forked);
		} else if (!strcmp(cmd, "wait-active")) {
			reply(wait_semaphores(1) ? "timeout" : "active");
		} else if (!strcmp(cmd, "wait-inactive")) {
			reply(wait_semaphores(0) ? "timeout" : "inactive");
		} else if (!strcmp(cmd, "quit")) {
			stop_workers();
			reply("bye");
			return 0;
		} else {
			reply("error: unknown command %s", cmd);
		}
	}
	stop_workers();
	return 0;
}
