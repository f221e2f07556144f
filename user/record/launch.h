/* SPDX-License-Identifier: MIT */
/*
 * Launching the command to record. The child stops right after its exec, in
 * the new program, before any of its code has run: the probes are attached
 * then, so not even a span at the very start of main can be missed.
 */
#ifndef LP_LAUNCH_H
#define LP_LAUNCH_H

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common.h"
#include "creds.h"

struct lp_child {
	pid_t pid;
	int pidfd;       /* readable when the child exits */
	int status;      /* wait status once reaped */
	bool reaped;
	struct rusage ru; /* the child and its waited-for descendants */
};

/*
 * Starts argv[0] (searched in PATH) stopped after exec, with sigmask as its
 * signal mask, as the user creds names (when set). 0, or -ENOENT / -EACCES /
 * ... why exec (or becoming that user) failed, or -errno.
 */
int lp_launch(struct lp_child *c, char *const argv[], const sigset_t *sigmask,
	      const struct lp_creds *creds);
/*
 * Runs the stopped child to its entry point (AT_ENTRY) and stops it there: the
 * dynamic loader has mapped the linked libraries, the program has not run.
 */
int lp_launch_run_to_entry(struct lp_child *c);
/* Lets the stopped child run. */
int lp_launch_resume(struct lp_child *c);
/* Reaps the child if it has exited (block: wait for it). 1 reaped, 0 not yet, -errno. */
int lp_launch_reap(struct lp_child *c, bool block);
/* The exit code leanprofiler passes on: the status, or 128 + signal. */
int lp_launch_exit_code(const struct lp_child *c);
void lp_launch_kill(struct lp_child *c);

#endif
