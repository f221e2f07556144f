// SPDX-License-Identifier: MIT
/* Span-pair specs (user/core/spec.c) and the presets built from them (user/core/presets.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "presets.h"
#include "spec.h"
#include "text.h"
#include "unit.h"

static struct lp_spec sp;
static char err[256];

static void parse_ok(const char *text)
{
	err[0] = '\0';
	if (lp_spec_parse(text, &sp, err, sizeof(err)) != 0)
		fail_msg("'%s' did not parse: %s", text, err);
}

/* The spec does not parse, with exactly this message. */
static void parse_bad(const char *text, const char *msg)
{
	err[0] = '\0';
	assert_int_equal(lp_spec_parse(text, &sp, err, sizeof(err)), -EINVAL);
	if (strcmp(err, msg))
		fail_msg("'%s': got \"%s\", expected \"%s\"", text, err, msg);
}

/* The name or meta of sp rendered with these arguments and strings. */
static char *render(const struct lp_tpl *t, const uint64_t *args, size_t nargs,
		    const struct lp_spec_str *strs, size_t nstrs, bool in_meta)
{
	static char out[1024];
	struct lp_buf b = { 0 };

	struct lp_tpl_vals v = { .args = args, .nargs = nargs, .strs = strs, .nstrs = nstrs };

	assert_int_equal(lp_tpl_render(&sp, t, LP_USDT_ROLE_ENTRY, &v, NULL, in_meta, &b), 0);
	snprintf(out, sizeof(out), "%.*s", (int)b.len, b.p ? b.p : "");
	lp_buf_free(&b);
	return out;
}

/* reentry= and late= */
static void test_flags(void **state)
{
	(void)state;
	parse_ok("p:a,p:b");
	assert_false(sp.reentry_close);
	assert_false(sp.late);
	parse_ok("p:a,p:b,reentry=close,name=x");
	assert_true(sp.reentry_close);
	parse_ok("p:a,p:b,reentry=nest");
	assert_false(sp.reentry_close);
	parse_ok("p:a,p:b,late=yes");
	assert_true(sp.late);
	assert_false(sp.reentry_close);
	parse_ok("p:a,p:b,late=no");
	assert_false(sp.late);
	parse_bad("p:a,p:b,reentry=open", "reentry= is nest, close or continue, not 'open'");
	parse_bad("p:a,p:b,reentry=", "reentry= is nest, close or continue, not ''");
	parse_bad("p:a,p:b,reentry=continue,key=arg0", "reentry=close and reentry=continue are for "
						       "specs without key=: a keyed exit names "
						       "the span it closes");
	parse_bad("p:a,p:b,reentry=close,reentry=close", "reentry= given twice");
	parse_bad("p:a,p:b,late=1", "late= is yes or no, not '1'");
	parse_bad("p:a,p:b,late=yes,late=no", "late= given twice");
	parse_bad("p:a,p:b,key=arg0,reentry=close",
		  "reentry=close and reentry=continue are for specs without key=: a keyed exit names "
		  "the span it closes");
}

static void test_minimal(void **state)
{
	(void)state;
	parse_ok("python:gc__start,python:gc__done");
	assert_int_equal(sp.nentry, 1);
	assert_int_equal(sp.nexit, 1);
	assert_string_equal(sp.entry[0].provider, "python");
	assert_string_equal(sp.entry[0].name, "gc__start");
	assert_string_equal(sp.exit[0].provider, "python");
	assert_string_equal(sp.exit[0].name, "gc__done");
	assert_false(sp.keyed);
	assert_false(sp.has_meta);
	assert_int_equal(sp.desc.nstr, 0);
	/* The default name is the entry probe's. */
	assert_true(lp_tpl_literal(&sp.name));
	assert_string_equal(render(&sp.name, NULL, 0, NULL, 0, false), "gc__start");
	assert_string_equal(sp.text, "python:gc__start,python:gc__done");
}

static void test_provider_defaults_and_alternatives(void **state)
{
	(void)state;
	parse_ok("libstdcxx:throw|rethrow,catch|other:x");
	assert_int_equal(sp.nentry, 2);
	assert_string_equal(sp.entry[1].provider, "libstdcxx");
	assert_string_equal(sp.entry[1].name, "rethrow");
	assert_int_equal(sp.nexit, 2);
	assert_string_equal(sp.exit[0].provider, "libstdcxx");
	assert_string_equal(sp.exit[0].name, "catch");
	assert_string_equal(sp.exit[1].provider, "other");
	int role = -1;

	assert_true(lp_spec_uses(&sp, "libstdcxx", "rethrow", &role));
	assert_int_equal(role, LP_USDT_ROLE_ENTRY);
	assert_true(lp_spec_uses(&sp, "other", "x", &role));
	assert_int_equal(role, LP_USDT_ROLE_EXIT);
	assert_false(lp_spec_uses(&sp, "libstdcxx", "x", &role));
}

static void test_templates(void **state)
{
	uint64_t args[] = { (uint64_t)-5, 0, 255, 7 };
	struct lp_spec_str strs[] = { { "json", 4 }, { "a,b", 3 } };

	(void)state;
	parse_ok("p:a,p:b,name=imp {arg1:str} #{arg0},meta=n={arg2:x}\\, u={arg0:u}\\, s={arg3:str}");
	assert_int_equal(sp.desc.nstr, 2);
	assert_int_equal(sp.desc.str[0].arg, 1);
	assert_int_equal(sp.desc.str[0].len_arg, -1);
	assert_int_equal(sp.desc.str[1].arg, 3);
	assert_int_equal(sp.max_arg, 4);
	assert_false(lp_tpl_literal(&sp.name));
	assert_string_equal(render(&sp.name, args, 4, strs, 2, false), "imp json #-5");
	/* In metadata a comma inside a string does not split items. */
	assert_string_equal(render(&sp.meta, args, 4, strs, 2, true),
			    "n=0xff, u=18446744073709551611, s=a\xef\xbc\x8c" "b");
	/* Missing arguments and unreadable strings say so. */
	strs[1].s = NULL;
	assert_string_equal(render(&sp.meta, args, 2, strs, 2, true), "n=?, u=18446744073709551611, "
								       "s=(unreadable)");
}

static void test_string_forms(void **state)
{
	(void)state;
	parse_ok("hotspot:method__entry,method__return,name={arg1:str/arg2}.{arg3:str/arg4},"
		 "meta=sig={arg5:str/arg6}\\, again={arg1:str/arg2}");
	assert_int_equal(sp.desc.nstr, 3); /* the repeated one shares its slot */
	assert_int_equal(sp.desc.str[0].arg, 1);
	assert_int_equal(sp.desc.str[0].len_arg, 2);
	assert_int_equal(sp.desc.str[2].arg, 5);
	assert_int_equal(sp.desc.str[2].len_arg, 6);
	assert_int_equal(sp.max_arg, 7);
	parse_ok("l:throw,catch,meta=type={arg1:str@8},key=arg0");
	assert_int_equal(sp.desc.nstr, 1);
	assert_int_equal(sp.desc.str[0].deref, 1);
	assert_int_equal(sp.desc.str[0].off, 8);
	assert_true(sp.keyed);
	assert_int_equal(sp.key_entry, 0);
	assert_int_equal(sp.key_exit, 0);
	parse_ok("l:a,b,meta=x={arg0:str@-0x10},key=arg2/arg0");
	assert_int_equal(sp.desc.str[0].off, -16);
	assert_int_equal(sp.key_entry, 2);
	assert_int_equal(sp.key_exit, 0);
}

static void test_escapes_and_braces(void **state)
{
	uint64_t args[] = { 3 };

	(void)state;
	parse_ok("p:a,p:b,name=x\\,y\\{z\\}\\\\,meta={arg0}");
	assert_string_equal(render(&sp.name, args, 1, NULL, 0, false), "x,y{z}\\");
	assert_true(lp_tpl_literal(&sp.name));
	assert_string_equal(render(&sp.meta, args, 1, NULL, 0, true), "3");
	/* An empty meta= is allowed: no metadata text. */
	parse_ok("p:a,p:b,meta=");
	assert_true(sp.has_meta);
	assert_int_equal(sp.meta.n, 0);
}

static void test_errors(void **state)
{
	(void)state;
	parse_bad("", "empty spec: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	parse_bad("python:gc__start", "no exit probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	parse_bad("gc__start,gc__done", "probe 'gc__start' needs a provider: PROVIDER:NAME");
	parse_bad("name=x,p:a", "the spec must start with the entry probe, "
				"PROVIDER:ENTRY,PROVIDER:EXIT,...");
	parse_bad("p:a,name=x", "the second field must be the exit probe, not 'name=x'");
	parse_bad("p:a,", "no exit probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	parse_bad(":a,p:b", "empty provider in ':a'");
	parse_bad("p:,p:b", "empty probe name in 'p:'");
	parse_bad("p:a b,p:c", "unexpected ' ' in probe 'p:a b'");
	parse_bad("p:a|b|c|d|e,p:f", "more than 4 entry probes");
	parse_bad("p:a,p:b,nmae=x", "unknown field 'nmae' (expected name=, meta=, args=, key=, "
				    "match=, reentry=, abort= or late=)");
	parse_bad("p:a,p:b,name", "field 'name' is not KEY=VALUE (name=, meta=, args=, key=, "
				  "match=, reentry=, abort=, late=)");
	parse_bad("p:a,p:b,match=key", "match= is name, not 'key'");
	parse_bad("p:a,p:b,match=name,key=arg0", "match=name is for specs without key=: a keyed "
						 "exit names the span it closes");
	parse_bad("p:a,p:b,abort=c,key=arg0", "abort= is for specs without key=: it gives up the "
					      "innermost open span");
	parse_bad("p:a,p:b,abort=", "no abort probe: expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	parse_bad("p:a,p:b,args=x,args=y", "args= given twice");
	parse_bad("p:a,p:b,name={exit.arg0}", "{exit.arg0}: exit arguments are for meta= and args= "
					      "(the name is known at the entry)");
	parse_bad("p:a,p:b,meta={exit.arg12}", "arg12: a USDT probe has at most 12 arguments "
					       "(arg0..arg11)");
	parse_bad("p:a,p:b,name={arg0|lambda}", "a filter applies to a string (:str...) in "
						"{arg0|lambda}");
	parse_bad("p:a,p:b,name={arg0:str|upper}", "unknown filter 'upper' in {arg0:str|upper}: "
						   "expected lambda or sql");
	parse_bad("p:a,p:b,name=", "name= is empty");
	parse_bad("p:a,p:b,name=x,name=y", "name= given twice");
	parse_bad("p:a,p:b,meta=x,meta=y", "meta= given twice");
	parse_bad("p:a,p:b,key=arg0,key=arg1", "key= given twice");
	parse_bad("p:a,p:b,key=x", "expected argN at 'x'");
	parse_bad("p:a,p:b,key=arg0+", "key= is argN or argN/argM, not 'arg0+'");
	parse_bad("p:a,p:b,name={arg12}", "arg12: a USDT probe has at most 12 arguments (arg0..arg11)");
	parse_bad("p:a,p:b,name={arg0", "unclosed '{' in name=");
	parse_bad("p:a,p:b,name=x}", "'}' without '{' in name= (write \\} for the character)");
	parse_bad("p:a,p:b,name=x\\", "'\\' at the end of name=");
	parse_bad("p:a,p:b,name={arg0:s}", "unknown format 's' in {arg0:s}: expected d, u, x, str, "
					   "str/argN or str@OFFSET");
	parse_bad("p:a,p:b,name={arg0:strx}", "unexpected 'x' in {arg0:strx}");
	parse_bad("p:a,p:b,name={arg0:str@}", "expected an offset after 'str@' in {arg0:str@}");
	parse_bad("p:a,p:b,name={arg0:str@zz}", "bad offset 'zz' in {arg0:str@zz}: a number from "
						"-65536 to 65536");
	parse_bad("p:a,p:b,name={arg0:str/x}", "expected argN at 'x'");
	parse_bad("p:a,p:b,name={arg0 }", "unexpected ' ' in {arg0 }");
	parse_bad("p:a,p:b,name={x}", "expected argN at 'x'");
	parse_bad("p:a,p:b,name={arg0:str}{arg1:str}{arg2:str}{arg3:str}{arg4:str}",
		  "more than 4 different string arguments");
	{
		char big[LP_SPEC_TEXT_MAX + 10];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		parse_bad(big, "spec longer than 1023 bytes");
	}
	{
		char longname[200];

		snprintf(longname, sizeof(longname), "p:%0100d,p:b", 0);
		parse_bad(longname, "probe name 'p:0000000000000000000000000000000000000000000000000"
				    "000000000000000000000000000000000000000000000000000' is longer "
				    "than 63 bytes");
	}
}

static void test_presets_parse(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(lp_npresets, 4);
	for (size_t i = 0; i < lp_npresets; i++) {
		size_t n = 0;

		for (const char *const *s = lp_presets[i].specs; *s; s++, n++) {
			if (lp_spec_parse(*s, &sp, err, sizeof(err)))
				fail_msg("preset %s: '%s': %s", lp_presets[i].name, *s, err);
		}
		assert_true(n > 0);
	}
	assert_non_null(lp_preset_find("cpython"));
	assert_null(lp_preset_find("python"));
	assert_string_equal(lp_preset_names(), "postgresql, jvm, libstdcxx, cpython");
	assert_int_equal(lp_presets_using("python", "gc__done", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "cpython");
	assert_int_equal(lp_presets_using("libstdcxx", "rethrow", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "libstdcxx");
	assert_int_equal(lp_presets_using("python", "line", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* The preset specs as documented. */
	parse_ok(lp_preset_find("libstdcxx")->specs[0]);
	assert_true(sp.keyed);
	assert_string_equal(render(&sp.name, NULL, 0, NULL, 0, false), "exception in flight");
}

/* The kernel reads only the arguments a spec uses: at entry its templates' and key's, at exit the key. */
static void test_arguments_read(void **state)
{
	(void)state;
	parse_ok("p:a,b");
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 0);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 0);
	parse_ok("python:gc__start,gc__done,name=gc,meta=generation={arg0}");
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 1);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 0);
	parse_ok("libstdcxx:throw,catch,meta=type={arg1:str@8},key=arg0");
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 2);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 1);
	parse_ok("p:a,b,name={arg5:str/arg6},key=arg2/arg4");
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 7);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 5);
}

static void test_args_check(void **state)
{
	char bad[64];

	(void)state;
	assert_int_equal(lp_usdt_args_check("", bad, sizeof(bad)), 0);
	assert_int_equal(lp_usdt_args_check("8@%rbx 8@%r15", bad, sizeof(bad)), 2);
	assert_int_equal(lp_usdt_args_check("-4@112(%rsp) 8@-80(%rbx) 4@(%r12) -4@%r13d 1@%dil "
					    "8@$5 -8@%rax 2@12(%r12) 4@0x3c(%rax)",
					    bad, sizeof(bad)),
			 9);
	assert_int_equal(lp_usdt_args_check("8@%rax 8@foo(%rip)", bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "8@foo(%rip)");
	assert_int_equal(lp_usdt_args_check("3@%rax", bad, sizeof(bad)), -EINVAL);
	assert_int_equal(lp_usdt_args_check("8@%xmm0", bad, sizeof(bad)), -EINVAL);
	assert_int_equal(lp_usdt_args_check("8@%r16", bad, sizeof(bad)), -EINVAL);
	assert_int_equal(lp_usdt_args_check("8@$", bad, sizeof(bad)), -EINVAL);
}

/* A site's arguments decoded as libbpf decodes them, for the sites attached without it. */
static void test_site_args(void **state)
{
	struct lp_usdt_site site = { .cookie = 77 };

	(void)state;
	assert_int_equal(lp_usdt_site_args("-4@%edi 8@$-9 2@-1204(%rbp) 1@(%r12) 8@%r15b", &site),
			 5);
	assert_int_equal(site.nargs, 5);
	assert_int_equal(site.cookie, 77);
	assert_int_equal(site.args[0].kind, LP_USDT_ARG_REG);
	assert_int_equal(site.args[0].reg_off, 112); /* struct pt_regs: rdi */
	assert_int_equal(site.args[0].is_signed, 1);
	assert_int_equal(site.args[0].bitshift, 32);
	assert_int_equal(site.args[1].kind, LP_USDT_ARG_CONST);
	assert_int_equal((int64_t)site.args[1].val_off, -9);
	assert_int_equal(site.args[1].bitshift, 0);
	assert_int_equal(site.args[2].kind, LP_USDT_ARG_DEREF);
	assert_int_equal((int64_t)site.args[2].val_off, -1204);
	assert_int_equal(site.args[2].reg_off, 32); /* rbp */
	assert_int_equal(site.args[2].bitshift, 48);
	assert_int_equal(site.args[2].is_signed, 0);
	assert_int_equal(site.args[3].kind, LP_USDT_ARG_DEREF);
	assert_int_equal(site.args[3].val_off, 0);
	assert_int_equal(site.args[3].reg_off, 24); /* r12 */
	assert_int_equal(site.args[3].bitshift, 56);
	assert_int_equal(site.args[4].reg_off, 0); /* r15 */
	assert_int_equal(lp_usdt_site_args("", &site), 0);
	assert_int_equal(site.nargs, 0);
	/* what libbpf cannot decode, neither is decoded here */
	assert_int_equal(lp_usdt_site_args("8@%rdi 8@32(%rsp,%rax,8)", &site), -EINVAL);
	assert_int_equal(lp_usdt_site_args("8@foo(%rip)", &site), -EINVAL);
}

/* Exit arguments, match=name, abort=, args=, filters: what the kernel reads at which probe. */
static void test_exit_side(void **state)
{
	struct lp_spec_str strs[2] = { { "T$$Lambda$1+0x00007f46a0000c10", 30 },
				       { "run", 3 } };
	uint64_t args[5] = { 0, 0x1000, 30, 0x2000, 3 };

	(void)state;
	parse_ok("hotspot:method__entry,method__return,name={arg1:str/arg2|lambda}.{arg3:str/arg4},"
		 "meta=signature={arg5:str/arg6},match=name");
	assert_true(sp.match_name);
	assert_int_equal(sp.desc.nstr, 3);
	/* The name's strings are read at both probes, the signature at the entry only. */
	assert_int_equal(sp.desc.str[0].roles, 3);
	assert_int_equal(sp.desc.str[1].roles, 3);
	assert_int_equal(sp.desc.str[2].roles, 1);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 7);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 5);
	assert_string_equal(render(&sp.name, args, 5, strs, 2, false), "T$$Lambda$1.run");

	parse_ok("p:a,p:b,meta=m={arg0:str}\\, found={exit.arg1}\\, r={exit.arg0:str},"
		 "args=lit={arg0:str},abort=p:c|d");
	assert_int_equal(sp.nabort, 2);
	assert_string_equal(sp.abort[1].provider, "p");
	assert_string_equal(sp.abort[1].name, "d");
	assert_true(sp.meta.uses_exit);
	assert_false(sp.args.uses_exit);
	assert_true(sp.has_args);
	/* One slot: the entry's arg0 in the entry's record, the exit's in the exit's. */
	assert_int_equal(sp.desc.nstr, 1);
	assert_int_equal(sp.desc.str[0].roles, 3);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 1);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 2);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ABORT], 0);
	{
		struct lp_spec_str es[1] = { { "mod", 3 } }, xs[1] = { { "a,b", 3 } };
		uint64_t ea[1] = { 1 }, xa[2] = { 5, 1 };
		struct lp_tpl_vals entry = { ea, 1, es, 1 }, exit = { xa, 2, xs, 1 };
		struct lp_buf b = { 0 };

		assert_int_equal(lp_tpl_render(&sp, &sp.meta, LP_USDT_ROLE_ENTRY, &entry, &exit,
					       true, &b), 0);
		assert_int_equal(b.len, strlen("m=mod, found=1, r=a\xef\xbc\x8c" "b"));
		assert_memory_equal(b.p, "m=mod, found=1, r=a\xef\xbc\x8c" "b", b.len);
		b.len = 0;
		assert_int_equal(lp_tpl_render(&sp, &sp.meta, LP_USDT_ROLE_ENTRY, &entry, NULL,
					       true, &b), 0);
		assert_memory_equal(b.p, "m=mod, found=?, r=?", b.len);
		lp_buf_free(&b);
	}
	assert_int_equal(lp_spec_uses(&sp, "p", "d", NULL), true);
	{
		int role = -1;

		assert_true(lp_spec_uses(&sp, "p", "c", &role));
		assert_int_equal(role, LP_USDT_ROLE_ABORT);
	}
}

/* The sql filter: the template gets the normalized text, its commas escaped in metadata. */
static void test_sql_filter(void **state)
{
	struct lp_spec_str strs[1] = { { "select a, 5 from t where b = 'x'", 33 } };
	uint64_t args[1] = { 0x1000 };

	(void)state;
	parse_ok("p:a,p:b,name=s,meta=query={arg0:str|sql},args=sql={arg0:str}");
	assert_int_equal(sp.meta.part[1].filter, LP_FILTER_SQL);
	assert_string_equal(render(&sp.meta, args, 1, strs, 1, false),
			    "query=select a, $1 from t where b = $2");
	assert_string_equal(render(&sp.meta, args, 1, strs, 1, true),
			    "query=select a\xef\xbc\x8c $1 from t where b = $2");
	assert_string_equal(render(&sp.args, args, 1, strs, 1, false),
			    "sql=select a, 5 from t where b = 'x'");
}

/* The lambda filter: only an address at the end goes. */
static void test_lambda_filter(void **state)
{
	(void)state;
	assert_int_equal(lp_filter_lambda("T$$Lambda$1+0x00007f46a0000c10", 30), 11);
	assert_int_equal(lp_filter_lambda("T$$Lambda$14/0x0000000800c03000", 31), 12);
	assert_int_equal(lp_filter_lambda("java/lang/String", 16), 16);
	assert_int_equal(lp_filter_lambda("a+0x", 4), 4);    /* no digits */
	assert_int_equal(lp_filter_lambda("0x12", 4), 4);    /* nothing before */
	assert_int_equal(lp_filter_lambda("a-0x12", 6), 6);  /* not + or / */
	assert_int_equal(lp_filter_lambda("a+0x12b", 7), 1);
	assert_int_equal(lp_filter_lambda("", 0), 0);
}

/* u, x and d at the argument's declared size; no format: as declared. */
static void test_argument_sizes(void **state)
{
	uint64_t neg5 = (uint64_t)-5, big = 0xfffffffbull;
	int8_t sizes[LP_USDT_ARGS] = { 0 };

	(void)state;
	assert_int_equal(lp_usdt_arg_sizes("-4@%eax 8@%rdx 2@-8(%rbp) 1@$5 -8@%rsi", sizes,
					   LP_USDT_ARGS), 5);
	assert_int_equal(sizes[0], -4);
	assert_int_equal(sizes[1], 8);
	assert_int_equal(sizes[2], 2);
	assert_int_equal(sizes[3], 1);
	assert_int_equal(sizes[4], -8);
	assert_int_equal(lp_usdt_arg_sizes("x@%eax 9@%eax", sizes, LP_USDT_ARGS), 2);
	assert_int_equal(sizes[0], 0);
	assert_int_equal(sizes[1], 0);
	assert_int_equal(lp_usdt_arg_sizes("-4@%eax 8@%rdx", sizes, 1), 1);

	parse_ok("p:a,p:b,name={arg0:u} {arg0:x} {arg0:d} {arg0}");
	/* Unknown size: 8 bytes, signed. */
	assert_string_equal(render(&sp.name, &neg5, 1, NULL, 0, false),
			    "18446744073709551611 0xfffffffffffffffb -5 -5");
	sp.arg_size[LP_USDT_ROLE_ENTRY][0] = -4; /* libbpf sign-extends it */
	assert_string_equal(render(&sp.name, &neg5, 1, NULL, 0, false),
			    "4294967291 0xfffffffb -5 -5");
	sp.arg_size[LP_USDT_ROLE_ENTRY][0] = 4; /* unsigned: libbpf zero-extends it */
	assert_string_equal(render(&sp.name, &big, 1, NULL, 0, false),
			    "4294967291 0xfffffffb -5 4294967291");
	sp.arg_size[LP_USDT_ROLE_ENTRY][0] = 1;
	assert_string_equal(render(&sp.name, &big, 1, NULL, 0, false), "251 0xfb -5 251");
	sp.arg_size[LP_USDT_ROLE_ENTRY][0] = 8;
	assert_string_equal(render(&sp.name, &neg5, 1, NULL, 0, false),
			    "18446744073709551611 0xfffffffffffffffb -5 18446744073709551611");
}

/* [argN==V] / [argN!=V] after a probe: parsed, read by the kernel, tested. */
static void test_predicates(void **state)
{
	uint64_t zero[1] = { 0 }, some[1] = { 0x7f00 }, neg[1] = { (uint64_t)-1 };

	(void)state;
	parse_ok("postgresql:statement__status[arg0!=0],statement__status[arg0==0],name=s,"
		 "meta=sql={arg0:str}");
	assert_true(sp.entry[0].has_pred && sp.entry[0].pred_ne);
	assert_string_equal(sp.exit[0].provider, "postgresql");
	assert_string_equal(sp.exit[0].name, "statement__status");
	assert_true(sp.exit[0].has_pred && !sp.exit[0].pred_ne);
	assert_true(lp_probe_pred_holds(&sp.entry[0], some, 1));
	assert_false(lp_probe_pred_holds(&sp.entry[0], zero, 1));
	assert_true(lp_probe_pred_holds(&sp.exit[0], zero, 1));
	assert_false(lp_probe_pred_holds(&sp.exit[0], some, 1));
	/* The exit reads the argument its predicate tests. */
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_EXIT], 1);
	parse_ok("p:a[arg3==-1]|b,p:c,abort=d[arg1==0x10]");
	assert_true(lp_probe_pred_holds(&sp.entry[0], neg, 1) == false); /* arg3 not sent: 0 */
	assert_false(sp.entry[1].has_pred);
	assert_string_equal(sp.entry[1].name, "b");
	assert_int_equal(sp.entry[0].pred_arg, 3);
	assert_int_equal(sp.entry[0].pred_val, (uint64_t)-1);
	assert_int_equal(sp.abort[0].pred_val, 16);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ENTRY], 4);
	assert_int_equal(sp.desc.nargs[LP_USDT_ROLE_ABORT], 2);
	parse_bad("p:a[arg0==1,p:b", "unclosed '[' in '[arg0==1'");
	parse_bad("p:a[arg0<1],p:b", "expected [argN==VALUE] or [argN!=VALUE], not '[arg0<1]'");
	parse_bad("p:a[arg0==x],p:b", "bad value 'x' in '[arg0==x]': a number");
	parse_bad("p:a[x==1],p:b", "expected argN at 'x==1'");
	parse_bad("p:a[arg0==1]x,p:b", "unclosed '[' in '[arg0==1]x'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_provider_defaults_and_alternatives),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_string_forms),
		cmocka_unit_test(test_escapes_and_braces),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_presets_parse),
		cmocka_unit_test(test_args_check),
		cmocka_unit_test(test_site_args),
		cmocka_unit_test(test_exit_side),
		cmocka_unit_test(test_lambda_filter),
		cmocka_unit_test(test_sql_filter),
		cmocka_unit_test(test_argument_sizes),
		cmocka_unit_test(test_predicates),
		cmocka_unit_test(test_arguments_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
