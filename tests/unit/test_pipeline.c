// SPDX-License-Identifier: MIT
/*
 * The recording pipeline's own part (user/core/pipeline.c), from records:
 * the process table a recording reports (forks, execs, exits, a program that
 * gains privileges), nothing counted after the stop, and the hook that makes
 * the recorder attach to files a process maps (found running, a library
 * mapped, paused or not).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/types.h>
#include <stdio.h>
#include <string.h>

#include "bpf/wire.h"
#include "pipeline.h"
#include "unit.h"

struct rescan_call {
	uint32_t pid;
	bool paused;
	uint64_t ts_ns, start_ns;
};

struct fx {
	struct lp_pipeline *pl;
	struct rescan_call calls[8];
	size_t ncalls;
};

static int on_rescan(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns)
{
	struct fx *fx = ctx;

	assert_true(fx->ncalls < ARRAY_SIZE(fx->calls));
	fx->calls[fx->ncalls++] = (struct rescan_call){ pid, paused, ts_ns, start_ns };
	return 0;
}

static int setup(void **state)
{
	static struct fx fx;
	struct lp_pipeline_opts o = { 0 };
	struct lp_pipeline_hooks h = { .rescan = on_rescan, .ctx = &fx };

	memset(&fx, 0, sizeof(fx));
	fx.pl = lp_pipeline_new(&o, &h);
	assert_non_null(fx.pl);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	lp_pipeline_free(fx->pl);
	return 0;
}

static void task(struct fx *fx, unsigned what, unsigned flags, uint32_t pid, uint32_t tid,
		 uint32_t ppid, uint64_t ts, const char *comm)
{
	struct lp_rec_task t = { .h = { .type = LP_REC_TASK, .flags = (__u16)flags, .pid = pid,
					.tid = tid },
				 .ts_ns = ts, .what = what, .ppid = ppid };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	assert_int_equal(lp_pipeline_record(fx->pl, &t, sizeof(t)), 0);
}

static const struct lp_report_process *proc(struct fx *fx, uint32_t pid)
{
	return lp_pipeline_process(fx->pl, pid);
}

static const char *comm_of(struct fx *fx, uint32_t pid)
{
	return strtab_str(lp_pipeline_strtab(fx->pl), proc(fx, pid)->comm, NULL);
}

/* A launched command forks a child that execs, exits; then the command execs a setuid program. */
static void test_processes_followed(void **state)
{
	struct fx *fx = *state;
	size_t n;

	assert_int_equal(lp_pipeline_add_process(fx->pl, 100, 1, LP_ORIGIN_LAUNCHED, "make"), 0);
	assert_int_equal(lp_pipeline_begin(fx->pl, 1000), 0);
	assert_int_equal(lp_pipeline_live(fx->pl), 1);

	task(fx, LP_TASK_FORK, 0, 101, 101, 100, 1100, "make");
	assert_non_null(proc(fx, 101));
	assert_int_equal(proc(fx, 101)->origin, LP_ORIGIN_FORKED);
	assert_int_equal(proc(fx, 101)->ppid, 100);
	assert_int_equal(lp_pipeline_live(fx->pl), 2);
	task(fx, LP_TASK_EXEC, 0, 101, 101, 0, 1200, "cc1");
	assert_string_equal(comm_of(fx, 101), "cc1");
	/* A thread's end is not its process's. */
	task(fx, LP_TASK_THREAD, 0, 101, 102, 0, 1250, "cc1");
	task(fx, LP_TASK_EXIT, 0, 101, 102, 0, 1260, "cc1");
	assert_true(proc(fx, 101)->alive);
	task(fx, LP_TASK_EXIT, LP_TASK_GROUP_DEAD, 101, 101, 0, 1300, "cc1");
	assert_false(proc(fx, 101)->alive);
	assert_int_equal(lp_pipeline_live(fx->pl), 1);

	/* It left the recording at an exec that gains privileges: named after that program. */
	task(fx, LP_TASK_EXIT, LP_TASK_GROUP_DEAD | LP_TASK_PRIVILEGED, 100, 100, 0, 1400, "sudo");
	assert_true(proc(fx, 100)->privileged);
	assert_false(proc(fx, 100)->alive);
	assert_string_equal(comm_of(fx, 100), "sudo");
	assert_int_equal(lp_pipeline_live(fx->pl), 0);
	lp_pipeline_processes(fx->pl, &n);
	assert_int_equal(n, 2);
	/* Its pidfd saying so too counts it once. */
	assert_false(lp_pipeline_process_gone(fx->pl, 100));
}

/* After the stop nothing happens: a process exiting then was alive at the end. */
static void test_nothing_after_stop(void **state)
{
	struct fx *fx = *state;
	size_t n;

	assert_int_equal(lp_pipeline_add_process(fx->pl, 200, 1, LP_ORIGIN_ATTACHED, "postgres"), 0);
	assert_int_equal(lp_pipeline_begin(fx->pl, 1000), 0);
	lp_pipeline_stop(fx->pl, 5000);
	task(fx, LP_TASK_FORK, 0, 201, 201, 200, 4999, "postgres");
	task(fx, LP_TASK_FORK, 0, 202, 202, 200, 5000, "postgres");
	task(fx, LP_TASK_EXIT, LP_TASK_GROUP_DEAD, 200, 200, 0, 5001, "postgres");
	lp_pipeline_processes(fx->pl, &n);
	assert_int_equal(n, 2); /* 200 and 201 */
	assert_null(proc(fx, 202));
	assert_true(proc(fx, 200)->alive);
	assert_int_equal(lp_pipeline_live(fx->pl), 2);
	/* The attached process's pidfd said it is gone: counted once. */
	assert_true(lp_pipeline_process_gone(fx->pl, 200));
	assert_false(lp_pipeline_process_gone(fx->pl, 200));
	assert_int_equal(lp_pipeline_live(fx->pl), 1);
}

/* Files a process maps: the recorder is asked to attach, told whether the process waits. */
static void test_rescans_asked(void **state)
{
	struct fx *fx = *state;
	struct lp_rec_libs libs = { .h = { .type = LP_REC_LIBS, .pid = 300, .tid = 300 },
				    .ts_ns = 2000 };

	/* Found running the binary: what it maps now. Found at its exec: nothing yet. */
	task(fx, LP_TASK_FOUND, 0, 300, 300, 1, 1500, "svc");
	task(fx, LP_TASK_FOUND, LP_TASK_NEW_IMAGE, 301, 301, 1, 1600, "svc");
	assert_int_equal(fx->ncalls, 1);
	assert_int_equal(fx->calls[0].pid, 300);
	assert_false(fx->calls[0].paused);
	assert_int_equal(fx->calls[0].ts_ns, 1500);
	assert_int_equal(proc(fx, 300)->origin, LP_ORIGIN_FOUND);

	assert_int_equal(lp_pipeline_record(fx->pl, &libs, sizeof(libs)), 0);
	libs.h.flags = LP_LIBS_PAUSED;
	libs.h.pid = libs.h.tid = 301;
	libs.ts_ns = 2100;
	libs.start_ns = 1550;
	assert_int_equal(lp_pipeline_record(fx->pl, &libs, sizeof(libs)), 0);
	assert_int_equal(fx->ncalls, 3);
	assert_int_equal(fx->calls[1].pid, 300);
	assert_false(fx->calls[1].paused);
	assert_int_equal(fx->calls[2].pid, 301);
	assert_true(fx->calls[2].paused);
	assert_int_equal(fx->calls[2].ts_ns, 2100);
	/* When the process began: what tells it from a later one given its PID. */
	assert_int_equal(fx->calls[2].start_ns, 1550);
}

/* A marker's event with its name inline and, for --off-cpu, the thread's snapshot. */
static void span_event(struct fx *fx, uint16_t type, uint32_t tid, uint32_t seq, uint64_t ts,
		       const char *name)
{
	struct {
		struct lp_rec_event e;
		struct lp_sched_snap snap;
		char name[16];
	} r = { 0 };

	r.e.h = (struct lp_rec_hdr){ .type = type, .pid = 400, .tid = tid, .seq = seq,
				     .flags = LP_EV_SCHED | LP_EV_NAME_INLINE | LP_EV_NO_META |
					      (LP_MARKER_ABI_VERSION << LP_EV_ABI_SHIFT) };
	r.e.ts_ns = ts;
	r.e.name = 0x1000;
	r.e.name_len = (int16_t)strlen(name);
	memcpy(r.name, name, strlen(name));
	assert_int_equal(lp_pipeline_record(fx->pl, &r, sizeof(r.e) + sizeof(r.snap) + strlen(name)),
			 0);
}

static void wait_record(struct fx *fx, uint32_t tid, uint64_t off, uint64_t wake, uint64_t on)
{
	struct lp_rec_sched r = { .h = { .type = LP_REC_SCHED, .pid = 400, .tid = tid },
				  .off_ns = off, .wake_ns = wake, .on_ns = on };

	assert_int_equal(lp_pipeline_record(fx->pl, &r, sizeof(r)), 0);
}

/*
 * --off-cpu: a wait of a thread inside a span becomes its "blocked" and "runq"
 * slices in the trace; one outside any span (a thread waiting for work)
 * does not; one out of order is malformed.
 */
static void test_waits_in_the_trace(void **state)
{
	struct fx *fx = *state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct lp_trace t;

	assert_non_null(f);
	assert_int_equal(lp_pipeline_begin(fx->pl, 1000), 0);
	lp_trace_open_stream(&t, f, lp_pipeline_strtab(fx->pl), 1000);
	lp_pipeline_set_trace(fx->pl, &t);
	wait_record(fx, 401, 1100, 1150, 1160); /* before any span */
	span_event(fx, LP_REC_ENTER, 401, 0, 2000, "io");
	wait_record(fx, 401, 2100, 5100, 5300);
	wait_record(fx, 402, 2200, 2300, 2400); /* another thread, in no span */
	wait_record(fx, 401, 5400, 5300, 5500); /* woken before it slept: malformed */
	span_event(fx, LP_REC_EXIT, 401, 1, 6000, "io");
	wait_record(fx, 401, 6100, 6200, 6300); /* after it */
	lp_pipeline_set_trace(fx->pl, NULL);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(t.off_cpu, 2);
	/* Asleep 3 us (1 ns apart from what follows), then 200 ns on a run queue. */
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"name\":\"blocked\",\"cat\":\"off-cpu\","
				     "\"pid\":400,\"tid\":401,\"ts\":1.100,\"dur\":2.999,"
				     "\"args\":{}}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"name\":\"runq\",\"cat\":\"off-cpu\","
				     "\"pid\":400,\"tid\":401,\"ts\":4.100,\"dur\":0.200,"
				     "\"args\":{}}"));
	assert_null(strstr(text, "\"tid\":402"));
	assert_null(strstr(text, "\"ts\":0.100"));
	assert_null(strstr(text, "\"ts\":5.100"));
	free(text);
}

/*
 * The kernel half's exit program can lose its CPU after taking the exit's
 * time and before sending its record: the wait's record comes first, yet the
 * wait was after the span. It is drawn in the spans open after the exit (the
 * outer one here), never in the span that exit ended.
 */
static void test_wait_after_an_exit_sent_before_it(void **state)
{
	struct fx *fx = *state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct lp_trace t;

	assert_non_null(f);
	assert_int_equal(lp_pipeline_begin(fx->pl, 1000), 0);
	lp_trace_open_stream(&t, f, lp_pipeline_strtab(fx->pl), 1000);
	lp_pipeline_set_trace(fx->pl, &t);
	span_event(fx, LP_REC_ENTER, 401, 0, 2000, "solo");
	wait_record(fx, 401, 3100, 3100, 3200); /* preempted after the exit's time */
	span_event(fx, LP_REC_EXIT, 401, 1, 3000, "solo");
	span_event(fx, LP_REC_ENTER, 401, 2, 4000, "outer");
	span_event(fx, LP_REC_ENTER, 401, 3, 4100, "inner");
	wait_record(fx, 401, 5100, 5100, 5200); /* the same, inside outer */
	span_event(fx, LP_REC_EXIT, 401, 4, 5000, "inner");
	span_event(fx, LP_REC_EXIT, 401, 5, 6000, "outer");
	lp_pipeline_set_trace(fx->pl, NULL);
	assert_int_equal(lp_trace_close(&t, "{}"), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(t.off_cpu, 1);
	assert_null(strstr(text, "\"ts\":2.100"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"name\":\"runq\",\"cat\":\"off-cpu\","
				     "\"pid\":400,\"tid\":401,\"ts\":4.100,\"dur\":0.100,"
				     "\"args\":{}}"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_processes_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_after_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rescans_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waits_in_the_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_after_an_exit_sent_before_it, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
