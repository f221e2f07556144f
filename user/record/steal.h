/* SPDX-License-Identifier: MIT */
/*
 * record --off-cpu on a virtual machine: where the hypervisor's steal clock
 * of a CPU lies, for the kernel half to read it beside the CPU's run queue.
 */
#ifndef LP_STEAL_H
#define LP_STEAL_H

#include <stdint.h>

/*
 * The distance in bytes from a CPU's struct rq to the steal clock of its
 * vCPU (struct kvm_steal_time.steal on a KVM guest), from the running
 * kernel's BTF; 0 when this kernel has none (not a KVM guest kernel, or no
 * BTF of the per-CPU variables): the stolen time then stays in cpu.
 */
int64_t lp_steal_from_rq(void);

#endif
