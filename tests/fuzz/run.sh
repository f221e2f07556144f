#!/usr/bin/env bash
# Runs each libFuzzer target (built by `make fuzz-build`, tests/fuzz/fuzz.mk) for a bounded
# time on a copy of its seed corpus, and ends with "N passed, M failed" (one per fuzzer).
# A fuzzer that finds a crash, a leak, a timeout or a broken invariant fails: its input is
# printed in hex and kept in BUILD_DIR/fuzz/artifacts/. Builds nothing.
# Usage: tests/fuzz/run.sh [BUILD_DIR]
#   FUZZ_SECONDS=N   seconds per fuzzer (default 20)
#   FUZZ_ARGS=...    more libFuzzer options, e.g. "-jobs=4 -workers=4" or "-seed=1"
#   FUZZ_KEEP=DIR    keep each fuzzer's grown corpus in DIR/<fuzzer> (default: discarded)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-20}
passed=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A sanitizer report ends the run with a stack; UBSan's too.
# A smaller quarantine than the default 256 MB: fresh pages cost more than the runs here.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=16:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

hex() { od -An -v -tx1 "$1" | tr -d ' \n'; }

# fuzz NAME MAX_LEN
fuzz() {
	local name=$1 max_len=$2 bin="$build/fuzz/$1" dir="$work/$1" log rc dict=() args
	local stats runs rate cov ft corp artifacts
	echo "=== $name: ${seconds}s"
	if [ ! -x "$bin" ]; then
		echo "FAIL $name: $bin not built (make fuzz-build; needs clang's libFuzzer runtime)"
		failed=$((failed + 1))
		return
	fi
	mkdir -p "$dir/corpus" "$dir/artifacts"
	cp tests/fuzz/corpus/"$name"/* "$dir/corpus/" 2>/dev/null
	[ -f "tests/fuzz/$name.dict" ] && dict=("-dict=tests/fuzz/$name.dict")
	log="$dir/log"
	read -r -a args <<<"${FUZZ_ARGS:-}"
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${dict[@]}" "${args[@]}" \
		"$dir/corpus" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	stats=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$stats")
	echo "$name: ${runs:-?} runs, ${rate:-?} execs/s, coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?}"
	artifacts=$(find "$dir/artifacts" -type f | sort)
	if [ "$rc" -eq 0 ] && [ -z "$artifacts" ]; then
		echo "PASS $name"
		passed=$((passed + 1))
		if [ -n "${FUZZ_KEEP:-}" ]; then
			mkdir -p "$FUZZ_KEEP/$name" && cp "$dir/corpus/"* "$FUZZ_KEEP/$name/"
		fi
		return
	fi
	# The report: from the first sanitizer / invariant line, or the log's end.
	if grep -qnE 'invariant broken|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
		sed -n "$(grep -nE 'invariant broken|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log" | head -1 | cut -d: -f1),\$p" "$log" | head -80
	else
		tail -40 "$log"
	fi
	mkdir -p "$build/fuzz/artifacts"
	for a in $artifacts; do
		cp "$a" "$build/fuzz/artifacts/$name-$(basename "$a")"
		echo "input $(basename "$a") ($(stat -c %s "$a") bytes), hex:"
		hex "$a"
		echo
		echo "reproduce: $bin $build/fuzz/artifacts/$name-$(basename "$a")"
	done
	echo "FAIL $name (exit $rc)"
	failed=$((failed + 1))
}

fuzz fuzz_decode 8192
fuzz fuzz_meta 2048
fuzz fuzz_summary 16384
fuzz fuzz_pftrace 16384

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
