// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs on the two tracepoints `record --off-cpu` uses, attached the
 * same way (tp_btf): what any BPF program there costs every context switch of
 * the host, whatever it does (make bench, row 11's floor; bench/sched_floor.c
 * loads them).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("tp_btf/sched_switch")
int floor_switch(unsigned long long *ctx)
{
	return 0;
}

SEC("tp_btf/sched_wakeup")
int floor_wakeup(unsigned long long *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
