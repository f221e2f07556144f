// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int lp_launch(struct lp_child *c, char *const argv[], const sigset_t *sigmask,
	      const struct lp_creds *creds)
{
	int pipefd[2], child_errno = 0, status, err;
	ssize_t n;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->pidfd = -1;
	/* The child reports a failed exec through this pipe; a successful exec closes it. */
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		close(pipefd[0]);
		sigprocmask(SIG_SETMASK, sigmask, NULL);
		child_errno = -lp_creds_become(creds);
		/* Traced: the kernel stops us with SIGTRAP right after a successful exec. */
		if (!child_errno && ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0) {
			execvp(argv[0], argv);
			child_errno = errno;
		} else if (!child_errno) {
			child_errno = errno;
		}
		if (write(pipefd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	c->pid = pid;
	if (n == sizeof(child_errno)) {
		waitpid(pid, &status, 0);
		c->reaped = true;
		return -child_errno;
	}
	/* Exec succeeded: wait for the post-exec stop. */
	for (;;) {
		if (waitpid(pid, &status, 0) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			c->reaped = true;
			c->status = status;
			return -ECHILD;
		}
		/* Another stop (a signal arrived first): let it through and wait on. */
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status));
	}
	c->pidfd = pidfd_open_(pid);
	if (c->pidfd < 0) {
		err = -errno;
		lp_launch_kill(c);
		return err;
	}
	return 0;
}

static int entry_point(pid_t pid, uint64_t *entry)
{
	char path[64];
	uint64_t av[2];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL) {
		if (av[0] == AT_ENTRY) {
			*entry = av[1];
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int lp_launch_run_to_entry(struct lp_child *c)
{
	struct user_regs_struct regs;
	uint64_t entry = 0;
	long orig;
	int status, err;

	err = entry_point(c->pid, &entry);
	if (err)
		return err;
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, c->pid, (void *)entry, NULL);
	if (errno)
		return -errno;
	/* A breakpoint on the entry point's first byte. */
	if (ptrace(PTRACE_POKETEXT, c->pid, (void *)entry, (void *)((orig & ~0xffL) | 0xcc)))
		return -errno;
	for (;;) {
		if (ptrace(PTRACE_CONT, c->pid, NULL, NULL))
			return -errno;
		if (waitpid(c->pid, &status, 0) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			c->reaped = true;
			c->status = status;
			return -ECHILD;
		}
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP)
			break;
		/* A signal for the program: deliver it and go on. */
		if (ptrace(PTRACE_CONT, c->pid, NULL, (void *)(long)WSTOPSIG(status)))
			return -errno;
		if (waitpid(c->pid, &status, 0) < 0)
			return -errno;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP)
			break;
	}
	/* Put the byte back and step back onto it. */
	if (ptrace(PTRACE_POKETEXT, c->pid, (void *)entry, (void *)orig) ||
	    ptrace(PTRACE_GETREGS, c->pid, NULL, &regs))
		return -errno;
	if (regs.rip != entry + 1)
		return -EPROTO;
	regs.rip = entry;
	if (ptrace(PTRACE_SETREGS, c->pid, NULL, &regs))
		return -errno;
	return 0;
}

int lp_launch_resume(struct lp_child *c)
{
	if (ptrace(PTRACE_DETACH, c->pid, NULL, NULL))
		return -errno;
	return 0;
}

int lp_launch_reap(struct lp_child *c, bool block)
{
	pid_t r;

	if (c->reaped)
		return 1;
	do
		r = wait4(c->pid, &c->status, block ? 0 : WNOHANG, &c->ru);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	c->reaped = true;
	if (c->pidfd >= 0) {
		close(c->pidfd);
		c->pidfd = -1;
	}
	return 1;
}

int lp_launch_exit_code(const struct lp_child *c)
{
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return 125;
}

void lp_launch_kill(struct lp_child *c)
{
	if (c->pid > 0 && !c->reaped) {
		kill(c->pid, SIGKILL);
		lp_launch_reap(c, true);
	}
}
