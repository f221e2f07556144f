/* SPDX-License-Identifier: MIT */
/* What leanprofiler can tell of a JVM it attaches to. */
#ifndef LP_JVM_H
#define LP_JVM_H

#include <sys/types.h>

struct recorder;

/*
 * When a spec records HotSpot's method probes and pid is a JDK launcher
 * (java, javac, ...) whose options do not turn them on: says so, once.
 */
void lp_jvm_check_probes(struct recorder *r, pid_t pid);

#endif
