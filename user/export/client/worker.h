/* SPDX-License-Identifier: MIT */
/*
 * One job at a time on a second thread: export hands a batch over to be sent
 * and builds the next one meanwhile, then waits for the first's result before
 * handing over the next (so batches are sent in order, and one that failed
 * stops the rest). The job owns what it touches until its result is taken;
 * the mutex makes what it wrote visible to the caller.
 */
#ifndef LP_EX_WORKER_H
#define LP_EX_WORKER_H

struct lp_ex_worker;

/* A thread that runs run(job) for each job handed over. NULL with errno set on failure. */
struct lp_ex_worker *lp_ex_worker_start(int (*run)(void *job));
/* Hands job over: the worker must be idle (nothing handed over, or its result taken). */
void lp_ex_worker_give(struct lp_ex_worker *w, void *job);
/* Waits for the job handed over and returns what run returned (0 when none is). */
int lp_ex_worker_wait(struct lp_ex_worker *w);
/* Waits for a job in flight, ends the thread, frees w (NULL: nothing). */
void lp_ex_worker_stop(struct lp_ex_worker *w);

#endif
