#!/usr/bin/env bash
# make bench: one table, every figure from this run, medians of interleaved rounds (the
# machine is shared and noisy: only ratios measured side by side mean anything).
# Usage: bench/run.sh [BUILD_DIR]   ROUNDS=N (default 5)   SPANS=N (default 200000)
#        CAPACITY_SPANS=N (per thread, default 1000000)   MEMORY_SPANS="1000000 10000000"
#        CARDINALITY="10000 100000 1000000"   METALEN=N (row 9, bench/cardinality.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
spans=${SPANS:-200000}
capacity_spans=${CAPACITY_SPANS:-1000000}
memory_spans=${MEMORY_SPANS:-"1000000 10000000"}
lp=$build/leanprofiler
work=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap 'rm -rf "$work"; sysctl -qw kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true' EXIT
bench_start=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi

# The span loop, built twice: the default probe sites (a nop5 the kernel turns into a
# trampoline call) and LP_SDT_SITES (a 1-byte nop, hit through int3, as <sys/sdt.h>).
cc -O2 -Iinclude -DLP_SDT_SITES examples/span_cost.c -o "$work/span_sdt"
cc -O2 -Iinclude examples/span_cost.c -o "$work/span_fast"
# The multi-threaded load of the capacity and memory rows (default sites: the highest rate).
cc -O2 -Iinclude -pthread bench/producer.c -o "$work/producer"

# ns per span (enter + exit) as the loop itself measured it.
ns_of() { sed -n 's/.*spans, \(-\{0,1\}[0-9.]*\) ns per span.*/\1/p'; }

# bpftrace programs on the same markers: empty (the kernel's uprobe floor), and the
# cheapest one that still records what a span needs (its start per thread, its duration).
for site in sdt fast; do
	bin=$work/span_$site
	printf 'usdt:%s:leanprofiler:span_enter { }\nusdt:%s:leanprofiler:span_exit { }\n' \
		"$bin" "$bin" >"$work/floor_$site.bt"
	printf 'usdt:%s:leanprofiler:span_enter { @s[tid] = nsecs; }\nusdt:%s:leanprofiler:span_exit { @d[tid] = nsecs - @s[tid]; }\n' \
		"$bin" "$bin" >"$work/bpftrace_$site.bt"
	# The clock read alone (bpf_ktime_get_ns()), which every recording program makes.
	printf 'usdt:%s:leanprofiler:span_enter { $t = nsecs; }\nusdt:%s:leanprofiler:span_exit { $t = nsecs; }\n' \
		"$bin" "$bin" >"$work/clock_$site.bt"
done

measure() { # measure SITE WHAT -> ns per span
	local bin=$work/span_$1
	case $2 in
	dormant) "$bin" $((spans * 50)) | ns_of ;;
	floor) bpftrace "$work/floor_$1.bt" -c "$bin $spans" 2>/dev/null | ns_of ;;
	bpftrace) bpftrace "$work/bpftrace_$1.bt" -c "$bin $spans" 2>/dev/null | ns_of ;;
	leanprofiler) "$lp" record -o "$work/out" -- "$bin" "$spans" 2>/dev/null | ns_of ;;
	esac
}

whats="dormant floor leanprofiler bpftrace"
sysctl -qw kernel.bpf_stats_enabled=0 # its own cost would be in every figure
for r in $(seq 1 "$rounds"); do
	for site in sdt fast; do
		for what in $whats; do
			echo "$site $what $(measure "$site" "$what")" >>"$work/results"
		done
	done
	echo "bench: round $r of $rounds done" >&2
done

median() { # median SITE WHAT
	awk -v s="$1" -v w="$2" '$1 == s && $2 == w { print $3 }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "leanprofiler bench: $rounds interleaved rounds of $spans spans (enter + exit), median ns per span"
printf '%-46s %14s %14s\n' "" "LP_SDT_SITES" "default sites"
row() { printf '%-46s %14s %14s\n' "$1" "$(median sdt "$2")" "$(median fast "$2")"; }
row "1. not attached (the marker's dormant cost)" dormant
row "2. floor: empty BPF programs (bpftrace)" floor
row "3. leanprofiler record (trace + summary)" leanprofiler
row "4. bpftrace: start per tid, duration in a map" bpftrace
ratio() { awk -v a="$(median "$1" "$2")" -v b="$(median "$1" "$3")" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-46s %14s %14s\n' "ratio 3/2 (target <= 1.15)" "$(ratio sdt leanprofiler floor)" \
	"$(ratio fast leanprofiler floor)"
printf '%-46s %14s %14s\n' "ratio 3/4 (target <= 0.7)" "$(ratio sdt leanprofiler bpftrace)" \
	"$(ratio fast leanprofiler bpftrace)"

# ---------------------------------------------------------------------------------------
# Where the time of row 3 goes: the kernel's own time in each BPF program per event
# (kernel.bpf_stats_enabled), ours against bpftrace's empty and recording programs.
sysctl -qw kernel.bpf_stats_enabled=1
# bpftrace's programs live only while it runs: sample them until it exits.
bt_prog_ns() { # bt_prog_ns SCRIPT -> ns per run of its span_enter + span_exit programs
	bpftrace "$1" -c "$work/span_fast $((spans * 5))" >/dev/null 2>&1 &
	local pid=$! last=""
	while kill -0 "$pid" 2>/dev/null; do
		local now
		now=$(bpftool -j prog show 2>/dev/null | jq -r '[.[] | select(.name == "span_enter" or .name == "span_exit") | select(.run_cnt != null)] | if length == 2 then ((map(.run_time_ns) | add) / (map(.run_cnt) | add)) else empty end' 2>/dev/null || true)
		[ -n "$now" ] && last=$now
		sleep 0.2
	done
	wait "$pid" || true
	printf '%.0f' "${last:-nan}"
}
lp_prog_ns=$("$lp" record --summary-only -o "$work/out" -- "$work/span_fast" $((spans * 5)) >/dev/null 2>&1 &&
	jq -r '.profiler | .bpf_program_run_time_ns / .bpf_program_runs | floor' "$work/out/leanprofiler-summary.json")
bt_empty_ns=$(bt_prog_ns "$work/floor_fast.bt")
bt_clock_ns=$(bt_prog_ns "$work/clock_fast.bt")
bt_rec_ns=$(bt_prog_ns "$work/bpftrace_fast.bt")
sysctl -qw kernel.bpf_stats_enabled=0
echo "BPF program time per event (kernel.bpf_stats_enabled, one run each, ns)"
printf '%-46s %14s\n' "   bpftrace, empty programs" "$bt_empty_ns"
printf '%-46s %14s\n' "   bpftrace, the clock read only" "$bt_clock_ns"
printf '%-46s %14s\n' "   bpftrace, start per tid, duration in a map" "$bt_rec_ns"
printf '%-46s %14s\n' "   leanprofiler (target <= 100)" "$lp_prog_ns"

# ---------------------------------------------------------------------------------------
# 5. Consumer capacity: the producer as fast as its markers go (nop5 site), 1 and 2
# threads; events lost with the default ring buffer and with smaller ones, to see where
# losses start; and how busy the consumer was.
echo
echo "5. consumer capacity: $capacity_spans spans per thread, unthrottled (default sites)"
printf '   %-8s %14s %12s %10s %10s %10s %10s\n' threads "spans/s" "profiler CPU" \
	"lost@16M" "lost@1M" "lost@256K" "lost@64K"
for threads in 1 2; do
	rate="" cpu="" losts=""
	for buf in 16M 1M 256K 64K; do
		line=$("$lp" record --summary-only --buffer-size "$buf" -o "$work/out" -- \
			"$work/producer" "$threads" "$capacity_spans" 2>/dev/null | grep '^producer:')
		sum=$work/out/leanprofiler-summary.json
		lost=$(jq -r '.lost_events | .enter + .exit' "$sum")
		losts="$losts $(printf '%10s' "$lost")"
		if [ "$buf" = 16M ]; then
			rate=$(sed -n 's/.*, \([0-9]*\) spans\/s in all.*/\1/p' <<<"$line")
			cpu=$(jq -r '"\(((.profiler.user_cpu_ns + .profiler.system_cpu_ns) * 100 / .window_ns) | floor)%"' "$sum")
		fi
	done
	printf '   %-8s %14s %12s%s\n' "$threads" "$rate" "$cpu" "$losts"
done

# ---------------------------------------------------------------------------------------
# 6. The consumer without BPF: decode -> nest -> stats -> trace from a recorded stream
# (bench/pipeline.c), spans per second on one core, against write(2) of the same bytes.
pspans=${PIPELINE_SPANS:-2000000}
echo
echo "6. writer and builder, no BPF ($build/bench/pipeline $pspans $rounds, medians):"
"$build/bench/pipeline" "$pspans" "$rounds" 2>/dev/null | sed 's/^/   /'
# The same pipelines' instructions per span under callgrind: the figure any host reproduces
# (the machine's speed and noise do not enter it), with the goals' rates beside the wall ones.
cspans=${CALLGRIND_SPANS:-200000}
cg=$work/callgrind.out
if valgrind --tool=callgrind --callgrind-out-file="$cg" "$build/bench/pipeline" --count "$cspans" \
	>/dev/null 2>&1; then
	callgrind_annotate --inclusive=yes "$cg" >"$cg.txt" 2>/dev/null
	ir() { grep -m1 ":$1 " "$cg.txt" | awk '{ gsub(",", "", $1); print $1 }'; }
	su=$(ir count_summary)
	tr=$(ir count_trace)
	printf '   instructions per span (callgrind, %s spans): summary only %d, with the trace %d\n' \
		"$cspans" $((su / cspans)) $((tr / cspans))
else
	echo "   instructions per span: valgrind failed (scripts/deps.sh bench installs it)"
fi
echo "   goals: with the trace >= 3.5 M spans/s, summary only >= 8 M spans/s," \
	"trace writing/baseline <= 1.3"

# ---------------------------------------------------------------------------------------
# 7. Memory: the profiler's peak RSS (its own, from the summary) for N spans over a
# bounded set of names (9), 2 producer threads, with the trace and with --summary-only.
echo
echo "7. memory: leanprofiler's peak RSS, 2 threads, 9 names (default sites)"
printf '   %-12s %16s %18s %14s\n' spans "trace (KiB)" "summary-only (KiB)" "trace MB"
for n in $memory_spans; do
	"$lp" record -o "$work/mem" -- "$work/producer" 2 $((n / 2)) >/dev/null 2>&1
	t_rss=$(jq -r '.profiler.peak_rss_kib' "$work/mem/leanprofiler-summary.json")
	t_mb=$(du -m "$work/mem/leanprofiler-trace.json" | cut -f1)
	mv "$work/mem" "$work/rec_$n" # row 10 reads it back
	"$lp" record --summary-only -o "$work/mem" -- "$work/producer" 2 $((n / 2)) >/dev/null 2>&1
	s_rss=$(jq -r '.profiler.peak_rss_kib' "$work/mem/leanprofiler-summary.json")
	rm -rf "$work/mem"
	printf '   %-12s %16s %18s %14s\n' "$n" "$t_rss" "$s_rss" "$t_mb"
done
# ---------------------------------------------------------------------------------------
# 8. Following processes: what a target's dlopen() and fork + exec cost while recorded
# (each may pause the process until its new files are attached), against the same run
# not attached; medians of interleaved rounds. bench/follow.c, default sites.
# Rounds per run: dlopen rows FOLLOW_N (default 200), the new-library and exec rows a quarter
# of it (each new library adds 4 probes, and tearing hundreds down takes the kernel seconds).
follow_n=${FOLLOW_N:-200}
follow_q=$((follow_n / 4))
cc -O2 -Iinclude bench/follow.c -o "$work/follow"
cc -O2 -Iinclude -DMARKED -shared -fPIC bench/follow_lib.c -o "$work/libmarked.so"
cc -O2 -Iinclude -shared -fPIC bench/follow_lib.c -o "$work/libplain.so"
cc -O2 -Iinclude -DMAIN -DMARKED bench/follow_lib.c -o "$work/prog_marked"
cc -O2 -Iinclude -DMAIN bench/follow_lib.c -o "$work/prog_plain"
follow_us() { sed -n 's/^follow: .*, \([0-9.]*\) us each$/\1/p'; }
follow_rows="plain marked new exec_plain exec_marked"
follow_args() { # follow_args ROW -> the arguments of bench/follow
	case $1 in
	plain) echo "dlopen $follow_n $work/libplain.so" ;;
	marked) echo "dlopen $follow_n $work/libmarked.so" ;;
	new) echo "dlopen $follow_q $work/new/lib%d.so" ;;
	exec_plain) echo "exec $follow_q $work/prog_plain" ;;
	exec_marked) echo "exec $follow_q $work/prog_marked" ;;
	esac
}
# "new": files no recording has seen: fresh copies before every run.
fresh_libs() {
	rm -rf "$work/new" && mkdir -p "$work/new"
	for i in $(seq 0 $((follow_q - 1))); do cp "$work/libmarked.so" "$work/new/lib$i.so"; done
}
for r in $(seq 1 "$rounds"); do
	for row in $follow_rows; do
		[ "$row" = new ] && fresh_libs
		# shellcheck disable=SC2046
		echo "follow_$row off $("$work/follow" $(follow_args "$row") | follow_us)" >>"$work/results"
		[ "$row" = new ] && fresh_libs
		# shellcheck disable=SC2046
		echo "follow_$row on $("$lp" record --summary-only -o "$work/out" -- "$work/follow" $(follow_args "$row") 2>/dev/null | follow_us)" >>"$work/results"
	done
done
echo
echo "8. following processes: us per round ($follow_n dlopen rounds per run, $follow_q for new libraries and exec), medians of $rounds runs"
printf '   %-50s %12s %12s\n' "" "not attached" "recorded"
frow() { printf '   %-50s %12s %12s\n' "$1" "$(median "follow_$2" off)" "$(median "follow_$2" on)"; }
frow "dlopen + dlclose, library without markers" plain
frow "dlopen + dlclose, marked library" marked
frow "dlopen + dlclose, marked library new each time" new
frow "fork + exec + wait, program without markers" exec_plain
frow "fork + exec + wait, marked program" exec_marked
# The end of a recording that attached many files: from the command's exit (its own clock,
# "follow: done at") to leanprofiler's exit, the table printed and every probe detached.
for r in $(seq 1 "$rounds"); do
	fresh_libs
	"$lp" record --summary-only -o "$work/out" -- "$work/follow" $(follow_args new) \
		>"$work/end.out" 2>/dev/null
	exited=$(date +%s.%N)
	done_at=$(sed -n 's/^follow: done at \([0-9.]*\)$/\1/p' "$work/end.out")
	awk -v a="$exited" -v b="$done_at" 'BEGIN { printf "%.0f\n", (a - b) * 1000 }'
done | sort -n | awk -v n="$follow_q" '{ v[NR] = $1 } END { printf "   %-50s %12s %12s\n", \
	"end with " n " marked files attached: exit to exit, ms", "", \
	(NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
echo "   targets: a new marked library < 300 us per dlopen; the end with 50 files < 1000 ms"

# ---------------------------------------------------------------------------------------
# 9. High-cardinality metadata: memory, summary and exit time when every span has metadata of
# its own (bench/cardinality.sh; CARDINALITY, METALEN).
echo
bench/cardinality.sh "$build"
# 10. Reading recordings back: report (the table), diff (the recording against itself) and
# report --html of row 7's recordings (2 threads, 9 names), kept on disk until here: wall and
# CPU time, peak RSS (/usr/bin/time, Debian's time: deps.sh bench installs it) and the size
# of what each writes (docs/formats.md: a 10M-span recording's page stays under ~20 MB).
read_back_row() {
	echo
	echo "10. report, diff and report --html of row 7's recordings (one run each)"
	printf '   %-10s %-14s %10s %10s %16s %12s\n' spans command "wall (s)" "cpu (s)" \
		"peak RSS (KiB)" "output (MB)"
	for n in $memory_spans; do
		local d=$work/rec_$n what wall cpu rss user sys
		for what in report diff html; do
			case $what in
			report) set -- "$lp" report "$d" ;;
			diff) set -- "$lp" diff "$d" "$d" ;;
			html) set -- "$lp" report --html "$work/page.html" "$d" ;;
			esac
			/usr/bin/time -f '%e %U %S %M' -o "$work/rb.time" "$@" >"$work/rb.out" || true
			read -r wall user sys rss <"$work/rb.time"
			cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
			[ "$what" = html ] && cp "$work/page.html" "$work/rb.out"
			printf '   %-10s %-14s %10s %10s %16s %12s\n' "$n" "$what" "$wall" "$cpu" \
				"$rss" "$(awk -v b="$(stat -c %s "$work/rb.out")" \
					'BEGIN { printf "%.2f", b / 1e6 }')"
		done
		rm -rf "$d" "$work/page.html" "$work/rb.out"
	done
}
read_back_row

# ---------------------------------------------------------------------------------------
# 11 and 12. What `record --off-cpu` costs (bench/offcpu.sh; ROUNDS, PINGPONG_N,
# PINGPONG_ROUNDS, SPANS, TRIPS): 11, a ping-pong between two processes not recorded, alone and
# while record without and with --off-cpu records an idle process; 12, ns per span recorded
# without and with --off-cpu.
echo
bench/offcpu.sh "$build"

# ---------------------------------------------------------------------------------------
# 13. leanprofiler export into a throwaway ClickHouse server (bench/export.sh; EXPORT_SPANS).
echo
bench/export.sh "$build"

# ---------------------------------------------------------------------------------------
# 14. What --preset libstdcxx costs a program that throws (bench/throw.sh; THROWS).
echo
bench/throw.sh "$build"

# ---------------------------------------------------------------------------------------
# 15. The fixed cost of a short recording, beside bpftrace's on the same markers
# (bench/startup.sh).
echo
bench/startup.sh "$build"

# ---------------------------------------------------------------------------------------
# 16. What recording one process with -p costs another of the same binary (bench/bystander.sh).
echo
bench/bystander.sh "$build"

# ---------------------------------------------------------------------------------------
# 17. PostgreSQL: an idle backend recorded beside pgbench, and the end of a recording of the
# whole server (bench/postgres.sh; PGBENCH_SECONDS).
echo
bench/postgres.sh "$build"

# ---------------------------------------------------------------------------------------
# 18. The trace as Perfetto's protobuf against the JSON one: size, CPU, the end of a recording
# (bench/pftrace.sh; PIPELINE_SPANS, PRODUCER_SPANS).
echo
bench/pftrace.sh "$build"

# ---------------------------------------------------------------------------------------
# 19. Python spans (the leanprofiler module), not attached and recorded, beside C's
# (bench/python.sh; PY_SPANS).
echo
bench/python.sh "$build"

# ---------------------------------------------------------------------------------------
# 20. The Rust crate's markers beside the C header's, not attached and recorded (bench/rust.sh;
# needs cargo: make rust).
echo
bench/rust.sh "$build"

# ---------------------------------------------------------------------------------------
# 21. Continuous recording (record --window 1s --summary-only): the profiler's RSS stays flat
# (bench/window.sh; WINDOW_SECONDS, WINDOW_RATE).
echo
bench/window.sh "$build"

echo
echo "bench: $(($(date +%s) - bench_start)) s"
