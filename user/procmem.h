/* SPDX-License-Identifier: MIT */
/*
 * Reading the target's memory from user space. A BPF program cannot fault a
 * page in: a literal in a page of the target's .rodata that the target has not
 * touched yet reads as EFAULT. So, at attach, the target's file-backed
 * read-only mappings are touched from here (process_vm_readv() faults them
 * into the target's page tables), and a text the kernel still could not read
 * is read here instead.
 */
#ifndef LP_PROCMEM_H
#define LP_PROCMEM_H

#include <sys/types.h>

#include "common.h"

/* Faults in the read-only file mappings of pid. 0 or -errno. */
int lp_prefault(pid_t pid);
/* Reads a NUL-terminated string at addr into buf; its length (without NUL, at most size-1) or -errno. */
long lp_read_target_str(pid_t pid, uint64_t addr, char *buf, size_t size);

#endif
