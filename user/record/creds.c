// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "creds.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out > 0xfffffffeUL ? -EINVAL : 0;
}

int lp_creds_from_sudo(struct lp_creds *c)
{
	unsigned long uid, gid;
	const char *user = getenv("SUDO_USER");
	struct passwd *pw;

	memset(c, 0, sizeof(*c));
	if (geteuid() != 0 || !getenv("SUDO_UID"))
		return 0;
	if (parse_id(getenv("SUDO_UID"), &uid) || parse_id(getenv("SUDO_GID"), &gid))
		return -EINVAL;
	if (uid == 0)
		return 0; /* sudo from root: nothing to give back */
	c->set = true;
	c->uid = (uid_t)uid;
	c->gid = (gid_t)gid;
	pw = getpwuid(c->uid);
	if (user && *user)
		snprintf(c->user, sizeof(c->user), "%s", user);
	else if (pw)
		snprintf(c->user, sizeof(c->user), "%s", pw->pw_name);
	if (pw)
		snprintf(c->home, sizeof(c->home), "%s", pw->pw_dir);
	return 0;
}

int lp_creds_become(const struct lp_creds *c)
{
	if (!c->set)
		return 0;
	/* Supplementary groups first, while we may still set them. */
	if (c->user[0] ? initgroups(c->user, c->gid) : setgroups(1, &c->gid))
		return -errno;
	if (setresgid(c->gid, c->gid, c->gid) || setresuid(c->uid, c->uid, c->uid))
		return -errno;
	if (c->home[0])
		setenv("HOME", c->home, 1);
	if (c->user[0]) {
		setenv("USER", c->user, 1);
		setenv("LOGNAME", c->user, 1);
	}
	return 0;
}

int lp_creds_fs_enter(const struct lp_creds *c, struct lp_fs_saved *s)
{
	gid_t groups[LP_CREDS_GROUPS_MAX];
	int n = LP_CREDS_GROUPS_MAX;

	s->set = false;
	if (!c->set)
		return 0;
	s->ngroups = getgroups(LP_CREDS_GROUPS_MAX, s->groups);
	if (s->ngroups < 0)
		return -errno;
	if (!c->user[0] || getgrouplist(c->user, c->gid, groups, &n) < 0) {
		groups[0] = c->gid;
		n = 1;
	}
	if (setgroups((size_t)n, groups))
		return -errno;
	setfsgid(c->gid);
	setfsuid(c->uid);
	/* Both calls return the previous id: asking again tells whether they took. */
	if ((uid_t)setfsuid(c->uid) != c->uid || (gid_t)setfsgid(c->gid) != c->gid) {
		setfsuid(0);
		setfsgid(0);
		setgroups((size_t)s->ngroups, s->groups);
		return -EPERM;
	}
	s->set = true;
	return 0;
}

void lp_creds_fs_leave(struct lp_fs_saved *s)
{
	if (!s->set)
		return;
	setfsuid(0);
	setfsgid(0);
	setgroups((size_t)s->ngroups, s->groups);
	s->set = false;
}

/*
 * What recording still uses once it runs: BPF and PERFMON (the programs,
 * attaching to files mapped later), SYS_PTRACE (reading /proc/PID/maps of
 * targets of other users), SYS_ADMIN (/proc/PID/map_files), DAC_OVERRIDE and
 * DAC_READ_SEARCH (reading those files, renaming the outputs into place),
 * KILL (passing signals on, continuing paused targets). The outputs are
 * created and given to their user before: CHOWN and FOWNER go too.
 */
#define CAPS_KEPT                                                                        \
	((1ULL << CAP_BPF) | (1ULL << CAP_PERFMON) | (1ULL << CAP_SYS_PTRACE) |           \
	 (1ULL << CAP_SYS_ADMIN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH) | \
	 (1ULL << CAP_KILL))

#define CAPS_OUTPUTS                                                                      \
	((1ULL << CAP_CHOWN) | (1ULL << CAP_FOWNER) | (1ULL << CAP_SETUID) | (1ULL << CAP_SETGID))

int lp_creds_drop_capabilities(bool outputs_later)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	uint64_t kept = CAPS_KEPT | (outputs_later ? CAPS_OUTPUTS : 0), eff, perm;

	if (syscall(SYS_capget, &h, d))
		return -errno;
	eff = ((uint64_t)d[1].effective << 32 | d[0].effective) & kept;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & kept;
	/* The bounding set first: it needs CAP_SETPCAP, which goes below. */
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (!(kept & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
		    errno != EINVAL)
			return -errno;
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	d[0].permitted = (uint32_t)perm;
	d[1].permitted = (uint32_t)(perm >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}
