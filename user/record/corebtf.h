/* SPDX-License-Identifier: MIT */
/*
 * The BTF the BPF programs' CO-RE relocations are made against: the kernel
 * types they use, cut out of the build machine's kernel BTF at `make`
 * (scripts/embed-btf.sh) and carried in the binary, when the running kernel
 * is that one. libbpf 1.1 still reads the kernel's whole BTF for the BTF
 * tracepoints and the kfunc, but relocating against 1.6 KB instead of
 * searching its ~125k types saves ~10 ms per recording here.
 */
#ifndef LP_COREBTF_H
#define LP_COREBTF_H

#include <stddef.h>

/* Set to a file: CO-RE against that BTF (made for this kernel); 0: the kernel's own. */
#define LP_CORE_BTF_ENV "LEANPROFILER_CORE_BTF"

/*
 * The BTF to relocate against: its path into path (for libbpf's
 * btf_custom_path), the built-in types through a descriptor left in *fd
 * (close it after the load; -1: none), or LEANPROFILER_CORE_BTF's file. 0,
 * or -errno with why said into why (the kernel's own BTF is used then).
 */
int lp_core_btf(char *path, size_t size, int *fd, char *why, size_t whysz);

#endif
