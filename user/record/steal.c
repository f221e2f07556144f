// SPDX-License-Identifier: MIT
/*
 * The hypervisor's steal clock for --off-cpu. On a KVM guest each CPU has a
 * struct kvm_steal_time (per-CPU variable steal_time) the host writes before
 * it runs the vCPU again: .steal is the ns the vCPU was runnable but not
 * running. The kernel half reads it to tell a thread's CPU time from the
 * time the hypervisor took while the thread was current: the time the
 * thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID) leaves out.
 *
 * Neither steal_time nor the per-CPU runqueues are in this kernel's kallsyms,
 * so no ksym names them; but both are per-CPU variables of one section, whose
 * offsets the kernel's BTF gives (DATASEC .data..percpu): a CPU's steal_time
 * is at its struct rq plus the difference, whatever the CPU's per-CPU base.
 */
#include "steal.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <string.h>

#include "common.h"

/* The offset of the per-CPU variable name (of struct type) in .data..percpu; -1: none. */
static int64_t percpu_offset(const struct btf *btf, const char *name, const char *type)
{
	int var = btf__find_by_name_kind(btf, name, BTF_KIND_VAR);
	int sec = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *t, *vt;
	const struct btf_var_secinfo *vi;

	if (var < 0 || sec < 0)
		return -1;
	vt = btf__type_by_id(btf, btf__type_by_id(btf, (__u32)var)->type);
	if (!vt || !btf_is_struct(vt) || strcmp(btf__name_by_offset(btf, vt->name_off), type))
		return -1;
	t = btf__type_by_id(btf, (__u32)sec);
	vi = btf_var_secinfos(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, vi++)
		if (vi->type == (__u32)var)
			return vi->offset;
	return -1;
}

/* The byte offset of a u64 member name of struct type; -1: none. */
static int64_t u64_member(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
	const struct btf_member *m;

	if (!t)
		return -1;
	m = btf_members(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
		const struct btf_type *mt = btf__type_by_id(btf, m->type);

		if (strcmp(btf__name_by_offset(btf, m->name_off), name))
			continue;
		while (mt && (btf_is_typedef(mt) || btf_is_mod(mt)))
			mt = btf__type_by_id(btf, mt->type);
		if (!mt || !btf_is_int(mt) || mt->size != 8 || btf_member_bitfield_size(t, i) ||
		    btf_member_bit_offset(t, i) % 8)
			return -1;
		return btf_member_bit_offset(t, i) / 8;
	}
	return -1;
}

int64_t lp_steal_from_rq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int64_t rq, steal, member, off = 0;

	if (!btf) {
		lp_info("no steal clock: cannot read the kernel's BTF: stolen time stays in cpu");
		return 0;
	}
	rq = percpu_offset(btf, "runqueues", "rq");
	steal = percpu_offset(btf, "steal_time", "kvm_steal_time");
	member = u64_member(btf, "kvm_steal_time", "steal");
	if (rq >= 0 && steal >= 0 && member >= 0)
		off = steal + member - rq;
	if (off)
		lp_info("steal clock: the KVM steal time of each CPU, at its run queue %+lld bytes",
			(long long)off);
	else
		lp_info("no steal clock (not a KVM guest kernel): stolen time stays in cpu");
	btf__free(btf);
	return off;
}
