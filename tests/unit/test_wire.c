// SPDX-License-Identifier: MIT
/*
 * The contracts between the marker header, the wire format and the user half
 * that no single file can check: include/leanprofiler.h and bpf/wire.h are
 * compiled together only here. The checks are at compile time; the test
 * cases say what was checked, and check what only runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/types.h>

#include "bpf/wire.h"
#include "leanprofiler.h"

/* The marker ABI the kernel half decodes is the one the header emits. */
_Static_assert(LP_MARKER_ABI == LP_MARKER_ABI_VERSION, "marker ABI version");
_Static_assert(LP_MARKER_ABI_SHIFT == LP_MARKER_ABI_BITS_SHIFT, "marker ABI shift");
_Static_assert((LP_MARKER_ABI >> 4) == 0, "marker ABI fits LP_MARKER_ABI_BITS_MASK");
/* The marker's own flag bits travel unchanged in the low byte of the record's flags. */
_Static_assert(LP_MARKER_NAME_LITERAL == LP_EV_NAME_LITERAL, "name literal flag");
_Static_assert(LP_MARKER_META_LITERAL == LP_EV_META_LITERAL, "meta literal flag");
_Static_assert(LP_MARKER_HAS_COUNTER == LP_EV_HAS_COUNTER, "counter flag");
_Static_assert(LP_MARKER_WARMUP == LP_EV_WARMUP, "warm-up flag");
/* A scope's copy of its name is cut where the kernel's read of a name is. */
_Static_assert(LP__SCOPE_NAME_BUF == LP_NAME_BUF, "LP_SPAN_SCOPE's name copy");

/* The flags a marker passes decode to its ABI version (as the kernel half computes them). */
static void test_marker_flags_decode(void **state)
{
	uint64_t flags = LP__FLAGS("lit", (const char *)0, LP_MARKER_HAS_COUNTER);
	uint16_t wire = (uint16_t)((flags & (LP_EV_NAME_LITERAL | LP_EV_META_LITERAL |
					     LP_EV_HAS_COUNTER)) |
				   (((flags >> LP_MARKER_ABI_BITS_SHIFT) & LP_MARKER_ABI_BITS_MASK)
				    << LP_EV_ABI_SHIFT));

	(void)state;
	assert_int_equal(LP_EV_ABI(wire), LP_MARKER_ABI_VERSION);
	assert_true(wire & LP_EV_HAS_COUNTER);
	assert_true(wire & LP_EV_META_LITERAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marker_flags_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
