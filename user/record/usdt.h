/* SPDX-License-Identifier: MIT */
/* USDT probe notes (.note.stapsdt) of an ELF file, with file offsets for uprobes. */
#ifndef LP_USDT_H
#define LP_USDT_H

#include "common.h"

#define LP_USDT_FIELD_MAX 128 /* provider, name, arguments: longer ones are cut */
/*
 * A file's notes are the target's bytes: what reading them may cost is
 * bounded. A .note.stapsdt section larger than this, or with more notes, is
 * not read (-EFBIG): real programs have a few hundred notes (libjvm.so: ~550,
 * under 100 KiB).
 */
#define LP_USDT_NOTES_BYTES_MAX (4u << 20)
#define LP_USDT_NOTES_MAX 16384

struct lp_usdt_note {
	char provider[LP_USDT_FIELD_MAX];
	char name[LP_USDT_FIELD_MAX];
	char args[LP_USDT_FIELD_MAX * 2];
	uint64_t loc_addr, base_addr, sema_addr; /* as written in the note */
	uint64_t loc_off;  /* file offset of the probe site: the uprobe offset */
	uint64_t sema_off; /* file offset of the semaphore, 0 if none */
};

/*
 * Reads every USDT note of the ELF file at path. *out is malloc'ed (free it);
 * 0 or -errno (-ENOEXEC: not a usable ELF file; -EFBIG: past
 * LP_USDT_NOTES_BYTES_MAX or LP_USDT_NOTES_MAX).
 */
int lp_usdt_read(const char *path, struct lp_usdt_note **out, size_t *count);
/* The value of symbol name (.dynsym or .symtab): 0, -ENOENT, or -errno (-ENOEXEC: not ELF). */
int lp_elf_symbol(const char *path, const char *name, uint64_t *value);
/* The same, and where its address lies in the file (*off: a uprobe's offset; NULL: not asked). */
int lp_elf_symbol_at(const char *path, const char *name, uint64_t *value, uint64_t *off);
/* Whether the file's dynamic symbols import name (undefined there): 1, 0, or -errno. */
int lp_elf_imports(const char *path, const char *name);
/* The program interpreter (PT_INTERP) into buf: 0, -ENOENT (static), or -errno. */
int lp_elf_interp(const char *path, char *buf, size_t size);

/* A loaded segment of an ELF file, readable and not writable: what the file holds of it. */
struct lp_elf_seg {
	uint64_t vaddr, size; /* its virtual addresses (p_vaddr, p_filesz) */
	uint64_t off;         /* its file offset */
};

/* The first max such segments of the ELF file at path into segs: 0 or -errno (-ENOEXEC). */
int lp_elf_ro_segments(const char *path, struct lp_elf_seg *segs, size_t max, size_t *count);

#endif
