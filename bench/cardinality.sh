#!/usr/bin/env bash
# make bench, row 9: high-cardinality metadata. tests/targets/distinct.c emits N spans of one
# name, each with metadata of its own ("i=K, pad=xxx...", METALEN bytes: a query log with the
# SQL as metadata), recorded with --summary-only, for N in CARDINALITY (default
# "10000 100000 1000000"). Per run: leanprofiler's peak RSS (wait4, through GNU time: the
# summary's own figure is taken before the summary is written), the summary's size and rows,
# the time from the command's last span to leanprofiler's exit (the drain, the table, the
# summary written and synced), and the events lost. One run each; the rows compare within
# this run only.
# Usage: bench/cardinality.sh [BUILD_DIR [LEANPROFILER...]]   METALEN=N (default 100)
#   Each LEANPROFILER given (default BUILD_DIR/leanprofiler) gets its own rows, e.g. a
#   baseline build next to this one.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
lps=("$@")
[ ${#lps[@]} -gt 0 ] || lps=("$build/leanprofiler")
cardinality=${CARDINALITY:-"10000 100000 1000000"}
metalen=${METALEN:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
cc -O2 -Iinclude tests/targets/distinct.c -o "$work/distinct"

echo "9. high-cardinality metadata: N spans, each with $metalen bytes of metadata of its own, --summary-only (one run each)"
printf '   %-10s %-10s %14s %14s %8s %16s %8s\n' build N "peak RSS KiB" "summary KB" rows \
	"exit after (ms)" lost
for lp in "${lps[@]}"; do
	label=$(basename "$(dirname "$(readlink -f "$lp")")")
	for n in $cardinality; do
		out=$work/out
		rm -rf "$out"
		/usr/bin/time -f '%M' -o "$work/rss" "$lp" record --summary-only -o "$out" -- \
			"$work/distinct" "$n" meta "$metalen" >"$work/stdout" 2>/dev/null || true
		now=$(date +%s.%N)
		done_at=$(sed -n 's/^emitted [0-9]* spans, done at \([0-9.]*\)$/\1/p' "$work/stdout")
		sum=$out/leanprofiler-summary.json
		printf '   %-10s %-10s %14s %14s %8s %16s %8s\n' "$label" "$n" "$(tail -n1 "$work/rss")" \
			"$(($(stat -c %s "$sum") / 1000))" "$(jq '.rows | length' "$sum")" \
			"$(awk -v a="$now" -v b="$done_at" 'BEGIN { printf "%.0f", (a - b) * 1000 }')" \
			"$(jq '.lost_events.total' "$sum")"
	done
done
