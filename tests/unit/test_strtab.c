// SPDX-License-Identifier: MIT
/* Interned strings (user/strtab.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "strtab.h"
#include "unit.h"

static void test_ids_dense_and_stable(void **state)
{
	struct strtab *t = strtab_new();
	size_t len = 99;
	uint32_t a, b;

	assert_non_null(t);
	assert_int_equal(strtab_count(t), 1);
	assert_string_equal(strtab_str(t, 0, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(strtab_intern(t, "", 0), 0);
	a = strtab_intern(t, "alpha", 5);
	b = strtab_intern(t, "beta", 4);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(strtab_intern(t, "alpha", 5), a);
	/* a prefix is another string */
	assert_int_equal(strtab_intern(t, "alpha", 4), 3);
	assert_string_equal(strtab_str(t, a, &len), "alpha");
	assert_int_equal(len, 5);
	assert_string_equal(strtab_str(t, 3, NULL), "alph");
	/* an unknown id reads as the empty string */
	assert_string_equal(strtab_str(t, 12345, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(strtab_count(t), 4);
	strtab_free(t);
}

static void test_binary_bytes(void **state)
{
	struct strtab *t = strtab_new();
	size_t len;
	uint32_t a, b;
	const char *s;

	assert_non_null(t);
	a = strtab_intern(t, "a\0b", 3);
	b = strtab_intern(t, "a\0c", 3);
	assert_true(a != b);
	assert_int_equal(strtab_intern(t, "a\0b", 3), a);
	s = strtab_str(t, a, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 3);
	assert_int_equal(s[3], '\0');
	strtab_free(t);
}

/* Thousands of strings: the table grows and every id still maps both ways. */
static void test_growth(void **state)
{
	struct strtab *t = strtab_new();
	char buf[32];

	assert_non_null(t);
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%u", i);

		assert_int_equal(strtab_intern(t, buf, (size_t)n), i + 1);
	}
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%u", i);

		assert_int_equal(strtab_intern(t, buf, (size_t)n), i + 1);
		assert_string_equal(strtab_str(t, i + 1, NULL), buf);
	}
	assert_int_equal(strtab_count(t), 5001);
	strtab_free(t);
	strtab_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_dense_and_stable),
		cmocka_unit_test(test_binary_bytes),
		cmocka_unit_test(test_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
