// SPDX-License-Identifier: MIT
#include "list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "probelist.h"
#include "proc.h"
#include "text.h"
#include "usdt.h"

/* Prints the probes of one file; the number of probes or -errno. */
static int print_probes(FILE *out, const char *open_path, const char *name)
{
	struct lp_usdt_note *notes;
	struct lp_probe_row *rows;
	struct lp_buf b = { 0 };
	size_t n, nrows;
	int err = lp_usdt_read(open_path, &notes, &n);

	if (err)
		return err;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		free(notes);
		return -ENOMEM;
	}
	nrows = lp_probe_rows(notes, n, rows);
	for (size_t i = 0; !err && i < nrows; i++)
		err = lp_probe_line(&b, &rows[i], name);
	if (!err && b.len && fwrite(b.p, 1, b.len, out) != b.len)
		err = -EIO;
	lp_buf_free(&b);
	free(rows);
	free(notes);
	return err ? err : (int)nrows;
}

int lp_list_file(FILE *out, const char *path)
{
	struct stat st;
	int n;

	if (stat(path, &st)) {
		n = -errno;
		lp_err("cannot list the probes of %s: %s", path, strerror(-n));
		return n;
	}
	if (S_ISDIR(st.st_mode)) {
		lp_err("cannot list the probes of %s: it is a directory; give a binary or a "
		       "shared library",
		       path);
		return -EISDIR;
	}
	n = print_probes(out, path, path);
	if (n == -ENOEXEC) {
		lp_err("cannot list the probes of %s: not an ELF file", path);
		return n;
	}
	if (n == -EFBIG) {
		lp_err("cannot list the probes of %s: its probe notes exceed %u KiB or %u notes "
		       "(LP_USDT_NOTES_BYTES_MAX, LP_USDT_NOTES_MAX)",
		       path, LP_USDT_NOTES_BYTES_MAX >> 10, LP_USDT_NOTES_MAX);
		return n;
	}
	if (n < 0) {
		lp_err("cannot list the probes of %s: %s", path, strerror(-n));
		return n;
	}
	if (n == 0) {
		lp_err("no USDT probes in %s (readelf -n shows none either: it has no "
		       ".note.stapsdt section)",
		       path);
		return -ENOENT;
	}
	return 0;
}

struct pid_ctx {
	FILE *out;
	int probes;
};

static int list_mapped(void *ctx, const struct lp_proc_file *f)
{
	struct pid_ctx *pc = ctx;
	/* map_files needs privileges; the path as mapped is the same file unless replaced. */
	int n = print_probes(pc->out, f->open_path, f->path);

	if (n == -EPERM || n == -EACCES || n == -ENOENT)
		n = print_probes(pc->out, f->path, f->path);
	if (n == -ENOEXEC || n == -ENOENT)
		return 0;
	if (n < 0) {
		lp_warn("cannot read the probes of %s: %s", f->path, strerror(-n));
		return 0;
	}
	pc->probes += n;
	return 0;
}

int lp_list_pid(FILE *out, pid_t pid)
{
	struct pid_ctx pc = { .out = out };
	char comm[32] = "?";
	int err = lp_proc_comm(pid, comm, sizeof(comm));

	if (!err)
		err = lp_proc_exec_files(pid, list_mapped, &pc);
	if (err) {
		lp_err("cannot list the probes of PID %d: %s", (int)pid,
		       err == -ESRCH   ? "no such process"
		       : err == -EACCES ? "permission denied (its files are not yours: use sudo)"
					: strerror(-err));
		return err;
	}
	if (pc.probes == 0) {
		lp_err("no USDT probes in PID %d (%s): none of the files it maps has any", (int)pid,
		       comm);
		return -ENOENT;
	}
	return 0;
}
