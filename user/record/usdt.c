// SPDX-License-Identifier: MIT
#include "usdt.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* File offset of a virtual address, via the PT_LOAD segment that maps it. */
static int vaddr_to_off(Elf *elf, uint64_t addr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static void copy_field(char *dst, size_t cap, const char *src, size_t avail, size_t *used)
{
	size_t len = strnlen(src, avail);

	snprintf(dst, cap, "%.*s", (int)(len < cap ? len : cap - 1), src);
	*used = len < avail ? len + 1 : avail;
}

static int parse_notes(Elf *elf, Elf_Scn *scn, uint64_t base_sh_addr, struct lp_usdt_note **out,
		       size_t *count, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return 0;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *desc = (const char *)data->d_buf + desc_off;
		struct lp_usdt_note *n, *notes;
		size_t left, used;

		if (nh.n_type != 3 || nh.n_namesz != 8 ||
		    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) != 0 ||
		    nh.n_descsz < 3 * 8 + 3)
			continue;
		if (*count >= LP_USDT_NOTES_MAX)
			return -EFBIG;
		notes = lp_grow(*out, cap, *count + 1, sizeof(**out));
		if (!notes)
			return -ENOMEM;
		*out = notes;
		n = &notes[*count];
		memset(n, 0, sizeof(*n));
		memcpy(&n->loc_addr, desc, 8);
		memcpy(&n->base_addr, desc + 8, 8);
		memcpy(&n->sema_addr, desc + 16, 8);
		left = nh.n_descsz - 24;
		desc += 24;
		copy_field(n->provider, sizeof(n->provider), desc, left, &used);
		desc += used, left -= used;
		copy_field(n->name, sizeof(n->name), desc, left, &used);
		desc += used, left -= used;
		copy_field(n->args, sizeof(n->args), desc, left, &used);
		/* Prelink moved the file? The note's base tells by how much. */
		if (base_sh_addr && n->base_addr) {
			n->loc_addr += base_sh_addr - n->base_addr;
			if (n->sema_addr)
				n->sema_addr += base_sh_addr - n->base_addr;
		}
		if (vaddr_to_off(elf, n->loc_addr, &n->loc_off))
			continue; /* not in a loaded segment: unusable */
		if (n->sema_addr && vaddr_to_off(elf, n->sema_addr, &n->sema_off))
			n->sema_off = 0;
		(*count)++;
	}
	return 0;
}

int lp_usdt_read(const char *path, struct lp_usdt_note **out, size_t *count)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, cap = 0;
	uint64_t base_sh_addr = 0;
	int fd, err = 0;

	*out = NULL;
	*count = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".stapsdt.base") == 0)
			base_sh_addr = sh.sh_addr;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt") != 0)
			continue;
		/* Checked before libelf reads it all into memory. */
		if (sh.sh_size > LP_USDT_NOTES_BYTES_MAX) {
			err = -EFBIG;
			break;
		}
		err = parse_notes(elf, scn, base_sh_addr, out, count, &cap);
		if (err)
			break;
	}
cleanup:
	if (err) {
		free(*out);
		*out = NULL;
		*count = 0;
	}
	elf_end(elf);
	close(fd);
	return err;
}

/* Opens path as an ELF file: 0 with *fd and *elf set (close both), or -errno. */
static int open_elf(const char *path, int *fd, Elf **elf)
{
	*elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* Where sym's address lies in the file, by its section (as libbpf finds a uprobe's offset). */
static int symbol_offset(Elf *elf, const GElf_Sym *sym, uint64_t *off)
{
	Elf_Scn *in = sym->st_shndx < SHN_LORESERVE ? elf_getscn(elf, sym->st_shndx) : NULL;
	GElf_Shdr sh;

	if (!in || !gelf_getshdr(in, &sh) || sh.sh_type == SHT_NOBITS ||
	    sym->st_value < sh.sh_addr || sym->st_value - sh.sh_addr >= sh.sh_size)
		return -ENOENT;
	*off = sym->st_value - sh.sh_addr + sh.sh_offset;
	return 0;
}

int lp_elf_symbol(const char *path, const char *name, uint64_t *value)
{
	return lp_elf_symbol_at(path, name, value, NULL);
}

int lp_elf_symbol_at(const char *path, const char *name, uint64_t *value, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = open_elf(path, &fd, &elf);

	if (err)
		return err;
	err = -ENOENT;
	/* .dynsym and .symtab: the loader exports both symbols it is asked for. */
	while (err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				*value = sym.st_value;
				err = off ? symbol_offset(elf, &sym, off) : 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

int lp_elf_imports(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, found = 0, err = open_elf(path, &fd, &elf);

	if (err)
		return err;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx != SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			found = n && strcmp(n, name) == 0;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

int lp_elf_interp(const char *path, char *buf, size_t size)
{
	Elf *elf;
	size_t n;
	int fd, err = open_elf(path, &fd, &elf);

	if (err)
		return err;
	err = -ENOENT; /* statically linked */
	if (elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			size_t len;
			char *data;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
				continue;
			data = elf_rawfile(elf, &len);
			if (!data || ph.p_offset >= len || ph.p_filesz == 0 ||
			    ph.p_filesz > len - ph.p_offset || ph.p_filesz > size) {
				err = -ENOEXEC;
				break;
			}
			memcpy(buf, data + ph.p_offset, ph.p_filesz);
			buf[ph.p_filesz - 1] = '\0';
			err = buf[0] == '/' ? 0 : -ENOEXEC;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

int lp_elf_ro_segments(const char *path, struct lp_elf_seg *segs, size_t max, size_t *count)
{
	Elf *elf;
	size_t n;
	int fd, err = open_elf(path, &fd, &elf);

	*count = 0;
	if (err)
		return err;
	if (elf_getphdrnum(elf, &n)) {
		err = -ENOEXEC;
		n = 0;
	}
	for (size_t i = 0; i < n && *count < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_R) ||
		    (ph.p_flags & PF_W) || !ph.p_filesz)
			continue;
		segs[(*count)++] = (struct lp_elf_seg){ .vaddr = ph.p_vaddr, .size = ph.p_filesz,
							.off = ph.p_offset };
	}
	elf_end(elf);
	close(fd);
	return err;
}
