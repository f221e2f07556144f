// SPDX-License-Identifier: MIT
/*
 * HotSpot fires its method probes only when started with
 * -XX:+ExtendedDTraceProbes (or -XX:+DTraceMethodProbes); without, a spec on
 * them attaches fine and records nothing. The JVM parses its flags after it
 * maps libjvm.so, the moment its probes are attached, so the flag is looked
 * for where the JVM will read it: the launcher's command line and the
 * environment variables the launcher and the VM take options from. Only the
 * JDK's own launchers are judged (a program embedding a JVM passes options we
 * cannot see), and any options file we do not read keeps us silent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jvm.h"
#include "proc.h"
#include "recorder.h"

#define JVM_PROC_MAX (256u << 10) /* bytes of cmdline or environ read; beyond: silent */

enum seen { SEEN_NOTHING, SEEN_FLAG, SEEN_UNKNOWABLE };

/* The spec on HotSpot's method probes, if any. */
static const struct lp_spec *method_spec(const struct recorder *r)
{
	for (size_t i = 0; i < r->o->nspecs; i++) {
		const struct lp_spec *sp = &r->o->specs[i];

		for (size_t j = 0; j < sp->nentry; j++)
			if (!strcmp(sp->entry[j].provider, "hotspot") &&
			    !strncmp(sp->entry[j].name, "method__", 8))
				return sp;
	}
	return NULL;
}

static int find_libjvm(void *ctx, const struct lp_proc_file *f)
{
	size_t n = strlen(f->path);

	if (n < 10 || strcmp(f->path + n - 10, "/libjvm.so"))
		return 0;
	snprintf(ctx, PATH_MAX, "%s", f->path);
	return 1;
}

/* dir/../.. of path, in place: JAVA_HOME of .../lib/server/libjvm.so, of .../bin/java. */
static bool up(char *path, int levels)
{
	while (levels-- > 0) {
		char *slash = strrchr(path, '/');

		if (!slash || slash == path)
			return false;
		*slash = '\0';
	}
	return true;
}

/* Whether pid runs a launcher of the JDK whose libjvm.so it maps. */
static bool jdk_launcher(pid_t pid)
{
	char jvm[PATH_MAX], exe[PATH_MAX], link[64];
	ssize_t n;

	if (lp_proc_exec_files(pid, find_libjvm, jvm) != 1)
		return false;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* .../lib/server/libjvm.so and .../bin/java share .../ */
	return up(jvm, 3) && up(exe, 2) && !strcmp(jvm, exe);
}

/* NUL-separated strings of /proc/PID/what; its length, or -1 (too long, or unreadable). */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) == size)
			break;
	}
	close(fd);
	if (len == size)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

/* What one option string (an argument, or an environment variable's value) says. */
static enum seen judge(const char *s)
{
	if (strstr(s, "-XX:+ExtendedDTraceProbes") || strstr(s, "-XX:+DTraceMethodProbes"))
		return SEEN_FLAG;
	/* Options from files we do not read. */
	if (s[0] == '@' || strstr(s, "-XX:Flags=") || strstr(s, "-XX:VMOptionsFile="))
		return SEEN_UNKNOWABLE;
	return SEEN_NOTHING;
}

static enum seen scan(pid_t pid, const char *what, bool env, char *buf, size_t size)
{
	static const char *const vars[] = { "JDK_JAVA_OPTIONS=", "JAVA_TOOL_OPTIONS=",
					    "_JAVA_OPTIONS=" };
	ssize_t len = read_proc(pid, what, buf, size);

	if (len < 0)
		return SEEN_UNKNOWABLE;
	for (char *s = buf; s < buf + len; s += strlen(s) + 1) {
		enum seen v = SEEN_NOTHING;

		if (!env)
			v = judge(s);
		for (size_t i = 0; env && i < ARRAY_SIZE(vars); i++)
			if (!strncmp(s, vars[i], strlen(vars[i])))
				v = judge(s + strlen(vars[i]));
		if (v != SEEN_NOTHING)
			return v;
	}
	return SEEN_NOTHING;
}

void lp_jvm_check_probes(struct recorder *r, pid_t pid)
{
	static pid_t judged; /* the process last judged: each attach to it asks again */
	static char buf[JVM_PROC_MAX];
	const struct lp_spec *sp = method_spec(r);

	if (!sp || pid == judged || !jdk_launcher(pid))
		return;
	judged = pid;
	if (scan(pid, "cmdline", false, buf, sizeof(buf)) != SEEN_NOTHING ||
	    scan(pid, "environ", true, buf, sizeof(buf)) != SEEN_NOTHING)
		return;
	lp_warn("PID %d runs java without -XX:+ExtendedDTraceProbes: HotSpot then fires no "
		"method probe, so spec '%s'%s%s records no Java method",
		(int)pid, sp->text, sp->preset ? " of preset " : "", sp->preset ? sp->preset : "");
}
