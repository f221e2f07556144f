#!/usr/bin/env bash
# make bench, row 14: what `--preset libstdcxx` costs a program that throws. bench/throw.cc
# (THROWS throws and catches of a std::runtime_error through a call, default 200000) run
# alone and under `leanprofiler record --preset libstdcxx --summary-only`, ROUNDS interleaved
# rounds (default 5): the program's own ns per throw (medians), and the recorded spans'
# mean (the `exception in flight` row: throw to catch, part of the same time).
# Usage: bench/throw.sh [BUILD_DIR [LEANPROFILER]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
throws=${THROWS:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
c++ -O2 bench/throw.cc -o "$work/throw"
each() { sed -n 's/^throw: .*, \([0-9.]*\) ns each$/\1/p'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$work/plain"
: >"$work/rec"
: >"$work/span"
for ((i = 0; i < rounds; i++)); do
	"$work/throw" "$throws" | each >>"$work/plain"
	"$lp" record --preset libstdcxx --summary-only -o "$work/out" -- "$work/throw" "$throws" \
		>"$work/rec.out" 2>"$work/rec.err"
	each <"$work/rec.out" >>"$work/rec"
	jq -r '[.rows[] | select(.name == "exception in flight")] |
		(map(.total_ns) | add) / (map(.calls) | add)' \
		"$work/out/leanprofiler-summary.json" >>"$work/span"
	calls=$(jq '[.rows[] | select(.name == "exception in flight") | .calls] | add' \
		"$work/out/leanprofiler-summary.json")
	if [ "$calls" != "$throws" ]; then
		echo "bench: row 14 recorded $calls exception spans of $throws throws" >&2
		exit 1
	fi
done
plain=$(median <"$work/plain")
rec=$(median <"$work/rec")
span=$(median <"$work/span")
echo "14. libstdc++ throw + catch, $throws per run, median of $rounds runs (ns per throw)"
printf '   %-46s %12s\n' "not recorded" "$plain" "--preset libstdcxx" "$rec" \
	"recorded span (throw to catch), mean" "$(awk -v s="$span" 'BEGIN { printf "%.1f", s }')"
awk -v a="$rec" -v b="$plain" 'BEGIN { printf "   %-46s %12.2f\n", "recorded / not recorded", a / b }'
