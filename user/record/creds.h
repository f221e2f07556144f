/* SPDX-License-Identifier: MIT */
/*
 * Whose the command and the outputs are. Under sudo, the launched command runs
 * as the user who invoked sudo (SUDO_UID, SUDO_GID and that user's groups) and
 * the output files belong to that user; root only with --run-as-root. Once
 * recording runs, leanprofiler keeps only the capabilities it still uses.
 */
#ifndef LP_CREDS_H
#define LP_CREDS_H

#include <sys/types.h>

#include "common.h"

struct lp_creds {
	bool set;         /* drop to this user (else: keep whoever we are) */
	uid_t uid;
	gid_t gid;
	char user[64];    /* for the supplementary groups; may be empty */
	char home[256];   /* for HOME; may be empty */
};

/* Supplementary groups kept while acting on the file system as another user. */
#define LP_CREDS_GROUPS_MAX 256

/* Who we were before lp_creds_fs_enter(). */
struct lp_fs_saved {
	bool set;
	int ngroups;
	gid_t groups[LP_CREDS_GROUPS_MAX];
};

/* From SUDO_UID/SUDO_GID/SUDO_USER when running as root under sudo. 0 or -EINVAL. */
int lp_creds_from_sudo(struct lp_creds *c);
/* In a child about to exec: become c's user (groups, gid, uid; HOME, USER, LOGNAME). */
int lp_creds_become(const struct lp_creds *c);
/*
 * Until lp_creds_fs_leave(), every file-system access of this (single-threaded)
 * process is checked as c's user would be: its fsuid, fsgid and groups (which
 * also takes root's file capabilities away). Files created then are the
 * user's. Nothing changes when c is not set. Needs CAP_SETUID and
 * CAP_SETGID: before lp_creds_drop_capabilities(). 0 or -errno (nothing changed).
 */
int lp_creds_fs_enter(const struct lp_creds *c, struct lp_fs_saved *s);
void lp_creds_fs_leave(struct lp_fs_saved *s);
/*
 * Keeps only the capabilities recording still needs (BPF, PERFMON, SYS_PTRACE
 * for other users' /proc/PID/maps, SYS_ADMIN for /proc/PID/map_files,
 * DAC_OVERRIDE and DAC_READ_SEARCH for the files targets map and renaming the
 * outputs, KILL); drops the rest from the effective, permitted, inheritable
 * and bounding sets. 0 or -errno.
 */
/*
 * outputs_later: files are still created and given to their user while
 * recording (record --window): CHOWN, FOWNER, SETUID and SETGID stay (for
 * fchown, and lp_creds_fs_enter's setfsuid, setfsgid and setgroups).
 */
int lp_creds_drop_capabilities(bool outputs_later);

#endif
