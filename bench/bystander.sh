#!/usr/bin/env bash
# make bench, row 16: what recording one process with -p costs another process of the same
# marked binary (a bystander). bench/bystander.c: one process waits (the target, recorded with
# `record -p`), the other runs BYSTANDER_SPANS spans (default 1000000), each around
# BYSTANDER_WORK rounds of a loop (default 3000, ~1 us), and prints its span rate per second
# of its own CPU time (user and kernel: what time the host gives others does not swell). Per round,
# interleaved (ROUNDS, default 5): the bystander alone; while the target is recorded with pid
# filtering (the default: the probes are linked to the target alone); and while it is recorded
# with LEANPROFILER_PID_FILTER=0 (links for every process of the file, as without pid
# filtering: each of the bystander's markers traps into the kernel). Medians of spans/s and
# their ratios to alone. Target: pid-filtered within 2% of alone.
# Usage: bench/bystander.sh [BUILD_DIR [LEANPROFILER]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
spans=${BYSTANDER_SPANS:-1000000}
work_k=${BYSTANDER_WORK:-3000}
work=$(mktemp -d)
target=""
recorder=""
cleanup() {
	[ -n "$recorder" ] && kill -INT "$recorder" 2>/dev/null && wait "$recorder" 2>/dev/null
	[ -n "$target" ] && kill "$target" 2>/dev/null && wait "$target" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
cc -O2 -Iinclude bench/bystander.c -o "$work/bystander"

# The target: the same file, waiting until its stdin (a FIFO held open here) closes.
mkfifo "$work/in"
"$work/bystander" wait <"$work/in" >"$work/target.out" &
target=$!
exec 3>"$work/in"

# Starts `record -p` on the target and returns once it says it is recording.
start_recording() { # start_recording PID_FILTER
	: >"$work/rec.err" # here, before the recording's own shell could open it
	LEANPROFILER_PID_FILTER=$1 "$lp" record --summary-only -o "$work/out" -p "$target" \
		>/dev/null 2>"$work/rec.err" &
	recorder=$!
	for _ in $(seq 1 2000); do
		grep -q 'recording PID' "$work/rec.err" && return 0
		kill -0 "$recorder" 2>/dev/null || break
		sleep 0.01
	done
	echo "bench: row 16: record -p did not start: $(cat "$work/rec.err")" >&2
	exit 1
}

stop_recording() {
	kill -INT "$recorder"
	wait "$recorder" || true
	recorder=""
}

rate() { sed -n 's/^bystander: .*, \([0-9]*\) spans per CPU-second, active \([01]\)$/\1 \2/p'; }
: >"$work/results"
for ((i = 0; i < rounds; i++)); do
	echo "alone $("$work/bystander" "$spans" "$work_k" | rate)" >>"$work/results"
	for mode in pid file; do
		start_recording "$([ $mode = pid ] && echo 1 || echo 0)"
		echo "$mode $("$work/bystander" "$spans" "$work_k" | rate)" >>"$work/results"
		stop_recording
	done
done
exec 3>&-
wait "$target"
target=""

median() { # median MODE -> spans/s
	awk -v m="$1" '$1 == m { print $2 }' "$work/results" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
active() { awk -v m="$1" '$1 == m { a = a + $3 } END { print a + 0 }' "$work/results"; }
alone=$(median alone)
echo "16. a bystander: another process of the same marked binary while one is recorded with -p:"
echo "   $spans spans of ~$work_k loop rounds each, medians of $rounds interleaved rounds"
printf '   %-52s %12s %10s %14s\n' "" "spans/CPU-s" "/alone" "LP_ACTIVE() 1"
for mode in alone pid file; do
	case $mode in
	alone) label="alone (nothing recorded)" ;;
	pid) label="target recorded, probes linked to it alone" ;;
	file) label="target recorded, file-wide links (PID_FILTER=0)" ;;
	esac
	printf '   %-52s %12s %10s %14s\n' "$label" "$(median $mode)" \
		"$(awk -v a="$(median $mode)" -v b="$alone" 'BEGIN { printf "%.3f", a / b }')" \
		"$(active $mode) of $rounds"
done
echo "   target: pid-filtered /alone >= 0.98 (the bystander within 2% of alone)"
