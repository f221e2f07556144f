// SPDX-License-Identifier: MIT
/* `leanprofiler list`: grouping probe sites and formatting the lines (user/core/probelist.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "probelist.h"
#include "unit.h"

static struct lp_usdt_note note(const char *prov, const char *name, const char *args,
				uint64_t sema)
{
	struct lp_usdt_note n = { .sema_addr = sema };

	snprintf(n.provider, sizeof(n.provider), "%s", prov);
	snprintf(n.name, sizeof(n.name), "%s", name);
	snprintf(n.args, sizeof(n.args), "%s", args);
	return n;
}

static const char *line(const struct lp_probe_row *r, const char *file)
{
	static char out[1024];
	struct lp_buf b = { 0 };

	assert_int_equal(lp_probe_line(&b, r, file), 0);
	snprintf(out, sizeof(out), "%.*s", (int)b.len, b.p);
	lp_buf_free(&b);
	return out;
}

static void test_group_sites(void **state)
{
	struct lp_usdt_note n[] = {
		note("postgresql", "query__rewrite__start", "8@%rsi", 0x10),
		note("postgresql", "query__rewrite__done", "8@%rbx", 0x12),
		note("postgresql", "query__rewrite__start", "8@%rsi", 0x10),
		note("postgresql", "query__rewrite__done", "8@%r12", 0x12),
		note("other", "query__rewrite__done", "", 0),
	};
	struct lp_probe_row rows[5];

	(void)state;
	assert_int_equal(lp_probe_rows(n, 5, rows), 3);
	assert_int_equal(rows[0].sites, 2);
	assert_false(rows[0].args_vary);
	assert_int_equal(rows[1].sites, 2);
	assert_true(rows[1].args_vary);
	assert_int_equal(rows[2].sites, 1);
	assert_string_equal(line(&rows[0], "/pg"),
			    "postgresql:query__rewrite__start             sites=2 semaphore=yes@0x10 "
			    "args=\"8@%rsi\" file=/pg presets=postgresql\n");
	assert_string_equal(line(&rows[1], "/pg"),
			    "postgresql:query__rewrite__done              sites=2 semaphore=yes@0x12 "
			    "args=\"8@%rbx\"(first of 2 sites, they differ) file=/pg "
			    "presets=postgresql\n");
	assert_string_equal(line(&rows[2], "/x"),
			    "other:query__rewrite__done                   sites=1 semaphore=no args=\"\" "
			    "file=/x\n");
}

static void test_marks(void **state)
{
	struct lp_usdt_note n[] = {
		note("leanprofiler", "span_enter", "8@%rdi 8@%rsi 8@%rdx 8@%rcx", 0x4018),
		note("postgresql", "checkpoint__done", "-4@40+CheckpointStats(%rip) -4@%eax", 0x9),
		note("libstdcxx", "throw", "8@%rdi 8@%rsi", 0),
	};
	struct lp_probe_row rows[3];

	(void)state;
	assert_int_equal(lp_probe_rows(n, 3, rows), 3);
	assert_string_equal(line(&rows[0], "a.out"),
			    "leanprofiler:span_enter                      sites=1 semaphore=yes@0x4018 "
			    "args=\"8@%rdi 8@%rsi 8@%rdx 8@%rcx\" file=a.out marker=leanprofiler\n");
	assert_string_equal(line(&rows[1], "pg"),
			    "postgresql:checkpoint__done                  sites=1 semaphore=yes@0x9 "
			    "args=\"-4@40+CheckpointStats(%rip) -4@%eax\" file=pg "
			    "unsupported=\"-4@40+CheckpointStats(%rip)\"\n");
	assert_string_equal(line(&rows[2], "libstdc++.so.6"),
			    "libstdcxx:throw                              sites=1 semaphore=no "
			    "args=\"8@%rdi 8@%rsi\" file=libstdc++.so.6 presets=libstdcxx\n");
}

/*
 * A site libbpf cannot decode is said whichever site it is, with how many of
 * the sites it is when others can be recorded.
 */
static void test_unsupported_site(void **state)
{
	struct lp_usdt_note n[] = {
		note("t", "two_in", "8@%rdi", 0),
		note("t", "two_in", "8@32(%rsp,%rax,8)", 0),
		note("t", "two_in", "8@%rsi", 0),
		note("t", "bad", "8@x(%rip)", 0),
		note("t", "bad", "-4@y(%rip)", 0),
	};
	struct lp_probe_row rows[5];

	(void)state;
	assert_int_equal(lp_probe_rows(n, 5, rows), 2);
	assert_string_equal(line(&rows[0], "f"),
			    "t:two_in                                     sites=3 semaphore=no "
			    "args=\"8@%rdi\"(first of 3 sites, they differ) file=f "
			    "unsupported=\"8@32(%rsp,%rax,8)\"(1 of 3 sites)\n");
	assert_string_equal(line(&rows[1], "f"),
			    "t:bad                                        sites=2 semaphore=no "
			    "args=\"8@x(%rip)\"(first of 2 sites, they differ) file=f "
			    "unsupported=\"8@x(%rip)\"\n");
}

/* Names and paths come from the file: control bytes are escaped, long names push right. */
static void test_hostile_text(void **state)
{
	struct lp_usdt_note n[] = {
		note("p\x1b[2J", "n\nx", "8@%rdi\t", 0),
		note("provider_with_a_rather_long_name", "and_a_long_probe_name_too", "", 0),
	};
	struct lp_probe_row rows[2];

	(void)state;
	assert_int_equal(lp_probe_rows(n, 2, rows), 2);
	assert_string_equal(line(&rows[0], "/tmp/a\rb"),
			    "p\\x1b[2J:n\\nx                                sites=1 semaphore=no "
			    "args=\"8@%rdi\\t\" file=/tmp/a\\rb unsupported=\"8@%rdi\\t\"\n");
	assert_string_equal(line(&rows[1], "f"),
			    "provider_with_a_rather_long_name:and_a_long_probe_name_too sites=1 "
			    "semaphore=no args=\"\" file=f\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_sites),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_unsupported_site),
		cmocka_unit_test(test_hostile_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
