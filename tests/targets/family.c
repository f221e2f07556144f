// SPDX-License-Identifier: MIT
/*
 * family [-w] LOG SCENARIO: a process that forks, execs, dlopen()s, spawns and
 * exits the way real programs do, for tests/integration/test_follow.c. Every
 * marker of it, its children, famexec and libfam{a,b}.so is logged to LOG
 * (famlog.h). famexec, famlinked and the libraries are looked up next to this
 * executable. With -w it prints "ready pid=N" and waits for a line on stdin
 * before its first marker (for `record -p` and processes found running).
 *
 * Names a child uses are never used by its parent, and no process reads a
 * literal before its marker did. Scenarios:
 *   fork-before   3 children forked before the parent's first marker
 *   fork-after    the parent's spans, then 3 children
 *   fork-in-span  2 children forked inside a parent span (they never leave it)
 *   exec          a child execs famexec
 *   exec-self     the process itself execs famexec
 *   vfork         vfork() + exec of famexec
 *   spawn         posix_spawn() of famexec
 *   dlopen-fork   dlopen libfama.so, use it, fork a child that uses it too
 *   fork-dlopen   fork; child and parent each dlopen libfama.so and use it
 *   child-dlopen  only a child dlopens libfama.so
 *   dlclose       libfama.so, dlclose, libfamb.so, dlclose, libfama.so again
 *   dlopen-burst  children forked one after another (at most 64) until one has used its
 *                 library, each dlopen()s libfama.so or libfamb.so (in turn) and uses it:
 *                 while the first are paused for them, others map them before, while and
 *                 after their probes are attached
 *   thread-child  a child whose second thread has the spans
 *   exec-thread   a second thread has spans, then execs famexec (it becomes the leader)
 *   short         5 processes of famexec one after the other, a few ms each
 *   linked        exec famlinked: no markers of its own, linked with libfama.so
 *   dlopen-wait   dlopen libfama.so, wait (at most 10 s) until a profiler attached to
 *                 it, then use it (a process that is not paused for the library)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>

#include "leanprofiler.h"
#include "famlog.h"

extern char **environ;

static char dir[PATH_MAX]; /* where this executable lives */
static const char *log_path;

static char *sibling(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void reap(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		abort();
}

/*
 * Texts in .rodata passed through runtime pointers (copied at every event,
 * not sent once): one of them runs across a page boundary, so reading it in
 * a child that never touched either page needs both faulted in.
 */
static const struct {
	char pad[4096 - 6];
	char name[16];
} cross __attribute__((aligned(4096))) = { { 0 }, "child.cross" };
static const char *const kinds[] = { "kind=alpha", "kind=beta" };

/*
 * A child's work: k spans "child.work [who=child]" around "child.leaf [i=N]"
 * and "child.cross [kind=...]".
 */
static void child_work(int k)
{
	char meta[32];

	for (int i = 0; i < k; i++) {
		FAM_SPAN(fam_log_fd, "child.work", "who=child", {
			snprintf(meta, sizeof(meta), "i=%d", i);
			FAM_SPAN(fam_log_fd, "child.leaf", meta, {});
			FAM_SPAN(fam_log_fd, cross.name, kinds[i & 1], {});
		});
	}
}

static void parent_work(int k)
{
	for (int i = 0; i < k; i++)
		FAM_SPAN(fam_log_fd, "parent.work", "who=parent", {});
}

static pid_t fork_child(void (*fn)(int), int k)
{
	pid_t pid = fork();

	if (pid == 0) {
		fn(k);
		_exit(0);
	}
	return pid;
}

static void exec_famexec(int k)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", k);
	execl(sibling("famexec"), "famexec", log_path, num, (char *)NULL);
	_exit(127);
}

/* A second thread's spans, then its exec: the program goes on as famexec on this thread. */
static void *exec_from_thread(void *arg)
{
	parent_work(2);
	exec_famexec(3);
	return NULL;
}

typedef void lib_work_fn(int fd, int k);

static void *lib_open(const char *name, lib_work_fn **fn)
{
	void *h = dlopen(sibling(name), RTLD_NOW);

	if (!h || !(*fn = (lib_work_fn *)dlsym(h, "fam_lib_work"))) {
		fprintf(stderr, "family: %s\n", dlerror());
		exit(4);
	}
	return h;
}

static void lib_use(int k)
{
	lib_work_fn *fn;

	lib_open("libfama.so", &fn);
	fn(fam_log_fd, k);
}

static void *thread_main(void *arg)
{
	child_work(3);
	return arg;
}

static void thread_child(int k)
{
	pthread_t th;

	(void)k;
	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
		abort();
}

static int run(const char *scenario)
{
	pid_t kids[5];

	if (!strcmp(scenario, "fork-before")) {
		for (int i = 0; i < 3; i++)
			kids[i] = fork_child(child_work, 4);
		for (int i = 0; i < 3; i++)
			reap(kids[i]);
		parent_work(2);
	} else if (!strcmp(scenario, "fork-after")) {
		parent_work(2);
		for (int i = 0; i < 3; i++)
			kids[i] = fork_child(child_work, 4);
		for (int i = 0; i < 3; i++)
			reap(kids[i]);
	} else if (!strcmp(scenario, "fork-in-span")) {
		FAM_SPAN(fam_log_fd, "parent.outer", "who=parent", {
			kids[0] = fork_child(child_work, 3);
			kids[1] = fork_child(child_work, 3);
			reap(kids[0]);
			reap(kids[1]);
		});
	} else if (!strcmp(scenario, "exec")) {
		parent_work(1);
		kids[0] = fork_child(exec_famexec, 3);
		reap(kids[0]);
	} else if (!strcmp(scenario, "exec-self")) {
		exec_famexec(3);
	} else if (!strcmp(scenario, "vfork")) {
		char *argv[] = { "famexec", (char *)log_path, "3", NULL };
		pid_t pid = vfork();

		if (pid == 0) {
			execv(sibling("famexec"), argv);
			_exit(127);
		}
		reap(pid);
	} else if (!strcmp(scenario, "spawn")) {
		char *argv[] = { "famexec", (char *)log_path, "3", NULL };
		pid_t pid;

		if (posix_spawn(&pid, sibling("famexec"), NULL, NULL, argv, environ))
			abort();
		reap(pid);
	} else if (!strcmp(scenario, "dlopen-fork")) {
		lib_use(2);
		kids[0] = fork_child(lib_use, 2); /* already loaded: the same handle */
		reap(kids[0]);
	} else if (!strcmp(scenario, "fork-dlopen")) {
		kids[0] = fork_child(lib_use, 2);
		lib_use(2);
		reap(kids[0]);
	} else if (!strcmp(scenario, "child-dlopen")) {
		parent_work(1);
		kids[0] = fork_child(lib_use, 3);
		reap(kids[0]);
	} else if (!strcmp(scenario, "dlclose")) {
		static const char *const libs[] = { "libfama.so", "libfamb.so", "libfama.so" };

		for (int i = 0; i < 3; i++) {
			lib_work_fn *fn;
			void *h = lib_open(libs[i], &fn);

			fn(fam_log_fd, 2);
			if (dlclose(h))
				abort();
		}
	} else if (!strcmp(scenario, "dlopen-burst")) {
		pid_t burst[64];
		int done[2], n = 0;
		char c;

		if (pipe2(done, O_CLOEXEC | O_NONBLOCK))
			abort();
		/* Forks go on all the time the first child may be held: a real condition, bounded. */
		while (n < 64 && read(done[0], &c, 1) != 1) {
			burst[n] = fork();
			if (burst[n] == 0) {
				lib_work_fn *fn;

				lib_open(n & 1 ? "libfamb.so" : "libfama.so", &fn);
				fn(fam_log_fd, 1);
				if (write(done[1], "d", 1) != 1)
					_exit(1);
				_exit(0);
			}
			if (burst[n++] < 0)
				abort();
		}
		for (int i = 0; i < n; i++)
			reap(burst[i]);
		close(done[0]);
		close(done[1]);
	} else if (!strcmp(scenario, "dlopen-wait")) {
		int (*active)(void);
		lib_work_fn *fn;
		void *h = lib_open("libfama.so", &fn);

		active = (int (*)(void))dlsym(h, "fam_lib_active");
		for (int i = 0; active && !active() && i < 10000; i++)
			usleep(1000); /* polls the condition, at most 10 s */
		if (!active || !active())
			return 5;
		fn(fam_log_fd, 2);
	} else if (!strcmp(scenario, "thread-child")) {
		kids[0] = fork_child(thread_child, 0);
		reap(kids[0]);
	} else if (!strcmp(scenario, "exec-thread")) {
		pthread_t t;

		parent_work(1);
		if (pthread_create(&t, NULL, exec_from_thread, NULL))
			abort();
		pthread_join(t, NULL); /* the exec ends this thread first */
		abort();
	} else if (!strcmp(scenario, "short")) {
		for (int i = 0; i < 5; i++)
			reap(fork_child(exec_famexec, 1));
	} else if (!strcmp(scenario, "linked")) {
		char *argv[] = { "famlinked", (char *)log_path, "3", NULL };

		execv(sibling("famlinked"), argv);
		return 127;
	} else {
		fprintf(stderr, "family: unknown scenario %s\n", scenario);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && strcmp(argv[1], "-w") == 0;
	char line[64];
	ssize_t n;

	if (argc != 3 + wait) {
		fprintf(stderr, "usage: family [-w] LOG SCENARIO\n");
		return 2;
	}
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return 2;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	log_path = argv[1 + wait];
	fam_log_open(log_path);
	if (wait) {
		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	return run(argv[2 + wait]);
}
