// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `leanprofiler report` and `diff` on hostile summary files.
 * The input is the file's text; lp_summary_parse either refuses it (with a
 * problem to say) or every view of it prints, and so does its diff against
 * itself (text and JSON).
 *
 * Invariants (abort() when broken): a refusal says something; what the views
 * print is valid UTF-8 with no control character but '\n' (the file's text
 * goes through the display sanitizer); a recording compared with itself has
 * no regression; the diff's JSON parses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_report.h"
#include "diff.h"
#include "fuzz_common.h"
#include "summary_read.h"

static void check_text(const char *what, const char *text, size_t len)
{
	FUZZ_CHECK(fz_valid_utf8(text, len), "%s is not valid UTF-8", what);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		FUZZ_CHECK(c == '\n' || (c >= 0x20 && c != 0x7f), "control byte %#x in %s", c,
			   what);
		FUZZ_CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] < 0xa0),
			   "C1 control in %s", what);
	}
}

static void view(const struct lp_summary *s, const struct lp_view_opts *o, const char *what)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int err;

	FUZZ_CHECK(m, "open_memstream: %s", strerror(errno));
	err = lp_view_print(m, s, o);
	fclose(m);
	FUZZ_CHECK(!err, "%s: %d", what, err);
	check_text(what, text, len);
	free(text);
}

static void diff(const struct lp_summary *s, bool json)
{
	struct lp_diff_opts o = { .threshold = LP_DIFF_THRESHOLD, .json = json };
	char *text = NULL;
	size_t len = 0, regressions = 1;
	FILE *m = open_memstream(&text, &len);

	FUZZ_CHECK(m, "open_memstream: %s", strerror(errno));
	FUZZ_CHECK(lp_diff_print(m, s, s, &o, &regressions) == 0, "diff failed");
	fclose(m);
	FUZZ_CHECK(regressions == 0, "%zu regressions against itself", regressions);
	if (json) {
		json_object *root = json_tokener_parse(text);

		FUZZ_CHECK(root, "diff --json does not parse");
		json_object_put(root);
		FUZZ_CHECK(fz_valid_utf8(text, len), "diff --json is not valid UTF-8");
	} else {
		check_text("diff", text, len);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct lp_view_opts views[] = {
		{ .view = LP_VIEW_TABLE },
		{ .view = LP_VIEW_TABLE, .sort = LP_SORT_NAME, .top = 3, .verbose = true },
		{ .view = LP_VIEW_TABLE, .sort = LP_SORT_P95, .min_total_ns = 1000 },
		{ .view = LP_VIEW_THREADS, .sort = LP_SORT_CALLS },
		{ .view = LP_VIEW_TREE, .top = 2, .min_total_ns = 10 },
		{ .view = LP_VIEW_FOLDED },
	};
	struct lp_summary s;
	char problem[LP_SUMMARY_PROBLEM_MAX];
	int err = lp_summary_parse((const char *)data, size, "fuzz\x1b.json", &s, problem,
				   sizeof(problem));

	if (err) {
		FUZZ_CHECK(problem[0], "refused (%d) without a reason", err);
		return 0;
	}
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (s.has_paths || views[i].view < LP_VIEW_TREE)
			view(&s, &views[i], "a view");
	diff(&s, false);
	diff(&s, true);
	lp_summary_free(&s);
	return 0;
}
