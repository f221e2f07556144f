// SPDX-License-Identifier: MIT
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

enum state { IDLE, GIVEN, DONE, STOPPING };

struct lp_ex_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* state changed: one waiter on each side */
	enum state state;
	int (*run)(void *job);
	void *job;
	int result;
};

static void *worker_main(void *arg)
{
	struct lp_ex_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->state != GIVEN && w->state != STOPPING)
			pthread_cond_wait(&w->changed, &w->lock);
		if (w->state == STOPPING)
			break;
		pthread_mutex_unlock(&w->lock);
		int result = w->run(w->job);
		pthread_mutex_lock(&w->lock);
		w->result = result;
		w->state = DONE;
		pthread_cond_broadcast(&w->changed);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct lp_ex_worker *lp_ex_worker_start(int (*run)(void *job))
{
	struct lp_ex_worker *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->run = run;
	w->state = IDLE;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	err = pthread_create(&w->thread, NULL, worker_main, w);
	if (err) {
		pthread_cond_destroy(&w->changed);
		pthread_mutex_destroy(&w->lock);
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void lp_ex_worker_give(struct lp_ex_worker *w, void *job)
{
	pthread_mutex_lock(&w->lock);
	w->job = job;
	w->state = GIVEN;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

int lp_ex_worker_wait(struct lp_ex_worker *w)
{
	int result = 0;

	pthread_mutex_lock(&w->lock);
	while (w->state == GIVEN)
		pthread_cond_wait(&w->changed, &w->lock);
	if (w->state == DONE) {
		result = w->result;
		w->state = IDLE;
		w->job = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return result;
}

void lp_ex_worker_stop(struct lp_ex_worker *w)
{
	if (!w)
		return;
	lp_ex_worker_wait(w);
	pthread_mutex_lock(&w->lock);
	w->state = STOPPING;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
