/* SPDX-License-Identifier: MIT */
/* `leanprofiler list`: the USDT probes of a binary or of a running process's files. */
#ifndef LP_LIST_H
#define LP_LIST_H

#include <stdio.h>
#include <sys/types.h>

#include "common.h"

/* Prints a line per probe of the ELF file at path. 0 or -errno (said on stderr). */
int lp_list_file(FILE *out, const char *path);
/* Prints the probes of every executable file pid maps. 0 or -errno (said on stderr). */
int lp_list_pid(FILE *out, pid_t pid);

#endif
