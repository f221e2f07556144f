#!/usr/bin/env bash
# make bench, row 20: the Rust crate's markers (bindings/rust) beside the C header's, the same
# loop (examples/span_cost.c and bindings/rust/examples/span_cost.rs: enter + exit with a
# literal name, metadata and counter; "guard": a span! guard, literal name and metadata),
# ROUNDS interleaved rounds (default 5): not attached (SPANS * 50 spans, default 10000000)
# and recorded by leanprofiler record (SPANS, default 200000); medians of ns per span as each
# loop measured itself.
# Usage: bench/rust.sh [BUILD_DIR [LEANPROFILER]]   (cargo: make rust builds the crate)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
spans=${SPANS:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
make --no-print-directory OUT="$build" rust >/dev/null
rust=$build/rust/release/examples/span_cost
cc -O2 -Iinclude examples/span_cost.c -o "$work/span_c"
ns_of() { sed -n 's/.*spans, \(-\{0,1\}[0-9.]*\) ns per span.*/\1/p'; }
: >"$work/results"
for ((i = 0; i < rounds; i++)); do
	echo "c dormant $("$work/span_c" $((spans * 50)) | ns_of)" >>"$work/results"
	echo "rust dormant $("$rust" $((spans * 50)) | ns_of)" >>"$work/results"
	echo "guard dormant $("$rust" --guard $((spans * 50)) | ns_of)" >>"$work/results"
	echo "c rec $("$lp" record -o "$work/out" -- "$work/span_c" "$spans" 2>/dev/null | ns_of)" \
		>>"$work/results"
	echo "rust rec $("$lp" record -o "$work/out" -- "$rust" "$spans" 2>/dev/null | ns_of)" \
		>>"$work/results"
	echo "guard rec $("$lp" record -o "$work/out" -- "$rust" --guard "$spans" 2>/dev/null |
		ns_of)" >>"$work/results"
done
median() { # median WHO WHAT
	awk -v s="$1" -v w="$2" '$1 == s && $2 == w { print $3 }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "20. Rust markers (bindings/rust) beside C's, median of $rounds rounds (ns per span, enter + exit)"
row() { printf '   %-46s %12s %12s\n' "$1" "$2" "$3"; }
row "" "not attached" "recorded"
row "C: LP_SPAN_ENTER/EXIT_COUNTER" "$(median c dormant)" "$(median c rec)"
row "Rust: enter!/exit! with a counter" "$(median rust dormant)" "$(median rust rec)"
row "Rust: span! guard" "$(median guard dormant)" "$(median guard rec)"
