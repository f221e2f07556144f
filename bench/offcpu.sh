#!/usr/bin/env bash
# make bench, rows 11 and 12: what `record --off-cpu` costs (its sched_switch and sched_wakeup
# programs run on every context switch of the host). Medians of interleaved rounds; only the
# ratios of one run mean anything on a shared machine.
#  11. A bystander: bench/pingpong.c, two processes nobody records bouncing one byte through
#     two pipes (PINGPONG_N round trips, default 30000), both on one CPU and one on each of
#     two CPUs, in PINGPONG_ROUNDS interleaved rounds (default 3 x ROUNDS): alone, with empty
#     programs on the same two tracepoints (bench/sched_floor.bpf.c, loaded by
#     bench/sched_floor.c: the floor), while `leanprofiler record` records another process,
#     and while `leanprofiler record --off-cpu` does. That process is `pingpong wait` (built with markers): it prints
#     "ready PID attached" from inside its first span, so the recording is attached before
#     the ping-pong starts (no sleep), and it ends, ending the recording, when its stdin
#     is closed after the ping-pong.
#  12. Per span: examples/span_cost (SPANS spans, default 200000, no context switch in a span)
#     and `pingpong N` built with markers (TRIPS round trips, default 50000, one CPU: each
#     round trip is a span that sleeps in the middle) recorded with and without --off-cpu.
# Usage: bench/offcpu.sh [BUILD_DIR [LEANPROFILER]]   ROUNDS=N (default 5)   PINGPONG_N
#        PINGPONG_ROUNDS   SPANS   TRIPS
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
pp_n=${PINGPONG_N:-30000}
pp_rounds=${PINGPONG_ROUNDS:-$((3 * rounds))}
spans=${SPANS:-200000}
trips=${TRIPS:-50000}
work=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap 'rm -rf "$work"; sysctl -qw kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
cc -O2 -Iinclude bench/pingpong.c -o "$work/pingpong"
cc -O2 -Iinclude -DMARKED bench/pingpong.c -o "$work/pingpong_marked"
cc -O2 -Iinclude examples/span_cost.c -o "$work/span_fast"
# Row 11's floor: empty programs on the same tracepoints, attached the same way (tp_btf).
clang -g -O2 -target bpf -idirafter "/usr/include/$(cc -print-multiarch)" \
	-c bench/sched_floor.bpf.c -o "$work/sched_floor.bpf.o"
cc -O2 bench/sched_floor.c -lbpf -o "$work/sched_floor"

pp_ns() { sed -n 's/^pingpong: .*, \([0-9.]*\) ns per round trip, .*/\1/p'; }
pp_cpu() { sed -n 's/.*, \([0-9.]*\) ns of CPU per round trip, .*/\1/p'; }
pp_sw() { sed -n 's/.*, \([0-9.]*\) context switches per round trip$/\1/p'; }
span_ns() { sed -n 's/.*spans, \(-\{0,1\}[0-9.]*\) ns per span.*/\1/p'; }
flags_of() { # flags_of record|offcpu -> record's options
	case $1 in
	record) echo "--summary-only" ;;
	offcpu) echo "--off-cpu --summary-only" ;;
	esac
}

# prog_ids PID: the ids of the BPF programs process PID holds, one a line.
prog_ids() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u
}

# prog_stats PID: "runs ns runs ns" of the programs lp_sched_switch and lp_sched_wakeup that
# the leanprofiler of PID loaded (its BPF file descriptors: other recordings may be running),
# counted while kernel.bpf_stats_enabled is 1.
prog_stats() {
	bpftool -j prog show | jq -r --argjson ids "[$(prog_ids "$1" | paste -sd, -)]" '
		[.[] | select(.id as $i | $ids | any(. == $i))] as $p
		| ["lp_sched_switch", "lp_sched_wakeup"]
		| map(. as $n | [$p[] | select(.name == $n)]
			| [(map(.run_cnt // 0) | add // 0), (map(.run_time_ns // 0) | add // 0)])
		| flatten | @tsv'
}

# foreign_hooks [PID]: how many BPF programs on the scheduler's switch and wakeup tracepoints
# are not the recording's of leanprofiler PID (another `record --off-cpu`, a bpftrace on
# sched:sched_switch, ...): their cost would be in every column. Noted in the results.
foreign_hooks() {
	local tp='^sched_(switch|wakeup|wakeup_new|waking)$'
	{
		bpftool -j link show 2>/dev/null |
			jq -r --arg tp "$tp" '.[] | select((.tp_name // "") | test($tp)) | .prog_id'
		bpftool -j perf show 2>/dev/null |
			jq -r --arg tp "$tp" '.[] | select((.tracepoint // "") | test($tp)) | .prog_id'
	} | { grep -cvxF -f <(if [ -n "${1:-}" ]; then prog_ids "$1"; fi) || true; }
}
hooks_note() { # hooks_note ROW [PID]
	local row=$1
	shift
	echo "hooks_$row $(foreign_hooks "$@")" >>"$work/results"
}

# pingpongs [stats]: the ping-pong on one CPU and on two (the order turning with the round
# number, $2); with "stats", one run on one CPU.
pingpongs() {
	if [ "${1:-}" = stats ]; then
		"$work/pingpong" "$pp_n" same
	elif [ $((${2:-0} % 2)) = 1 ]; then
		"$work/pingpong" "$pp_n" same && "$work/pingpong" "$pp_n" two
	else
		"$work/pingpong" "$pp_n" two && "$work/pingpong" "$pp_n" same
	fi
}

# bystander WHAT ROUND|stats: the ping-pongs (WHAT: alone, floor, record, offcpu), their lines on
# stdout; with "stats", the recording's switch and wakeup programs' runs and time during the
# ping-pong too, in $work/stats_before and $work/stats_after.
bystander() {
	if [ "$1" = alone ]; then
		hooks_note 11
		pingpongs "" "$2"
		hooks_note 11
		return
	fi
	local out=$work/idle_$1 ready="" pid="" state="" lines rfd wfd rec_pid
	rm -rf "$out"
	if [ "$1" = floor ]; then # it says "ready" once its programs are attached
		coproc REC { exec "$work/sched_floor" "$work/sched_floor.bpf.o" 2>"$work/idle.err"; }
	else
		# shellcheck disable=SC2046
		coproc REC { exec "$lp" record $(flags_of "$1") -o "$out" -- \
			"$work/pingpong_marked" wait 2>"$work/idle.err"; }
	fi
	# Bash unsets REC and REC_PID once it has reaped the coprocess.
	# shellcheck disable=SC2153
	rfd=${REC[0]} wfd=${REC[1]} rec_pid=$REC_PID
	read -r -t 60 ready pid state <&"$rfd" || true
	if [ "$1" = floor ] && [ "$ready" != ready ]; then
		echo "bench: sched_floor did not attach its programs" >&2
		cat "$work/idle.err" >&2
		return 1
	elif [ "$1" != floor ] && [ "$ready $state" != "ready attached" ]; then
		echo "bench: the idle target of \`record $(flags_of "$1")\` did not start attached:" \
			"'$ready $pid $state'" >&2
		cat "$work/idle.err" >&2
		return 1
	fi
	hooks_note 11 "$rec_pid"
	[ "$2" = stats ] && prog_stats "$rec_pid" >"$work/stats_before"
	if [ "$2" = stats ]; then lines=$(pingpongs stats); else lines=$(pingpongs "" "$2"); fi
	[ "$2" = stats ] && prog_stats "$rec_pid" >"$work/stats_after"
	hooks_note 11 "$rec_pid"
	exec {wfd}>&- # the idle target reads end of file: it ends and the recording with it
	cat <&"$rfd" >"$work/idle.out"
	wait "$rec_pid" || { cat "$work/idle.err" >&2; return 1; }
	if [ "$1" = floor ]; then
		echo "$lines"
		return
	fi
	# It was recorded: its one span is in the summary.
	if [ "$(jq -r '[.rows[] | select(.name == "pingpong.wait") | .calls] | add' \
		"$out/leanprofiler-summary.json")" != 1 ]; then
		echo "bench: the idle target's span is not in the summary of \`record $(flags_of "$1")\`" >&2
		return 1
	fi
	# With --off-cpu, the switch programs saw it leave its CPU when it began to wait (before
	# the ping-pong) and come back at its end: its span is blocked for most of its time.
	if [ "$1" = offcpu ] && [ "$(jq -r '[.rows[] | select(.name == "pingpong.wait")][0]
		| .total_blocked_ns * 2 > .total_ns' "$out/leanprofiler-summary.json")" != true ]; then
		echo "bench: the idle target's span is not blocked under \`record --off-cpu\`" >&2
		return 1
	fi
	echo "$lines"
}

# per_span LOAD WHAT: ns per span of LOAD (span_cost, trips) not attached or recorded.
per_span() {
	local cmd
	case $1 in
	span_cost) cmd=("$work/span_fast" "$spans") ;;
	trips) cmd=("$work/pingpong_marked" "$trips" same) ;;
	esac
	hooks_note 12
	if [ "$2" = alone ]; then
		"${cmd[@]}"
	else
		# shellcheck disable=SC2046
		"$lp" record $(flags_of "$2") -o "$work/spans" -- "${cmd[@]}" 2>/dev/null
	fi
	hooks_note 12
}

# turn ROUND MODE...: the modes in an order that turns with ROUND: none always runs first or
# right after a recording.
turn() {
	local r=$1
	shift
	local n=$#
	echo "$* $*" | cut -d' ' -f$((r % n + 1))-$((r % n + n))
}
sysctl -qw kernel.bpf_stats_enabled=0 # its own cost would be in every figure
# The bystander's rounds are short (the host's slow spells last seconds: many short rounds
# keep one from landing on a single mode's figures).
for r in $(seq 1 "$pp_rounds"); do
	for what in $(turn "$r" alone floor record offcpu); do
		bystander "$what" "$r" | while read -r line; do
			cpu=same
			[[ $line == *"(two CPUs)"* ]] && cpu=two
			echo "ppw_$cpu $what $(pp_ns <<<"$line") $(pp_sw <<<"$line")"
			echo "ppc_$cpu $what $(pp_cpu <<<"$line") $(pp_sw <<<"$line")"
		done >>"$work/results"
	done
	if [ $((r % 5)) = 0 ]; then
		echo "bench: off-cpu bystander round $r of $pp_rounds done" >&2
	fi
done
for r in $(seq 1 "$rounds"); do
	order=$(turn "$r" alone record offcpu)
	for what in $order; do
		echo "span_cost $what $(per_span span_cost "$what" | span_ns)" >>"$work/results"
		echo "trips $what $(per_span trips "$what" | pp_ns)" >>"$work/results"
	done
	echo "bench: off-cpu per-span round $r of $rounds done" >&2
done

median() { # median ROW WHAT [COLUMN]
	awk -v s="$1" -v w="$2" -v c="${3:-3}" '$1 == s && $2 == w { print $c }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$(median "$1" "$2")" -v b="$(median "$1" "$3")" 'BEGIN { printf "%.3f", a / b }'; }
# added ROW WHAT BASE: ns more per context switch (the row's switches per round trip)
added() {
	awk -v a="$(median "$1" "$2")" -v b="$(median "$1" "$3")" -v s="$(median "$1" "$3" 4)" \
		'BEGIN { printf "%.0f", (a - b) / s }'
}

# hooks_warning ROW: what the checks for other programs on the scheduler's tracepoints found.
hooks_warning() {
	awk -v row="hooks_$1" '$1 == row { n++; if ($2 > 0) f++ }
		END { if (f) printf "   warning: other BPF programs were on sched_switch or sched_wakeup at %d of %d\n   checks (another recording with --off-cpu, a bpftrace): their cost is in every column\n", f, n }' \
		"$work/results"
}

echo "11. --off-cpu, a bystander: bench/pingpong $pp_n, two processes not recorded, one byte through"
echo "   two pipes, alone, with empty programs on sched_switch and sched_wakeup (floor), and while"
echo "   record (without and with --off-cpu) records an idle marked process; ns per round trip,"
echo "   medians of $pp_rounds interleaved rounds"
printf '   %-24s %8s %8s %8s %9s %9s %9s %9s %9s\n' "" alone floor record --off-cpu \
	"rec/alone" "flr/alone" "off/alone" "ns/switch"
for cpu in same two; do
	for m in w c; do
		case $cpu$m in
		samew) label="one CPU, wall" ;;
		samec) label="one CPU, CPU of both" ;;
		twow) label="two CPUs, wall" ;;
		twoc) label="two CPUs, CPU of both" ;;
		esac
		r=pp${m}_$cpu
		printf '   %-24s %8.0f %8.0f %8.0f %9.0f %9s %9s %9s %9s\n' "$label" \
			"$(median "$r" alone)" "$(median "$r" floor)" "$(median "$r" record)" \
			"$(median "$r" offcpu)" "$(ratio "$r" record alone)" "$(ratio "$r" floor alone)" \
			"$(ratio "$r" offcpu alone)" "$(added "$r" offcpu alone)"
	done
done
echo "   target: off/alone < 1.05 (a bystander < 5% slower while --off-cpu records). floor: empty"
echo "   programs on the same two tracepoints (bench/sched_floor.bpf.c), what any program there"
echo "   costs; rec/alone: the noise (record alone runs nothing on a switch); ns/switch:"
echo "   (off - alone) / $(median ppw_same alone 4) switches per round trip"
hooks_warning 11
echo
echo "12. --off-cpu, per span: ns per span, recorded without and with --off-cpu (--summary-only,"
echo "   default sites), medians of $rounds interleaved rounds"
printf '   %-46s %10s %10s %10s %10s\n' "" "alone" record --off-cpu "off/record"
printf '   %-46s %10.1f %10.1f %10.1f %10s\n' "examples/span_cost $spans (no switch in a span)" \
	"$(median span_cost alone)" "$(median span_cost record)" "$(median span_cost offcpu)" \
	"$(ratio span_cost offcpu record)"
printf '   %-46s %10.1f %10.1f %10.1f %10s\n' "pingpong $trips, marked (a pipe round trip each)" \
	"$(median trips alone)" "$(median trips record)" "$(median trips offcpu)" \
	"$(ratio trips offcpu record)"
echo "   target: off/record < 1.10 (a recorded span < 10% dearer with --off-cpu)"
hooks_warning 12

# Where it goes: the kernel's time in the two programs (kernel.bpf_stats_enabled, on only
# here; its own clock reads are in these figures), per run and runs per round trip: for the
# bystander (threads not recorded: the early return), over the ping-pong only; for the
# recorded ping-pong (its threads tracked), the time per run over its recording (sampled every
# 0.2 s until it ends).
sysctl -qw kernel.bpf_stats_enabled=1
bystander offcpu stats >/dev/null
read -r s0 st0 w0 wt0 <"$work/stats_before"
read -r s1 st1 w1 wt1 <"$work/stats_after"
"$lp" record --off-cpu --summary-only -o "$work/spans" -- "$work/pingpong_marked" "$trips" same \
	>/dev/null 2>&1 &
rec_pid=$! last=""
while kill -0 "$rec_pid" 2>/dev/null; do
	now=$(prog_stats "$rec_pid" 2>/dev/null || true)
	[ -n "$now" ] && [ "${now%%	*}" != 0 ] && last=$now
	sleep 0.2
done
wait "$rec_pid" || true
# The markers' programs per event (the summary's profiler figures), without and with
# --off-cpu: with it, every event carries its thread's cpu/runq/blocked sums.
marker_ns() { # marker_ns FLAGS...
	"$lp" record "$@" --summary-only -o "$work/marker" -- "$work/span_fast" "$spans" \
		>/dev/null 2>&1 &&
		jq -r '.profiler | .bpf_program_run_time_ns / .bpf_program_runs | floor' \
			"$work/marker/leanprofiler-summary.json"
}
m_rec=$(marker_ns || echo nan)
m_off=$(marker_ns --off-cpu || echo nan)
sysctl -qw kernel.bpf_stats_enabled=0
read -r s2 st2 w2 wt2 <<<"${last:-0 0 0 0}"
per() { # per RUNS NS ROUND_TRIPS -> "R runs/trip x N ns"
	awk -v r="$1" -v t="$2" -v n="$3" \
		'BEGIN { if (r > 0) printf "%.2f x %.0f ns", r / n, t / r; else printf "nan" }'
}
echo "   BPF program time (kernel.bpf_stats_enabled, one run each): runs per round trip x ns per run"
printf '   %-46s %20s %20s\n' "" lp_sched_switch lp_sched_wakeup
printf '   %-46s %20s %20s\n' "bystander, one CPU (not recorded: early return)" \
	"$(per $((s1 - s0)) $((st1 - st0)) "$pp_n")" "$(per $((w1 - w0)) $((wt1 - wt0)) "$pp_n")"
# Sampled: the last sample misses the recording's end, so only the time per run is shown.
nsper() { awk -v r="$1" -v t="$2" 'BEGIN { if (r > 0) printf "%.0f ns", t / r; else printf "nan" }'; }
printf '   %-46s %20s %20s\n' "pingpong $trips, marked, one CPU (recorded)" \
	"$(nsper "$s2" "$st2")" "$(nsper "$w2" "$wt2")"
printf '   %-46s %20s %20s\n' "" record --off-cpu
printf '   %-46s %20s %20s\n' "markers' programs per event, span_cost $spans" "$m_rec ns" "$m_off ns"
