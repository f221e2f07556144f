/* SPDX-License-Identifier: MIT */
/*
 * Fixtures of the unit tests that intern texts, write the summary JSON or read
 * JSON back (test_paths, test_report, test_summary, test_trace). Header only,
 * like unit.h, which it includes; include after the cmocka headers.
 */
#ifndef LP_TEST_FIXTURES_H
#define LP_TEST_FIXTURES_H

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "strtab.h"
#include "unit.h"

/* The id of the len bytes at s in st, which must take them. */
static inline uint32_t ut_id_n(struct strtab *st, const char *s, size_t len)
{
	uint32_t i = strtab_intern(st, s, len);

	assert_true(i != UINT32_MAX);
	return i;
}

/* The id of the string s in st, which must take it. */
static inline uint32_t ut_id(struct strtab *st, const char *s)
{
	return ut_id_n(st, s, strlen(s));
}

/* The member key of the object o; fails the test when there is none. */
static inline json_object *ut_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key \"%s\" in %s", key, json_object_to_json_string(o));
	return v;
}

/* The len bytes at text: valid UTF-8 and one strict JSON value, parsed. */
static inline json_object *ut_parse_strict(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	assert_true(ut_valid_utf8(text, len));
	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o)
		fail_msg("not JSON: %s\n%s", json_tokener_error_desc(json_tokener_get_error(tok)),
			 text);
	json_tokener_free(tok);
	return o;
}

/* The summary JSON of r as lp_report_summary_json() writes it, NUL-terminated (caller frees). */
static inline char *ut_summary_text(const struct lp_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(lp_report_summary_json(f, r), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

#endif
