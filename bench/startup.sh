#!/usr/bin/env bash
# make bench, row 15: the fixed cost of a short recording. build/examples/nested (a 20 ms
# program) run alone, under `leanprofiler record`, and under bpftrace with an empty program
# on each of the same two markers (`bpftrace -e 'usdt:BIN:leanprofiler:span_enter {}
# usdt:BIN:leanprofiler:span_exit {}' -c BIN`), ROUNDS interleaved rounds (default 5): wall
# time from start to exit, medians in ms, with leanprofiler's goal; then where its time went
# before recording, from the summary's profiler object (medians).
# Usage: bench/startup.sh [BUILD_DIR [LEANPROFILER]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
goal_ms=250
bin=$(realpath "$build/examples/nested")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
# wall_ms CMD...: ms from the start of CMD to its exit (its output in $work/out, $work/err);
# bash's own clock (EPOCHREALTIME, microseconds): no process of its own in the time.
wall_ms() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	"$@" >"$work/out" 2>"$work/err"
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / 1000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
script="usdt:$bin:leanprofiler:span_enter {} usdt:$bin:leanprofiler:span_exit {}"
: >"$work/alone"
: >"$work/lp"
: >"$work/bt"
: >"$work/phases"
run_alone() { wall_ms "$bin" >>"$work/alone"; }
run_lp() {
	local events
	wall_ms "$lp" record -o "$work/rec" -- "$bin" >>"$work/lp"
	events=$(jq .events "$work/rec/leanprofiler-summary.json")
	if [ "$events" != 7 ]; then
		echo "bench: row 15 recorded $events events of the nested example's 7" >&2
		exit 1
	fi
	jq -r '.profiler | [.setup_ns, .open_ns, .load_ns, .attach_ns, .start_to_first_event_ns,
		.end_to_figures_ns] | map(. / 1e6) | @tsv' "$work/rec/leanprofiler-summary.json" \
		>>"$work/phases"
}
run_bt() {
	wall_ms bpftrace -e "$script" -c "$bin" >>"$work/bt"
	if ! grep -q '^Attaching [0-9]* probes' "$work/out"; then
		echo "bench: row 15: bpftrace did not attach its probes: $(head -c 300 "$work/err")" >&2
		exit 1
	fi
}
# The order turns each round: a tool's exit leaves the kernel work (its links removed, its
# memory freed) that would otherwise always fall on the same next one.
order=(run_alone run_lp run_bt)
for ((i = 0; i < rounds; i++)); do
	for ((k = 0; k < 3; k++)); do
		"${order[(i + k) % 3]}"
	done
done
lp_ms=$(median <"$work/lp")
bt_ms=$(median <"$work/bt")
echo "15. fixed cost of a short recording: examples/nested (~20 ms), wall ms, median of $rounds interleaved runs"
printf '   %-56s %8s\n' "the program alone (BIN)" "$(median <"$work/alone")" \
	"leanprofiler record -- BIN" "$lp_ms" \
	"bpftrace -e (empty span_enter, span_exit programs) -c BIN" "$bt_ms"
printf '   %-56s %8s\n' "leanprofiler's goal: <= $goal_ms ms" \
	"$(awk -v a="$lp_ms" -v g="$goal_ms" 'BEGIN { print (a <= g) ? "met" : "missed" }')"
awk -v a="$lp_ms" -v b="$bt_ms" 'BEGIN { printf "   %-56s %8.2f\n", "leanprofiler / bpftrace", a / b }'
col() { cut -f"$1" "$work/phases" | median; }
printf '   leanprofiler before recording, ms (summary, medians): setup %.1f, open %.1f, load %.1f,\n' \
	"$(col 1)" "$(col 2)" "$(col 3)"
printf '   attach %.1f, to the first event %.1f; from the end to its figures %.1f\n' "$(col 4)" \
	"$(col 5)" "$(col 6)"
