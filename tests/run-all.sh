#!/usr/bin/env bash
# Runs every test suite (unit, header, trace consumer, integration with real BPF) and
# ends with one line "N passed, M failed" counting test cases over all suites.
# Usage: tests/run-all.sh [BUILD_DIR]   (make check builds everything first)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
passed=0 failed=0 skipped=0 bad_suites=()

# Adds a suite's counts: cmocka's "[  PASSED  ] N test(s)" / "[  FAILED  ] N test(s)"
# lines, or a shell suite's "N passed, M failed"; a suite that failed without saying
# how many tests failed counts as one failure.
suite() {
	local name=$1 log rc p=0 f=0 s=0
	shift
	log=$(mktemp)
	echo "=== $name"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | awk '{s+=$NF} END {print s+0}')
	f=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$(NF-1)} END {print s+0}')
	if grep -qE '^[0-9]+ passed, [0-9]+ failed' "$log"; then
		read -r p f < <(grep -oE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 |
			awk '{print $1, $3}')
	fi
	s=$(grep -c '^SKIPPED' "$log")
	rm -f "$log"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$rc" -ne 0 ] && bad_suites+=("$name")
	return 0
}

for t in "$build"/tests/unit/*; do
	[ -x "$t" ] && suite "unit: $(basename "$t")" "$t"
done
for t in "$build"/san/tests/unit/*; do
	[ -x "$t" ] && suite "unit under ASan+UBSan: $(basename "$t")" "$t"
done
suite "header: compiles as C99/C11/GNU11/C2x/C++, notes, semaphore" tests/header/run.sh
suite "man: pages render cleanly and document exactly the options of --help" tests/man/run.sh "$build"
suite "consumer: install speedscope's importer" tests/consumer/setup.sh
suite "consumer: selftest (good and bad traces)" tests/consumer/selftest.sh
suite "integration: real BPF recording" "$build/tests/integration/test_record" "$build"
suite "integration: list USDT probes, as nobody" "$build/tests/integration/test_list" "$build"
suite "integration: presets and --span on CPython, libstdc++" "$build/tests/integration/test_presets" "$build"
suite "integration: postgresql preset on a throwaway PostgreSQL 15 cluster" "$build/tests/integration/test_postgres" "$build"
suite "integration: export to throwaway ClickHouse 18.16 servers (two shards)" "$build/tests/integration/test_export" "$build"
suite "integration: jvm preset on OpenJDK 17 (libjvm.so dlopen()ed)" "$build/tests/integration/test_jvm" "$build"
suite "integration: attach to running processes" "$build/tests/integration/test_attach" "$build"
suite "integration: every process and library of a family, in every mode" "$build/tests/integration/test_follow" "$build"
suite "integration: attacks by profiled programs and other users" "$build/tests/integration/test_security" "$build"
suite "integration: --off-cpu split against the kernel's own accounting" "$build/tests/integration/test_offcpu" "$build"
suite "integration: the core under users' loads (threads, reused ids, exits, --duration)" "$build/tests/integration/test_core" "$build"
suite "integration: the same loads through the profiler built with ASan+UBSan" "$build/tests/integration/test_core" "$build" "$build/san/leanprofiler"
suite "integration: Python programs marked with the leanprofiler module" "$build/tests/integration/test_python" "$build"
suite "integration: hostile names, metadata and nesting" "$build/tests/integration/test_hostile" "$build"
suite "integration: the Rust crate (bindings/rust), span by span and its probes' flags" "$build/tests/integration/test_rust" "$build"
suite "integration: record --format perfetto, decoded by protoc against the JSON trace" "$build/tests/integration/test_pftrace" "$build"
suite "integration: top in a real terminal (tmux), and its batch mode" "$build/tests/integration/test_top" "$build"
suite "integration: record --window: windows add up, --keep" "$build/tests/integration/test_window" "$build"
suite "integration: report and diff read recordings back" "$build/tests/integration/test_report" "$build"
suite "integration: report --svg and --html, drawn by rsvg-convert and headless Chromium" "$build/tests/integration/test_pictures" "$build"
suite "install: make install/uninstall, pkg-config, bash completion, make deb and dpkg" tests/install/run.sh "$build"
suite "fuzz: libFuzzer, ${FUZZ_SECONDS:-20} s per fuzzer" tests/fuzz/run.sh "$build"

echo
[ ${#bad_suites[@]} -gt 0 ] && printf 'failed suite: %s\n' "${bad_suites[@]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ ${#bad_suites[@]} -eq 0 ]
