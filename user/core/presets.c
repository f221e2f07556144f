// SPDX-License-Identifier: MIT
#include "presets.h"

#include <stdio.h>
#include <string.h>

#include "spec.h"

/*
 * PostgreSQL 15 (provider postgresql): one backend process per connection.
 * statement__status(text) is pgstat_report_activity(): the SQL at each simple
 * Query message and at each Parse, Bind and Execute message of the extended
 * protocol (one statement, reported again: continued), NULL when the backend
 * goes idle, after success and failure alike, before the client's next
 * message. query__start/done fire for the simple protocol only.
 */
static const char *const postgresql[] = {
	"postgresql:statement__status[arg0!=0],statement__status[arg0==0],name=statement,"
	"meta=query={arg0:str|sql},args=sql={arg0:str},reentry=continue",
	/*
	 * A failure fires transaction__abort in the phase it interrupts (never
	 * __done): the phase is given up there. A ROLLBACK's own abort comes after
	 * its phases: nothing to give up.
	 */
	"postgresql:query__parse__start,query__parse__done,name=parse,abort=transaction__abort",
	/* Parse analysis (names, types: "does not exist") and the rewriter. */
	"postgresql:query__rewrite__start,query__rewrite__done,name=analyze and rewrite,"
	"abort=transaction__abort",
	"postgresql:query__plan__start,query__plan__done,name=plan,abort=transaction__abort",
	/* PortalRun, and inside it each statement of a multi-query portal (INSERT, UPDATE, ...). */
	"postgresql:query__execute__start,query__execute__done,name=execute,"
	"abort=transaction__abort",
	/* Keyed by lxid, not grouped by it: one table row for all transactions. */
	"postgresql:transaction__start,transaction__commit|transaction__abort,"
	"name=transaction,key=arg0",
	"postgresql:lock__wait__start,lock__wait__done,name=lock wait,"
	"meta=locktag_type={arg4:u}\\, mode={arg5}\\, db={arg0:u}\\, rel={arg1:u}",
	NULL,
};

/*
 * HotSpot (libjvm.so, provider hotspot); method probes need
 * -XX:+ExtendedDTraceProbes. The java launcher dlopen()s libjvm.so after its
 * entry point: late=yes.
 */
static const char *const jvm[] = {
	"hotspot:method__entry,method__return,name={arg1:str/arg2|lambda}.{arg3:str/arg4},"
	"meta=signature={arg5:str/arg6},match=name,late=yes",
	"hotspot:gc__begin,gc__end,name=gc,meta=full={arg0},late=yes",
	NULL,
};

/*
 * libstdc++ (provider libstdcxx): from throw (or rethrow) to the catch. Keyed by
 * the thrown type's type_info, not the object: catch passes the address the
 * handler gets (a base's, a pointer's value; none when nothing catches it), and
 * exceptions in flight on a thread end last in, first out, as one key's spans do.
 */
static const char *const libstdcxx[] = {
	"libstdcxx:throw|rethrow,catch,name=exception in flight,meta=type={arg1:str@8},key=arg1",
	NULL,
};

/*
 * CPython 3.11 built with --with-dtrace (provider python), e.g. Debian's
 * /usr/bin/python3.11. The import probes are in the C import path (import
 * statements, __import__()); importlib.import_module() bypasses them.
 * found is the exit's: 0 for an import that failed. gc__done's argument is
 * collected + uncollectable: a number per span, not a row.
 */
static const char *const cpython[] = {
	"python:import__find__load__start,import__find__load__done,name=import,"
	"meta=module={arg0:str}\\, found={exit.arg1}",
	"python:gc__start,gc__done,name=gc,meta=generation={arg0},args=collected={exit.arg0}",
	NULL,
};

const struct lp_preset lp_presets[] = {
	{ "postgresql", "PostgreSQL 15: queries, their phases, transactions, lock waits",
	  postgresql },
	{ "jvm", "HotSpot JVM: Java methods (-XX:+ExtendedDTraceProbes), garbage collections", jvm },
	{ "libstdcxx", "libstdc++: C++ exceptions in flight, throw to catch", libstdcxx },
	{ "cpython", "CPython 3.11: module imports, garbage collections", cpython },
};

const size_t lp_npresets = ARRAY_SIZE(lp_presets);

const struct lp_preset *lp_preset_find(const char *name)
{
	for (size_t i = 0; i < lp_npresets; i++)
		if (!strcmp(lp_presets[i].name, name))
			return &lp_presets[i];
	return NULL;
}

const char *lp_preset_names(void)
{
	static char names[256];
	size_t used = 0;

	for (size_t i = 0; i < lp_npresets && used < sizeof(names); i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
					 lp_presets[i].name);
	return names;
}

size_t lp_presets_using(const char *provider, const char *name, char *buf, size_t size)
{
	static struct lp_spec sp; /* large: parsed one at a time */
	size_t n = 0, used = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < lp_npresets; i++) {
		bool uses = false;

		for (const char *const *s = lp_presets[i].specs; *s && !uses; s++)
			uses = lp_spec_parse(*s, &sp, NULL, 0) == 0 &&
			       lp_spec_uses(&sp, provider, name, NULL);
		if (!uses)
			continue;
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", n ? "," : "",
						 lp_presets[i].name);
		n++;
	}
	return n;
}
