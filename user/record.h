/* SPDX-License-Identifier: MIT */
/* `leanprofiler record`: launch a command, record its spans, write and print the results. */
#ifndef LP_RECORD_H
#define LP_RECORD_H

#include "common.h"

struct lp_record_opts {
	const char *out_dir;
	size_t buffer_bytes;
	const char *counter_name;
	char **argv; /* the command */
};

enum lp_record_stage {
	LP_STAGE_SETUP = 0, /* before the command ran: options, output, BPF */
	LP_STAGE_EXEC,      /* the command could not be executed (err says why) */
	LP_STAGE_RUN,       /* the command ran; exit_code is its exit code */
};

struct lp_record_result {
	enum lp_record_stage stage;
	int exit_code; /* the command's (128 + signal when killed) */
};

/* 0 when everything was recorded and written, else -errno (the table may still be printed). */
int lp_record(const struct lp_record_opts *o, struct lp_record_result *res);

#endif
